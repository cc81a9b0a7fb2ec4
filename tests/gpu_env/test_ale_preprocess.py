"""gpu_env.preprocess against OpenCV / numpy, the way gymnasium's AtariPreprocessing calls them."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from gpu_env.ale_batch import AtariBatch
from gpu_env.preprocess import AreaResize, FrameStack, max_pool_pair, scale_observation
from tests.gpu_env.resize_cases import DOWNSCALE_SIZES, cv2_area

SIZES = DOWNSCALE_SIZES


@pytest.mark.parametrize(("src_h", "src_w", "h", "w"), SIZES)
@pytest.mark.parametrize("rgb", [False, True])
def test_area_resize_equals_cv2_on_random_frames(src_h: int, src_w: int, h: int, w: int, rgb: bool) -> None:
    rng = np.random.default_rng(src_h * 1000 + h + w + rgb)
    shape = (4, src_h, src_w, 3) if rgb else (4, src_h, src_w)
    frames = rng.integers(0, 256, shape, dtype=np.uint8)
    frames[0] = (frames[0] // 85) * 85  # few levels: many exact ties in the averaging
    ours = AreaResize(src_h, src_w, h, w, channels_last=rgb)(torch.from_numpy(frames)).numpy()
    np.testing.assert_array_equal(ours, cv2_area(frames, h, w))


@settings(max_examples=10, deadline=None)
@given(st.integers(min_value=20, max_value=210), st.integers(min_value=20, max_value=160), st.integers(0, 2**31))
def test_area_resize_equals_cv2_any_downscale(h: int, w: int, seed: int) -> None:
    frames = np.random.default_rng(seed).integers(0, 256, (1, 210, 160), dtype=np.uint8)
    ours = AreaResize(210, 160, h, w)(torch.from_numpy(frames)).numpy()
    np.testing.assert_array_equal(ours, cv2_area(frames, h, w))


@pytest.mark.parametrize("game", ["breakout", "air_raid", "ms_pacman"])
def test_area_resize_equals_cv2_on_real_frames(game: str) -> None:
    batch = AtariBatch(game, 2, backend="cpu", seeds=[1, 2])
    rng = np.random.default_rng(0)
    grays, rgbs = [], []
    for _ in range(12):
        batch.act(rng.integers(0, 18, 2))
        grays.append(batch.get_screen_grayscale())
        rgbs.append(batch.get_screen_rgb())
    gray, rgb = np.concatenate(grays), np.concatenate(rgbs)
    h, w = gray.shape[1:]
    np.testing.assert_array_equal(AreaResize(h, w, 84, 84)(torch.from_numpy(gray)).numpy(), cv2_area(gray, 84, 84))
    np.testing.assert_array_equal(
        AreaResize(h, w, 84, 84, channels_last=True)(torch.from_numpy(rgb)).numpy(), cv2_area(rgb, 84, 84)
    )


def test_area_resize_rejects_bad_input() -> None:
    resize = AreaResize(210, 160, 84, 84)
    with pytest.raises(TypeError, match="uint8"):
        resize(torch.zeros((1, 210, 160), dtype=torch.float32))
    with pytest.raises(ValueError, match="210x160"):
        resize(torch.zeros((1, 250, 160), dtype=torch.uint8))
    with pytest.raises(ValueError, match="height=0"):
        AreaResize(210, 160, 0, 84)


def test_max_pool_and_scale_match_numpy() -> None:
    rng = np.random.default_rng(3)
    a, b = rng.integers(0, 256, (2, 3, 84, 84), dtype=np.uint8)
    np.testing.assert_array_equal(max_pool_pair(torch.from_numpy(a), torch.from_numpy(b)).numpy(), np.maximum(a, b))
    np.testing.assert_array_equal(scale_observation(torch.from_numpy(a)).numpy(), np.asarray(a, np.float32) / 255.0)


def test_frame_stack_reset_fills_and_push_rolls() -> None:
    stack = FrameStack(3, 3, (2,))
    first = np.array([[1, 1], [2, 2], [3, 3]], dtype=np.uint8)
    stack.reset(first, np.array([True, True, True]))
    assert stack.obs[:, :, 0].tolist() == [[1, 1, 1], [2, 2, 2], [3, 3, 3]]
    stack.push(np.array([[5, 5], [6, 6], [7, 7]], dtype=np.uint8), np.array([True, False, True]))
    assert stack.obs[:, :, 0].tolist() == [[1, 1, 5], [2, 2, 2], [3, 3, 7]]
    stack.push(np.array([[8, 8], [9, 9], [4, 4]], dtype=np.uint8), np.array([True, True, True]))
    assert stack.obs[:, :, 0].tolist() == [[1, 5, 8], [2, 2, 9], [3, 7, 4]]
