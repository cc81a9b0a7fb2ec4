"""``MODULE:CALLABLE``: a user's own simulator, built by a factory function.

The contract (``docs/simulators.md``): evaltk imports ``MODULE`` (from ``sys.path``: the working
directory, ``PYTHONPATH``) and calls ``CALLABLE`` with keyword arguments only::

    make(env_id="ALE/Breakout-v5", num_envs=1, seed=123, spec={...})

``spec`` is the checkpoint's env spec as a plain dict (:func:`factory_spec`): ``family``, ``env_id``,
``kwargs`` (ALE v5 kwargs), ``preprocessing`` (``atari_preprocessing``, ``frame_stack``), ``obs_spec``
(``shape``, ``dtype``, ``layout``) and ``action_spec`` (``type``, ``n``). The factory may ignore what
it does not need. It returns a gymnasium ``Env`` or a ``VectorEnv`` of ``num_envs`` envs; evaltk calls it
once per evaluation slot (``num_envs=1``, ``seed`` = the slot's first episode seed) and starts every
episode with ``reset(seed=episode_seed)``, as for the reference. Before the first step the returned
env's observation space (shape, dtype) and action space (``Discrete(n)``) must match the checkpoint's.

A table's manifest records the factory's identity (what :meth:`FactorySimulator.check` returns): its name, what it
declares and a SHA-256 of its module's source file, so a resume after the module changed is refused.

A factory may describe its settings: an attribute ``evaltk_settings`` on the callable, a function of
``spec`` returning a dict of :data:`evaltk.envs.atari_settings.FIELDS`; settings it does not give are
``unknown`` in tables (and never counted as differences).
"""

from __future__ import annotations

import hashlib
import importlib
import inspect
import json
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

from evaltk.envs import EnvInfo, EnvSpec
from evaltk.envs.atari_settings import UNKNOWN
from evaltk.simulators.base import EpisodeRunner, EpisodeSlots, SimulatorError, Transition
from evaltk.simulators.slots import SerialSlots

PATTERN = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*$")
"""``MODULE:CALLABLE`` (a dotted module path, a colon, a name)."""


def is_factory_name(name: str) -> bool:
    """Whether ``name`` has the ``MODULE:CALLABLE`` form."""
    return bool(PATTERN.match(name))


def factory_spec(info: EnvInfo) -> dict[str, Any]:
    """Return the ``spec`` argument: the resolved env (JSON) with ``obs_spec`` and ``action_spec`` (a plain copy)."""
    plain: dict[str, Any] = json.loads(json.dumps({**info.env.to_json(), "obs_spec": info.obs_spec,
                                                   "action_spec": info.action_spec}))
    return plain


def load_factory(name: str) -> Callable[..., Any]:
    """Import ``MODULE`` and return ``CALLABLE``; :class:`SimulatorError` naming the fix otherwise."""
    module_name, _, attr = name.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        raise SimulatorError(f"simulator {name}: module {module_name!r} does not import ({exc}): put the folder "
                             f"holding {module_name.replace('.', '/')}.py on PYTHONPATH (or run from it)") from None
    except Exception as exc:  # the user's module raised while importing
        raise SimulatorError(f"simulator {name}: importing {module_name!r} raised {type(exc).__name__}: {exc}; "
                             "fix the module") from None
    factory = getattr(module, attr, None)
    if factory is None:
        raise SimulatorError(f"simulator {name}: module {module_name!r} has no attribute {attr!r}: name a function "
                             "defined in it")
    if not callable(factory):
        raise SimulatorError(f"simulator {name}: {attr!r} is a {type(factory).__name__}, not callable: name a "
                             "function make(*, env_id, num_envs, seed, spec) that returns a gymnasium Env")
    return factory  # type: ignore[no-any-return]


def build(name: str, factory: Callable[..., Any], info: EnvInfo, seed: int) -> Any:
    """Call the factory for one slot and check what it returned against the checkpoint's spec."""
    try:
        env = factory(env_id=info.env.env_id, num_envs=1, seed=int(seed), spec=factory_spec(info))
    except Exception as exc:
        raise SimulatorError(f"simulator {name} raised {type(exc).__name__}: {exc}; fix the factory (it is called "
                             "with env_id, num_envs, seed, spec as keyword arguments)") from None
    check_spaces(name, env, info)
    return env


def check_spaces(name: str, env: Any, info: EnvInfo) -> None:
    """Raise :class:`SimulatorError` unless ``env`` is a gymnasium Env/VectorEnv with the checkpoint's spaces."""
    if isinstance(env, gym.vector.VectorEnv):
        obs_space, act_space = env.single_observation_space, env.single_action_space
    elif isinstance(env, gym.Env):
        obs_space, act_space = env.observation_space, env.action_space
    else:
        raise SimulatorError(f"simulator {name} returned a {type(env).__name__}, not a gymnasium Env or VectorEnv: "
                             "return gymnasium.make(...) (with wrappers) or a gymnasium.Env subclass")
    want_obs, want_act = info.obs_spec, info.action_spec
    shape = list(getattr(obs_space, "shape", None) or [])
    dtype = str(np.dtype(obs_space.dtype)) if getattr(obs_space, "dtype", None) is not None else None
    problems = []
    if shape != list(want_obs["shape"]) or dtype != want_obs["dtype"]:
        problems.append(f"observation space {obs_space} but the checkpoint expects "
                        f"{want_obs['dtype']}{list(want_obs['shape'])}")
    n = int(act_space.n) if isinstance(act_space, gym.spaces.Discrete) else None
    if want_act["type"] != "discrete" or n != int(want_act["n"]):
        problems.append(f"action space {act_space} but the checkpoint expects Discrete({want_act.get('n')})")
    if problems:
        env.close()
        raise SimulatorError(f"simulator {name} returned an env with {'; and '.join(problems)}: make the factory "
                             "build the env the checkpoint was trained on (see the spec argument)")


