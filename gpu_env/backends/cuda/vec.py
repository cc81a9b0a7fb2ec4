"""The device engine of :class:`gpu_env.vector.AtariVecEnv` (``make_vec(..., backend="cuda", obs_format="torch")``).

One :class:`~gpu_env.backends.cuda.backend.CudaAtariBatch` (the batch ``AtariBatch(backend="cuda")`` wraps
too). A step is the ``gpu_env_vec_step`` kernel (gymnasium's AtariPreprocessing step of
``core/ale/preprocessing.h``, the source the CPU library runs, or the autoreset of the envs whose
episode ended: ``reset_game``, the no-ops, the first frame), then the observation kernels (max-pool,
INTER_AREA resize, frame stack). Masks, rewards, flags and observations are torch tensors on the GPU
(observations and rewards copied out of the engine's buffers, lives and frame numbers DLPack views).

What crosses to the host (docs/gpu_backend.md): on ``step`` nothing (a host action array is
uploaded, a device tensor read in place), except every ``noop_table_depth`` steps (default 64, with
``noop_max > 0``) one read of the per-env no-op cursors (int32[N]) to top up the table of no-op counts
pre-drawn on the host from each env's generator, in gymnasium's order; on ``reset`` the same read and
``load_rom``'s host bookkeeping when seeded. So the env reports ``episode`` (and with SAME_STEP
``final_obs`` / ``final_info``) on every step, does not detect stepping an ended env under DISABLED,
and does not range-check action indices in a device tensor (torch's device-side indexing fails).
Not on the device (:class:`~gpu_env.errors.NotImplementedYetError`): RGB preprocessing
(``grayscale_obs=False``), a stochastic ``frameskip``, preprocessing with ``frameskip > 1``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt
import torch

from gpu_env.backends.cuda.backend import CudaAtariBatch, to_torch
from gpu_env.backends.cuda.preprocess import CudaPreprocessor
from gpu_env.backends.options import VecOptions
from gpu_env.errors import GpuEnvError, NotImplementedYetError


class CudaEngine:
    """Steps :class:`~gpu_env.vector.AtariVecEnv` on a CUDA device (see the module docstring).

    ``opts.cuda``: ``cuda_device`` (CUDA ordinal), ``block_size`` (threads per block of the env kernels),
    ``noop_table_depth`` (no-op counts pre-drawn per env); ``rngs``: the env's generators (no-op counts).
    """

    on_device = True

    def __init__(self, opts: VecOptions, rngs: list[np.random.Generator]) -> None:
        if isinstance(opts.frameskip, tuple):
            raise NotImplementedYetError("a stochastic frameskip is not on the device yet: use backend='cpu', or an "
                                         "int frameskip")
        if opts.cuda["noop_table_depth"] <= 0:
            raise GpuEnvError(f"noop_table_depth={opts.cuda['noop_table_depth']} must be positive")
        if opts.preprocess and opts.inner_loops != 1:
            raise NotImplementedYetError("AtariPreprocessing with frameskip > 1 is not on the device yet: pass "
                                         "frameskip=1 (AtariPreprocessing's frame_skip does the skipping)")
        if opts.preprocess and not opts.pp["grayscale_obs"]:
            raise NotImplementedYetError("AtariPreprocessing with grayscale_obs=False (RGB) is not on the device yet: "
                                         "use grayscale_obs=True or backend='cpu'")
        self._o = opts
        self._rngs = rngs
        self.num_envs = opts.num_envs
        self._noop_depth = opts.cuda["noop_table_depth"]
        self.batch = CudaAtariBatch(opts.rom_id, opts.num_envs, frameskip=opts.batch_frameskip,
                                    repeat_action_probability=opts.repeat_action_probability,
                                    max_num_frames_per_episode=opts.max_frames, device=opts.cuda["cuda_device"],
                                    block_size=opts.cuda["block_size"])
        self._cp = self.batch.cp

    def allocate(self, frame_shape: tuple[int, ...], dtype: type[np.generic],
                 action_set: npt.NDArray[np.int64]) -> None:
        """Device buffers: the preprocessor's (two screens, lives, resized frame), the frame stack, the outputs."""
        o, cp, n = self._o, self._cp, self.num_envs
        self._pre: CudaPreprocessor | None = None
        if o.preprocess:
            self._pre = CudaPreprocessor(self.batch, frame_skip=int(o.pp["frame_skip"]), screen_size=o.pp_size,
                                         terminal_on_life_loss=bool(o.pp["terminal_on_life_loss"]))
        self._k_stack = self.batch.kernel("gpu_env_frame_stack")
        self._raw_shape = frame_shape[:-1] if o.preprocess and o.pp["grayscale_newaxis"] else frame_shape
        self._dev_stack = (cp.zeros((n, o.stack_size, *self._raw_shape), dtype=cp.uint8)
                           if o.stack_size is not None else None)
        self._rewards = cp.zeros(n, dtype=cp.float32)
        self._term = cp.zeros(n, dtype=cp.uint8)
        self._trunc = cp.zeros(n, dtype=cp.uint8)
        self._noop_cursor = cp.zeros(n, dtype=cp.int32)
        self._noop_host = np.zeros((n, 0), dtype=np.int32)
        self._noop_table: Any = None
        self.device: torch.device = to_torch(self._rewards).device
        wanted = o.device if o.device is not None else self.device
        if wanted.type != self.device.type or wanted.index not in (None, self.device.index):
            raise GpuEnvError(f"device={str(o.device)!r}: backend='cuda' returns tensors on {self.device} (the "
                              "batch's GPU); choose the GPU with cuda_device=, or pass device=None")
        self._noop_action = int(action_set[0])
        self._action_set_t = torch.from_numpy(action_set.astype(np.int32)).to(self.device)
        self._steps_since_refill = 0
        self._fill_noop_table(np.ones(n, dtype=np.bool_))

    def mask(self, host: npt.NDArray[np.bool_]) -> torch.Tensor:
        """Return ``host`` (bool[N]) as a device tensor."""
        return torch.from_numpy(host).to(self.device)

    def everyone(self) -> torch.Tensor:
        """Return a new mask of every env (device)."""
        return torch.ones(self.num_envs, dtype=torch.bool, device=self.device)

    def memory_bytes_per_env(self) -> int:
        """Device bytes per env: the batch, the preprocessor, the stack, the no-op table and the step outputs."""
        total = self.batch.memory_bytes_per_env() + (self._pre.memory_bytes_per_env() if self._pre else 0)
        if self._dev_stack is not None:
            total += int(np.prod(self._dev_stack.shape[1:]))
        return int(total) + 4 * self._noop_depth + 4 + 4 + 2 + 16

    def info_values(self) -> dict[str, torch.Tensor]:
        """Lives and frame numbers of every env (device int32[N] each)."""
        b = self.batch
        return {"lives": to_torch(b.lives()), "episode_frame_number": to_torch(b.episode_frame_number()),
                "frame_number": to_torch(b.frame_number())}

    # ----------------------------------------------------------------------------- no-op table
    def _fill_noop_table(self, redraw: npt.NDArray[np.bool_]) -> None:
        """Top up every env's pre-drawn no-op counts (one read of the cursors); ``redraw`` envs start afresh."""
        noop_max = int(self._o.pp["noop_max"]) if self._o.preprocess else 0
        if noop_max <= 0:
            return
        n, depth = self.num_envs, self._noop_depth
        if self._noop_table is None:
            used = np.full(n, depth, dtype=np.int64)
            table = np.empty((n, depth), dtype=np.int32)
        else:
            used = np.where(redraw, depth, self._noop_cursor.get()).astype(np.int64)
            table = self._noop_host.copy()
        for i in np.flatnonzero(used):  # only envs that reset since the last fill (or are new)
            keep = depth - int(used[i])
            table[i, :keep] = table[i, depth - keep:]
            table[i, keep:] = self._rngs[i].integers(1, noop_max + 1, size=depth - keep)
        self._noop_host = table
        self._noop_table = self._cp.asarray(table)
        self._noop_cursor = self._cp.zeros(n, dtype=self._cp.int32)
        self._steps_since_refill = 0

    # ----------------------------------------------------------------------------- kernels
    def _launch_step(self, actions: Any, resetting: Any) -> None:
        """``gpu_env_vec_step``: step the envs (``actions``, or None) and reset those in ``resetting`` (or None)."""
        self.batch.vec_step(actions, resetting, self._pre, self._noop_table, self._noop_depth, self._noop_cursor,
                            self._noop_action, self._rewards, self._term, self._trunc)

    def _frame(self) -> Any:
        """Return the current frame per env (device, uint8), before stacking."""
        b = self.batch
        if self._pre is not None:
            return self._pre.observe()
        if self._o.obs_type == "rgb":
            return b.get_screen_rgb()
        if self._o.obs_type == "grayscale":
            return b.get_screen_grayscale()
        return b.get_ram()

    def _observe(self, stack_mode: Any) -> torch.Tensor:
        """Observation tensor after a step/reset; ``stack_mode`` uint8[N]: 0 keep, 1 push, 2 refill (device)."""
        frame = self._frame()
        if self._dev_stack is not None:
            per = int(np.prod(self._raw_shape))
            grid, block = self.batch.elementwise_grid(self.num_envs * per)
            self._k_stack(grid, block, (self._dev_stack, self._cp.ascontiguousarray(frame), np.int32(self.num_envs),
                                        np.int32(self._dev_stack.shape[1]), np.uint64(per), stack_mode))
            frame = self._dev_stack
        obs: torch.Tensor = to_torch(frame).clone()
        if self._o.preprocess and self._o.pp["scale_obs"]:
            obs = obs.to(torch.float32) / 255.0
        if self._o.preprocess and self._o.pp["grayscale_newaxis"]:
            obs = obs.unsqueeze(-1)
        return obs

    def _device_mask(self, mask: torch.Tensor) -> Any:
        """``mask`` (device bool[N]) as the uint8[N] CuPy array the kernels read."""
        return self._cp.from_dlpack(mask.to(torch.uint8).contiguous())

    # ----------------------------------------------------------------------------- env API
    def load_rom(self, mask: npt.NDArray[np.bool_], seeds: npt.NDArray[np.uint32]) -> None:
        """``loadROM`` of the envs in ``mask`` with ALE seeds ``seeds`` (a seeded reset), on the batch now."""
        self.batch.load_rom(mask, seeds)

    def close(self) -> None:
        """Nothing to release: the batch frees its device memory when collected."""

    def actions(self, actions: Any) -> Any:
        """ALE action numbers int32[N] as a device array (a device tensor read in place, or checked host indices)."""
        n = self.num_envs
        if isinstance(actions, torch.Tensor):
            if actions.shape != (n,) or actions.dtype.is_floating_point or actions.dtype == torch.bool:
                raise GpuEnvError(f"actions must be int[{n}], got dtype {actions.dtype} and shape "
                                  f"{tuple(actions.shape)}")
            index = actions.to(self.device)
        else:
            index = torch.from_numpy(actions.astype(np.int64)).to(self.device)
        return self._cp.from_dlpack(self._action_set_t[index.long()].contiguous())

    def reset(self, mask: npt.NDArray[np.bool_], reseed: Callable[[npt.NDArray[np.bool_]], Any]) -> torch.Tensor:
        """``reset`` of the envs in ``mask`` after ``reseed(mask)`` (the env's seeding); every env's observation."""
        self._fill_noop_table(reseed(mask))
        mask_dev = self._cp.asarray(mask.astype(np.uint8))
        self._launch_step(None, mask_dev)
        self._steps_since_refill += 1  # this reset took one entry of each reset env's no-op table
        return self._observe(mask_dev * self._cp.uint8(2))

    def step(self, actions: Any, resetting: torch.Tensor | None
             ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        """Step the envs, or reset those in ``resetting`` (in the same launch); observations, rewards, flags."""
        cp = self._cp
        if self._noop_table is not None and self._steps_since_refill >= self._noop_depth:
            self._fill_noop_table(np.zeros(self.num_envs, dtype=np.bool_))
        self._steps_since_refill += 1
        reset_dev = self._device_mask(resetting) if resetting is not None else None
        self._launch_step(actions, reset_dev)
        obs = self._observe(reset_dev + cp.uint8(1) if reset_dev is not None else cp.ones(self.num_envs, cp.uint8))
        return obs, to_torch(self._rewards).clone(), to_torch(self._term).bool(), to_torch(self._trunc).bool()

    def reset_ended(self, done: torch.Tensor, obs: torch.Tensor) -> torch.Tensor:
        """Reset the envs in ``done`` (SAME_STEP); return ``obs`` with their first observations in place."""
        done_dev = self._device_mask(done)
        self._launch_step(None, done_dev)
        first = self._observe(done_dev * self._cp.uint8(2))
        return torch.where(done.view(-1, *([1] * (obs.dim() - 1))), first, obs)
