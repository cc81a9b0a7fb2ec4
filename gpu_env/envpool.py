"""EnvPool's Python API for Atari on gpu_env: ``gpu_env.envpool.make("Pong-v5", env_type="gymnasium", ...)``.

A script written for ``envpool.make`` runs with ``import gpu_env.envpool as envpool``. Same task ids
(``"Breakout-v5"`` …, one per ROM ale-py bundles), constructor options and defaults (EnvPool 1.2.5:
``seed=42``, ``stack_num=4``, ``frame_skip=4``, ``noop_max=30``, 84x84 grayscale, ``episodic_life``
and ``reward_clip`` off, ``use_fire_reset`` on, ``repeat_action_probability=0``,
``max_episode_steps=27000``), the same emulation rules (:mod:`gpu_env.presets.envpool_stack`; equal
to EnvPool 1.2.5 frame for frame where compared, see docs/drop_in.md) and the same surface:

- sync (``batch_size`` unset or ``== num_envs``): ``reset(env_id=None)`` → ``(obs, info)``,
  ``step(action, env_id=None)`` → ``(obs, reward, terminated, truncated, info)``; an env whose
  episode ended is reset by its next step (EnvPool's auto-reset).
- async (``batch_size < num_envs``): ``async_reset()``, ``send(action, env_id)``, ``recv()`` →
  the 5-tuple for ``batch_size`` envs (here: in the order they were sent).
- ``info``: ``env_id`` int32, ``players`` {``env_id``}, ``lives`` int32, ``reward`` float32
  (unclipped), ``terminated`` int32 (ALE game over), ``ram`` uint8[B, 128], ``elapsed_step`` int32.
- ``env_type="gym"``: the old gym API (``reset()`` → obs, ``step`` → ``(obs, reward, done, info)``
  with ``info["TimeLimit.truncated"]``), as CleanRL's ``ppo_atari_envpool.py`` uses it.
- ``observation_space``/``action_space`` (one env's, as EnvPool), ``single_*``, ``config``, ``spec``.
"""

from __future__ import annotations

import collections
import dataclasses
import re
from collections import deque
from typing import Any

import gymnasium as gym
import numpy as np
import numpy.typing as npt
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv

from gpu_env.errors import GpuEnvError
from gpu_env.presets._engine import BatchDriver, Program
from gpu_env.presets.envpool_stack import EnvpoolAtari, EnvpoolConfig, EnvpoolState

ENV_TYPES = ("gymnasium", "gym")
DEFAULT_SEED = 42
_POOL_OPTIONS = ("num_envs", "batch_size", "num_threads", "max_num_players", "thread_affinity_offset", "seed",
                 "env_seed", "gym_reset_return_info", "mode", "difficulty", "base_path")
_OPTIONS = (*_POOL_OPTIONS, *(f.name for f in dataclasses.fields(EnvpoolConfig)))


def task_rom(task_id: str) -> str:
    """EnvPool's ``"SpaceInvaders-v5"`` -> ale-py's ROM id ``"space_invaders"``."""
    from ale_py import roms

    match = re.fullmatch(r"(?:ALE/)?([A-Za-z0-9]+?)(?:NoFrameskip)?-v[045]", task_id)
    if match is None or not task_id.endswith("-v5") or "/" in task_id:
        hint = f"'{match.group(1)}-v5'" if match else "e.g. 'Pong-v5'"
        raise GpuEnvError(f"task id {task_id!r} is not an EnvPool Atari id: use {hint}")
    name = match.group(1)
    for rom in roms.get_all_rom_ids():
        if "".join(part.capitalize() for part in rom.split("_")) == name:
            return str(rom)
    raise GpuEnvError(f"task id {task_id!r} names no Atari ROM: see gpu_env.envpool.list_all_envs()")


def list_all_envs() -> list[str]:
    """Every Atari task id (``"Pong-v5"`` …), as ``envpool.list_all_envs()`` lists them."""
    from ale_py import roms

    return sorted("".join(p.capitalize() for p in rom.split("_")) + "-v5" for rom in roms.get_all_rom_ids())


