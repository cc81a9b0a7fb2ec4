"""``gpu_env``: this project's emulator, rebuilding the checkpoint's env with ``gpu_env.make_vec``.

Settings (:meth:`GpuEnvSimulator.settings`) are read from the vector env ``make_vec`` builds where it states
them publicly: sticky actions and the frame cap (its ``batch``), the action set (``single_action_space``: 18
actions is the full set), the frame stack and screen size (``single_observation_space``). The rest (frame
skip, NOOP starts, life loss, grayscale and resize method) are the options evaltk passed to ``make_vec``
(:func:`evaltk.envs.gpu_vector.make_vec_kwargs`), which gpu_env does not report back: for those it reports
the reference's settings of the same env spec (``EnvInfo.settings``), whose options it was given.
"""

from __future__ import annotations

from typing import Any

from evaltk import __version__
from evaltk.envs import EnvInfo, EnvSpec, describe
from evaltk.envs.gpu_vector import GpuEnvEpisodeVector, make_vec_kwargs
from evaltk.simulators.base import EpisodeRunner, EpisodeSlots, SimulatorError
from evaltk.simulators.factory import FactoryRunner

FULL_ACTIONS = 18
"""The Atari 2600's full action set: ALE's legal actions (``full_action_space``)."""
PACKAGE = f"gpu_env {__version__} (CPU backend)"
"""The package that emulates, as settings name it (evaltk's version, which ships gpu_env)."""


class GpuEnvSimulator:
    """gpu_env's CPU backend (see the module docstring)."""

    name = "gpu_env"

    def check(self, info: EnvInfo, *, seed: int) -> dict[str, Any]:
        """Refuse non-Atari envs (gpu_env emulates the Atari 2600 only); return the identity."""
        if info.env.family != "atari":
            raise SimulatorError(f"gpu_env runs Atari envs only, and {info.env.env_id} is a "
                                 f"{info.env.family} env: use --sim gym (ViZDoom) or another simulator")
        return {"simulator": self.name, "settings": self._settings(info)}

    def deterministic(self) -> GpuEnvSimulator:
        """Return the same simulator: determinism is in the env spec (sticky actions off, one NOOP)."""
        return self

    def runner(self, info: EnvInfo) -> EpisodeRunner:
        """One ``gpu_env.make_vec`` env (a vector of one) for a lockstep."""
        import gpu_env

        env_id, kwargs = make_vec_kwargs(info.env)
        return FactoryRunner(self.name, lambda **_: gpu_env.make_vec(env_id, 1, backend="cpu", obs_format="numpy",
                                                                      **kwargs), info)

    def settings(self, env: EnvSpec) -> dict[str, Any]:
        """Return gpu_env's settings for ``env``: the built vector env's where it states them (module docstring)."""
        if env.family != "atari":
            return {"package": PACKAGE, "env_id": env.env_id}
        return self._settings(describe(env))

    def _settings(self, info: EnvInfo) -> dict[str, Any]:
        import gpu_env

        if info.settings is None:
            raise SimulatorError(f"internal: {info.env.env_id} was described without settings")
        env_id, kwargs = make_vec_kwargs(info.env)
        vec = gpu_env.make_vec(env_id, 1, backend="cpu", obs_format="numpy", **kwargs)
        try:
            frames = int(vec.batch.max_num_frames_per_episode)
            shape = list(vec.single_observation_space.shape)
            read: dict[str, Any] = {
                "package": PACKAGE, "repeat_action_probability": float(vec.batch.repeat_action_probability),
                "full_action_space": int(vec.single_action_space.n) == FULL_ACTIONS,
                "max_episode_frames": frames if frames > 0 else None}
            if info.env.preprocessing["atari_preprocessing"] is not None and len(shape) == 3:
                read.update({"frame_stack": shape[0], "obs_size": shape[1:]})
        finally:
            vec.close()
        return {**info.settings, **read}

    def episodes(self, info: EnvInfo, num_envs: int, *, workers: int, fast_reset: bool) -> EpisodeSlots:
        """One ``gpu_env.make_vec`` vector of ``num_envs`` envs (``workers`` and ``fast_reset`` do not apply)."""
        return GpuEnvEpisodeVector(info.env, num_envs, obs_shape=info.obs_spec["shape"],
                                   obs_dtype=info.obs_spec["dtype"])
