"""``gym``: the reference — gymnasium + ale-py for Atari env specs, ViZDoom for Doom ones.

Episodes run in :class:`evaltk.envs.vector.EpisodeVector` slots: episode ``i`` is
``make_env(env).reset(seed=episode_seed)`` followed by the policy's actions.

Settings are read from the env ``make_env`` builds: the description (:func:`evaltk.envs.describe`) reads,
from the env it builds, ALE's own values through its public getters (sticky actions, frame cap, legal action
set), the gymnasium spec (frame skip, step limit) and the wrappers actually applied (``AtariPreprocessing``'s
NOOPs, life loss, screen size; the frame stack; a ``ClipReward``), and turns them into ``EnvInfo.settings``
(:func:`evaltk.envs.atari_settings.settings_of`), which this simulator reports as they are.
"""

from __future__ import annotations

from typing import Any

from evaltk.envs import EnvInfo, EnvSpec, describe
from evaltk.envs.atari import make_env
from evaltk.envs.vector import EpisodeVector
from evaltk.simulators.base import EpisodeRunner, EpisodeSlots
from evaltk.simulators.factory import FactoryRunner


def _settings(env: EnvSpec, settings: dict[str, Any] | None) -> dict[str, Any]:
    """Return an env spec's settings: its description's ``EnvInfo.settings`` (Doom: the package only)."""
    if settings is None:
        import vizdoom

        return {"package": f"vizdoom {vizdoom.__version__}", "env_id": env.env_id}
    return settings


class GymSimulator:
    """The reference simulator (see the module docstring)."""

    name = "gym"

    def check(self, info: EnvInfo, *, seed: int) -> dict[str, Any]:
        """Return the identity; a Doom scenario's cfg and map must be on this machine (checked before any episode)."""
        if info.env.family == "doom":
            from evaltk.envs import doom

            doom.scenario_files(doom.scenario_from_env_spec(info.env))
        return {"simulator": self.name, "settings": _settings(info.env, info.settings)}

    def deterministic(self) -> GymSimulator:
        """Return the same simulator: determinism is in the env spec (sticky actions off, one NOOP)."""
        return self

    def runner(self, info: EnvInfo) -> EpisodeRunner:
        """One ``make_env(env)`` for a lockstep, reset with each episode's seed."""
        return FactoryRunner(self.name, lambda **_: make_env(info.env), info)

    def settings(self, env: EnvSpec) -> dict[str, Any]:
        """Return gymnasium + ale-py's settings for ``env`` (Doom scenarios: the package only)."""
        return _settings(env, describe(env).settings if env.family == "atari" else None)

    def episodes(self, info: EnvInfo, num_envs: int, *, workers: int, fast_reset: bool) -> EpisodeSlots:
        """Slots of ``make_env(env)`` spread over ``workers`` processes."""
        return EpisodeVector(info.env, num_envs, num_workers=workers, obs_shape=info.obs_spec["shape"],
                             obs_dtype=info.obs_spec["dtype"], fast_reset=fast_reset)