@dataclasses.dataclass(frozen=True)
class EnvSpec:
    """EnvPool's spec: the task id, the full ``config`` (a named tuple) and one env's spaces."""

    id: str
    config: Any
    observation_space: spaces.Box
    action_space: spaces.Discrete
    reward_threshold: float | None = None

    @property
    def gymnasium_observation_space(self) -> spaces.Box:
        """The observation space (EnvPool's name for it)."""
        return self.observation_space

    @property
    def gymnasium_action_space(self) -> spaces.Discrete:
        """The action space (EnvPool's name for it)."""
        return self.action_space


class AtariEnvPool(VectorEnv, gym.Env):  # type: ignore[misc]  # both bases, in EnvPool 1.2.5's order
    """EnvPool's Atari pool (see the module docstring); build it with :func:`make`.

    Like EnvPool's own pool it is a gymnasium ``VectorEnv`` and also a ``gymnasium.Env``, so scripts
    that wrap the pool in ``gymnasium.Wrapper`` subclasses run unchanged.
    """

    spec: EnvSpec  # type: ignore[assignment]  # EnvPool's spec, not gymnasium's registry entry
    observation_space: spaces.Box
    action_space: spaces.Discrete  # one env's space, as EnvPool

    def __init__(self, task_id: str, env_type: str, config: dict[str, Any], backend: str = "cpu") -> None:
        from gpu_env.atari_batch import AtariBatch

        self.env_type = env_type
        self._config = config
        n = int(config["num_envs"])
        self._num_envs = n
        self.batch_size = int(config["batch_size"]) or n
        env_cfg = EnvpoolConfig(**{f.name: config[f.name] for f in dataclasses.fields(EnvpoolConfig)})
        seeds = list(config["env_seed"]) or [int(config["seed"]) + i for i in range(n)]
        mode = None if config["mode"] < 0 else int(config["mode"])
        difficulty = None if config["difficulty"] < 0 else int(config["difficulty"])
        batch = AtariBatch(task_rom(task_id), n, backend=backend, seeds=seeds,
                           repeat_action_probability=env_cfg.repeat_action_probability, mode=mode,
                           difficulty=difficulty, num_threads=int(config["num_threads"]) or None)
        self.driver = BatchDriver(batch)
        action_set = batch.legal_action_set() if env_cfg.full_action_space else batch.minimal_action_set()
        self.envs = [EnvpoolAtari(self.driver, i, action_set, seeds[i], env_cfg) for i in range(n)]
        channels = (1 if env_cfg.gray_scale else 3) * env_cfg.stack_num
        obs_space = spaces.Box(0, 255, (channels, env_cfg.img_height, env_cfg.img_width), np.uint8)
        act_space = spaces.Discrete(len(action_set))
        self.observation_space = self.single_observation_space = obs_space
        self.action_space = self.single_action_space = act_space
        fields = collections.namedtuple("Config", list(config))  # type: ignore[misc]
        self._n_actions = len(action_set)
        self.spec = EnvSpec(task_id, fields(**config), obs_space, act_space)
        self.metadata = {"render_modes": [], "autoreset_mode": AutoresetMode.NEXT_STEP}
        self.all_env_ids: npt.NDArray[np.int32] = np.arange(n, dtype=np.int32)
        self._queue: deque[tuple[int, int | None]] = deque()  # (env_id, action or None for a reset)

    # ----------------------------------------------------------------------------- pool
    @property
    def num_envs(self) -> int:
        """Number of environments in the pool."""
        return self._num_envs

    @num_envs.setter
    def num_envs(self, value: int) -> None:
        if value != self._num_envs:
            raise GpuEnvError(f"num_envs is {self._num_envs}; it cannot be set to {value}")

    @property
    def config(self) -> dict[str, Any]:
        """Every option of the pool, as EnvPool's ``config``."""
        return dict(self._config)

    @property
    def is_async(self) -> bool:
        """True when ``batch_size < num_envs`` (use ``send``/``recv``)."""
        return self.batch_size != self._num_envs

    def __len__(self) -> int:
        """Return the number of environments."""
        return self._num_envs

    def _ids(self, env_id: npt.ArrayLike | None, count: int | None = None) -> list[int]:
        ids = self.all_env_ids if env_id is None else np.asarray(env_id).reshape(-1)
        if ids.dtype.kind not in "iu" or (ids < 0).any() or (ids >= self._num_envs).any():
            raise GpuEnvError(f"env_id must be ints in [0, {self._num_envs}), got {ids!r}")
        if count is not None and len(ids) != count:
            raise GpuEnvError(f"got {count} actions for {len(ids)} env ids: pass one action per env id")
        return [int(i) for i in ids]

    def send(self, action: Any, env_id: npt.ArrayLike | None = None) -> None:
        """Queue one step per env in ``env_id`` (default: all) with ``action`` (int[len(env_id)])."""
        if isinstance(action, dict):
            env_id = action.get("env_id", env_id)
            action = action["action"]
        a = np.asarray(action).reshape(-1)
        if a.dtype.kind not in "iu" or (a < 0).any() or (a >= self._n_actions).any():
            raise GpuEnvError(f"actions must be ints in [0, {self._n_actions}), got {a!r}")
        for i, act in zip(self._ids(env_id, len(a)), a, strict=True):
            self._queue.append((i, int(act)))

    def async_reset(self) -> None:
        """Queue a reset of every env (then ``recv`` their first observations)."""
        self._queue.extend((i, None) for i in range(self._num_envs))

    def _run(self, count: int) -> tuple[list[int], list[EnvpoolState]]:
        if len(self._queue) < count:
            raise GpuEnvError(f"recv needs {count} pending envs but {len(self._queue)} were sent: "
                              "send(action, env_id) (or async_reset()) first")
        taken = [self._queue.popleft() for _ in range(count)]
        ids = [i for i, _ in taken]
        if len(set(ids)) != len(ids):
            raise GpuEnvError(f"env ids {ids} repeat within one batch: recv each env's result before sending it again")
        programs: dict[int, Program] = {}
        for i, act in taken:
            programs[i] = self.envs[i].reset() if act is None else self.envs[i].auto_step(act)
        results = self.driver.run(programs)
        return ids, [results[i] for i in ids]

    def _outputs(self, ids: list[int], states: list[EnvpoolState]) -> tuple[Any, ...]:
        ram = self.driver.batch.get_ram()[ids]
        env_ids = np.array(ids, dtype=np.int32)
        info: dict[str, Any] = {
            "env_id": env_ids, "players": {"env_id": env_ids.copy()},
            "lives": np.array([s.lives for s in states], dtype=np.int32),
            "reward": np.array([s.info_reward for s in states], dtype=np.float32),
            "terminated": np.array([s.terminated for s in states], dtype=np.int32),
            "ram": ram, "elapsed_step": np.array([s.elapsed_step for s in states], dtype=np.int32),
        }
        obs = np.stack([s.obs for s in states])
        reward = np.array([s.reward for s in states], dtype=np.float32)
        done = np.array([s.done for s in states], dtype=np.bool_)
        trunc = np.array([s.trunc for s in states], dtype=np.bool_)
        if self.env_type == "gym":
            info["TimeLimit.truncated"] = trunc
            return obs, reward, done, info
        return obs, reward, done & ~trunc, trunc, info

    def recv(self, reset: bool = False, return_info: bool = True) -> tuple[Any, ...]:
        """Run the next ``batch_size`` queued requests; their outputs as ``step`` returns them."""
        ids, states = self._run(self.batch_size)
        return self._outputs(ids, states)

    # ----------------------------------------------------------------------------- sync API
    def reset(self, env_id: npt.ArrayLike | None = None, *, seed: int | list[int] | None = None,
              options: dict[str, Any] | None = None) -> Any:
        """Reset the envs in ``env_id`` (or ``options["reset_mask"]``; default all): ``(obs, info)``."""
        if seed is not None:
            raise GpuEnvError("EnvPool seeds are fixed at construction: pass seed= to gpu_env.envpool.make instead")
        if options is not None:
            unknown = set(options) - {"reset_mask"}
            if unknown:
                raise GpuEnvError(f"unsupported reset options {sorted(unknown)}: EnvPool takes only 'reset_mask'")
            if env_id is not None:
                raise GpuEnvError("pass either env_id or options['reset_mask'], not both")
            env_id = np.flatnonzero(np.asarray(options["reset_mask"], dtype=np.bool_))
        ids = self._ids(env_id)
        self._queue.extend((i, None) for i in ids)
        out = self._outputs(*self._run(len(ids)))
        obs, info = out[0], out[-1]
        if self.env_type == "gym" and not self._config["gym_reset_return_info"]:
            return obs
        return obs, info

    def step(self, action: Any, env_id: npt.ArrayLike | None = None) -> Any:
        """``send(action, env_id)`` then ``recv()`` (sync: every env, in env id order)."""
        ids = self._ids(env_id)
        self.send(action, ids)
        got, states = self._run(len(ids))
        return self._outputs(got, states)

    def seed(self, seed: int | None = None) -> None:
        """EnvPool fixes seeds at construction; this raises, naming the fix."""
        raise GpuEnvError("EnvPool seeds are fixed at construction: pass seed= to gpu_env.envpool.make instead")

    def close_extras(self, **kwargs: Any) -> None:
        """Nothing to release."""


