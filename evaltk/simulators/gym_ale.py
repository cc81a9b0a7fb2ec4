"""``gym``: the reference — gymnasium + ale-py for Atari env dicts, ViZDoom for Doom ones.

Episodes run in :class:`evaltk.envs.vector.EpisodeVector` slots: episode ``i`` is
``make_env(env).reset(seed=episode_seed)`` followed by the policy's actions.
"""

from __future__ import annotations

from typing import Any

from evaltk.envs import EnvInfo
from evaltk.envs.atari import make_env
from evaltk.envs.vector import EpisodeVector
from evaltk.simulators.base import EpisodeSlots
from evaltk.simulators.factory import FactoryRunner
from evaltk.simulators.settings import reference_settings, version
from evaltk.simulators.slots import EpisodeRunner


class GymSimulator:
    """The reference simulator (see the module docstring)."""

    name = "gym"

    def check(self, info: EnvInfo, *, seed: int) -> None:
        """Nothing to check beyond what :func:`evaltk.envs.describe` already did."""

    def deterministic(self) -> GymSimulator:
        """Return the same simulator: determinism is in the env dict (sticky actions off, one NOOP)."""
        return self

    def runner(self, info: EnvInfo) -> EpisodeRunner:
        """One ``make_env(env)`` for a lockstep, reset with each episode's seed."""
        return FactoryRunner(self.name, lambda **_: make_env(info.env), info)

    def settings(self, env: dict[str, Any]) -> dict[str, Any]:
        """Return gymnasium + ale-py's settings for ``env`` (Doom scenarios: the package only)."""
        if env.get("family") != "atari":
            return {"package": f"vizdoom {version('vizdoom')}", "env_id": str(env.get("env_id"))}
        package = f"gymnasium {version('gymnasium')} + ale-py {version('ale-py')}"
        return reference_settings(env, package=package).to_dict()

    def identity(self, env: dict[str, Any]) -> dict[str, Any]:
        """Return the name and the effective settings (gymnasium's and ale-py's versions among them)."""
        return {"simulator": self.name, "settings": self.settings(env)}

    def episodes(self, info: EnvInfo, num_envs: int, *, workers: int, fast_reset: bool) -> EpisodeSlots:
        """Slots of ``make_env(env)`` spread over ``workers`` processes."""
        return EpisodeVector(info.env, num_envs, num_workers=workers, obs_shape=info.obs_spec["shape"],
                             obs_dtype=info.obs_spec["dtype"], fast_reset=fast_reset)

