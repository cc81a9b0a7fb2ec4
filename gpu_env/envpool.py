"""EnvPool's Python API for Atari on gpu_env: ``gpu_env.envpool.make("Pong-v5", env_type="gymnasium", ...)``.

A script written for ``envpool.make`` runs with ``import gpu_env.envpool as envpool``. Same task ids
(``"Breakout-v5"`` …, the 104 Atari tasks EnvPool registers), constructor options and defaults (EnvPool
1.2.5 and 1.2.7: ``seed=42`` or one seed per env, ``stack_num=4``, ``frame_skip=4``, ``noop_max=30``,
84x84 grayscale, ``episodic_life`` and ``reward_clip`` off, ``use_fire_reset`` on,
``repeat_action_probability=0``, ``max_episode_steps=27000``), the same emulation rules (equal to
EnvPool 1.2.5 and 1.2.7 frame for frame where compared, see docs/drop_in.md) and the same surface.

Versions: :data:`TESTED_VERSIONS` are the EnvPool releases this module is compared with; their Atari
outputs, options, defaults and info keys are the same. Where EnvPool is installed, :func:`make` imitates
the installed release and refuses, in one line, a release never tested (:func:`check_version`).

The rules, as EnvPool documents and implements them, are ``pool_reset``/``pool_step`` of
``gpu_env/core/ale/pool_rules.h``; the worker threads of gpu_env's native thread pool
(:mod:`gpu_env.backends.native_pool`, the engine of every drop-in) run them with the INTER_AREA resize and the
frame stack, and hand back whichever envs are done first; this module only adapts EnvPool's API to it:

- sync (``batch_size`` unset or ``== num_envs``): ``reset(env_id=None)`` → ``(obs, info)``,
  ``step(action, env_id=None)`` → ``(obs, reward, terminated, truncated, info)``; an env whose
  episode ended is reset by its next step (EnvPool's auto-reset).
- async (``batch_size < num_envs``): ``async_reset()``, ``send(action, env_id)``, ``recv()`` →
  the 5-tuple for the first ``batch_size`` envs the worker threads complete, as EnvPool.
- ``info``: ``env_id`` int32, ``players`` {``env_id``}, ``lives`` int32, ``reward`` float32
  (unclipped), ``terminated`` int32 (ALE game over), ``ram`` uint8[B, 128], ``elapsed_step`` int32.
- ``env_type="gym"``: the old gym API (``reset()`` → obs, ``step`` → ``(obs, reward, done, info)``
  with ``info["TimeLimit.truncated"]``), as CleanRL's ``ppo_atari_envpool.py`` uses it.
- ``observation_space``/``action_space`` (one env's, as EnvPool), ``single_*``, ``config``, ``spec``.

Not provided: ``use_inter_area_resize=False`` (OpenCV's INTER_LINEAR) and images larger than the
screen; both are refused with an error.
"""

from __future__ import annotations

import collections
import dataclasses
import importlib.metadata
import os
import re
from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np
import numpy.typing as npt
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv

from gpu_env.backends.native_pool import ENVPOOL_RULES, RESET, STEP, NativePool
from gpu_env.errors import GpuEnvError

ENV_TYPES = ("gymnasium", "gym")
DEFAULT_SEED = 42
TESTED_VERSIONS = ("1.2.5", "1.2.7")
"""The EnvPool releases whose Atari outputs this module equals, each compared with it side by side."""
# ale-py ROMs EnvPool registers no task for (it bundles the other 104).
_NOT_IN_ENVPOOL = ("combat", "joust", "maze_craze", "warlords")
_INT32 = 2**31
_POOL_OPTIONS = ("num_envs", "batch_size", "num_threads", "max_num_players", "thread_affinity_offset", "seed",
                 "env_seed", "gym_reset_return_info", "mode", "difficulty", "base_path")
_FIRE = 1  # ALE's PLAYER_A_FIRE
_WANTED = ("env_id", "obs", "reward", "info_reward", "truncated", "done", "game_over", "lives", "elapsed_step", "ram")


@dataclasses.dataclass(frozen=True)
class EnvpoolConfig:
    """EnvPool's Atari options (names and defaults of ``envpool.make("…-v5")``)."""

    stack_num: int = 4
    frame_skip: int = 4
    noop_max: int = 30
    zero_discount_on_life_loss: bool = False
    episodic_life: bool = False
    reward_clip: bool = False
    use_fire_reset: bool = True
    img_height: int = 84
    img_width: int = 84
    full_action_space: bool = False
    repeat_action_probability: float = 0.0
    use_inter_area_resize: bool = True
    gray_scale: bool = True
    max_episode_steps: int = 27000


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
        if "".join(part.capitalize() for part in rom.split("_")) == name and rom not in _NOT_IN_ENVPOOL:
            return str(rom)
    raise GpuEnvError(f"task id {task_id!r} names no Atari ROM: see gpu_env.envpool.list_all_envs()")


