"""gymnasium's Atari ids as gpu_env reads them: each id's ROM and ``AtariEnv`` settings, from ``gymnasium.registry``.

Every id ale-py registers (``ALE/Pong-v5``, ``PongNoFrameskip-v4``, ``Pong-v4``, ``Pong-v0``,
``PongNoFrameskip-v0``) resolves to the settings ale-py registered for it, asked of the registry at run
time; old gym's ``-ram`` forms resolve to the same id with ``obs_type="ram"``.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from gpu_env.errors import GpuEnvError

_ALE_ENTRY_POINT = "ale_py.env:AtariEnv"
# Old gym's "-ram" ids ("Breakout-ram-v4", "Breakout-ramNoFrameskip-v4", "ALE/Breakout-ram-v5"): the id
# without "-ram", with obs_type="ram". ale-py 0.12.1 no longer registers them; make_vec accepts them.
_RAM_ID = re.compile(r"-ram(?=(?:NoFrameskip|Deterministic)?-v\d+$)")
# AtariEnv keyword arguments a registry entry may set, besides ``game``.
_ID_SETTINGS = ("frameskip", "repeat_action_probability", "full_action_space", "mode", "difficulty", "obs_type",
                "max_num_frames_per_episode")
# AtariEnv's own defaults for settings an entry leaves out (ale_py/env.py).
_ATARI_ENV_DEFAULTS: dict[str, Any] = {"frameskip": 4, "repeat_action_probability": 0.25, "full_action_space": False,
                                       "mode": None, "difficulty": None, "obs_type": "rgb",
                                       "max_num_frames_per_episode": None}


@dataclass(frozen=True)
class EnvIdSettings:
    """What a gymnasium Atari id stands for: its ROM and ``AtariEnv`` settings, read from ``gymnasium.registry``.

    ``settings`` holds every key of ``_ID_SETTINGS``: the entry's value, or ``AtariEnv``'s default where the
    entry has none; a ``-ram`` id has ``obs_type="ram"``.
    """

    env_id: str
    registered_id: str
    rom_id: str
    settings: Mapping[str, Any]


def _ale_registry() -> Mapping[str, Any]:
    import ale_py
    import gymnasium

    gymnasium.register_envs(ale_py)
    return gymnasium.registry


def env_id_settings(env_id: str) -> EnvIdSettings:
    """Return the ROM and settings of ``env_id`` as ``gymnasium.make(env_id)`` builds it (ale-py's registration).

    Every id ale-py registers is accepted (``ALE/Pong-v5``, ``PongNoFrameskip-v4``, ``Pong-v4``, ``Pong-v0``,
    ``PongNoFrameskip-v0``), and each with ``-ram`` (``ALE/Pong-ram-v5``, ``Pong-ramNoFrameskip-v4``:
    RAM observations). Raises :class:`GpuEnvError` for other ids and for ROMs gpu_env lacks.
    """
    registry = _ale_registry()
    ram = _RAM_ID.search(env_id) is not None
    registered_id = _RAM_ID.sub("", env_id, count=1)
    spec = registry.get(registered_id)
    if spec is None or spec.entry_point != _ALE_ENTRY_POINT:
        ale_ids = [k for k, v in registry.items() if v.entry_point == _ALE_ENTRY_POINT]
        close = difflib.get_close_matches(registered_id, ale_ids, n=3)
        hint = f" (close: {', '.join(repr(c) for c in close)})" if close else ""
        raise GpuEnvError(f"env id {env_id!r} is not an Atari id ale-py registers{hint}: use one of "
                          "gymnasium.registry's ale_py ids, e.g. 'ALE/Pong-v5', 'PongNoFrameskip-v4', 'Pong-v4'")
    kwargs = dict(spec.kwargs)
    unknown = sorted(set(kwargs) - {"game", *_ID_SETTINGS})
    if unknown or spec.max_episode_steps is not None:
        extra = unknown or [f"max_episode_steps={spec.max_episode_steps}"]
        raise GpuEnvError(f"env id {env_id!r} is registered with {extra}, which gpu_env does not reproduce: pass "
                          "an id without them")
    rom_id = str(kwargs.pop("game"))
    from gpu_env import games

    if rom_id not in games.games():
        raise GpuEnvError(f"env id {env_id!r} runs the ROM {rom_id!r}, which gpu_env has no game rules for: see "
                          "gpu_env.games.games() for the ROMs it plays")
    settings = {**_ATARI_ENV_DEFAULTS, **kwargs}
    if ram:
        settings["obs_type"] = "ram"
    return EnvIdSettings(env_id, registered_id, rom_id, MappingProxyType(settings))


def rom_id_from_env_id(env_id: str) -> str:
    """``"ALE/SpaceInvaders-v5"``, ``"SpaceInvadersNoFrameskip-v4"`` -> ``"space_invaders"`` (see env_id_settings)."""
    return env_id_settings(env_id).rom_id


def check_frameskip(frameskip: Any) -> tuple[int, int]:
    """Check ``AtariEnv``'s ``frameskip`` (a positive int or ``(low, high)``); return (low, high), high 0 if fixed."""
    if isinstance(frameskip, tuple):
        if len(frameskip) != 2 or not 0 < frameskip[0] < frameskip[1]:
            raise GpuEnvError(f"frameskip={frameskip}: a stochastic frameskip is (low, high) with 0 < low < high")
        return int(frameskip[0]), int(frameskip[1])
    if not isinstance(frameskip, int) or frameskip <= 0:
        raise GpuEnvError(f"frameskip={frameskip!r} must be a positive int or a (low, high) tuple")
    return frameskip, 0
