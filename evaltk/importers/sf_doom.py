"""Sample Factory's Doom envs (``sf_examples.vizdoom``) rebuilt as evaltk Doom scenarios from ``config.json``.

Facts read from Sample Factory 2.1.1's ``doom_utils.DOOM_ENVS``, ``action_space`` and
``doom_gym.VizdoomEnv``: each env names a cfg of Sample Factory's own ``scenarios`` folder, a
(tuple) action space, a reward scaling, a time limit in agent steps, bots, and wrappers (the
``DoomAdditionalInput`` measurements, reward shaping). The scenario built here:

* plays Sample Factory's cfg (``scenario_dir="sample_factory"``: evaltk's copies of its cfgs, the maps found
  by :mod:`evaltk.envs.doom_files`) with the cfg's buttons in the cfg's order;
* maps each action head as ``VizdoomEnv._convert_actions`` does: a ``Discrete(n)`` head presses the
  next ``n - 1`` buttons one-hot (0 is no-op), a ``Discretized(n, lo, hi)`` head sets one delta
  button to ``lo + i * (hi - lo) / (n - 1)``;
* renders at 160x120 (256x144 with ``wide_aspect_ratio``), resizes to ``res_h x res_w`` with
  nearest-neighbour interpolation (Sample Factory's ``ResizeWrapper``), repeats each action
  ``env_frameskip`` tics, and with ``DoomAdditionalInput`` carries the measurement vector
  (:mod:`evaltk.envs.doom_measurements`);
* scores what Sample Factory's ``enjoy`` records per episode as ``true_objective``: the game reward
  times the env's reward scaling (single-player; ``true_objective`` is the unshaped reward there), or the
  final ``FRAGCOUNT`` for the envs with bots (``true_objective_frags``); the training-time shaping is not
  part of the score;
* hosts the bots games with Sample Factory's server options (``doom_multiagent``), 4-minute matches
  unless ``timelimit`` is set, and ``num_bots`` from the config when it is not -1.

The self-play envs (``doom_duel``, ``doom_deathmatch_full``: several learning agents in one match)
import as one agent hosting its env's bots game (at least one ViZDoom bot) scored by frags: their
opponents in Sample Factory were copies of themselves, which ``evaltk tournament`` plays instead.

Not rebuilt, each refused with one line: the continuous (``Box``) turn of ``doom_dm`` and
``doom_dwango5``, ``pixel_format`` other than CHW, and envs this table does not list.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from evaltk.importers.errors import ForeignCheckpointError

Head = tuple[Any, ...]
"""``("d", n)``: ``Discrete(n)``; ``("z", n, lo, hi)``: ``Discretized(n, lo, hi)``; ``("box",)``: continuous."""

_FULL = (("d", 3), ("d", 3), ("d", 8), ("d", 2), ("d", 2))
_TURN21 = ("z", 21, -12.5, 12.5)
_BATTLE = (("d", 3), ("d", 3), ("d", 2), ("d", 2), ("z", 11, -10.0, 10.0))
_BOX_DM = (("d", 3), ("d", 3), ("d", 3), ("d", 2), ("d", 2), ("box",))


@dataclass(frozen=True)
class SfDoomEnv:
    """One row of Sample Factory's ``DOOM_ENVS`` (the fields evaluation needs)."""

    cfg: str
    heads: tuple[Head, ...]
    reward_scaling: float = 1.0
    timeout: int = -1
    measurements: bool = False
    bots: int = 0
    agents: int = 1
    respawn_delay: int = 0


