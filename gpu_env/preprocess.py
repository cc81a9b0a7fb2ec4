"""The INTER_AREA tap tables and the frame stack of gymnasium's ``AtariPreprocessing`` pipeline.

gymnasium's wrapper (v1.x, ``gymnasium/wrappers/atari_preprocessing.py``) max-pools the last two
frames of a frame-skip step and resizes with ``cv2.resize(..., interpolation=cv2.INTER_AREA)``.
gpu_env's resize has one implementation per target, both equal to OpenCV's byte for byte: the CPU
library's (``gpu_env/native/preprocess.cpp``, called by :mod:`gpu_env.preprocess_cpu`) and the CUDA
kernels' (``gpu_env_area_resize`` in ``gpu_env/core/cuda/kernels.h``). Both take the tap tables of
:func:`tap_arrays`; ``tests/gpu_env/test_preprocess_cpu.py`` and ``tests/gpu_env/test_cuda_host.py``
compare them with ``cv2.resize``.

The arithmetic they share: OpenCV's general INTER_AREA path (used whenever a scale factor is not an
integer, e.g. 210x160 -> 84x84) builds per-axis tables of (source index, float32 weight) and
accumulates, in float32 and in table order, first along x for every source row, then along y
(``weight * row`` added row by row), and rounds half to even; separate multiplies and adds (no fused
multiply-add) give its bytes exactly. When both scale factors are integers OpenCV takes a different
path: 2x2 blocks are averaged as ``(sum + 2) >> 2`` (round half up), other integer factors as
``float32(sum) * float32(1 / area)`` rounded half to even.

:class:`FrameStack` is gymnasium's ``FrameStackObservation`` over host arrays.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import numpy.typing as npt

# OpenCV's computeResizeAreaTabs ignores partial cells thinner than this (a fact of its algorithm).
_AREA_EPSILON = 1e-3


def area_taps(src_size: int, dst_size: int) -> list[list[tuple[int, float]]]:
    """Per output index, the (source index, weight) taps of OpenCV's INTER_AREA, in its order.

    Weights are computed in double precision as OpenCV does, then rounded to float32 by the caller.
    """
    scale = 1.0 / (dst_size / src_size)
    taps: list[list[tuple[int, float]]] = []
    for d in range(dst_size):
        f1 = d * scale
        f2 = f1 + scale
        cell = min(scale, src_size - f1)
        s2 = min(math.floor(f2), src_size - 1)
        s1 = min(math.ceil(f1), s2)
        row: list[tuple[int, float]] = []
        if s1 - f1 > _AREA_EPSILON:
            row.append((s1 - 1, (s1 - f1) / cell))
        row.extend((s, 1.0 / cell) for s in range(s1, s2))
        if f2 - s2 > _AREA_EPSILON:
            row.append((s2, min(min(f2 - s2, 1.0), cell) / cell))
        taps.append(row)
    return taps


def tap_arrays(src_size: int, dst_size: int) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.float32]]:
    """:func:`area_taps` as ``index int32[k, dst]`` and ``weight float32[k, dst]`` (padding: index 0, weight 0)."""
    taps = area_taps(src_size, dst_size)
    k = max(len(t) for t in taps)
    index = np.zeros((k, dst_size), dtype=np.int32)
    weight = np.zeros((k, dst_size), dtype=np.float32)
    for d, row in enumerate(taps):
        for j, (s, w) in enumerate(row):
            index[j, d] = s
            weight[j, d] = w
    return index, weight


class FrameStack:
    """gymnasium ``FrameStackObservation(stack_size, padding_type="reset")`` for a batch (host arrays).

    Holds ``obs: [num_envs, stack_size, *frame_shape]``; the newest frame is last.
    """

    def __init__(self, num_envs: int, stack_size: int, frame_shape: tuple[int, ...],
                 dtype: type[np.generic] = np.uint8) -> None:
        if stack_size <= 0:
            raise ValueError(f"stack_size={stack_size} must be positive")
        self.stack_size = stack_size
        self.obs: npt.NDArray[Any] = np.zeros((num_envs, stack_size, *frame_shape), dtype=dtype)

    @classmethod
    def over(cls, obs: npt.NDArray[Any]) -> FrameStack:
        """Return a FrameStack that works on ``obs`` (``[num_envs, stack_size, *frame_shape]``) in place."""
        if obs.ndim < 2 or obs.shape[1] <= 0:
            raise ValueError(f"a frame stack is [num_envs, stack_size, *frame_shape], got shape {obs.shape}")
        stack = cls.__new__(cls)
        stack.stack_size = obs.shape[1]
        stack.obs = obs
        return stack

    def reset(self, frames: npt.NDArray[Any], mask: npt.NDArray[np.bool_]) -> None:
        """Fill the stacks of envs where ``mask`` (bool[num_envs]) is set with their reset frame."""
        idx = np.flatnonzero(mask)
        if idx.size:
            self.obs[idx] = frames[idx][:, None]

    def push(self, frames: npt.NDArray[Any], mask: npt.NDArray[np.bool_]) -> None:
        """Append ``frames[i]`` to the stack of every env ``i`` where ``mask`` is set."""
        if mask.all():
            self.obs[:, :-1] = self.obs[:, 1:]
            self.obs[:, -1] = frames
            return
        idx = np.flatnonzero(mask)
        if idx.size:
            rolled = self.obs[idx]
            self.obs[idx, :-1] = rolled[:, 1:]
            self.obs[idx, -1] = frames[idx]
