"""An SB3 ``VecEnv`` on gpu_env: ``make_atari_env`` + ``DummyVecEnv`` semantics over a batched preset.

``make_sb3_atari_env("BreakoutNoFrameskip-v4", n_envs=4, seed=0)`` stands in for
``stable_baselines3.common.env_util.make_atari_env(...)``: per env, ``Monitor`` inside SB3's
``AtariWrapper`` (``gpu_env.presets`` ``"sb3"``: its native pool runs every env's step and reset in
worker threads), stepped as ``DummyVecEnv`` steps it: an env whose
episode ends (``terminated or truncated``, life losses included) is reset in the same step, its
last observation in ``info["terminal_observation"]``, ``info["TimeLimit.truncated"]`` as
DummyVecEnv sets it, ``info["episode"] = {r, l, t}`` from Monitor at each real game end, reset
infos in :attr:`reset_infos`. Seeds follow ``VecEnv.seed``: env ``i`` gets ``seed + i`` at the next
``reset()``. Stack frames with SB3's own ``VecFrameStack`` as with ``make_atari_env``.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import numpy.typing as npt
from stable_baselines3.common.vec_env.base_vec_env import VecEnv, VecEnvIndices, VecEnvObs, VecEnvStepReturn

from gpu_env.autoreset import checked_actions
from gpu_env.backends.native_pool import RESET, STEP_RESET
from gpu_env.errors import GpuEnvError
from gpu_env.presets import make as make_preset
from gpu_env.presets.vector_env import PresetVecEnv

# SB3's wrappers of make_atari_env's sub-env (for env_is_wrapped).
_SB3_WRAPPERS = ("Monitor", "AtariWrapper", "NoopResetEnv", "MaxAndSkipEnv", "EpisodicLifeEnv", "FireResetEnv",
                 "WarpFrame", "ClipRewardEnv")


class Sb3VecEnv(VecEnv):
    """SB3 ``VecEnv`` over a :class:`~gpu_env.presets.vector_env.PresetVecEnv` (see the module docstring)."""

    def __init__(self, venv: PresetVecEnv) -> None:
        if not isinstance(venv, PresetVecEnv) or venv.preset != "sb3":
            raise GpuEnvError(f"Sb3VecEnv wraps a gpu_env.presets 'sb3' env, got {type(venv).__name__}: "
                              "build it with gpu_env.presets.make(env_id, n, 'sb3')")
        self.venv = venv
        super().__init__(venv.num_envs, venv.single_observation_space, venv.single_action_space)
        self.reset_infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        self._actions: npt.NDArray[np.int64] = np.zeros(self.num_envs, dtype=np.int64)

    def _info(self, row: npt.NDArray[np.int32], i: int, now: float) -> dict[str, Any]:
        """Env ``i``'s info dict from its pool info row (entries 0-6, ``gpu_env/native/env_pool.cpp``)."""
        if row[0] == 0:
            return {}
        info: dict[str, Any] = {"lives": int(row[4]), "episode_frame_number": int(row[5]), "frame_number": int(row[6])}
        if row[0] == 2:
            info["seeds"] = self.venv.seeded_with[i]
        if row[1]:
            info["episode"] = {"r": float(row[2]), "l": int(row[3]), "t": round(now - float(self.venv.t_start[i]), 6)}
        return info

    def reset(self) -> VecEnvObs:
        """``DummyVecEnv.reset``: each env with its pending seed, then the seeds and options are cleared."""
        ids = np.arange(self.num_envs)
        out = self.venv.run(ids, np.full(self.num_envs, RESET, dtype=np.int32), seeds=list(self._seeds))
        rows = out["preset"]
        self.reset_infos = [self._info(rows[i], i, 0.0) for i in range(self.num_envs)]
        self._reset_seeds()
        self._reset_options()
        obs: npt.NDArray[np.uint8] = out["obs"]
        return obs

    def step_async(self, actions: np.ndarray) -> None:
        """Store the actions (int[num_envs]) for :meth:`step_wait`."""
        a = checked_actions(np.asarray(actions).reshape(-1), self.num_envs, len(self.venv.action_set))
        self._actions = a.astype(np.int64)

    def step_wait(self) -> VecEnvStepReturn:
        """Step every env; an env whose episode ends is reset in the same step (``DummyVecEnv``)."""
        import time

        out = self.venv.run(np.arange(self.num_envs), np.full(self.num_envs, STEP_RESET, dtype=np.int32),
                            self._actions)
        now = time.time()
        rows, terminated, truncated = out["preset"], out["terminated"], out["truncated"]
        dones = terminated | truncated
        infos = []
        for i in range(self.num_envs):
            info = self._info(rows[i, 7:] if dones[i] else rows[i], i, now)
            info["TimeLimit.truncated"] = bool(truncated[i] and not terminated[i])
            if dones[i]:
                info["terminal_observation"] = out["final_obs"][i].copy()
                self.reset_infos[i] = self._info(rows[i], i, now)
            infos.append(info)
        return out["obs"], out["reward"], dones, infos

    def close(self) -> None:
        """Close the underlying preset env."""
        self.venv.close()

    def get_attr(self, attr_name: str, indices: VecEnvIndices = None) -> list[Any]:
        """Each env's ``was_real_done``, ``lives`` (EpisodicLifeEnv's) or ``render_mode`` (None)."""
        if attr_name == "render_mode":
            return [None for _ in self._get_indices(indices)]
        values = self.venv.call(attr_name)
        return [values[i] for i in self._get_indices(indices)]

    def set_attr(self, attr_name: str, value: Any, indices: VecEnvIndices = None) -> None:
        """Refused: the wrappers' state lives in the native pool."""
        raise GpuEnvError(f"set_attr({attr_name!r}): gpu_env's SB3 env keeps its wrappers' state natively and "
                          "takes no attributes")

    def env_method(self, method_name: str, *method_args: Any, indices: VecEnvIndices = None,
                   **method_kwargs: Any) -> list[Any]:
        """Call ``get_action_meanings`` of each env (the one method a preset env has)."""
        if method_name != "get_action_meanings" or method_args or method_kwargs:
            raise GpuEnvError(f"env_method({method_name!r}): gpu_env's SB3 env has get_action_meanings() only")
        return [self.venv.get_action_meanings() for _ in self._get_indices(indices)]

    def env_is_wrapped(self, wrapper_class: type[gym.Wrapper[Any, Any, Any, Any]],
                       indices: VecEnvIndices = None) -> list[bool]:
        """Whether each env is wrapped in ``wrapper_class`` as make_atari_env wraps it (``Monitor`` …)."""
        return [wrapper_class.__name__ in _SB3_WRAPPERS for _ in self._get_indices(indices)]


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
