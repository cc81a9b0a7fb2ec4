"""What a Doom agent sees: :class:`DoomInputs`, and the game variables a player's HUD shows.

ViZDoom gives a program more than a human player has: besides the screen, a labels buffer (every visible
object's pixels and name), a depth buffer, an automap buffer and any game variable (positions, angles,
velocities, hit and damage counters...). :class:`DoomInputs` says which of them reach an agent's decisions.
It is never written by hand for a checkpoint: :func:`evaltk.envs.doom.inputs` derives it from the scenario
the checkpoint's env spec rebuilds (what :func:`evaltk.envs.doom.observation` feeds the policy), and the
built-in tournament agents declare theirs next to the feature view the player computes from them
(:mod:`evaltk.tournament.agents`). ViZDoom's bots are ZDoom's bot AI inside the engine: they act on the
engine's own game state (:data:`BOT_INPUTS`).

:data:`HUD_VARIABLES` are the game variables whose values the Doom status bar shows a player
(DoomWiki, "Status bar", https://doomwiki.org/wiki/Status_bar): the ammunition of the selected weapon, health,
armour, the weapons possessed ("arms"; a deathmatch shows the player's frags in their place) and the remaining
ammunition of each type; the selected weapon is in view as the weapon sprite. In ViZDoom's names
(``docs/api/cpp/enums.md``, ``GameVariable``): ``SELECTED_WEAPON``, ``SELECTED_WEAPON_AMMO``, ``HEALTH``,
``ARMOR``, ``FRAGCOUNT``, ``WEAPON0``-``WEAPON9`` and ``AMMO0``-``AMMO9``. Not on the status bar (so not among
them): positions, angles, velocities and the camera, ``DEATHCOUNT``, ``HITCOUNT``, ``HITS_TAKEN``,
``DAMAGECOUNT``, ``DAMAGE_TAKEN``, ``KILLCOUNT``/``ITEMCOUNT``/``SECRETCOUNT``, ``ATTACK_READY``,
``ALTATTACK_READY``, ``DEAD``, ``ON_GROUND``, ``PLAYER_NUMBER``, ``PLAYER_COUNT``, other players' frag counts
and the scenario-defined ``USER1``-``USER60``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

#: Game variables the Doom status bar shows a player (see the module docstring for the source).
HUD_VARIABLES: tuple[str, ...] = ("SELECTED_WEAPON", "SELECTED_WEAPON_AMMO", "HEALTH", "ARMOR", "FRAGCOUNT",
                                  *(f"WEAPON{i}" for i in range(10)), *(f"AMMO{i}" for i in range(10)))
#: The buffers a ViZDoom program can read besides the screen, as named in :class:`DoomInputs` and its messages.
BUFFERS: dict[str, str] = {"labels": "the labels buffer", "depth": "the depth buffer",
                           "automap": "the automap buffer"}


@dataclass(frozen=True)
class DoomInputs:
    """What reaches a Doom agent's decisions.

    ``screen``: the ViZDoom ``ScreenResolution`` name the screen is rendered at (``"RES_160X120"``), None when the
    agent does not look at the screen; ``labels``/``depth``/``automap``: it reads that ViZDoom buffer;
    ``game_variables``: ViZDoom ``GameVariable`` names it reads, in the order it reads them; ``engine_state``: it
    acts on the engine's internal game state (ViZDoom's bots).
    """

    screen: str | None = None
    labels: bool = False
    depth: bool = False
    automap: bool = False
    game_variables: tuple[str, ...] = ()
    engine_state: bool = False

    def beyond_hud(self) -> tuple[str, ...]:
        """Return the game variables this agent reads that the status bar does not show (:data:`HUD_VARIABLES`)."""
        return tuple(v for v in self.game_variables if v not in HUD_VARIABLES)

    def buffers(self) -> tuple[str, ...]:
        """Return the names (keys of :data:`BUFFERS`) of the buffers this agent reads besides the screen."""
        return tuple(name for name in BUFFERS if getattr(self, name))

    def to_json(self) -> dict[str, Any]:
        """Return the JSON-able dict of these inputs, with ``text`` (:meth:`describe`): what summaries record."""
        return {"screen": self.screen, "labels": self.labels, "depth": self.depth, "automap": self.automap,
                "game_variables": list(self.game_variables), "engine_state": self.engine_state,
                "text": self.describe()}

    def describe(self) -> str:
        """Return a short text of these inputs, e.g. ``screen 160x120 + labels buffer``, for tables and reports."""
        parts: list[str] = []
        if self.engine_state:
            parts.append("engine game state (ViZDoom bot)")
        if self.screen is not None:
            parts.append(f"screen {self.screen.removeprefix('RES_').lower()}")
        parts += [BUFFERS[name].removeprefix("the ") for name in self.buffers()]
        if self.game_variables:
            parts.append("game variables " + ", ".join(self.game_variables))
        return " + ".join(parts) if parts else "nothing (acts blind)"


#: What ViZDoom's bots act on: ZDoom's bot AI runs inside the engine, on its game state.
BOT_INPUTS = DoomInputs(engine_state=True)
