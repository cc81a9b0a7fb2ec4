"""``make_vec(..., backend="cuda")``: the gymnasium ``VectorEnv`` of :mod:`gpu_env.vector` kept on the device.

Same contract as :class:`gpu_env.vector.AtariVecEnv` (same options, spaces, seeding, noop draws,
autoreset modes, info keys), over one :class:`~gpu_env.cuda.backend.CudaAtariBatch` — the batch
``AtariBatch(backend="cuda")`` also wraps. One step is: the ``gpu_env_vec_step`` kernel (the env step
— gymnasium's AtariPreprocessing step of ``core/ale/preprocessing.h``, the source the CPU library
runs too — or the autoreset of the envs whose episode ended: ``reset_game``, the no-ops, the first
frame), then the observation kernels (max-pool, INTER_AREA resize, frame stack), then episode
statistics as torch ops. Observations, rewards, terminated, truncated and the info tensors are
torch tensors on the GPU. Copies on the device, every step: the observation is a copy of the
env's frame (or frame-stack) buffer and the rewards a copy of the reward buffer (``clone()``: the
buffers are overwritten by the next step, the tensors returned are the caller's); the flags are
converted to bool tensors; lives and frame numbers are views of the batch's status words (DLPack).

What crosses to the host (docs/gpu_backend.md):

- on :meth:`CudaVecEnv.step`: nothing, except the refill below. Device tensors as actions are read in
  place (a host array is uploaded). ``info["episode"]`` / ``info["_episode"]`` are present on every step (zeros where no
  episode ended), so the host learns of episode ends only when it reads them; likewise
  ``final_obs`` / ``final_info`` with SAME_STEP are present on every step.
- every ``noop_table_depth`` steps (default 64), when ``noop_max > 0``: one read of the per-env no-op
  cursors (int32[N]) to top up the table of pre-drawn no-op counts (they are drawn on the host from
  each env's numpy generator, in gymnasium's order, so runs equal the CPU backend's);
- on :meth:`CudaVecEnv.reset`: the same cursor read, and ``load_rom``'s host bookkeeping when seeded.

Not on the device (raise :class:`~gpu_env.errors.NotImplementedYetError`): RGB preprocessing
(``grayscale_obs=False``), a stochastic ``frameskip``, preprocessing with ``frameskip > 1``. With
``autoreset_mode=DISABLED`` stepping an ended env is not detected (that needs a device read).
Action indices in a device tensor are not range-checked on the host (an index outside the action
set fails in torch's device-side indexing); host arrays are checked.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import numpy.typing as npt
import torch
from gymnasium.vector import AutoresetMode

from gpu_env.cuda.backend import CudaAtariBatch, to_torch
from gpu_env.cuda.preprocess import CudaPreprocessor
from gpu_env.env_ids import env_id_settings
from gpu_env.errors import GpuEnvError, NotImplementedYetError
from gpu_env.vector import AtariVecEnv

NOOP_TABLE_DEPTH = 64


def _batched(values: dict[str, Any], mask: torch.Tensor, *, all_true: bool = False) -> dict[str, Any]:
    """:meth:`AtariVecEnv._batched` on device tensors, without a host sync.

    ``key``/``_key`` pairs, zeros outside ``mask`` (device bool[N]); ``all_true``: ``mask`` is every env,
    so the values are kept as they are.
    """
    out: dict[str, Any] = {}
    for key, value in values.items():
        if isinstance(value, dict):
            out[key] = _batched(value, mask, all_true=all_true)
        else:
            out[key] = value if all_true else torch.where(mask, value, torch.zeros_like(value))
        out[f"_{key}"] = mask
    return out


class CudaVecEnv(AtariVecEnv):
    """:class:`~gpu_env.vector.AtariVecEnv` with every step on a CUDA device (see the module docstring).

    Extra keyword arguments: ``cuda_device`` (CUDA ordinal, default 0), ``block_size`` (threads per
    block of the env kernels), ``noop_table_depth`` (no-op counts pre-drawn per env).
    """

    def __init__(self, env_id: str, num_envs: int, *, cuda_device: int = 0, block_size: int = 128,
                 noop_table_depth: int = NOOP_TABLE_DEPTH, **kwargs: Any) -> None:
        if kwargs.get("obs_format", "torch") != "torch" or kwargs.get("render_mode") is not None:
            raise GpuEnvError("backend='cuda' returns CUDA tensors and does not render: use obs_format='torch' and "
                              "render_mode=None, or backend='cpu'")
        frameskip = kwargs.get("frameskip")
        if isinstance(frameskip if frameskip is not None else env_id_settings(env_id).settings["frameskip"], tuple):
            raise NotImplementedYetError("a stochastic frameskip is not on the device yet: use backend='cpu', or an "
                                         "int frameskip")
        if noop_table_depth <= 0:
            raise GpuEnvError(f"noop_table_depth={noop_table_depth} must be positive")
        self._cuda_device = cuda_device
        self._block_size = block_size
        self._noop_depth = int(noop_table_depth)
        requested = kwargs.pop("device", None)
        super().__init__(env_id, num_envs, backend="cpu", **kwargs)
        self.device = self._obs_tensor_device()
        wanted = torch.device(requested) if requested is not None else self.device
        if wanted.type != self.device.type or wanted.index not in (None, self.device.index):
            raise GpuEnvError(f"device={requested!r}: backend='cuda' returns tensors on {self.device} (the batch's "
                              f"GPU); choose the GPU with cuda_device=, or pass device=None")
        self._autoreset_dev = self._cp.zeros(num_envs, dtype=self._cp.uint8)
        self._ep_return_t = torch.zeros(num_envs, dtype=torch.float64, device=self.device)
        self._ep_length_t = torch.zeros(num_envs, dtype=torch.int64, device=self.device)
        self._ep_start_t = torch.full((num_envs,), time.perf_counter(), dtype=torch.float64, device=self.device)
        self._action_set_t = torch.from_numpy(self._action_set.astype(np.int32)).to(self.device)
        self._steps_since_refill = 0
        self._fill_noop_table(np.ones(num_envs, dtype=np.bool_))

    # ----------------------------------------------------------------------------- setup
    def _make_batch(self, backend: str, repeat_action_probability: float, frameskip: int, max_frames: int,
                    num_threads: int | None) -> Any:
        """Build the device batch (``backend`` is the base class's placeholder; ``num_threads`` has no use here)."""
        del backend, num_threads
        if self._preprocess and self._inner_loops_wanted(frameskip) != 1:
            raise NotImplementedYetError("AtariPreprocessing with frameskip > 1 is not on the device yet: pass "
                                         "frameskip=1 (AtariPreprocessing's frame_skip does the skipping)")
        if self._preprocess and not self._pp["grayscale_obs"]:
            raise NotImplementedYetError("AtariPreprocessing with grayscale_obs=False (RGB) is not on the device yet: "
                                         "use grayscale_obs=True or backend='cpu'")
        self._dev = CudaAtariBatch(self.rom_id, self.num_envs, repeat_action_probability=repeat_action_probability,
                                   frameskip=frameskip, max_num_frames_per_episode=max_frames,
                                   device=self._cuda_device, block_size=self._block_size)
        self._cp = self._dev.cp
        return self._dev

    def _inner_loops_wanted(self, inner_skip: int) -> int:
        return 1 if isinstance(self._frameskip, tuple) or inner_skip == self._frameskip else int(self._frameskip)

    def _setup_buffers(self, frame_shape: tuple[int, ...], dtype: type[np.generic], stack_size: int | None) -> None:
        """Device buffers: the preprocessor's (two screens, lives, resized frame) and the frame stack."""
        cp, n = self._cp, self.num_envs
        self._pre: CudaPreprocessor | None = None
        if self._preprocess:
            self._pre = CudaPreprocessor(self._dev, frame_skip=int(self._pp["frame_skip"]),
                                         screen_size=self._pp_size,
                                         terminal_on_life_loss=bool(self._pp["terminal_on_life_loss"]))
        self._k_stack = self._dev.kernel("gpu_env_frame_stack")
        self._frame_shape = frame_shape
        raw_shape = frame_shape[:-1] if self._pp.get("grayscale_newaxis") and self._preprocess else frame_shape
        self._raw_shape: tuple[int, ...] = tuple(raw_shape)
        self._dev_stack = (cp.zeros((n, stack_size, *self._raw_shape), dtype=cp.uint8)
                           if stack_size is not None else None)
        self._rewards = cp.zeros(n, dtype=cp.float32)
        self._term = cp.zeros(n, dtype=cp.uint8)
        self._trunc = cp.zeros(n, dtype=cp.uint8)
        self._noop_cursor = cp.zeros(n, dtype=cp.int32)
        self._noop_host = np.zeros((n, 0), dtype=np.int32)
        self._noop_table: Any = None

    def _obs_tensor_device(self) -> torch.device:
        device: torch.device = to_torch(self._rewards).device
        return device

    def memory_bytes_per_env(self) -> int:
        """Device bytes per env: the batch, the preprocessor, the stack, the no-op table and the step outputs."""
        total = self._dev.memory_bytes_per_env() + (self._pre.memory_bytes_per_env() if self._pre else 0)
        if self._dev_stack is not None:
            total += int(np.prod(self._dev_stack.shape[1:]))
        return int(total) + 4 * self._noop_depth + 4 + 4 + 2 + 16

    # ----------------------------------------------------------------------------- no-op table
    def _noop_max(self) -> int:
        return int(self._pp["noop_max"]) if self._preprocess else 0

    def _fill_noop_table(self, redraw: npt.NDArray[np.bool_]) -> None:
        """Top up every env's pre-drawn no-op counts (one read of the cursors); ``redraw`` envs start afresh."""
        noop_max = self._noop_max()
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
            table[i, keep:] = self._env_rngs[i].integers(1, noop_max + 1, size=depth - keep)
        self._noop_host = table
        self._noop_table = self._cp.asarray(table)
        self._noop_cursor = self._cp.zeros(n, dtype=self._cp.int32)
        self._steps_since_refill = 0

    # ----------------------------------------------------------------------------- kernels
    def _launch_step(self, actions: Any, resetting: Any) -> None:
        """``gpu_env_vec_step``: step the envs (``actions``, or None) and reset those in ``resetting`` (or None)."""
        self._dev.vec_step(actions, resetting, self._pre, self._noop_table, self._noop_depth, self._noop_cursor,
                           int(self._action_set[0]), self._rewards, self._term, self._trunc)

    def _frame(self) -> Any:
        """Return the current frame per env (device, uint8 or float32), before stacking."""
        b, pre = self._dev, self._pre
        if pre is not None:
            return pre.observe()
        if self._obs_type == "rgb":
            return b.get_screen_rgb()
        if self._obs_type == "grayscale":
            return b.get_screen_grayscale()
        return b.get_ram()

    def _observe_dev(self, stack_mode: Any) -> torch.Tensor:
        """Observation tensor after a step/reset; ``stack_mode`` uint8[N]: 0 keep, 1 push, 2 refill (device)."""
        frame = self._frame()
        if self._dev_stack is not None:
            per = int(np.prod(self._raw_shape))
            grid, block = self._dev.elementwise_grid(self.num_envs * per)
            self._k_stack(grid, block, (self._dev_stack, self._cp.ascontiguousarray(frame), np.int32(self.num_envs),
                                np.int32(self._dev_stack.shape[1]), np.uint64(per), stack_mode))
            frame = self._dev_stack
        obs: torch.Tensor = to_torch(frame).clone()
        if self._preprocess and self._pp["scale_obs"]:
            obs = obs.to(torch.float32) / 255.0
        if self._preprocess and self._pp["grayscale_newaxis"]:
            obs = obs.unsqueeze(-1)
        return obs

    def _flags(self) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        return (to_torch(self._rewards).clone(), to_torch(self._term).bool(), to_torch(self._trunc).bool())

    # ----------------------------------------------------------------------------- gymnasium API
    def reset(self, *, seed: int | list[int | None] | None = None, options: dict[str, Any] | None = None
              ) -> tuple[torch.Tensor, dict[str, Any]]:
        """Reset all envs (or ``options["reset_mask"]``, a host bool array); seeding as the CPU env's."""
        mask = np.ones(self.num_envs, dtype=np.bool_)
        if options is not None and "reset_mask" in options:
            given = options["reset_mask"]
            mask = given.detach().cpu().numpy() if isinstance(given, torch.Tensor) else np.asarray(given)
            if mask.dtype != np.bool_ or mask.shape != (self.num_envs,) or not mask.any():
                raise GpuEnvError(f"options['reset_mask'] must be a bool[{self.num_envs}] array with a True entry")
        seeds = self._seed_list(seed)
        self._seeded_with = [None] * self.num_envs
        reload = self._reseed(mask, seeds)
        self._fill_noop_table(reload)
        cp = self._cp
        mask_dev = cp.asarray(mask.astype(np.uint8))
        self._launch_step(None, mask_dev)
        self._steps_since_refill += 1  # this reset took one entry of each reset env's no-op table
        obs = self._observe_dev(mask_dev * cp.uint8(2))
        mask_t = torch.from_numpy(mask).to(self.device)
        self._reset_stats(mask_t)
        self._autoreset_dev = (self._autoreset_dev * (mask_dev == 0)).astype(cp.uint8)
        info = self._info()
        self._add_seeds_info(info, mask, seeds)
        return obs, info

    def _seeded_batch(self) -> Any:
        """Return the device batch: seeded resets reload its ROMs."""
        return self._dev

    def _device_actions(self, actions: Any) -> Any:
        """ALE action numbers int32[N] as a device array (device tensors read in place, host arrays checked)."""
        n = self.num_envs
        if isinstance(actions, torch.Tensor):
            if actions.shape != (n,) or actions.dtype.is_floating_point or actions.dtype == torch.bool:
                raise GpuEnvError(f"actions must be int[{n}], got dtype {actions.dtype} and shape "
                                  f"{tuple(actions.shape)}")
            index = actions.to(self.device)
        else:
            a = np.asarray(actions)
            if a.shape != (n,) or a.dtype.kind not in "iu":
                raise GpuEnvError(f"actions must be int[{n}], got dtype {a.dtype} and shape {a.shape}")
            if (a < 0).any() or (a >= len(self._action_set)).any():
                raise GpuEnvError(f"actions must be in [0, {len(self._action_set)}), got {a!r}")
            index = torch.from_numpy(a.astype(np.int64)).to(self.device)
        return self._cp.from_dlpack(self._action_set_t[index.long()].contiguous())

    def step(self, actions: Any) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, dict[str, Any]]:
        """One vector step on the device (autoreset as ``metadata["autoreset_mode"]``); host reads: module docstring."""
        cp = self._cp
        mode = self._autoreset_mode
        ale_actions = self._device_actions(actions)
        if self._noop_table is not None and self._steps_since_refill >= self._noop_depth:
            self._fill_noop_table(np.zeros(self.num_envs, dtype=np.bool_))
        self._steps_since_refill += 1
        next_step = mode == AutoresetMode.NEXT_STEP
        resetting = self._autoreset_dev if next_step else None
        self._launch_step(ale_actions, resetting)
        stack_mode = self._autoreset_dev + cp.uint8(1) if next_step else cp.ones(self.num_envs, dtype=cp.uint8)
        obs = self._observe_dev(stack_mode)
        reward, term, trunc = self._flags()
        now = time.perf_counter()
        if next_step:
            was_reset = to_torch(self._autoreset_dev).bool()
            self._reset_stats(was_reset, now)
            stepped = ~was_reset
        else:
            stepped = torch.ones(self.num_envs, dtype=torch.bool, device=self.device)
        self._ep_return_t += torch.where(stepped, reward.to(torch.float64), 0.0)
        self._ep_length_t += stepped.to(torch.int64)
        done = term | trunc
        values = self._env_values()
        episode = self._episode_info_dev(done, now)
        info = {**self._info(values), **episode}
        if mode == AutoresetMode.SAME_STEP:
            # the ended envs' info with "episode", batched as gymnasium's per-env RecordEpisodeStatistics
            final_info = {**_batched(values, done), **episode}
            final_obs = torch.where(self._expand_t(done, obs), obs, torch.zeros_like(obs))
            done_dev = cp.from_dlpack(done.to(torch.uint8).contiguous())
            self._launch_step(None, done_dev)
            obs = torch.where(self._expand_t(done, obs), self._observe_dev(done_dev * cp.uint8(2)), obs)
            self._reset_stats(done, now)
            info = self._info()
            info.update({"final_obs": final_obs, "_final_obs": done, "final_info": final_info, "_final_info": done})
        elif next_step:
            self._autoreset_dev = cp.from_dlpack(done.to(torch.uint8).contiguous())
        return obs, reward, term, trunc, info

    def _expand_t(self, mask: torch.Tensor, like: torch.Tensor) -> torch.Tensor:
        return mask.view(-1, *([1] * (like.dim() - 1)))

    def _reset_stats(self, mask: torch.Tensor, now: float | None = None) -> None:
        """Start new episode statistics for the envs in ``mask`` (device bool[N])."""
        self._ep_return_t = torch.where(mask, 0.0, self._ep_return_t)
        self._ep_length_t = torch.where(mask, 0, self._ep_length_t)
        start = time.perf_counter() if now is None else now
        self._ep_start_t = torch.where(mask, start, self._ep_start_t)

    def _env_values(self) -> dict[str, torch.Tensor]:
        """Lives and frame numbers of every env (device int32[N] each)."""
        b = self._dev
        return {"lives": to_torch(b.lives()), "episode_frame_number": to_torch(b.episode_frame_number()),
                "frame_number": to_torch(b.frame_number())}

    def _info(self, values: dict[str, torch.Tensor] | None = None) -> dict[str, Any]:
        """Lives and frame numbers (``values``, default: read now), ``_key`` masks all true."""
        ones = torch.ones(self.num_envs, dtype=torch.bool, device=self.device)
        return _batched(self._env_values() if values is None else values, ones, all_true=True)

    def _episode_info_dev(self, done: torch.Tensor, now: float) -> dict[str, Any]:
        """``RecordEpisodeStatistics``' ``episode`` / ``_episode`` on every step: values where ``done``, else 0."""
        return _batched({"episode": {
            "r": self._ep_return_t, "l": self._ep_length_t, "t": torch.round(now - self._ep_start_t, decimals=6),
            "frames": to_torch(self._dev.episode_frame_number()),
        }}, done)
