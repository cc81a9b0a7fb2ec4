"""gpu_env.preprocess_cpu (the native max-pool + INTER_AREA resize) against OpenCV and numpy."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpu_env.atari_batch import AtariBatch
from gpu_env.errors import GpuEnvError
from gpu_env.preprocess_cpu import CpuObservation
from tests.gpu_env.resize_cases import DOWNSCALE_SIZES, cv2_area

# The shared size pairs and an upscale, where OpenCV switches to bilinear interpolation.
SIZES = [*DOWNSCALE_SIZES, (210, 160, 256, 256)]


@pytest.mark.parametrize(("src_h", "src_w", "h", "w"), SIZES)
@pytest.mark.parametrize("rgb", [False, True])
def test_resize_equals_cv2_on_random_frames(src_h: int, src_w: int, h: int, w: int, rgb: bool) -> None:
    rng = np.random.default_rng(src_h * 1000 + h + w + rgb)
    shape = (5, src_h, src_w, 3) if rgb else (5, src_h, src_w)
    frames = rng.integers(0, 256, shape, dtype=np.uint8)
    frames[0] = (frames[0] // 85) * 85  # few levels: many exact ties in the averaging
    frames[1] = 255
    expected = cv2_area(frames, h, w)
    ours = CpuObservation(5, (src_h, src_w), (h, w), 3 if rgb else 1, num_threads=2)(frames.copy(), None, None)
    np.testing.assert_array_equal(ours, expected)


@settings(max_examples=15, deadline=None)
@given(st.integers(min_value=10, max_value=210), st.integers(min_value=10, max_value=160), st.integers(0, 2**31))
def test_resize_equals_cv2_any_downscale(h: int, w: int, seed: int) -> None:
    frames = np.random.default_rng(seed).integers(0, 256, (2, 210, 160), dtype=np.uint8)
    ours = CpuObservation(2, (210, 160), (h, w), 1)(frames.copy(), None, None)
    np.testing.assert_array_equal(ours, cv2_area(frames, h, w))


def test_max_pool_in_place_only_where_masked() -> None:
    rng = np.random.default_rng(3)
    buf0 = rng.integers(0, 256, (4, 210, 160), dtype=np.uint8)
    buf1 = rng.integers(0, 256, (4, 210, 160), dtype=np.uint8)
    mask = np.array([True, False, True, False])
    expected0 = np.where(mask[:, None, None], np.maximum(buf0, buf1), buf0)
    out = CpuObservation(4, (210, 160), (84, 84), 1, num_threads=2)(buf0, buf1, mask)
    np.testing.assert_array_equal(buf0, expected0)
    np.testing.assert_array_equal(out, cv2_area(expected0, 84, 84))


@pytest.mark.parametrize("game", ["breakout", "ms_pacman"])
def test_equals_cv2_on_real_frames(game: str) -> None:
    batch = AtariBatch(game, 3, backend="cpu", seeds=[1, 2, 3])
    rng = np.random.default_rng(0)
    grays, rgbs = [], []
    for _ in range(10):
        batch.act(rng.integers(0, 18, 3))
        grays.append(batch.get_screen_grayscale())
        rgbs.append(batch.get_screen_rgb())
    gray, rgb = np.concatenate(grays), np.concatenate(rgbs)
    h, w = gray.shape[1:]
    n = gray.shape[0]
    for frames, channels in ((gray, 1), (rgb, 3)):
        ours = CpuObservation(n, (h, w), (84, 84), channels)(frames.copy(), None, None)
        np.testing.assert_array_equal(ours, cv2_area(frames, 84, 84))


def test_bad_input_is_named() -> None:
    with pytest.raises(GpuEnvError, match="channels=2"):
        CpuObservation(1, (210, 160), (84, 84), 2)
    with pytest.raises(GpuEnvError, match="positive"):
        CpuObservation(1, (210, 160), (0, 84), 1)
    observe = CpuObservation(2, (210, 160), (84, 84), 1)
    with pytest.raises(GpuEnvError, match="buf0 must be a C-contiguous uint8 array of shape"):
        observe(np.zeros((2, 200, 160), dtype=np.uint8), None, None)
    with pytest.raises(GpuEnvError, match="buf1"):
        observe(np.zeros((2, 210, 160), dtype=np.uint8), np.zeros((2, 210, 160), dtype=np.int16), np.ones(2, bool))