def list_all_envs() -> list[str]:
    """Every Atari task id (``"Pong-v5"`` …), as ``envpool.list_all_envs()`` lists them."""
    from ale_py import roms

    return sorted("".join(p.capitalize() for p in rom.split("_")) + "-v5" for rom in roms.get_all_rom_ids()
                  if rom not in _NOT_IN_ENVPOOL)


def installed_version() -> str | None:
    """Return the installed EnvPool's version (read from its metadata, not imported), or None."""
    try:
        return importlib.metadata.version("envpool")
    except importlib.metadata.PackageNotFoundError:
        return None


def check_version(version: str) -> str:
    """Return ``version`` if it is one of :data:`TESTED_VERSIONS`; a one-line :class:`GpuEnvError` otherwise."""
    if version not in TESTED_VERSIONS:
        raise GpuEnvError(f"EnvPool {version} is installed, and gpu_env.envpool reproduces (and evaltk's envpool "
                          f"simulator runs) only the tested releases {' and '.join(TESTED_VERSIONS)}: "
                          "pip install 'evaltk[envpool]' (EnvPool 1.2.5 on CPython 3.11, 1.2.7 on 3.12 and 3.13)")
    return version


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
        if backend != "cpu":
            raise GpuEnvError(f"gpu_env.envpool runs on the 'cpu' backend only, not {backend!r}")
        batch = AtariBatch(task_rom(task_id), n, backend=backend, seeds=seeds,
                           repeat_action_probability=env_cfg.repeat_action_probability, mode=mode,
                           difficulty=difficulty, num_threads=1)
        self.batch = batch
        action_set = batch.legal_action_set() if env_cfg.full_action_space else batch.minimal_action_set()
        fire_reset = env_cfg.use_fire_reset and _FIRE in action_set.tolist()
        rules = [env_cfg.frame_skip, env_cfg.noop_max, env_cfg.max_episode_steps, env_cfg.episodic_life,
                 env_cfg.reward_clip, env_cfg.zero_discount_on_life_loss, fire_reset]
        threads = int(config["num_threads"]) or min(n, len(os.sched_getaffinity(0)))
        channels = (1 if env_cfg.gray_scale else 3) * env_cfg.stack_num
        self._pool = NativePool(batch.native_backend(), ENVPOOL_RULES, rules, seeds, action_set, env_cfg.gray_scale,
                                (env_cfg.img_height, env_cfg.img_width), env_cfg.stack_num,
                                (channels, env_cfg.img_height, env_cfg.img_width), threads)
        obs_space = spaces.Box(0, 255, (channels, env_cfg.img_height, env_cfg.img_width), np.uint8)
        act_space = spaces.Discrete(len(action_set))
        self.observation_space = self.single_observation_space = obs_space
        self.action_space = self.single_action_space = act_space
        fields = collections.namedtuple("Config", list(config))  # type: ignore[misc]
        self._n_actions = len(action_set)
        self.spec = EnvSpec(task_id, fields(**config), obs_space, act_space)
        self.metadata = {"render_modes": [], "autoreset_mode": AutoresetMode.NEXT_STEP}
        self.all_env_ids: npt.NDArray[np.int32] = np.arange(n, dtype=np.int32)

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

    def _ids(self, env_id: npt.ArrayLike | None, count: int | None = None) -> npt.NDArray[np.int32]:
        ids = self.all_env_ids if env_id is None else np.asarray(env_id).reshape(-1)
        if ids.dtype.kind not in "iu" or (ids < 0).any() or (ids >= self._num_envs).any():
            raise GpuEnvError(f"env_id must be ints in [0, {self._num_envs}), got {ids!r}")
        if count is not None and len(ids) != count:
            raise GpuEnvError(f"got {count} actions for {len(ids)} env ids: pass one action per env id")
        return ids.astype(np.int32)

    def _send(self, ids: npt.NDArray[np.int32], actions: npt.NDArray[np.int32]) -> None:
        if len(np.unique(ids)) != len(ids) or self._pool.running[ids].any():
            raise GpuEnvError(f"env ids {ids.tolist()} repeat or are still running: recv each env's result "
                              "before sending it again")
        self._pool.send(ids, np.where(actions < 0, RESET, STEP), np.maximum(actions, 0))

    def send(self, action: Any, env_id: npt.ArrayLike | None = None) -> None:
        """Queue one step per env in ``env_id`` (default: all) with ``action`` (int[len(env_id)])."""
        if isinstance(action, dict):
            env_id = action.get("env_id", env_id)
            action = action["action"]
        a = np.asarray(action).reshape(-1)
        if a.dtype.kind not in "iu" or (a < 0).any() or (a >= self._n_actions).any():
            raise GpuEnvError(f"actions must be ints in [0, {self._n_actions}), got {a!r}")
        self._send(self._ids(env_id, len(a)), a.astype(np.int32))

    def async_reset(self) -> None:
        """Queue a reset of every env (then ``recv`` their first observations)."""
        self._send(self.all_env_ids, np.full(self._num_envs, -1, dtype=np.int32))

    def _run(self, count: int, order: npt.NDArray[np.int32] | None = None) -> tuple[Any, ...]:
        waiting = int(self._pool.running.sum())
        if waiting < count:
            raise GpuEnvError(f"recv needs {count} pending envs but {waiting} were sent: "
                              "send(action, env_id) (or async_reset()) first")
        out = self._pool.recv(count, _WANTED, order)
        env_ids = out["env_id"]
        info: dict[str, Any] = {
            "env_id": env_ids, "players": {"env_id": env_ids.copy()}, "lives": out["lives"],
            "reward": out["info_reward"], "terminated": out["game_over"].astype(np.int32), "ram": out["ram"],
            "elapsed_step": out["elapsed_step"],
        }
        done, trunc = out["done"], out["truncated"]
        if self.env_type == "gym":
            info["TimeLimit.truncated"] = trunc
            return out["obs"], out["reward"], done, info
        return out["obs"], out["reward"], done & ~trunc, trunc, info

    def recv(self, reset: bool = False, return_info: bool = True) -> tuple[Any, ...]:
        """Return the first ``batch_size`` envs the workers complete, their outputs as ``step`` returns them."""
        return self._run(self.batch_size)

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
        self._send(ids, np.full(len(ids), -1, dtype=np.int32))
        out = self._run(len(ids), self._sync_order(ids))
        obs, info = out[0], out[-1]
        if self.env_type == "gym" and not self._config["gym_reset_return_info"]:
            return obs
        return obs, info

    def step(self, action: Any, env_id: npt.ArrayLike | None = None) -> Any:
        """``send(action, env_id)`` then ``recv()`` (sync: every env, in env id order)."""
        ids = self._ids(env_id)
        self.send(action, ids)
        return self._run(len(ids), self._sync_order(ids))

    def _sync_order(self, ids: npt.NDArray[np.int32]) -> npt.NDArray[np.int32] | None:
        """``ids`` when they are all that is outstanding (outputs in their order), else completion order."""
        return ids if int(self._pool.running.sum()) == len(ids) else None

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

    ``backend``: gpu_env's ``AtariBatch`` backend; the pool runs on ``"cpu"`` only. An installed EnvPool
    of a release not in :data:`TESTED_VERSIONS` is refused (:func:`check_version`).
    """
    version = installed_version()
    if version is not None:
        check_version(version)
    if env_type == "dm":
        raise GpuEnvError("env_type='dm' (dm_env) is not provided by gpu_env.envpool: use 'gymnasium' or 'gym'")
    if env_type not in ENV_TYPES:
        raise GpuEnvError(f"env_type={env_type!r}: use one of {', '.join(ENV_TYPES)}")
    config = _default_config(task_id, env_type)
    unknown = sorted(set(kwargs) - set(_OPTIONS))
    if unknown:
        raise GpuEnvError(f"unknown envpool option(s) {unknown} for {task_id}: options are {', '.join(_OPTIONS)}")
    config.update(kwargs)
    _seed_list(config, "seed" in kwargs, "env_seed" in kwargs)
    _check_config(config)
    config["batch_size"] = config["batch_size"] or config["num_envs"]  # EnvPool's config states 0 as num_envs
    return AtariEnvPool(task_id, env_type, config, backend=backend)


def _seed_list(config: dict[str, Any], seed_given: bool, env_seed_given: bool) -> None:
    """EnvPool's seeds: ``seed`` as a list (or 1-D array) becomes ``env_seed`` with ``seed=0``; all int32."""
    seed = config["seed"]
    if isinstance(seed, np.ndarray | Sequence) and not isinstance(seed, str | bytes):
        if env_seed_given:
            raise GpuEnvError("pass either seed as an int or a list of seeds, or env_seed, but not both")
        if np.ndim(seed) != 1:
            raise GpuEnvError(f"seed as an array must be 1-dimensional, got shape {np.shape(seed)}")
        config["env_seed"], config["seed"] = [int(s) for s in seed], 0
    elif seed_given and not (isinstance(seed, int | np.integer) and -_INT32 <= seed < _INT32):
        raise GpuEnvError(f"seed={seed!r} is not an int32: pass a seed in [-2**31, 2**31) or one per env")
    config["env_seed"] = [int(s) for s in config["env_seed"]]
    out_of_range = [s for s in config["env_seed"] if not -_INT32 <= s < _INT32]
    if out_of_range:
        raise GpuEnvError(f"seeds {out_of_range} are not int32: pass seeds in [-2**31, 2**31)")


def _check_config(config: dict[str, Any]) -> None:
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
