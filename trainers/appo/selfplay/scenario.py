"""The ``duel`` and ``deathmatch`` self-play scenarios on cig.wad, frag/death shaping (declared as data).

The duel has two programmatic players; the deathmatch has ``--agents-per-match`` of them and 4 bots.

Matches are hosted and joined by the tournament's match runner (:mod:`evaltk.tournament.match`), which
sets the time limit and the server options; the scenario fixes what a policy sees and presses:
the deathmatch buttons and action heads of :mod:`evaltk.envs.doom`, 160x120 rendered, 72x128 observed,
frameskip 4. ``reward_shaping`` here are the defaults every member starts from; PBT mutates them.
"""

from __future__ import annotations

from evaltk.envs.doom import DoomScenario, get_scenario

#: Shaping of the duel (Sample Factory's self-play shaping is near zero-sum: frag +1, death -1; small dense
#: terms for hits and damage help the first minutes of learning). Keys are vizdoom game variables.
DUEL_SHAPING: dict[str, float] = {"FRAGCOUNT": 1.0, "FRAGCOUNT:neg": 1.0, "DEATHCOUNT": -1.0, "HITCOUNT": 0.02,
                                  "DAMAGECOUNT": 0.002}

DUEL = get_scenario("deathmatch_bots_map01").replace(
    name="duel", bots=0, timelimit=None, reward_shaping=DUEL_SHAPING, true_objective="FRAGCOUNT", game_args="")
"""Two-player duel on cig.wad (the map is the match's: map01 by default). No game args of its own: the match
runner's server options apply, and without ``+viz_nocheat`` the built-in ``scripted`` agent (which reads the
labels buffer) can play against these checkpoints."""

DEATHMATCH = DUEL.replace(name="deathmatch", bots=4)
"""Deathmatch on cig.wad: ``--agents-per-match`` programmatic players (learners, members, snapshots) and 4
ViZDoom bots (the first names of ``bots.cfg``) in every training match; the duel's observation, buttons and
shaping."""

SCENARIOS: dict[str, DoomScenario] = {DUEL.name: DUEL, DEATHMATCH.name: DEATHMATCH}
"""Self-play scenarios by name (``--scenario``)."""
