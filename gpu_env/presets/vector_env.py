"""``PresetVecEnv``: gymnasium's ``SyncVectorEnv`` over per-env wrapper programs, emulation batched.

Each sub-environment is a stack of :mod:`gpu_env.presets.wrappers` over an
:class:`~gpu_env.presets._engine.AleEnv`; one :class:`~gpu_env.presets._engine.BatchDriver` runs all
of them on one :class:`~gpu_env.atari_batch.AtariBatch`. ``reset``/``step`` follow
``gymnasium.vector.SyncVectorEnv`` line for line (seeds ``seed + i``, the three autoreset modes,
``final_obs``/``final_info`` under ``SAME_STEP``, infos batched by ``VectorEnv._add_info``), so the
returned arrays and info dicts are those of ``SyncVectorEnv`` over the client's own wrappers.
Observations are numpy arrays, as the clients' wrappers return them.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from typing import Any

import numpy as np
import numpy.typing as npt
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from gpu_env.errors import GpuEnvError
from gpu_env.presets._engine import AleEnv, BatchDriver, Request, U8Array
from gpu_env.presets.wrappers import ProgramEnv

StackBuilder = Callable[[AleEnv], ProgramEnv]
_EnvResult = tuple[U8Array, float, bool, bool, dict[str, Any], tuple[U8Array, dict[str, Any]] | None]


class PresetVecEnv(VectorEnv):
    """gymnasium ``VectorEnv`` of ``num_envs`` wrapper stacks over one batch (see the module docstring).

    Args:
        driver: the batch driver (its batch has ``frameskip=1``).
        envs: one wrapper stack per env, in env order.
        single_observation_space: one env's observation space.
        autoreset_mode: gymnasium's autoreset mode (default ``NEXT_STEP``, as ``SyncVectorEnv``).
        seed: used by the first ``reset()`` that has no seed of its own (as SB3's ``VecEnv.seed``).
        metadata: extra ``metadata`` entries.

    """

    def __init__(self, driver: BatchDriver, envs: list[ProgramEnv], single_observation_space: spaces.Box,
                 autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP, seed: int | None = None,
                 metadata: dict[str, Any] | None = None) -> None:
        try:
            self.autoreset_mode = AutoresetMode(autoreset_mode)
        except ValueError:
            modes = ", ".join(m.value for m in AutoresetMode)
            raise GpuEnvError(f"autoreset_mode={autoreset_mode!r}: use one of {modes}") from None
        self.driver = driver
        self.envs = envs
        self.num_envs = len(envs)
        self.single_observation_space = single_observation_space
        self.observation_space = batch_space(single_observation_space, self.num_envs)
        self._n_actions = len(envs[0].unwrapped.action_set)
        self.single_action_space = spaces.Discrete(self._n_actions)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self.metadata = {"autoreset_mode": self.autoreset_mode, **(metadata or {})}
        self._pending_seed = seed
        self._autoreset_envs = np.zeros(self.num_envs, dtype=np.bool_)
        zero = np.zeros(tuple(single_observation_space.shape or ()), dtype=np.uint8)
        self._obs: list[U8Array] = [zero] * self.num_envs  # each env's last observation

    @property
    def batch(self) -> Any:
        """The :class:`~gpu_env.atari_batch.AtariBatch` all envs run on."""
        return self.driver.batch

    def _stack(self, frames: list[U8Array]) -> npt.NDArray[np.uint8]:
        return np.stack(frames).astype(self.single_observation_space.dtype, copy=False)

    def reset(self, *, seed: int | list[int | None] | None = None, options: dict[str, Any] | None = None
              ) -> tuple[npt.NDArray[np.uint8], dict[str, Any]]:
        """``SyncVectorEnv.reset``: env ``i`` gets ``seed + i`` (or ``seed[i]``).

        ``options["reset_mask"]`` (bool[num_envs]) resets only those envs.
        """
        if seed is None and self._pending_seed is not None:
            seed, self._pending_seed = self._pending_seed, None
        if seed is None:
            seeds: list[int | None] = [None] * self.num_envs
        elif isinstance(seed, int):
            seeds = [seed + i for i in range(self.num_envs)]
        else:
            seeds = list(seed)
            if len(seeds) != self.num_envs:
                raise GpuEnvError(f"got {len(seeds)} seeds for {self.num_envs} environments: pass one per env")
        mask = np.ones(self.num_envs, dtype=np.bool_)
        env_options = options
        if options is not None and "reset_mask" in options:
            env_options = {k: v for k, v in options.items() if k != "reset_mask"}
            mask = np.asarray(options["reset_mask"])
            if mask.dtype != np.bool_ or mask.shape != (self.num_envs,):
                raise GpuEnvError(f"options['reset_mask'] must be bool[{self.num_envs}], got {mask!r}")
        programs = {i: self.envs[i].reset(seeds[i], env_options) for i in np.flatnonzero(mask)}
        results = self.driver.run(programs)  # type: ignore[arg-type]
        infos: dict[str, Any] = {}
        for i in sorted(results):
            obs, info = results[i]
            self._obs[i] = obs
            infos = self._add_info(infos, info, i)
        self._autoreset_envs[mask] = False
        return self._stack(self._obs), infos

    def _env_step(self, i: int, action: int) -> Generator[Request, Any, _EnvResult]:
        """Program: env ``i``'s part of ``SyncVectorEnv.step``."""
        env = self.envs[i]
        if self.autoreset_mode is AutoresetMode.NEXT_STEP and self._autoreset_envs[i]:
            obs, info = yield from env.reset()
            return obs, 0.0, False, False, info, None  # type: ignore[return-value]
        if self.autoreset_mode is AutoresetMode.DISABLED and self._autoreset_envs[i]:
            raise GpuEnvError(f"env {i} ended and autoreset_mode is DISABLED: reset it with "
                              "reset(options={'reset_mask': mask}) before stepping it")
        obs, reward, terminated, truncated, info = yield from env.step(action)
        final = None
        if self.autoreset_mode is AutoresetMode.SAME_STEP and (terminated or truncated):
            final = (obs, info)
            obs, info = yield from env.reset()
        return obs, reward, terminated, truncated, info, final  # type: ignore[return-value]

    def step(self, actions: Any) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.float64], npt.NDArray[np.bool_],
                                          npt.NDArray[np.bool_], dict[str, Any]]:
        """``SyncVectorEnv.step``: ``actions`` int[num_envs] indices into the action set."""
        a = np.asarray(actions)
        if a.shape != (self.num_envs,) or a.dtype.kind not in "iu":
            raise GpuEnvError(f"actions must be int[{self.num_envs}], got dtype {a.dtype} and shape {a.shape}")
        if (a < 0).any() or (a >= self._n_actions).any():
            raise GpuEnvError(f"actions must be in [0, {self._n_actions}), got {a!r}")
        results = self.driver.run({i: self._env_step(i, int(a[i])) for i in range(self.num_envs)})
        rewards = np.zeros(self.num_envs, dtype=np.float64)
        terminations = np.zeros(self.num_envs, dtype=np.bool_)
        truncations = np.zeros(self.num_envs, dtype=np.bool_)
        infos: dict[str, Any] = {}
        for i in range(self.num_envs):
            obs, reward, terminated, truncated, info, final = results[i]
            if final is not None:
                infos = self._add_info(infos, {"final_obs": final[0], "final_info": final[1]}, i)
            infos = self._add_info(infos, info, i)
            self._obs[i], rewards[i], terminations[i], truncations[i] = obs, reward, terminated, truncated
        self._autoreset_envs = terminations | truncations
        return self._stack(self._obs), rewards, terminations, truncations, infos

    def call(self, name: str, *args: Any, **kwargs: Any) -> tuple[Any, ...]:
        """Call ``name`` on (or read it from) every env's wrapper stack, as ``SyncVectorEnv.call``."""
        out = []
        for env in self.envs:
            attr = getattr(env, name)
            out.append(attr(*args, **kwargs) if callable(attr) else attr)
        return tuple(out)

    def close_extras(self, **kwargs: Any) -> None:
        """Nothing to release: the batch frees its memory when collected."""
