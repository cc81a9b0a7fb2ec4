"""The scenario a run trains on: a row of :mod:`evaltk.envs.doom_scenarios` with the config's overrides."""

from __future__ import annotations

from typing import Any

from evaltk.envs.doom import SELF_PLAY_SCENARIOS, DoomScenario, get_scenario
from trainers.appo.config import AppoConfig, ConfigError, shaping_from_json


def resolve_scenario(cfg: AppoConfig, *, self_play: bool = False) -> DoomScenario:
    """Return the scenario named by ``cfg.scenario`` with the config's resolution/size/frameskip overrides.

    With ``self_play`` only the multiplayer :data:`~evaltk.envs.doom_scenarios.SELF_PLAY_SCENARIOS` are
    accepted (:class:`ConfigError` otherwise); an unknown name raises :class:`~evaltk.errors.SpecError`.
    """
    if self_play and cfg.scenario not in SELF_PLAY_SCENARIOS:
        raise ConfigError(f"--self-play needs a multiplayer scenario: --scenario {cfg.scenario!r} is not one of "
                          f"{', '.join(SELF_PLAY_SCENARIOS)}")
    return with_overrides(get_scenario(cfg.scenario), cfg)


def with_overrides(scenario: DoomScenario, cfg: AppoConfig) -> DoomScenario:
    """Return ``scenario`` with the config's resolution/size/frameskip/shaping overrides (unchanged if none is set)."""
    changes: dict[str, Any] = {}
    shaping = shaping_from_json(cfg.reward_shaping)
    if shaping is not None:
        changes["reward_shaping"] = shaping
    if cfg.resolution:
        changes["resolution"] = cfg.resolution
    if cfg.obs_height or cfg.obs_width:
        changes["obs_size"] = (cfg.obs_height or scenario.obs_size[0], cfg.obs_width or scenario.obs_size[1])
    if cfg.frameskip:
        changes["frameskip"] = cfg.frameskip
    return scenario.replace(**changes) if changes else scenario