def _default_config(task_id: str, env_type: str) -> dict[str, Any]:
    config: dict[str, Any] = {"num_envs": 1, "batch_size": 0, "num_threads": 0, "max_num_players": 1,
                              "thread_affinity_offset": -1, "base_path": "", "seed": DEFAULT_SEED, "env_seed": [],
                              "gym_reset_return_info": env_type == "gymnasium"}
    config.update(dataclasses.asdict(EnvpoolConfig()))
    config.update({"task": task_rom(task_id), "mode": -1, "difficulty": -1})
    return config


def make(task_id: str, env_type: str = "gymnasium", *, backend: str = "cpu", **kwargs: Any) -> AtariEnvPool:
    """``envpool.make(task_id, env_type, **kwargs)`` for Atari tasks on gpu_env (see the module docstring).

    ``backend``: gpu_env's ``AtariBatch`` backend (``"cpu"``; ``"ale_py"`` runs ale-py itself).
    """
    if env_type == "dm":
        raise GpuEnvError("env_type='dm' (dm_env) is not provided by gpu_env.envpool: use 'gymnasium' or 'gym'")
    if env_type not in ENV_TYPES:
        raise GpuEnvError(f"env_type={env_type!r}: use one of {', '.join(ENV_TYPES)}")
    config = _default_config(task_id, env_type)
    unknown = sorted(set(kwargs) - set(_OPTIONS))
    if unknown:
        raise GpuEnvError(f"unknown envpool option(s) {unknown} for {task_id}: options are {', '.join(_OPTIONS)}")
    config.update(kwargs)
    _validate(config)
    return AtariEnvPool(task_id, env_type, config, backend=backend)


def _validate(config: dict[str, Any]) -> None:
    n, b = config["num_envs"], config["batch_size"]
    if not isinstance(n, int) or n <= 0:
        raise GpuEnvError(f"num_envs={n!r} must be a positive int")
    if not isinstance(b, int) or not 0 <= b <= n:
        raise GpuEnvError(f"batch_size={b!r} must be an int in [1, num_envs={n}] (0: num_envs)")
    if config["max_num_players"] != 1:
        raise GpuEnvError(f"max_num_players={config['max_num_players']}: Atari tasks have one player")
    if config["env_seed"] and len(config["env_seed"]) != n:
        raise GpuEnvError(f"env_seed has {len(config['env_seed'])} seeds for num_envs={n}: pass one per env")
    for key in ("stack_num", "frame_skip", "noop_max", "img_height", "img_width", "max_episode_steps"):
        if not isinstance(config[key], int) or config[key] <= 0:
            raise GpuEnvError(f"{key}={config[key]!r} must be a positive int")
    if not 0.0 <= float(config["repeat_action_probability"]) <= 1.0:
        raise GpuEnvError(f"repeat_action_probability={config['repeat_action_probability']} must be in [0, 1]")
