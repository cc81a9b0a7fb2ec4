"""The Doom scenario registry: :class:`DoomScenario` rows declared as data, and :data:`SCENARIOS` by name.

:mod:`evaltk.envs.doom` turns a row into a game, observations and buttons (see its docstring for the
layout); every consumer (APPO training, self-play, evaluation, tournaments) looks scenarios up here.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import vizdoom

from evaltk.errors import SpecError

SCENARIO_DIRS = ("vizdoom", "sample_factory")
"""Where a scenario's cfg can lie (see :class:`DoomScenario`)."""
INTERPOLATIONS = ("bilinear", "nearest")
"""How the rendered screen can be resized to the observation size."""


@dataclass(frozen=True)
class ActionHead:
    """One independent categorical choice of the policy.

    ``options[i]`` is the set of ``(button name, value)`` pairs pressed when the head picks ``i``; an empty
    tuple is "press nothing". Values are 1.0 for binary buttons and degrees for ``*_DELTA`` buttons.
    """

    name: str
    options: tuple[tuple[tuple[str, float], ...], ...]


@dataclass(frozen=True)
class DoomScenario:
    """A Doom environment as data (see the module docstring for the observation and action layout).

    ``reward_shaping`` maps a game variable name to the coefficient applied to its per-step change; a key
    ``"<VAR>:neg"`` gives a separate coefficient for decreases. ``reward_scale`` multiplies the game's own
    reward (shaping terms are not scaled). ``bots`` > 0 hosts a one-player deathmatch and adds that many
    built-in bots at every episode start. ``timelimit`` (minutes of game time) and ``episode_timeout``
    (tics) override the cfg when set. ``scenario_dir``: where ``cfg`` lies, ``"vizdoom"``
    (``vizdoom.scenarios_path``) or ``"sample_factory"`` (Sample Factory 2.1.1's own cfgs, vendored, with
    their maps found by :mod:`evaltk.envs.doom_files`). ``interpolation``: how the
    rendered screen is resized to ``obs_size`` (``"bilinear"``, or ``"nearest"`` as Sample Factory's
    ``ResizeWrapper``). ``measurement_scheme`` ``"sample_factory"``: the observation carries Sample
    Factory's ``DoomAdditionalInput`` vector (:mod:`evaltk.envs.doom_measurements`) in one extra row.
    ``mark_players``: other players' pixels are painted :data:`evaltk.envs.doom_labels.MARK_RGB` in the
    observation, from ViZDoom's labels buffer (the information the built-in scripted agent aims from); the
    default is the rendered pixels alone.
    """

    name: str
    cfg: str
    buttons: tuple[str, ...]
    action_heads: tuple[ActionHead, ...]
    map: str | None = None
    frameskip: int = 4
    resolution: str = "RES_160X120"
    obs_size: tuple[int, int] = (72, 128)
    measurements: tuple[str, ...] = ()
    reward_scale: float = 1.0
    reward_shaping: Mapping[str, float] = field(default_factory=dict)
    bots: int = 0
    timelimit: float | None = None
    episode_timeout: int | None = None
    skill: int | None = None
    game_args: str = ""
    true_objective: str | None = None
    scenario_dir: str = "vizdoom"
    interpolation: str = "bilinear"
    measurement_scheme: str | None = None
    mark_players: bool = False

    def __post_init__(self) -> None:
        if self.frameskip < 1:
            raise SpecError(f"scenario {self.name!r}: frameskip must be >= 1, got {self.frameskip}")
        if not self.action_heads or any(not h.options for h in self.action_heads):
            raise SpecError(f"scenario {self.name!r}: every action head needs at least one option")
        known = set(self.buttons)
        for head in self.action_heads:
            for option in head.options:
                for button, _ in option:
                    if button not in known:
                        raise SpecError(f"scenario {self.name!r}: head {head.name!r} presses {button!r}, "
                                        f"which is not in buttons {self.buttons}; add it to buttons")
        for name in (*self.buttons, *self.measurements, *(k.split(":")[0] for k in self.reward_shaping)):
            if not (hasattr(vizdoom.Button, name) or hasattr(vizdoom.GameVariable, name)):
                raise SpecError(f"scenario {self.name!r}: {name!r} is neither a vizdoom.Button nor a "
                                "vizdoom.GameVariable; check the spelling")
        for what, value, allowed in (("scenario_dir", self.scenario_dir, SCENARIO_DIRS),
                                     ("interpolation", self.interpolation, INTERPOLATIONS),
                                     ("measurement_scheme", self.measurement_scheme, (None, "sample_factory"))):
            if value not in allowed:
                raise SpecError(f"scenario {self.name!r}: {what} {value!r} is not one of {allowed}")
        if not hasattr(vizdoom.ScreenResolution, self.resolution):
            raise SpecError(f"scenario {self.name!r}: resolution {self.resolution!r} is not a "
                            "vizdoom.ScreenResolution name such as 'RES_160X120'")

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-ready dict (the ``preprocessing`` block of a checkpoint's env spec).

        ``scenario_dir``, ``measurement_scheme`` and ``mark_players`` appear only when they differ from their
        defaults.
        """
        data = dataclasses.asdict(self)
        data["reward_shaping"] = dict(self.reward_shaping)
        data["obs_layout"] = "CHW"
        for key, default in (("scenario_dir", "vizdoom"), ("measurement_scheme", None), ("mark_players", False)):
            if data[key] == default:  # a row without them serialises as before they existed (recorded traces)
                del data[key]
        return data

    def replace(self, **changes: Any) -> DoomScenario:
        """Return a copy with ``changes`` applied (e.g. ``bots=2``)."""
        return dataclasses.replace(self, **changes)


def _single(*names: str) -> tuple[tuple[str, float], ...]:
    return tuple((n, 1.0) for n in names)


def _flat(*combos: tuple[str, ...]) -> tuple[ActionHead, ...]:
    return (ActionHead("action", tuple(_single(*c) for c in combos)),)


_TURN_BINS = tuple(float(x) for x in np.linspace(-12.5, 12.5, 11))
_DEATHMATCH_BUTTONS = ("MOVE_FORWARD", "MOVE_BACKWARD", "MOVE_RIGHT", "MOVE_LEFT", "SELECT_NEXT_WEAPON",
                       "ATTACK", "SPEED", "TURN_LEFT_RIGHT_DELTA")
_DEATHMATCH_HEADS = (
    ActionHead("forward_backward", ((), _single("MOVE_FORWARD"), _single("MOVE_BACKWARD"))),
    ActionHead("strafe", ((), _single("MOVE_RIGHT"), _single("MOVE_LEFT"))),
    ActionHead("next_weapon", ((), _single("SELECT_NEXT_WEAPON"))),
    ActionHead("attack", ((), _single("ATTACK"))),
    ActionHead("speed", ((), _single("SPEED"))),
    ActionHead("turn", tuple((("TURN_LEFT_RIGHT_DELTA", d),) for d in _TURN_BINS)),
)
_DEATHMATCH_MEASUREMENTS = ("SELECTED_WEAPON", "SELECTED_WEAPON_AMMO", "HEALTH", "ARMOR", "FRAGCOUNT",
                            "DEATHCOUNT", "HITCOUNT", "DAMAGECOUNT", "ATTACK_READY")
# Shaping in the spirit of Sample Factory's deathmatch-vs-bots shaping (values chosen here): frags dominate,
# self-frags and deaths cost, hits and damage give small dense signals.
_DEATHMATCH_SHAPING = {"FRAGCOUNT": 1.0, "FRAGCOUNT:neg": 1.5, "DEATHCOUNT": -0.75, "HITCOUNT": 0.01,
                       "DAMAGECOUNT": 0.003, "HEALTH": 0.005, "HEALTH:neg": 0.0, "ARMOR": 0.005, "ARMOR:neg": 0.0}


def _deathmatch(name: str, doom_map: str) -> DoomScenario:
    return DoomScenario(
        name=name, cfg="cig.cfg", map=doom_map, buttons=_DEATHMATCH_BUTTONS, action_heads=_DEATHMATCH_HEADS,
        frameskip=4, measurements=_DEATHMATCH_MEASUREMENTS, reward_shaping=_DEATHMATCH_SHAPING, bots=7,
        timelimit=4.0, true_objective="FRAGCOUNT",
        game_args="+sv_forcerespawn 1 +sv_noautoaim 1 +sv_respawnprotect 1 +sv_spawnfarthest 1 "
                  "+sv_nocrouch 1 +viz_respawn_delay 0 +viz_nocheat 1",
    )


SCENARIOS: dict[str, DoomScenario] = {
    s.name: s
    for s in (
        DoomScenario(name="basic", cfg="basic.cfg", buttons=("MOVE_LEFT", "MOVE_RIGHT", "ATTACK"),
                     action_heads=_flat((), ("MOVE_LEFT",), ("MOVE_RIGHT",), ("ATTACK",)), reward_scale=0.01),
        DoomScenario(name="defend_the_center", cfg="defend_the_center.cfg",
                     buttons=("TURN_LEFT", "TURN_RIGHT", "ATTACK"),
                     action_heads=_flat((), ("TURN_LEFT",), ("TURN_RIGHT",), ("ATTACK",)),
                     measurements=("AMMO2", "HEALTH")),
        DoomScenario(name="health_gathering", cfg="health_gathering.cfg",
                     buttons=("TURN_LEFT", "TURN_RIGHT", "MOVE_FORWARD"),
                     action_heads=_flat((), ("TURN_LEFT",), ("TURN_RIGHT",), ("MOVE_FORWARD",),
                                        ("MOVE_FORWARD", "TURN_LEFT"), ("MOVE_FORWARD", "TURN_RIGHT")),
                     measurements=("HEALTH",), reward_scale=0.01),
        DoomScenario(name="deadly_corridor", cfg="deadly_corridor.cfg",
                     buttons=("MOVE_LEFT", "MOVE_RIGHT", "ATTACK", "MOVE_FORWARD", "MOVE_BACKWARD", "TURN_LEFT",
                              "TURN_RIGHT"),
                     action_heads=_flat((), ("MOVE_LEFT",), ("MOVE_RIGHT",), ("ATTACK",), ("MOVE_FORWARD",),
                                        ("MOVE_BACKWARD",), ("TURN_LEFT",), ("TURN_RIGHT",),
                                        ("MOVE_FORWARD", "ATTACK")),
                     measurements=("HEALTH",), reward_scale=0.01),
        _deathmatch("deathmatch_bots", "map02"),
        _deathmatch("deathmatch_bots_map01", "map01"),
    )
}
"""The Doom scenarios by name, the one registry every consumer (training, self-play, evaluation, tournaments)
reads. ``deathmatch_bots`` is ViZDoom's cig.wad map02 (full deathmatch) with 7 built-in bots;
``deathmatch_bots_map01`` is map01 (rocket launchers only); ``duel`` and ``deathmatch`` are the
:data:`SELF_PLAY_SCENARIOS`."""


#: Shaping of the self-play duel (near zero-sum as in Sample Factory's self-play: frag +1, death -1; small
#: dense terms for hits and damage help the first minutes of learning). Keys are vizdoom game variables.
DUEL_SHAPING: dict[str, float] = {"FRAGCOUNT": 1.0, "FRAGCOUNT:neg": 1.0, "DEATHCOUNT": -1.0, "HITCOUNT": 0.02,
                                  "DAMAGECOUNT": 0.002}

_DUEL = SCENARIOS["deathmatch_bots_map01"].replace(
    name="duel", bots=0, timelimit=None, reward_shaping=DUEL_SHAPING, true_objective="FRAGCOUNT", game_args="")
SCENARIOS.update({_DUEL.name: _DUEL, "deathmatch": _DUEL.replace(name="deathmatch", bots=4)})

#: Shaping of ``duel_bots`` in the manner of Sample Factory's Doom deathmatch shaping: frags and deaths dominate;
#: hits, damage dealt and taken, health and armour gains, the rocket launcher (WEAPON5) and rocket (AMMO5) pickups
#: give small dense terms (decreases of the pickup variables cost nothing).
DUEL_BOTS_SHAPING: dict[str, float] = {
    "FRAGCOUNT": 1.0, "DEATHCOUNT": -0.75, "HITCOUNT": 0.01, "DAMAGECOUNT": 0.003, "DAMAGE_TAKEN": -0.003,
    "HEALTH": 0.005, "HEALTH:neg": 0.0, "ARMOR": 0.005, "ARMOR:neg": 0.0, "WEAPON5": 0.1, "WEAPON5:neg": 0.0,
    "AMMO5": 0.002, "AMMO5:neg": 0.0}
#: The tournament's server options (``evaltk.tournament.player.DEATHMATCH_ARGS`` without ``-deathmatch``, which
#: :func:`evaltk.envs.doom.make_game` adds for a bot game).
_MATCH_SERVER_ARGS = ("+sv_forcerespawn 1 +sv_spawnfarthest 1 +sv_respawnprotect 1 +sv_noautoaim 1 +sv_nocrouch 1 "
                      "+sv_nojump 1 +sv_nofreelook 1 +sv_noexit 1 +viz_respawn_delay 0")
SCENARIOS["duel_bots"] = _DUEL.replace(name="duel_bots", bots=1, timelimit=4.0, reward_shaping=DUEL_BOTS_SHAPING,
                                       game_args=_MATCH_SERVER_ARGS)
"""``duel_bots``: the duel's observation and heads against one ViZDoom bot, 4-minute episodes on map01 with the
tournament's server options: what ``evaltk tournament gauntlet --bots 1`` plays, as a single-agent scenario for
APPO (and the reinforcement-learning stage after behaviour cloning, docs/selfplay.md)."""
SCENARIOS.update({s.name: s for s in (SCENARIOS["duel"].replace(name="duel_marked", mark_players=True),
                                       SCENARIOS["duel_bots"].replace(name="duel_bots_marked", mark_players=True))})
"""``duel_marked``/``duel_bots_marked``: ``duel``/``duel_bots`` with other players painted into the observation
(``mark_players``): what the scripted agent knows, in pixels, for demonstrations, cloning and RL."""

SELF_PLAY_SCENARIOS: tuple[str, ...] = ("duel", "deathmatch")
"""The multiplayer scenarios of self-play (``evaltk train doom --self-play --scenario``), hosted and joined by
the tournament's match runner, which sets the time limit and the server options; the scenario fixes what a
policy sees and presses (the deathmatch buttons and heads, 160x120 rendered, 72x128 observed, frameskip 4)
and the shaping every member starts from (PBT mutates it). ``duel``: two programmatic players on cig.wad,
no game args of its own (without ``+viz_nocheat`` the built-in ``scripted`` agent, which reads the labels
buffer, can play against these checkpoints). ``deathmatch``: the duel's observation, buttons and shaping
with ``--agents-per-match`` programmatic players and 4 ViZDoom bots (the first names of ``bots.cfg``)."""


def get_scenario(name: str) -> DoomScenario:
    """Return ``SCENARIOS[name]``; raises :class:`SpecError` naming the known scenarios otherwise."""
    if name not in SCENARIOS:
        raise SpecError(f"unknown Doom scenario {name!r}; choose one of {', '.join(sorted(SCENARIOS))}")
    return SCENARIOS[name]
