"""An SB3 ``VecEnv`` on gpu_env: ``make_atari_env`` + ``DummyVecEnv`` semantics over a batched preset.

``make_sb3_atari_env("BreakoutNoFrameskip-v4", n_envs=4, seed=0)`` stands in for
``stable_baselines3.common.env_util.make_atari_env(...)``: per env, ``Monitor`` inside SB3's
``AtariWrapper`` (``gpu_env.presets`` ``"sb3"``), stepped as ``DummyVecEnv`` steps it: an env whose
episode ends (``terminated or truncated``, life losses included) is reset in the same step, its
last observation in ``info["terminal_observation"]``, ``info["TimeLimit.truncated"]`` as
DummyVecEnv sets it, ``info["episode"] = {r, l, t}`` from Monitor at each real game end, reset
infos in :attr:`reset_infos`. Seeds follow ``VecEnv.seed``: env ``i`` gets ``seed + i`` at the next
``reset()``. Stack frames with SB3's own ``VecFrameStack`` as with ``make_atari_env``.
"""

from __future__ import annotations

from collections.abc import Generator, Iterable, Sequence
from copy import deepcopy
from typing import Any

import gymnasium as gym
import numpy as np
import numpy.typing as npt
from stable_baselines3.common.vec_env.base_vec_env import VecEnv, VecEnvIndices, VecEnvObs, VecEnvStepReturn

from gpu_env.errors import GpuEnvError
from gpu_env.presets import make as make_preset
from gpu_env.presets.vector_env import PresetVecEnv
from gpu_env.presets.wrappers import Gen, ProgramEnv, Wrapper

# SB3 wrapper class names and the gpu_env program wrappers that reproduce them (for env_is_wrapped).
_SB3_NAMES = {"Monitor": "Monitor", "NoopResetEnv": "NoopReset", "MaxAndSkipEnv": "MaxAndSkip",
              "EpisodicLifeEnv": "EpisodicLife", "FireResetEnv": "FireReset", "WarpFrame": "WarpFrame",
              "ClipRewardEnv": "ClipReward"}


