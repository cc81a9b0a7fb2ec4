"""``gym``: the reference — gymnasium + ale-py for Atari env dicts, ViZDoom for Doom ones.

Episodes run in :class:`evaltk.envs.vector.EpisodeVector` slots: episode ``i`` is
``make_env(env).reset(seed=episode_seed)`` followed by the policy's actions.

Settings are read from the env ``make_env`` builds (:func:`built_settings`): ALE's own values through its
public getters (sticky actions, frame cap, legal action set), the gymnasium spec (frame skip, step limit)
and the wrappers actually applied (``AtariPreprocessing``'s NOOPs, life loss, screen size; the frame stack;
a ``ClipReward``).
"""

from __future__ import annotations

from typing import Any

import ale_py
import gymnasium as gym

from evaltk.envs import EnvInfo
from evaltk.envs.atari import make_env
from evaltk.envs.vector import EpisodeVector
from evaltk.simulators.base import EpisodeSlots
from evaltk.simulators.factory import FactoryRunner
from evaltk.simulators.settings import settings_of
from evaltk.simulators.slots import EpisodeRunner


def _wrappers(env: gym.Env[Any, Any]) -> list[Any]:
    """Return the wrappers around ``env``'s base env, outermost first."""
    chain, layer = [], env
    while isinstance(layer, gym.Wrapper):
        chain.append(layer)
        layer = layer.env
    return chain


def _float32(value: float) -> float:
    """Return an ALE float setting (stored as float32) at float32 precision: 0.1, not 0.10000000149."""
    return float(f"{value:.7g}")


def built_facts(built: gym.Env[Any, Any]) -> dict[str, Any]:
    """Return the facts (:func:`evaltk.simulators.settings.settings_of`) a built Atari env states (module docstring)."""
    chain = _wrappers(built)
    ap = next((w for w in chain if isinstance(w, gym.wrappers.AtariPreprocessing)), None)
    stack = next((w for w in chain if isinstance(w, gym.wrappers.FrameStackObservation)), None)
    base: Any = built.unwrapped
    ale, spec = base.ale, base.spec
    base_skip = spec.kwargs.get("frameskip", 1) if spec is not None else 1
    limit = spec.max_episode_steps if spec is not None else None
    return {
        "frameskip": base_skip, "max_num_frames": int(ale.getInt("max_num_frames_per_episode")) or None,
        "max_episode_steps": limit if isinstance(base_skip, int) else None,
        "repeat_action_probability": _float32(ale.getFloat("repeat_action_probability")),
        "full_action_space": int(base.action_space.n) == len(ale.getLegalActionSet()),
        "obs_type": {3: "rgb", 2: "grayscale", 1: "ram"}[len(base.observation_space.shape)],
        "atari_preprocessing": None if ap is None else {
            "frame_skip": ap.frame_skip, "noop_max": ap.noop_max, "terminal_on_life_loss": ap.terminal_on_life_loss,
            "screen_size": ap.screen_size, "grayscale_obs": ap.grayscale_obs},
        "frame_stack": int(stack.stack_size) if stack is not None else 1,
        "reward_clip": any(isinstance(w, gym.wrappers.ClipReward) for w in chain)}


def built_settings(env: dict[str, Any]) -> dict[str, Any]:
    """Return the settings of the gymnasium env an Atari env dict builds, read from the built env (module docstring)."""
    built = make_env(env)
    try:
        facts = built_facts(built)
    finally:
        built.close()
    return settings_of(f"gymnasium {gym.__version__} + ale-py {ale_py.__version__}", env["env_id"], facts)


class GymSimulator:
    """The reference simulator (see the module docstring)."""

    name = "gym"

    def check(self, info: EnvInfo, *, seed: int) -> dict[str, Any]:
        """Return the identity: nothing to check beyond what :func:`evaltk.envs.describe` already did."""
        return self.identity(info.env)

    def deterministic(self) -> GymSimulator:
        """Return the same simulator: determinism is in the env dict (sticky actions off, one NOOP)."""
        return self

    def runner(self, info: EnvInfo) -> EpisodeRunner:
        """One ``make_env(env)`` for a lockstep, reset with each episode's seed."""
        return FactoryRunner(self.name, lambda **_: make_env(info.env), info)

    def settings(self, env: dict[str, Any]) -> dict[str, Any]:
        """Return gymnasium + ale-py's settings for ``env`` (Doom scenarios: the package only)."""
        if env.get("family") != "atari":
            import vizdoom

            return {"package": f"vizdoom {vizdoom.__version__}", "env_id": str(env.get("env_id"))}
        return built_settings(env)

    def identity(self, env: dict[str, Any]) -> dict[str, Any]:
        """Return the name and the effective settings (gymnasium's and ale-py's versions among them)."""
        return {"simulator": self.name, "settings": self.settings(env)}

    def episodes(self, info: EnvInfo, num_envs: int, *, workers: int, fast_reset: bool) -> EpisodeSlots:
        """Slots of ``make_env(env)`` spread over ``workers`` processes."""
        return EpisodeVector(info.env, num_envs, num_workers=workers, obs_shape=info.obs_spec["shape"],
                             obs_dtype=info.obs_spec["dtype"], fast_reset=fast_reset)