SF_DOOM_ENVS: dict[str, SfDoomEnv] = {
    "doom_basic": SfDoomEnv("basic.cfg", (("d", 4),), 0.01, 300),
    "doom_two_colors_easy": SfDoomEnv("two_colors_easy.cfg", (("d", 3), ("d", 3))),
    "doom_two_colors_hard": SfDoomEnv("two_colors_hard.cfg", (("d", 3), ("d", 3))),
    "doom_dm": SfDoomEnv("cig.cfg", _BOX_DM, 1.0, int(1e9), True, agents=8),
    "doom_dwango5": SfDoomEnv("dwango5_dm.cfg", _BOX_DM, 1.0, int(1e9), True, agents=8),
    "doom_my_way_home_flat_actions": SfDoomEnv("my_way_home.cfg", (("d", 5),)),
    "doom_defend_the_center_flat_actions": SfDoomEnv("defend_the_center.cfg", (("d", 4),)),
    "doom_my_way_home": SfDoomEnv("my_way_home.cfg", (("d", 3), ("d", 3))),
    "doom_deadly_corridor": SfDoomEnv("deadly_corridor.cfg", (("d", 3), ("d", 3), ("d", 3), ("d", 2)), 0.01),
    "doom_defend_the_center": SfDoomEnv("defend_the_center.cfg", (("d", 3), ("d", 2))),
    "doom_defend_the_line": SfDoomEnv("defend_the_line.cfg", (("d", 3), ("d", 2))),
    "doom_health_gathering": SfDoomEnv("health_gathering.cfg", (("d", 5),)),
    "doom_health_gathering_supreme": SfDoomEnv("health_gathering_supreme.cfg", (("d", 5),)),
    "doom_battle": SfDoomEnv("battle_continuous_turning.cfg", _BATTLE, 1.0, 2100, True),
    "doom_battle2": SfDoomEnv("battle2_continuous_turning.cfg", _BATTLE, 1.0, 2100, True),
    "doom_duel_bots": SfDoomEnv("ssl2.cfg", (*_FULL, ("d", 2), _TURN21), 1.0, int(1e9), True, bots=1,
                                respawn_delay=2),
    "doom_deathmatch_bots": SfDoomEnv("dwango5_dm_continuous_weap.cfg", (*_FULL, _TURN21), 1.0, int(1e9), True,
                                      bots=7),
    "doom_duel": SfDoomEnv("ssl2.cfg", (*_FULL, ("d", 2), _TURN21), 1.0, int(1e9), True, agents=2, respawn_delay=2),
    "doom_deathmatch_full": SfDoomEnv("freedm.cfg", (*_FULL, ("d", 2), _TURN21), 1.0, int(1e9), True, agents=4,
                                      bots=4, respawn_delay=2),
    "doom_benchmark": SfDoomEnv("battle.cfg", (("d", 9),), 1.0, 2100),
}
"""Sample Factory 2.1.1's Doom envs by name (``sf_examples/vizdoom/doom/doom_utils.py``)."""

SELF_PLAY = ("doom_duel", "doom_deathmatch_full")
"""Sample Factory's self-play envs: several learning agents in one match."""

_BOT_ARGS = ("+sv_forcerespawn 1 +sv_noautoaim 1 +sv_respawnprotect 1 +sv_spawnfarthest 1 +sv_nocrouch 1 "
             "+sv_nojump 1 +sv_nofreelook 1 +sv_noexit 1 +viz_respawn_delay {delay}")


def lookup(name: str, where: str) -> SfDoomEnv:
    """Return the table row of the Sample Factory env ``name``; one line naming the supported envs otherwise."""
    row = SF_DOOM_ENVS.get(name)
    if row is None:
        raise ForeignCheckpointError(f"{where}: Sample Factory env {name!r} is not one evaltk rebuilds (supported: "
                                     f"{', '.join(SF_DOOM_ENVS)})")
    if any(h[0] == "box" for h in row.heads):
        raise ForeignCheckpointError(f"{where}: {name}'s action space has a continuous (Box) turn head, which is not "
                                     "read (supported: Discrete and Discretized heads; train with doom_deathmatch_bots "
                                     "or doom_duel, whose turn is Discretized)")
    return row


def _cfg_list(text: str, key: str) -> list[str]:
    match = re.search(rf"^\s*{key}\s*=\s*\{{([^}}]*)\}}", text, flags=re.MULTILINE | re.IGNORECASE)
    if match is None:
        return []
    return [w for w in re.sub(r"#[^\n]*", " ", match.group(1)).split() if w]


