"""The device buffers and observation kernels of gymnasium's ``AtariPreprocessing`` for a CudaAtariBatch.

The step itself (``frame_skip`` acts with the wrapper's early exit, the screens of the last two acts,
the reset with its no-ops) is ``core/ale/preprocessing.h``, run by the ``gpu_env_vec_step`` kernel
(:meth:`gpu_env.backends.cuda.backend.CudaAtariBatch.vec_step`, what ``make_vec(backend="cuda")`` steps); it
writes the grayscale screens into this object's :attr:`obs0` / :attr:`obs1` (gymnasium's
``obs_buffer[0]`` / ``obs_buffer[1]``) and the wrapper's lives into :attr:`lives`. :meth:`observe`
then runs the max-pool and the INTER_AREA resize as element-wise kernels (``core/cuda/kernels.h``:
the CPU library's tap tables and float32 operation order, no FMA, so equal to ``cv2.resize``).

Arrays (CuPy, device): ``obs0`` / ``obs1`` uint8[N, H, 160], ``lives`` int32[N], observations
uint8[N, height, width]. Grayscale only (``grayscale_obs=True``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from gpu_env.backends.cuda.backend import CudaAtariBatch
from gpu_env.errors import GpuEnvError
from gpu_env.preprocess import tap_arrays


class CudaPreprocessor:
    """AtariPreprocessing's buffers and observation for ``batch`` on its device (see the module docstring).

    Args:
        batch: a :class:`CudaAtariBatch` with ``frameskip=1`` when ``frame_skip > 1`` (as gymnasium requires).
        frame_skip: ALE acts per step (the step max-pools the last two screens when > 1).
        screen_size: (width, height) of the observation, or one int for both.
        terminal_on_life_loss: a lost life ends the episode (terminated).

    """

    def __init__(self, batch: CudaAtariBatch, *, frame_skip: int = 4, screen_size: int | tuple[int, int] = 84,
                 terminal_on_life_loss: bool = False) -> None:
        if frame_skip <= 0:
            raise GpuEnvError(f"frame_skip={frame_skip} must be positive")
        if frame_skip > 1 and batch.frameskip != 1:
            raise GpuEnvError(f"frame_skip={frame_skip} with a batch frameskip of {batch.frameskip}: build the batch "
                              "with frameskip=1 when the preprocessing skips frames, as gymnasium requires")
        width, height = (screen_size, screen_size) if isinstance(screen_size, int) else screen_size
        if width <= 0 or height <= 0:
            raise GpuEnvError(f"screen_size={screen_size} must be positive")
        cp = batch.cp
        self.batch = batch
        self.frame_skip = frame_skip
        self.terminal_on_life_loss = terminal_on_life_loss
        self.width, self.height = int(width), int(height)
        n, h = batch.num_envs, batch.screen_height
        self._k = {name: batch.kernel(name) for name in (
            "gpu_env_max_pool", "gpu_env_area_resize", "gpu_env_area_resize_int")}
        with cp.cuda.Device(batch.device):
            self.obs0 = cp.zeros((n, h, 160), dtype=cp.uint8)
            self.obs1 = cp.zeros((n, h, 160), dtype=cp.uint8)
            self.lives = cp.zeros(n, dtype=cp.int32)
            self._frame = cp.zeros((n, self.height, self.width), dtype=cp.uint8)
            self._integer = h % self.height == 0 and 160 % self.width == 0
            if not self._integer:
                xi, xw = tap_arrays(160, self.width)
                yi, yw = tap_arrays(h, self.height)
                self._xi, self._xw, self._yi, self._yw = (cp.asarray(a) for a in (xi, xw, yi, yw))
            area = max(1, (h // self.height) * (160 // self.width))
            self._inv_area = np.float32(1.0 / area)

    def memory_bytes_per_env(self) -> int:
        """Device bytes of the preprocessing buffers per environment."""
        return 2 * self.batch.screen_height * 160 + 4 + self.height * self.width

    def _grid(self, total: int) -> tuple[tuple[int], tuple[int]]:
        return (min((total + 255) // 256, 1 << 20),), (256,)

    def observe(self) -> Any:
        """Max-pool ``obs0`` with ``obs1`` in place (``frame_skip > 1``) and resize it; returns the resized frames.

        The array returned is this object's own buffer (uint8[N, height, width]), overwritten by the next call.
        """
        n, h = self.batch.num_envs, self.batch.screen_height
        if self.frame_skip > 1:
            per_env = h * 160
            grid, block = self._grid(n * per_env)
            self._k["gpu_env_max_pool"](grid, block, (self.obs0, self.obs1, np.uint64(per_env), np.uint64(per_env),
                                                      np.uint64(0), np.int32(n)))
        grid, block = self._grid(n * self.height * self.width)
        if self._integer:
            self._k["gpu_env_area_resize_int"](grid, block, (
                self.obs0, np.int32(n), np.int32(h), np.int32(160), self._frame, np.int32(self.height),
                np.int32(self.width), self._inv_area))
        else:
            self._k["gpu_env_area_resize"](grid, block, (
                self.obs0, np.int32(n), np.int32(h), np.int32(160), self._frame, np.int32(self.height),
                np.int32(self.width), self._xi, self._xw, np.int32(self._xi.shape[0]), self._yi, self._yw,
                np.int32(self._yi.shape[0])))
        return self._frame
