"""Atari observation preprocessing, bit-exact with gymnasium's ``AtariPreprocessing``.

gymnasium's wrapper (v1.x, ``gymnasium/wrappers/atari_preprocessing.py``) max-pools the last two
frames of a frame-skip step, resizes with ``cv2.resize(..., interpolation=cv2.INTER_AREA)`` and
optionally scales to ``[0, 1)``. :class:`AreaResize`, :func:`max_pool_pair` and
:func:`scale_observation` run in torch on the device the frames live on (the device path of the
CUDA backend); the CPU path of :mod:`gpu_env.vector` calls OpenCV itself, which is exact by
definition. :class:`FrameStack` keeps host arrays.

Exactness of the resize: OpenCV's general INTER_AREA path (used whenever a scale factor is not an
integer, e.g. 210x160 -> 84x84) builds per-axis tables of (source index, float32 weight) and
accumulates, in float32 and in table order, first along x for every source row, then along y
(``weight * row`` added row by row), and rounds half to even. :class:`AreaResize` reproduces the
same tables and the same float32 operation order with separate multiply and add kernels (no fused
multiply-add), so its output equals cv2's byte for byte; ``tests/gpu_env/test_ale_preprocess.py``
checks this on random and real frames. When both scale factors are integers OpenCV takes a
different (fast) path: 2x2 blocks are averaged as ``(sum + 2) >> 2`` (round half up), other integer
factors as ``float32(sum) * float32(1 / area)`` rounded half to even; :class:`AreaResize` does the
same (the tests cover 2x2, 3x2, 5x4, 1x1 and several non-integer factors).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import torch

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


@functools.lru_cache(maxsize=64)
def _tap_tensors(src_size: int, dst_size: int, device: str) -> tuple[torch.Tensor, torch.Tensor]:
    """Taps as padded tensors: index int64[K, dst], weight float32[K, dst] (padding weight 0)."""
    index, weight = tap_arrays(src_size, dst_size)
    return torch.from_numpy(index).to(torch.int64).to(device), torch.from_numpy(weight).to(device)


@dataclass(frozen=True)
class AreaResize:
    """``cv2.resize(frame, (width, height), interpolation=cv2.INTER_AREA)`` for a batch of frames.

    Frames are uint8 ``[..., H, W]`` (gray) or ``[..., H, W, C]`` (``channels_last=True``).
    """

    src_height: int
    src_width: int
    height: int
    width: int
    channels_last: bool = False

    def __post_init__(self) -> None:
        for name in ("src_height", "src_width", "height", "width"):
            value = getattr(self, name)
            if value <= 0:
                raise ValueError(f"AreaResize: {name}={value} must be positive")

    def __call__(self, frames: torch.Tensor) -> torch.Tensor:
        """Resize uint8 frames; returns uint8 ``[..., height, width(, C)]`` on the same device."""
        if frames.dtype != torch.uint8:
            raise TypeError(f"AreaResize expects uint8 frames, got {frames.dtype}")
        x = frames if self.channels_last else frames.unsqueeze(-1)
        h_axis, w_axis = x.dim() - 3, x.dim() - 2
        if x.shape[h_axis] != self.src_height or x.shape[w_axis] != self.src_width:
            raise ValueError(
                f"AreaResize was built for {self.src_height}x{self.src_width} frames, got shape {tuple(frames.shape)}"
            )
        if self.src_height % self.height == 0 and self.src_width % self.width == 0:
            out = self._integer_factor(x)
        else:
            out = self._general(x)
        return out if self.channels_last else out.squeeze(-1)

    def _general(self, x: torch.Tensor) -> torch.Tensor:
        # Work on [..., C, W, H] so that both passes gather whole rows (fast on CPU and GPU); the
        # arithmetic and its order are OpenCV's: x taps first (per source row), then y taps.
        device = x.device
        xi, xw = _tap_tensors(self.src_width, self.width, str(device))
        yi, yw = _tap_tensors(self.src_height, self.height, str(device))
        f = x.movedim(-1, -3).transpose(-1, -2).to(torch.float32).contiguous()  # [..., C, W, H]
        buf = torch.index_select(f, -2, xi[0]) * xw[0].view(-1, 1)
        for j in range(1, xi.shape[0]):
            buf = buf + torch.index_select(f, -2, xi[j]) * xw[j].view(-1, 1)
        rows = buf.transpose(-1, -2).contiguous()  # [..., C, H, width]
        out = torch.index_select(rows, -2, yi[0]) * yw[0].view(-1, 1)
        for j in range(1, yi.shape[0]):
            out = out + torch.index_select(rows, -2, yi[j]) * yw[j].view(-1, 1)
        out = torch.round(out).clamp_(0, 255).to(torch.uint8)
        return out.movedim(-3, -1)

    def _integer_factor(self, x: torch.Tensor) -> torch.Tensor:
        fy = self.src_height // self.height
        fx = self.src_width // self.width
        lead = x.shape[:-3]
        c = x.shape[-1]
        blocks = x.to(torch.int32).reshape(*lead, self.height, fy, self.width, fx, c)
        total = blocks.sum(dim=(-4, -2))
        if fx == 2 and fy == 2:
            # OpenCV's vectorised 2x2 path rounds half up: (sum + 2) >> 2.
            return ((total + 2) >> 2).to(torch.uint8)
        # Other integer factors: float32 sum * (1 / area), rounded half to even.
        inv_area = torch.tensor(1.0 / (fx * fy), dtype=torch.float32)
        return torch.round(total.to(torch.float32) * inv_area.to(x.device)).to(torch.uint8)


def max_pool_pair(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Element-wise maximum of two uint8 frame batches (gymnasium's ``np.maximum`` of the last two frames)."""
    return torch.maximum(a, b)


def scale_observation(obs: torch.Tensor) -> torch.Tensor:
    """uint8 -> float32 in ``[0, 1]`` exactly as ``np.asarray(obs, np.float32) / 255.0`` does."""
    return obs.to(torch.float32) / 255.0


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
