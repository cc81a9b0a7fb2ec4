"""``PresetVecEnv``: SB3's ``AtariWrapper`` or CleanRL's ``make_env`` per env, stepped by the native pool.

Each env's wrapper stack is ``WrapEnv`` of ``gpu_env/core/ale/wrap_rules.h`` (the rules, fact by
fact), run for all envs by the worker threads of :class:`~gpu_env.backends.native_pool.NativePool`
with the observation of the preset (SB3: max of the two RGB screens, cv2's RGB2GRAY, INTER_AREA to
84x84, uint8[84, 84, 1]; CleanRL: max, INTER_AREA on RGB, gymnasium's grayscale weights, a stack of 4,
uint8[4, 84, 84]). Each env's numpy generator (NOOP counts, frame-skip ranges) is numpy's PCG64,
seeded as ``AtariEnv.reset(seed)`` seeds it. ``reset``/``step`` return what gymnasium's
``SyncVectorEnv`` over the client's wrappers returns (seeds ``seed + i``, the three autoreset modes,
``final_obs``/``final_info`` under ``SAME_STEP``, infos batched as ``VectorEnv._add_info`` batches them);
``episode["t"]`` is wall-clock time (SB3's ``Monitor``: since the env was made; CleanRL's: since the
env's last episode ended or it was reset). :mod:`gpu_env.sb3_vec` steps the same pool as SB3's
``DummyVecEnv`` does.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import numpy.typing as npt
from gymnasium import spaces
from gymnasium.utils import seeding
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from gpu_env.atari_batch import ACTION_NAMES
from gpu_env.autoreset import autoreset_mode as parse_autoreset_mode
from gpu_env.autoreset import checked_actions, final_obs_array, refuse_ended
from gpu_env.backends.native_pool import PRESET_RULES, RESET, STEP, STEP_RESET, NativePool, pcg64_words
from gpu_env.env_ids import check_frameskip
from gpu_env.errors import GpuEnvError
from gpu_env.vector import spread_seeds

_OUT = ("obs", "final_obs", "reward", "terminated", "truncated", "preset")
_INFO_KEYS = (("lives", 4), ("episode_frame_number", 5), ("frame_number", 6))
SHAPES = {"sb3": (84, 84, 1), "cleanrl": (4, 84, 84)}  # one env's observation
_NOOP_MAX, _SKIP = 30, 4


class PresetVecEnv(VectorEnv):
    """gymnasium ``VectorEnv`` of ``num_envs`` ``preset`` stacks (``"sb3"``/``"cleanrl"``; see the module docstring).

    Args:
        settings: the env's ``AtariEnv`` settings (``gpu_env.presets.env_settings``).
        num_envs: number of environments.
        preset: ``"sb3"`` or ``"cleanrl"``.
        autoreset_mode: gymnasium's autoreset mode (default ``NEXT_STEP``, as ``SyncVectorEnv``).
        seed: used by the first ``reset()`` that has no seed of its own (as SB3's ``VecEnv.seed``).
        num_threads: the pool's worker threads.
        metadata: extra ``metadata`` entries.

    """

    def __init__(self, settings: dict[str, Any], num_envs: int, preset: str,
                 autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP, seed: int | None = None,
                 num_threads: int = 1, metadata: dict[str, Any] | None = None) -> None:
        from gpu_env.atari_batch import AtariBatch

        self.autoreset_mode = parse_autoreset_mode(autoreset_mode)
        low, high = check_frameskip(settings.get("frameskip", 4))
        batch = AtariBatch(settings["game"], num_envs, repeat_action_probability=float(
            settings.get("repeat_action_probability", 0.25)), frameskip=1,
            max_num_frames_per_episode=int(settings.get("max_num_frames_per_episode") or 0))
        full = bool(settings.get("full_action_space", False))
        self.action_set = batch.legal_action_set() if full else batch.minimal_action_set()
        fire = "FIRE" in self.get_action_meanings()
        shape = SHAPES[preset]
        rules = [low, high, _NOOP_MAX, _SKIP, int(fire), 0 if preset == "sb3" else 1]
        self.pool = NativePool(batch.native_backend(), PRESET_RULES, rules, np.zeros(num_envs), self.action_set,
                               False, (84, 84), 1 if preset == "sb3" else 4, shape, num_threads)
        self.batch = batch
        self.preset = preset
        self.num_envs = num_envs
        # AtariEnv.__init__ seeds its generator from OS entropy (seed_game(None)).
        rngs = [seeding.np_random(int(s))[0] for s in np.random.SeedSequence().generate_state(num_envs)]
        self.pool.np_random(np.arange(num_envs), [pcg64_words(g) for g in rngs], now=True)
        self.single_observation_space = spaces.Box(0, 255, shape, np.uint8)
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.single_action_space = spaces.Discrete(len(self.action_set))
        self.action_space = batch_space(self.single_action_space, num_envs)
        self.metadata = {"autoreset_mode": self.autoreset_mode, **(metadata or {})}
        self._pending_seed = seed
        self._autoreset_envs = np.zeros(num_envs, dtype=np.bool_)
        self.seeded_with: list[tuple[np.uint32, np.uint32] | None] = [None] * num_envs
        self.was_real_done = np.ones(num_envs, dtype=np.bool_)  # EpisodicLifeEnv's, per env
        self.lives = np.zeros(num_envs, dtype=np.int64)
        self.t_start = np.full(num_envs, time.time())  # Monitor's; RecordEpisodeStatistics' episode start

    def get_action_meanings(self) -> list[str]:
        """ALE's names of the actions of the action set (``AtariEnv.get_action_meanings``)."""
        return [ACTION_NAMES[a] for a in self.action_set]

    # ----------------------------------------------------------------------------- the pool
    def seed_list(self, seed: int | list[int | None] | None) -> list[int | None]:
        """One seed (or None) per env, as ``SyncVectorEnv.reset`` spreads ``seed`` (the pending seed first)."""
        if seed is None and self._pending_seed is not None:
            seed, self._pending_seed = self._pending_seed, None
        return spread_seeds(seed, self.num_envs)

    def run(self, ids: npt.NDArray[np.int64], ops: npt.NDArray[np.int32],
            actions: npt.NDArray[np.int64] | None = None, seeds: list[int | None] | None = None) -> dict[str, Any]:
        """Run one op per env of ``ids`` (REPORT for the others) and return every env's outputs in env order.

        A reset of env ``i`` with ``seeds[i]`` reseeds it as ``AtariEnv.reset(seed)``: ``(np_seed,
        ale_seed) = SeedSequence(seed).generate_state(2)``, the generator ``np_random(np_seed)``,
        ``loadROM`` with ``ale_seed``.
        """
        ale_seeds = np.full(len(ids), -1, dtype=np.int64)
        seeded = [k for k, i in enumerate(ids) if seeds is not None and seeds[i] is not None]
        if seeded and seeds is not None:
            words = []
            for k in seeded:
                np_seed, ale_seed = np.random.SeedSequence(seeds[ids[k]]).generate_state(2)
                self.seeded_with[ids[k]] = (np_seed, ale_seed)
                ale_seeds[k] = int(ale_seed)
                words.append(pcg64_words(seeding.np_random(int(np_seed))[0]))
            self.pool.np_random(ids[seeded], words, now=False)
        out = self.pool.run_all(ids, ops, _OUT, actions, seeds=ale_seeds)
        rows = out["preset"]
        self.was_real_done = rows[:, 14].astype(np.bool_)
        self.lives = rows[:, 15].astype(np.int64)
        return out

    def infos(self, rows: npt.NDArray[np.int32], mask: npt.NDArray[np.bool_], now: float) -> dict[str, Any]:
        """Return the infos of the envs in ``mask`` from pool info rows (``env_pool.cpp``), batched as gymnasium's."""
        info: dict[str, Any] = {}
        has = mask & (rows[:, 0] > 0)
        if has.any():
            for key, col in _INFO_KEYS:
                info[key], info[f"_{key}"] = np.where(has, rows[:, col], 0).astype(np.int64), has.copy()
        seeded = mask & (rows[:, 0] == 2)
        if seeded.any():
            values = np.full(self.num_envs, None, dtype=object)
            for i in np.flatnonzero(seeded):
                values[i] = self.seeded_with[i]
            info["seeds"], info["_seeds"] = values, seeded
        ended = mask & (rows[:, 1] == 1)
        if ended.any():
            seconds = np.round(np.where(ended, now - self.t_start, 0.0), 6)
            info["episode"] = {"r": np.where(ended, rows[:, 2], 0).astype(np.float64), "_r": ended.copy(),
                               "l": np.where(ended, rows[:, 3], 0).astype(np.int64), "_l": ended.copy(),
                               "t": seconds, "_t": ended.copy()}
            info["_episode"] = ended
            if self.preset == "cleanrl":
                self.t_start = np.where(ended, now, self.t_start)
        return info

    # ----------------------------------------------------------------------------- gymnasium
    def reset(self, *, seed: int | list[int | None] | None = None, options: dict[str, Any] | None = None
              ) -> tuple[npt.NDArray[np.uint8], dict[str, Any]]:
        """``SyncVectorEnv.reset``: env ``i`` gets ``seed + i`` (or ``seed[i]``).

        ``options["reset_mask"]`` (bool[num_envs]) resets only those envs.
        """
        seeds = self.seed_list(seed)
        mask = np.ones(self.num_envs, dtype=np.bool_)
        if options is not None and "reset_mask" in options:
            mask = np.asarray(options["reset_mask"])
            if mask.dtype != np.bool_ or mask.shape != (self.num_envs,):
                raise GpuEnvError(f"options['reset_mask'] must be bool[{self.num_envs}], got {mask!r}")
        ids = np.flatnonzero(mask)
        out = self.run(ids, np.full(len(ids), RESET, dtype=np.int32), seeds=seeds)
        now = time.time()
        if self.preset == "cleanrl":
            self.t_start = np.where(mask, now, self.t_start)
        self._autoreset_envs[mask] = False
        return out["obs"], self.infos(out["preset"], mask, now)

    def step(self, actions: Any) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.float64], npt.NDArray[np.bool_],
                                          npt.NDArray[np.bool_], dict[str, Any]]:
        """``SyncVectorEnv.step``: ``actions`` int[num_envs] indices into the action set."""
        a = checked_actions(actions, self.num_envs, len(self.action_set))
        mode, ended = self.autoreset_mode, self._autoreset_envs
        refuse_ended(mode, ended)
        if mode is AutoresetMode.NEXT_STEP:
            ops = np.where(ended, RESET, STEP).astype(np.int32)
        else:
            ops = np.full(self.num_envs, STEP_RESET if mode is AutoresetMode.SAME_STEP else STEP, dtype=np.int32)
        out = self.run(np.arange(self.num_envs), ops, a)
        now = time.time()
        rows, everyone = out["preset"], np.ones(self.num_envs, dtype=np.bool_)
        info: dict[str, Any] = {}
        final = (out["terminated"] | out["truncated"]) & (mode is AutoresetMode.SAME_STEP)
        if final.any():
            info = {"final_obs": final_obs_array(out["final_obs"], final), "_final_obs": final.copy(),
                    "final_info": self.infos(rows[:, 7:], final, now), "_final_info": final.copy()}
        if self.preset == "cleanrl":
            self.t_start = np.where(ended & (mode is AutoresetMode.NEXT_STEP) | final, now, self.t_start)
        info.update(self.infos(rows, everyone, now))
        self._autoreset_envs = out["terminated"] | out["truncated"]
        return out["obs"], out["reward"].astype(np.float64), out["terminated"], out["truncated"], info

    def call(self, name: str, *args: Any, **kwargs: Any) -> tuple[Any, ...]:
        """``SyncVectorEnv.call`` of ``was_real_done``, ``lives`` (EpisodicLifeEnv's) or ``get_action_meanings``."""
        if name == "get_action_meanings":
            return tuple(self.get_action_meanings() for _ in range(self.num_envs))
        if name in ("was_real_done", "lives"):
            return tuple(getattr(self, name).tolist())
        raise GpuEnvError(f"call({name!r}): a preset env answers was_real_done, lives and get_action_meanings")

    def close_extras(self, **kwargs: Any) -> None:
        """Stop the pool's worker threads."""
        self.pool.close()