def read_cfg(folder: str, cfg: str) -> tuple[list[str], list[str], int | None]:
    """Return the cfg's ``available_buttons``, ``available_game_variables`` and ``episode_timeout`` (None: unset)."""
    path = os.path.join(folder, cfg)
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except OSError as exc:
        raise ForeignCheckpointError(f"cannot read Sample Factory's scenario {path}: {exc.strerror}: reinstall "
                                     "evaltk (its copies of Sample Factory's cfgs are package data)") from None
    timeout = re.search(r"^\s*episode_timeout\s*=\s*(\d+)", text, flags=re.MULTILINE)
    return _cfg_list(text, "available_buttons"), _cfg_list(text, "available_game_variables"), \
        int(timeout.group(1)) if timeout else None


def action_heads(heads: tuple[Head, ...], buttons: list[str], where: str) -> list[dict[str, Any]]:
    """Return the evaltk action heads (``ActionHead`` dicts) of Sample Factory's tuple action space over ``buttons``."""
    out: list[dict[str, Any]] = []
    used = 0
    for index, head in enumerate(heads):
        if head[0] == "d":
            names = buttons[used:used + head[1] - 1]
            used += head[1] - 1
            options: list[list[list[Any]]] = [[]] + [[[b, 1.0]] for b in names]
        else:
            _, n, lo, hi = head
            names = buttons[used:used + 1]
            used += 1
            options = [[[names[0], lo + i * (hi - lo) / (n - 1)]] for i in range(n)] if names else []
        out.append({"name": f"head{index}", "options": options})
    if used != len(buttons):
        raise ForeignCheckpointError(f"{where}: the action space presses {used} buttons but the cfg lists "
                                     f"{len(buttons)}: the scenario files do not match Sample Factory 2.1.1's")
    return out


def scenario(cfg: Mapping[str, Any], name: str, folder: str, where: str) -> dict[str, Any]:
    """Return the ``preprocessing`` block (a :class:`~evaltk.envs.doom.DoomScenario` as a dict) of ``name``."""
    from evaltk.envs import doom_measurements

    row = lookup(name, where)
    if cfg.get("pixel_format", "CHW") != "CHW":
        raise ForeignCheckpointError(f"{where}: pixel_format {cfg.get('pixel_format')!r} is not reproduced (only CHW)")
    buttons, variables, cfg_timeout = read_cfg(folder, row.cfg)
    wide = bool(cfg.get("wide_aspect_ratio", False))
    res_w, res_h, skip = (cfg.get(k) for k in ("res_w", "res_h", "env_frameskip"))
    if not all(isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in (res_w, res_h, skip)):
        raise ForeignCheckpointError(f"{where}: config.json res_w/res_h/env_frameskip = {res_w}/{res_h}/{skip}: "
                                     "positive integers needed")
    pre: dict[str, Any] = {
        "name": f"sf_{name}", "cfg": row.cfg, "scenario_dir": "sample_factory", "buttons": buttons,
        "action_heads": action_heads(row.heads, buttons, where), "frameskip": skip,
        "resolution": "RES_256X144" if wide else "RES_160X120", "obs_size": [res_h, res_w], "interpolation": "nearest",
        "reward_scale": row.reward_scaling, "reward_shaping": {},
    }
    if row.measurements:
        pre["measurement_scheme"] = "sample_factory"
        pre["measurements"] = list(doom_measurements.present(variables))
    timeouts = [t for t in (cfg_timeout, row.timeout) if t is not None and 0 < t < int(1e9)]
    if timeouts:
        pre["episode_timeout"] = min(timeouts)
    bots = cfg.get("num_bots", -1)
    if row.bots > 0 or row.agents > 1:
        timelimit = cfg.get("timelimit")
        count = row.bots if not isinstance(bots, int) or bots < 0 else bots
        pre.update(bots=max(count, 1) if row.agents > 1 else count,
                   timelimit=float(timelimit) if isinstance(timelimit, (int, float)) else 4.0,
                   game_args=_BOT_ARGS.format(delay=row.respawn_delay), reward_scale=0.0,
                   reward_shaping={"FRAGCOUNT": 1.0}, true_objective="FRAGCOUNT")
        pre.pop("episode_timeout", None)
    return pre