def info_int(info: dict[str, Any], key: str, default: int) -> int:
    """``info[key]`` as an int (a vector env's first element), or ``default`` when the env does not report it."""
    value = info.get(key)
    return default if value is None else int(np.asarray(value).reshape(-1)[0])


class FactoryRunner:
    """One slot: the factory's env, built at the slot's first episode and reset with each episode's seed.

    ``frames`` is ``info["episode_frame_number"]`` where the env reports it (ale-py does), else steps x
    frame skip; ``lives`` is ``info["lives"]``, else -1.
    """

    def __init__(self, name: str, factory: Callable[..., Any], info: EnvInfo) -> None:
        self.name, self.factory, self.info = name, factory, info
        ap = info.env.preprocessing.get("atari_preprocessing")
        self.frameskip = int(ap["frame_skip"]) if ap else int(info.env.kwargs.get("frameskip", 1))
        self.env: Any = None
        self.vector = False
        self.steps = 0

    def start(self, seed: int) -> np.ndarray:
        """Reset with ``seed`` (building the env first, with that seed, for the slot's first episode)."""
        if self.env is None:
            self.env = build(self.name, self.factory, self.info, seed)
            self.vector = isinstance(self.env, gym.vector.VectorEnv)
        self.steps = 0
        obs, _ = self.env.reset(seed=int(seed))
        return np.asarray(obs[0] if self.vector else obs)

    def step(self, action: int) -> Transition:
        """Step the env once; a VectorEnv gets a batch of one action."""
        act: Any = np.array([action], np.int64) if self.vector else action
        obs, reward, terminated, truncated, info = self.env.step(act)
        self.steps += 1
        frames = info_int(info, "episode_frame_number", self.steps * self.frameskip)
        lives = info_int(info, "lives", -1)
        if self.vector:
            return Transition(np.asarray(obs[0]), float(reward[0]), bool(terminated[0]), bool(truncated[0]), frames,
                              lives)
        return Transition(np.asarray(obs), float(reward), bool(terminated), bool(truncated), frames, lives)

    def close(self) -> None:
        """Close the env, if built."""
        if self.env is not None:
            self.env.close()
            self.env = None


class FactorySimulator:
    """A user's ``MODULE:CALLABLE`` (see the module docstring)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._factory: Callable[..., Any] | None = None

    @property
    def factory(self) -> Callable[..., Any]:
        """The imported callable (imported on first use)."""
        if self._factory is None:
            self._factory = load_factory(self.name)
        return self._factory

    def deterministic(self) -> FactorySimulator:
        """Return the same factory: determinism is in the ``spec`` it is given (sticky actions off, one NOOP)."""
        return self

    def runner(self, info: EnvInfo) -> EpisodeRunner:
        """One env of the factory's, for a lockstep."""
        return FactoryRunner(self.name, self.factory, info)

    def check(self, info: EnvInfo, *, seed: int) -> dict[str, Any]:
        """Import the factory, build one env with ``seed`` and check its spaces (then close it); return the identity.

        The identity: the name, the declared settings and the SHA-256 of the factory's module source as on disk now.
        """
        build(self.name, self.factory, info, seed).close()
        return {"simulator": self.name, "settings": self.settings(info.env), "module_source": self.source_digest()}

    def settings(self, env: EnvSpec) -> dict[str, Any]:
        """Return the factory's ``evaltk_settings(spec)`` where it has one; else the name and env id only."""
        declared = getattr(self.factory, "evaltk_settings", None)
        base = {"package": self.name, "env_id": env.env_id}
        if callable(declared):
            try:
                return {**base, **dict(declared(json.loads(json.dumps(env.to_json()))))}
            except Exception as exc:
                raise SimulatorError(f"simulator {self.name}: evaltk_settings raised {type(exc).__name__}: {exc}; "
                                     "fix it or remove it") from None
        return base

    def source_digest(self) -> str:
        """Return the SHA-256 of the source file of the factory's module (read now, not when imported)."""
        module = sys.modules.get(getattr(self.factory, "__module__", "") or "")
        try:
            path = inspect.getsourcefile(module) if module is not None else None
            return hashlib.sha256(Path(path).read_bytes()).hexdigest() if path else UNKNOWN
        except (OSError, TypeError):
            return UNKNOWN

    def episodes(self, info: EnvInfo, num_envs: int, *, workers: int, fast_reset: bool) -> EpisodeSlots:
        """``num_envs`` slots of the factory's env, stepped in this process."""
        factory = self.factory
        shape = tuple(int(d) for d in info.obs_spec["shape"])
        return SerialSlots(lambda: FactoryRunner(self.name, factory, info), num_envs, obs_shape=shape,
                           obs_dtype=info.obs_spec["dtype"], label=f"simulator {self.name}")