class Sb3VecEnv(VecEnv):
    """SB3 ``VecEnv`` over a :class:`~gpu_env.presets.vector_env.PresetVecEnv` (see the module docstring)."""

    def __init__(self, venv: PresetVecEnv) -> None:
        if not isinstance(venv, PresetVecEnv):
            raise GpuEnvError(f"Sb3VecEnv wraps a gpu_env.presets env, got {type(venv).__name__}: "
                              "build it with gpu_env.presets.make(env_id, n, 'sb3')")
        self.venv = venv
        self.envs: list[ProgramEnv] = venv.envs  # before VecEnv.__init__, which reads render_mode from them
        super().__init__(venv.num_envs, venv.single_observation_space, venv.single_action_space)
        self.reset_infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        self._actions: npt.NDArray[np.int64] = np.zeros(self.num_envs, dtype=np.int64)

    def _obs(self, frames: Sequence[npt.NDArray[np.uint8]]) -> npt.NDArray[np.uint8]:
        return np.stack(frames).astype(self.observation_space.dtype, copy=False)

    def reset(self) -> VecEnvObs:
        """``DummyVecEnv.reset``: each env with its pending seed and options, then both are cleared."""
        programs = {}
        for i, env in enumerate(self.envs):
            options = self._options[i] or None
            programs[i] = env.reset(self._seeds[i], options)
        results = self.venv.driver.run(programs)
        frames = []
        for i in range(self.num_envs):
            obs, self.reset_infos[i] = results[i]
            frames.append(obs)
        self._reset_seeds()
        self._reset_options()
        return self._obs(frames)

    def step_async(self, actions: np.ndarray) -> None:
        """Store the actions (int[num_envs]) for :meth:`step_wait`."""
        a = np.asarray(actions).reshape(-1)
        if a.shape != (self.num_envs,) or a.dtype.kind not in "iu":
            raise GpuEnvError(f"actions must be int[{self.num_envs}], got dtype {a.dtype} and shape {a.shape}")
        self._actions = a.astype(np.int64)

    def _env_step(self, i: int, action: int) -> Gen:
        """Program: env ``i``'s part of ``DummyVecEnv.step_wait``."""
        env = self.envs[i]
        obs, reward, terminated, truncated, info = yield from env.step(action)
        done = terminated or truncated
        info["TimeLimit.truncated"] = truncated and not terminated
        reset_info = None
        if done:
            info["terminal_observation"] = obs
            obs, reset_info = yield from env.reset()
        return obs, reward, done, info, reset_info

    def step_wait(self) -> VecEnvStepReturn:
        """Step every env; ended envs are reset in the same step (``DummyVecEnv``)."""
        results = self.venv.driver.run({i: self._env_step(i, int(a)) for i, a in enumerate(self._actions)})
        rewards = np.zeros(self.num_envs, dtype=np.float32)
        dones = np.zeros(self.num_envs, dtype=np.bool_)
        frames, infos = [], []
        for i in range(self.num_envs):
            obs, rewards[i], dones[i], info, reset_info = results[i]
            if reset_info is not None:
                self.reset_infos[i] = reset_info
            frames.append(obs)
            infos.append(info)
        return self._obs(frames), rewards, dones, deepcopy(infos)

    def close(self) -> None:
        """Close the underlying preset env."""
        self.venv.close()

    def _targets(self, indices: VecEnvIndices) -> list[ProgramEnv]:
        return [self.envs[i] for i in self._get_indices(indices)]

    def get_attr(self, attr_name: str, indices: VecEnvIndices = None) -> list[Any]:
        """Return an attribute of each env's wrapper stack (searched outside in, then the base env)."""
        return [_find_attr(env, attr_name) for env in self._targets(indices)]

    def set_attr(self, attr_name: str, value: Any, indices: VecEnvIndices = None) -> None:
        """Set an attribute on each env's outermost wrapper."""
        for env in self._targets(indices):
            setattr(env, attr_name, value)

    def env_method(self, method_name: str, *method_args: Any, indices: VecEnvIndices = None,
                   **method_kwargs: Any) -> list[Any]:
        """Call a plain (non-program) method of each env's stack, e.g. ``get_action_meanings``."""
        out = []
        for env in self._targets(indices):
            method = _find_attr(env, method_name)
            result = method(*method_args, **method_kwargs)
            if isinstance(result, Generator):
                raise GpuEnvError(f"env_method({method_name!r}) is an emulator program: use reset()/step()")
            out.append(result)
        return out

    def env_is_wrapped(self, wrapper_class: type[gym.Wrapper[Any, Any, Any, Any]],
                       indices: VecEnvIndices = None) -> list[bool]:
        """Whether each env's stack holds the gpu_env equivalent of SB3's ``wrapper_class`` (``Monitor`` …)."""
        wanted = _SB3_NAMES.get(wrapper_class.__name__)
        return [wanted is not None and wanted in _stack_names(env) for env in self._targets(indices)]


def _stack(env: ProgramEnv) -> Iterable[Any]:
    node: Any = env
    while isinstance(node, Wrapper):
        yield node
        node = node.env
    yield node


def _stack_names(env: ProgramEnv) -> set[str]:
    return {type(node).__name__ for node in _stack(env)}


def _find_attr(env: ProgramEnv, name: str) -> Any:
    for node in _stack(env):
        if hasattr(node, name):
            return getattr(node, name)
    raise AttributeError(f"no wrapper of the env stack and not its base env has an attribute {name!r}")


def make_sb3_atari_env(env_id: str, n_envs: int = 1, seed: int | None = None, *, backend: str = "cpu",
                       num_threads: int | None = None, **env_kwargs: Any) -> Sb3VecEnv:
    """``make_atari_env(env_id, n_envs, seed)`` on gpu_env: an :class:`Sb3VecEnv` of preset ``"sb3"``.

    ``seed`` is applied as ``make_vec_env`` does (``vec_env.seed(seed)``: env ``i`` gets ``seed + i``
    at the first reset); ``env_kwargs`` are ale-py ``AtariEnv`` kwargs, as ``env_kwargs`` there.
    """
    venv = make_preset(env_id, n_envs, "sb3", backend=backend, num_threads=num_threads, **env_kwargs)
    assert isinstance(venv, PresetVecEnv)  # preset "sb3" always builds one
    env = Sb3VecEnv(venv)
    env.seed(seed)
    return env
