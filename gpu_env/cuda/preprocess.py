"""gymnasium ``AtariPreprocessing`` (+ ``FrameStackObservation``) on the device, for a CudaAtariBatch.

Per step, one kernel runs ``frame_skip`` ALE acts per env with the wrapper's early exit (terminal,
truncated, and a lost life with ``terminal_on_life_loss``) and writes the grayscale screens of the
last two acts into two device buffers (gymnasium's ``obs_buffer[1]`` and ``obs_buffer[0]``); then
the max-pool, the INTER_AREA resize (the arithmetic of :class:`gpu_env.preprocess.AreaResize`,
float32 multiply-then-add in OpenCV's tap order, no FMA, so equal to ``cv2.resize`` byte for byte)
and the frame-stack push run as element-wise kernels. Nothing leaves device memory.

Arrays (CuPy, device): observations uint8[N, h, w], or uint8[N, stack, h, w] with ``stack_size``,
or float32 with ``scale_obs``; rewards float32[N]; terminated / truncated bool[N].

Scope: grayscale observations only (``grayscale_obs=True``, no ``grayscale_newaxis``); the caller
resets finished envs (:meth:`CudaPreprocessor.reset`, e.g. on the next step as gymnasium's
NEXT_STEP autoreset does) and draws no-op counts itself (``noop_max``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from gpu_env.cuda.backend import _NULL, CudaAtariBatch
from gpu_env.errors import GpuEnvError
from gpu_env.preprocess import tap_arrays


class CudaPreprocessor:
    """AtariPreprocessing of ``batch`` on its device (see the module docstring).

    Args:
        batch: a :class:`CudaAtariBatch` with ``frameskip=1`` when ``frame_skip > 1`` (as gymnasium requires).
        frame_skip: ALE acts per step; rewards summed.
        screen_size: (width, height) of the observation, or one int for both.
        terminal_on_life_loss: a lost life ends the episode (terminated).
        stack_size: frames stacked (``FrameStackObservation``, padding by the reset frame); ``None``: no stack.
        scale_obs: float32 observations in [0, 1] (``obs / 255``).

    """

    def __init__(self, batch: CudaAtariBatch, *, frame_skip: int = 4, screen_size: int | tuple[int, int] = 84,
                 terminal_on_life_loss: bool = False, stack_size: int | None = None, scale_obs: bool = False) -> None:
        if frame_skip <= 0:
            raise GpuEnvError(f"frame_skip={frame_skip} must be positive")
        if frame_skip > 1 and batch.frameskip != 1:
            raise GpuEnvError(f"frame_skip={frame_skip} with a batch frameskip of {batch.frameskip}: build the batch "
                              "with frameskip=1 when the preprocessing skips frames, as gymnasium requires")
        if stack_size is not None and stack_size <= 0:
            raise GpuEnvError(f"stack_size={stack_size} must be positive")
        width, height = (screen_size, screen_size) if isinstance(screen_size, int) else screen_size
        if width <= 0 or height <= 0:
            raise GpuEnvError(f"screen_size={screen_size} must be positive")
        cp = batch._cp
        self._cp = cp
        self.batch = batch
        self.frame_skip = frame_skip
        self.terminal_on_life_loss = terminal_on_life_loss
        self.scale_obs = scale_obs
        self.stack_size = stack_size
        self.width, self.height = int(width), int(height)
        n, h = batch.num_envs, batch.screen_height
        module = batch._module
        self._k = {name: module.get_function(name) for name in (
            "gpu_env_act_preprocessed", "gpu_env_max_pool", "gpu_env_area_resize", "gpu_env_area_resize_int",
            "gpu_env_frame_stack")}
        with cp.cuda.Device(batch.device):
            self._pp0 = cp.zeros((n, h, 160), dtype=cp.uint8)
            self._pp1 = cp.zeros((n, h, 160), dtype=cp.uint8)
            self._lives = cp.zeros(n, dtype=cp.int32)
            self._frame = cp.zeros((n, self.height, self.width), dtype=cp.uint8)
            self._stack = (cp.zeros((n, stack_size, self.height, self.width), dtype=cp.uint8)
                           if stack_size is not None else None)
            self._integer = h % self.height == 0 and 160 % self.width == 0
            if not self._integer:
                xi, xw = tap_arrays(160, self.width)
                yi, yw = tap_arrays(h, self.height)
                self._xi, self._xw, self._yi, self._yw = (cp.asarray(a) for a in (xi, xw, yi, yw))
            area = max(1, (h // self.height) * (160 // self.width))
            self._inv_area = np.float32(1.0 / area)

    def memory_bytes_per_env(self) -> int:
        """Device bytes of the preprocessing buffers per environment."""
        per = 2 * self.batch.screen_height * 160 + 4 + self.height * self.width
        return per + (self.stack_size or 0) * self.height * self.width

    def _grid(self, total: int) -> tuple[tuple[int], tuple[int]]:
        return (min((total + 255) // 256, 1 << 20),), (256,)

    def _resize(self) -> None:
        cp, b = self._cp, self.batch
        n, h = b.num_envs, b.screen_height
        grid, block = self._grid(n * self.height * self.width)
        if self._integer:
            self._k["gpu_env_area_resize_int"](grid, block, (
                self._pp0, np.int32(n), np.int32(h), np.int32(160), self._frame, np.int32(self.height),
                np.int32(self.width), self._inv_area))
        else:
            self._k["gpu_env_area_resize"](grid, block, (
                self._pp0, np.int32(n), np.int32(h), np.int32(160), self._frame, np.int32(self.height),
                np.int32(self.width), self._xi, self._xw, np.int32(self._xi.shape[0]), self._yi, self._yw,
                np.int32(self._yi.shape[0])))
        del cp

    def observe(self, stack_mode: Any) -> Any:
        """Max-pool, resize and (with ``stack_size``) push/refill the stack; returns the internal buffer.

        ``stack_mode`` uint8[N]: 0 keep, 1 push, 2 refill. The frame or stack returned is the
        preprocessor's own buffer, valid until the next call.
        """
        cp, b = self._cp, self.batch
        n = b.num_envs
        if self.frame_skip > 1:
            per_env = b.screen_height * 160
            grid, block = self._grid(n * per_env)
            self._k["gpu_env_max_pool"](grid, block, (self._pp0, self._pp1, np.uint64(per_env), np.uint64(per_env),
                                                      _NULL, np.int32(n)))
        self._resize()
        frame = self._frame
        if self._stack is not None:
            per = self.height * self.width
            grid, block = self._grid(n * per)
            depth = np.int32(self._stack.shape[1])
            self._k["gpu_env_frame_stack"](grid, block, (self._stack, frame, np.int32(n), depth, np.uint64(per),
                                                         stack_mode))
            frame = self._stack
        del cp
        return frame

    def _observe(self, stack_mode: Any) -> Any:
        frame = self.observe(stack_mode)
        cp = self._cp
        return frame.astype(cp.float32) / cp.float32(255.0) if self.scale_obs else frame.copy()

    def reset(self, mask: Any = None) -> Any:
        """After ``reset_game`` (and the caller's no-ops) on ``mask``: capture the first frame; returns obs."""
        cp, b = self._cp, self.batch
        with cp.cuda.Device(b.device):
            m = cp.ones(b.num_envs, dtype=cp.bool_) if mask is None else b._device_array(mask, cp.bool_, "mask")
            gray = b.get_screen_grayscale()
            self._pp0[m] = gray[m]
            self._pp1[m] = 0
            self._lives[m] = b.lives()[m]
            return self._observe(m.astype(cp.uint8) * cp.uint8(2))

    def step(self, actions: Any, mask: Any = None) -> tuple[Any, Any, Any, Any]:
        """``AtariPreprocessing.step`` on the envs in ``mask`` (default all): (obs, reward, terminated, truncated).

        ``actions``: int[N], indices into ALE's full action set. Envs outside the mask keep their
        state and stack; their reward is 0 and their flags False.
        """
        cp, b = self._cp, self.batch
        n = b.num_envs
        with cp.cuda.Device(b.device):
            a = b._device_array(actions, cp.int32, "actions")
            idx, count = b._indices(mask)
            rewards = cp.zeros(n, dtype=cp.float32)
            term = cp.zeros(n, dtype=cp.uint8)
            trunc = cp.zeros(n, dtype=cp.uint8)
            b._env_launch("gpu_env_act_preprocessed", idx, count, a, np.int32(self.frame_skip),
                          np.int32(self.terminal_on_life_loss), b._gray, self._pp0, self._pp1,
                          np.uint64(b.screen_height * 160), self._lives, rewards, term, trunc)
            stepped = cp.ones(n, dtype=cp.uint8) if mask is None else b._device_array(mask, cp.uint8, "mask")
            obs = self._observe(stepped)
            return obs, rewards, term.astype(cp.bool_), trunc.astype(cp.bool_)
