"""``gpu_env``: this project's emulator, rebuilding the checkpoint's env with ``gpu_env.make_vec``.

It reproduces gymnasium + ale-py's rules, so its settings are the reference's with its own package name.
"""

from __future__ import annotations

from typing import Any

from evaltk.envs import EnvInfo
from evaltk.envs.gpu_vector import GpuEnvEpisodeVector, make_vec_kwargs
from evaltk.simulators.base import EpisodeSlots, SimulatorError
from evaltk.simulators.factory import FactoryRunner
from evaltk.simulators.settings import reference_settings, version
from evaltk.simulators.slots import EpisodeRunner


class GpuEnvSimulator:
    """gpu_env's CPU backend (see the module docstring)."""

    name = "gpu_env"

    def check(self, info: EnvInfo, *, seed: int) -> None:
        """Refuse non-Atari envs (gpu_env emulates the Atari 2600 only)."""
        if info.env.get("family") != "atari":
            raise SimulatorError(f"gpu_env runs Atari envs only, and {info.env.get('env_id')} is a "
                                 f"{info.env.get('family')} env: use --sim gym (ViZDoom) or another simulator")

    def deterministic(self) -> GpuEnvSimulator:
        """Return the same simulator: determinism is in the env dict (sticky actions off, one NOOP)."""
        return self

    def runner(self, info: EnvInfo) -> EpisodeRunner:
        """One ``gpu_env.make_vec`` env (a vector of one) for a lockstep."""
        import gpu_env

        env_id, kwargs = make_vec_kwargs(info.env)
        return FactoryRunner(self.name, lambda **_: gpu_env.make_vec(env_id, 1, backend="cpu", obs_format="numpy",
                                                                      **kwargs), info)

    def settings(self, env: dict[str, Any]) -> dict[str, Any]:
        """Return the reference's settings for ``env``, as gpu_env reproduces them."""
        return reference_settings(env, package=f"gpu_env {version('evaltk')} (CPU backend)").to_dict()

    def identity(self, env: dict[str, Any]) -> dict[str, Any]:
        """Return the name and the effective settings (evaltk's version, which ships gpu_env, among them)."""
        return {"simulator": self.name, "settings": self.settings(env)}

    def episodes(self, info: EnvInfo, num_envs: int, *, workers: int, fast_reset: bool) -> EpisodeSlots:
        """One ``gpu_env.make_vec`` vector of ``num_envs`` envs (``workers`` and ``fast_reset`` do not apply)."""
        return GpuEnvEpisodeVector(info.env, num_envs, obs_shape=info.obs_spec["shape"],
                                   obs_dtype=info.obs_spec["dtype"])
