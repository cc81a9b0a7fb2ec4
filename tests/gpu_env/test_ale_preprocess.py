"""gpu_env.preprocess: the INTER_AREA tap tables and the frame stack.

The resizes that use the tables are compared with OpenCV in test_preprocess_cpu.py (CPU library) and
test_cuda_host.py (CUDA kernels).
"""

from __future__ import annotations

import numpy as np
import pytest

from gpu_env.preprocess import FrameStack, tap_arrays


@pytest.mark.parametrize(("src", "dst"), [(210, 84), (160, 84), (250, 84), (160, 64), (210, 105)])
def test_tap_weights_cover_each_output_once(src: int, dst: int) -> None:
    """Each output's INTER_AREA taps sum to 1 and read consecutive source pixels inside the frame."""
    index, weight = tap_arrays(src, dst)
    np.testing.assert_allclose(weight.sum(axis=0), 1.0, rtol=1e-6)
    assert index.min() >= 0
    assert index.max() < src
    for d in range(dst):
        used = index[weight[:, d] > 0, d]
        assert (np.diff(used) == 1).all()


def test_frame_stack_reset_fills_and_push_rolls() -> None:
    stack = FrameStack(3, 3, (2,))
    first = np.array([[1, 1], [2, 2], [3, 3]], dtype=np.uint8)
    stack.reset(first, np.array([True, True, True]))
    assert stack.obs[:, :, 0].tolist() == [[1, 1, 1], [2, 2, 2], [3, 3, 3]]
    stack.push(np.array([[5, 5], [6, 6], [7, 7]], dtype=np.uint8), np.array([True, False, True]))
    assert stack.obs[:, :, 0].tolist() == [[1, 1, 5], [2, 2, 2], [3, 3, 7]]
    stack.push(np.array([[8, 8], [9, 9], [4, 4]], dtype=np.uint8), np.array([True, True, True]))
    assert stack.obs[:, :, 0].tolist() == [[1, 5, 8], [2, 2, 9], [3, 7, 4]]
