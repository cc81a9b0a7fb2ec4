"""AtariPreprocessing's observation on the CPU in one native call: max-pool, then ``cv2.INTER_AREA``.

:class:`CpuObservation` runs ``gpu_env/native/preprocess.cpp`` over a batch of frame buffers on
threads: ``buf0 = max(buf0, buf1)`` in place for the envs in a mask (gymnasium's
``np.maximum(..., out=buffer[0])``), then the INTER_AREA resize of every ``buf0``, byte-identical
to ``cv2.resize`` (the tap tables and float32 operation order of :mod:`gpu_env.preprocess`;
``tests/gpu_env/test_preprocess_cpu.py`` checks it against OpenCV). Upscaling, where OpenCV's
INTER_AREA switches to bilinear interpolation, is delegated to OpenCV itself.
"""

from __future__ import annotations

import ctypes

import numpy as np
import numpy.typing as npt

from gpu_env.binding import native, pointer
from gpu_env.errors import GpuEnvError
from gpu_env.preprocess import tap_arrays

U8Array = npt.NDArray[np.uint8]


class CpuObservation:
    """Max-pool and resize ``[N, src_h, src_w(, C)]`` uint8 buffers into ``[N, height, width(, C)]``.

    ``channels`` is 1 (grayscale, no channel axis) or 3 (RGB, channels last).
    """

    def __init__(self, num_envs: int, src_shape: tuple[int, int], size: tuple[int, int], channels: int,
                 num_threads: int = 1) -> None:
        if channels not in (1, 3):
            raise GpuEnvError(f"channels={channels}: use 1 (grayscale) or 3 (RGB)")
        self.num_envs = num_envs
        self.src_h, self.src_w = src_shape
        self.height, self.width = size
        if min(self.src_h, self.src_w, self.height, self.width) <= 0:
            raise GpuEnvError(f"frame sizes must be positive: source {src_shape}, target {size}")
        if self.src_w > 160:
            raise GpuEnvError(f"source width {self.src_w}: Atari frames are at most 160 pixels wide")
        self.channels = channels
        self.num_threads = max(1, num_threads)
        self._upscale = self.height > self.src_h or self.width > self.src_w
        self._integer = self.src_h % self.height == 0 and self.src_w % self.width == 0
        self._xi, self._xw = tap_arrays(self.src_w, self.width)
        self._yi, self._yw = tap_arrays(self.src_h, self.height)
        shape = (num_envs, self.height, self.width) if channels == 1 else (num_envs, self.height, self.width, 3)
        self._shape = shape
        self._lib = native()
        # The resize's part of the native calls' arguments, built once (the tap tables never change).
        self._resize_args = (ctypes.c_int32(self.height), ctypes.c_int32(self.width),
                             ctypes.c_int32(int(self._integer)),
                             pointer(self._xi), pointer(self._xw), ctypes.c_int32(self._xi.shape[0]),
                             pointer(self._yi), pointer(self._yw), ctypes.c_int32(self._yi.shape[0]))

    @property
    def native(self) -> bool:
        """Whether the resize runs in the native library (every size but an upscale, which OpenCV does)."""
        return not self._upscale

    def new_output(self) -> U8Array:
        """Return a new array for one batch of observations (the caller owns it)."""
        return np.empty(self._shape, dtype=np.uint8)

    def resize_args(self) -> tuple[object, ...]:
        """Return the resize's arguments of the native calls: target size, path, tap tables (``preprocess.h``)."""
        return self._resize_args

    def __call__(self, buf0: U8Array, buf1: U8Array | None, pool_mask: npt.NDArray[np.bool_] | None) -> U8Array:
        """Max-pool ``buf0`` with ``buf1`` where ``pool_mask`` (``None``: no pooling), then resize ``buf0``."""
        src = (self.num_envs, self.src_h, self.src_w) + (() if self.channels == 1 else (3,))
        for name, buf in (("buf0", buf0), ("buf1", buf1)):
            if buf is not None and (buf.shape != src or buf.dtype != np.uint8 or not buf.flags.c_contiguous):
                raise GpuEnvError(f"{name} must be a C-contiguous uint8 array of shape {src}, "
                                  f"got {buf.dtype} {buf.shape}")
        pool = buf1 is not None and pool_mask is not None
        if self._upscale:
            return self._opencv(buf0, buf1 if pool else None, pool_mask)
        out = self.new_output()
        mask = (np.ascontiguousarray(pool_mask, dtype=np.uint8) if pool and pool_mask is not None
                else np.zeros(self.num_envs, dtype=np.uint8))
        other = buf1 if pool and buf1 is not None else buf0
        self._lib.gpu_env_preprocess_observe(
            ctypes.c_int32(self.num_envs), pointer(buf0), pointer(other), ctypes.c_int32(self.src_h),
            ctypes.c_int32(self.src_w), ctypes.c_int32(self.channels), ctypes.c_int32(int(pool)), pointer(mask),
            *self.resize_args(), pointer(out), ctypes.c_int32(self.num_threads),
        )
        return out

    def _opencv(self, buf0: U8Array, buf1: U8Array | None, pool_mask: npt.NDArray[np.bool_] | None) -> U8Array:
        import cv2

        if buf1 is not None and pool_mask is not None:
            idx = np.flatnonzero(pool_mask)
            buf0[idx] = np.maximum(buf0[idx], buf1[idx])
        return np.stack([cv2.resize(f, (self.width, self.height), interpolation=cv2.INTER_AREA) for f in buf0])
