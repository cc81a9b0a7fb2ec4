"""Reference environments, one module per family (``atari``: gymnasium + ale-py; ``doom``: ViZDoom).

This package-level module holds what is family-independent: :func:`describe` (obs/action spec of an
env spec, :class:`~evaltk.envs.spec.EnvSpec`), :func:`check_compatible` (does a checkpoint's spec fit an env) and
:func:`env_for_id` (a default env spec for an id given on the command line).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from evaltk.envs.spec import EnvSpec
from evaltk.errors import SpecError

if TYPE_CHECKING:
    from evaltk.checkpoint import CheckpointSpec

__all__ = ["FAMILIES", "EnvInfo", "EnvSpec", "cap_episode_frames", "check_compatible", "describe", "env_for_id"]

FAMILIES = ("atari", "doom")


@dataclass(frozen=True)
class EnvInfo:
    """What an env spec resolves to: the env spec with every setting explicit and its spaces."""

    env: EnvSpec
    obs_spec: dict[str, Any]
    action_spec: dict[str, Any]
    action_meanings: list[str] | None
    settings: dict[str, Any] | None = None
    """Atari: the effective settings gymnasium + ale-py runs the env with (:mod:`evaltk.envs.atari_settings`), read
    from the env the spec builds; Doom: None."""


def describe(env: EnvSpec, *, policy: CheckpointSpec | None = None) -> EnvInfo:
    """Resolve and check ``env`` and return its spec; :class:`SpecError` for bad or unknown envs.

    With ``policy``, also check that the policy's spec fits the env (:func:`check_compatible`).
    """
    info = _describe(env)
    if policy is not None:
        check_compatible(policy, info)
    return info


def _describe(env: EnvSpec) -> EnvInfo:
    family = env.family
    if family == "atari":
        from evaltk.envs import atari

        resolved, obs_spec, action_spec, meanings, settings = atari.describe(env)
        return EnvInfo(env=resolved, obs_spec=obs_spec, action_spec=action_spec, action_meanings=meanings,
                       settings=settings)
    if family == "doom":
        try:
            from evaltk.envs import doom
        except ModuleNotFoundError as exc:
            raise SpecError(f"doom envs need {exc.name}: pip install -e '.[doom]'") from None
        scenario = doom.scenario_from_env_spec(env)
        return EnvInfo(env=doom.env_spec(scenario), obs_spec=doom.obs_spec(scenario),
                       action_spec=doom.action_spec(scenario), action_meanings=None)
    raise SpecError(f"unknown env family {family!r}: use one of {', '.join(FAMILIES)}")


def cap_episode_frames(env: EnvSpec, frames: int) -> EnvSpec:
    """Return ``env`` with its episodes cut after ``frames`` frames, replacing the env's own limit.

    Atari: ALE's ``max_num_frames_per_episode`` (emulator frames; 108,000 for v5 ids), Doom: the scenario's
    ``episode_timeout`` (game tics). The cut is the env's own truncation, so a capped episode's row says
    ``truncated``; the limit is part of the env spec, so a score table records it.
    """
    if isinstance(frames, bool) or not isinstance(frames, int) or frames < 1:
        raise SpecError(f"--max-episode-frames {frames!r}: use a whole number of frames >= 1")
    family = env.family
    if family == "atari":
        return replace(env, kwargs={**env.kwargs, "max_num_frames_per_episode": frames})
    if family == "doom":
        from evaltk.envs import doom

        return doom.env_spec(doom.scenario_from_env_spec(env).replace(episode_timeout=frames))
    raise SpecError(f"--max-episode-frames caps Atari and Doom episodes, not {family!r} envs: drop it")


def env_for_id(env_id: str) -> EnvSpec:
    """Default env spec for an id from the command line: gymnasium's registered settings, no preprocessing."""
    from evaltk.envs import atari

    return atari.resolve_env(EnvSpec("atari", env_id))


def check_compatible(spec: CheckpointSpec, info: EnvInfo) -> None:
    """Raise :class:`SpecError` if the policy's obs/action spec does not fit the env described by ``info``."""
    env_id = info.env.env_id
    want, got = spec.obs_spec, info.obs_spec
    if list(want["shape"]) != list(got["shape"]) or want["dtype"] != got["dtype"]:
        raise SpecError(
            f"the policy expects observations {want['dtype']}{list(want['shape'])} but {env_id} with these settings "
            f"gives {got['dtype']}{list(got['shape'])}: evaluate on the env the checkpoint was trained on "
            "(omit --env-id to use the checkpoint's own) or fix obs_spec in policy.json")
    if spec.action_spec != info.action_spec:
        raise SpecError(
            f"the policy's action spec {spec.action_spec} does not match {env_id}'s {info.action_spec}: evaluate on "
            "the env the checkpoint was trained on (a different game or full_action_space changes the action count)")
