"""``PoolEngine``: the adapter of :class:`gpu_env.vector.AtariVecEnv` (backend ``"cpu"``) over the native pool.

:class:`PoolEngine` steps a :class:`~gpu_env.backends.native_pool.NativePool` of :data:`GYM_RULES` over an
:class:`~gpu_env.atari_batch.AtariBatch`'s envs: per env, ale-py's ``AtariEnv`` (its frame skip, a
stochastic one drawn natively from the env's numpy generator; ALE's sticky actions), then gymnasium's
``AtariPreprocessing`` when any of its options is given (no-ops from the same generator, the max-pool
and INTER_AREA resize), then ``FrameStackObservation`` (filled with the reset frame, as gymnasium's
default ``padding_type="reset"``), all in the pool's worker threads (``WrapEnv`` of ``core/ale/wrap_rules.h``,
``native/env_pool.cpp``). The pool returns uint8 observations; ``scale_obs`` (float32 ``/ 255``) and
``grayscale_newaxis`` are applied here. Masks, rewards and flags are numpy arrays; observations are
torch tensors on ``device`` (the CPU unless given), over the pool's new output arrays (no copy on the CPU).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt
import torch

from gpu_env.atari_batch import AtariBatch
from gpu_env.backends.native_pool import (
    GYM_PREPROCESSED,
    GYM_RAM,
    GYM_RULES,
    GYM_SCREEN,
    RESET,
    STEP,
    NativePool,
    pcg64_words,
)
from gpu_env.backends.options import VecOptions
from gpu_env.errors import GpuEnvError

BoolArray = npt.NDArray[np.bool_]
Reseed = Callable[[BoolArray], Any]
_WANTED = ("int_reward", "terminated", "truncated", "lives", "frame_number", "episode_frame_number")
_INFO = ("lives", "episode_frame_number", "frame_number")


class PoolEngine:
    """Steps :class:`~gpu_env.vector.AtariVecEnv` on the native pool (see the module docstring).

    ``rngs``: the env's per-env generators; the pool draws from copies of their states (set here, and
    again for each env a seeded reset replaces: the env's ``_reseed`` puts the new generator in ``rngs``).
    """

    on_device = False

    def __init__(self, opts: VecOptions, rngs: list[np.random.Generator]) -> None:
        self._o = opts
        self._rngs = rngs
        self.num_envs = opts.num_envs
        self.device = opts.device if opts.device is not None else torch.device("cpu")
        self.batch = AtariBatch(opts.rom_id, opts.num_envs, backend="cpu", seeds=None,
                                repeat_action_probability=opts.repeat_action_probability, frameskip=1,
                                max_num_frames_per_episode=opts.max_frames, num_threads=1)
        self._ale_seeds = np.full(self.num_envs, -1, dtype=np.int64)  # of the next reset (load_rom)
        self._everyone = np.arange(self.num_envs)
        self._info: dict[str, npt.NDArray[np.int32]] = {}

    def allocate(self, frame_shape: tuple[int, ...], dtype: type[np.generic],
                 action_set: npt.NDArray[np.int64]) -> None:
        """Start the pool: its rules, screens, resize and frame stack for observations of ``frame_shape``."""
        o, pp = self._o, self._o.pp
        low, high = o.frameskip if isinstance(o.frameskip, tuple) else (o.frameskip, 0)
        h = self.batch.screen_shape[0]
        if o.preprocess:
            obs, grayscale = GYM_PREPROCESSED, bool(pp["grayscale_obs"])
            width, height = o.pp_size
            size = (height, width)
            frame: tuple[int, ...] = (height, width) if grayscale else (height, width, 3)
            rules = [low, high, int(pp["noop_max"]), int(pp["frame_skip"]), 0, obs,
                     int(bool(pp["terminal_on_life_loss"]))]
        else:
            obs = {"rgb": GYM_SCREEN, "grayscale": GYM_SCREEN, "ram": GYM_RAM}[o.obs_type]
            grayscale = o.obs_type != "rgb"
            size = (h, 160)
            frame = {"rgb": (h, 160, 3), "grayscale": (h, 160), "ram": (128,)}[o.obs_type]
            rules = [low, high, 0, 1, 0, obs, 0]
        stack = o.stack_size if o.stack_size is not None else 1
        shape = (o.stack_size, *frame) if o.stack_size is not None else frame
        self._newaxis = o.preprocess and grayscale and bool(pp["grayscale_newaxis"])
        self._scale = o.preprocess and bool(pp["scale_obs"])
        self.pool = NativePool(self.batch.native_backend(), GYM_RULES, rules, np.zeros(self.num_envs), action_set,
                               grayscale, size, stack, shape, o.num_threads)
        # AtariEnv.__init__'s generators (the env's): the pool draws from their states from now on.
        self.pool.np_random(self._everyone, [pcg64_words(g) for g in self._rngs], now=True)

    def mask(self, host: BoolArray) -> BoolArray:
        """Return ``host`` (bool[N]): the host engine's masks are numpy arrays."""
        return host

    def everyone(self) -> BoolArray:
        """Return a new mask of every env."""
        return np.ones(self.num_envs, dtype=np.bool_)

    def actions(self, actions: npt.NDArray[Any]) -> npt.NDArray[Any]:
        """Return the checked action indices: the pool maps them to ALE actions itself."""
        return actions

    def info_values(self) -> dict[str, npt.NDArray[np.int32]]:
        """Return lives and frame numbers of every env after the last call (int32[N] each)."""
        return self._info

    def memory_bytes_per_env(self) -> int:
        """Raise: the count is of device memory."""
        raise GpuEnvError("memory_bytes_per_env() counts device memory: backend='cuda' only")

    def load_rom(self, mask: BoolArray, seeds: npt.NDArray[np.uint32]) -> None:
        """Make the next reset of the envs in ``mask`` a seeded one: ``loadROM`` with ``seeds[i]``, new generators.

        The new generators are those the env just put in ``rngs`` (``AtariEnv.seed_game``); the pool
        reloads the ROM with the env's mode and difficulty (``AtariEnv.load_game``) and restores the
        generator again if a no-op of that reset ends the game (gymnasium resets with the same seed).
        """
        ids = np.flatnonzero(mask)
        self._ale_seeds[ids] = seeds[ids]
        self.pool.np_random(ids, [pcg64_words(self._rngs[i]) for i in ids], now=False)

    def close(self) -> None:
        """Stop the pool's worker threads."""
        self.pool.close()

    # ----------------------------------------------------------------------------- pool calls
    def _run(self, ids: npt.NDArray[np.integer[Any]], ops: npt.NDArray[np.int32],
             actions: npt.NDArray[Any] | None = None) -> dict[str, Any]:
        """Run ``ops`` on envs ``ids`` (the pending seeds with their resets); every env's outputs.

        ``"obs"``: a new array the workers write each env's row of (no copy in the calling thread).
        """
        seeds = self._ale_seeds[ids]
        obs = np.empty((self.num_envs, *self.pool.obs_shape), dtype=np.uint8)
        self.pool.obs_rows(obs)  # the pool holds `obs` until the next call (a Ctrl-C mid-run writes no freed rows)
        out = self.pool.run_all(ids, ops, _WANTED, actions, seeds=seeds)
        out["obs"] = obs
        self._ale_seeds[ids] = -1
        self._info = {k: out[k] for k in _INFO}
        return out

    def _obs(self, obs: npt.NDArray[np.uint8]) -> torch.Tensor:
        """Return the observations from the pool's uint8 ones (``scale_obs``, ``grayscale_newaxis``, ``device``)."""
        frames: npt.NDArray[Any] = obs
        if self._scale:
            frames = np.asarray(frames, dtype=np.float32) / 255.0
        if self._newaxis:
            frames = frames[..., None]
        return torch.from_numpy(frames).to(self.device)

    def _reset(self, mask: BoolArray) -> torch.Tensor:
        """Reset the envs in ``mask`` (seeded where :meth:`load_rom` left a seed); every env's observation."""
        ids = np.flatnonzero(mask)
        return self._obs(self._run(ids, np.full(len(ids), RESET, dtype=np.int32))["obs"])

    def reset(self, mask: BoolArray, reseed: Reseed) -> torch.Tensor:
        """``reset`` of the envs in ``mask`` after ``reseed(mask)`` (the env's seeding); every env's observation."""
        reseed(mask)
        return self._reset(mask)

    def reset_ended(self, done: BoolArray, obs: torch.Tensor) -> torch.Tensor:
        """Reset the envs in ``done`` without a seed (SAME_STEP); return every env's observation."""
        return self._reset(done)

    def step(self, actions: npt.NDArray[Any], resetting: BoolArray | None
             ) -> tuple[torch.Tensor, npt.NDArray[np.float64], BoolArray, BoolArray]:
        """Step the envs, or reset those in ``resetting`` (reward 0, flags false); every env's observation."""
        ops = (np.where(resetting, RESET, STEP).astype(np.int32) if resetting is not None
               else np.full(self.num_envs, STEP, dtype=np.int32))
        out = self._run(self._everyone, ops, actions)
        return self._obs(out["obs"]), out["int_reward"].astype(np.float64), out["terminated"], out["truncated"]
