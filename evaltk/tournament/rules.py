"""Tournament rules: which declared inputs (:class:`~evaltk.envs.doom_inputs.DoomInputs`) an entrant may have.

* ``open`` (the default): anything ViZDoom gives a program.
* ``screen-only``: the screen plus the game variables a player's HUD shows
  (:data:`~evaltk.envs.doom_inputs.HUD_VARIABLES`): no labels, depth or automap buffer, no other game variable.

An agent's inputs come from one place each (:func:`agent_inputs`): a built-in agent declares them
(:func:`evaltk.tournament.agents.builtin_inputs`), a checkpoint's are derived from the scenario its env spec
rebuilds (:func:`evaltk.envs.doom.inputs`; a Sample Factory run is imported first, its env spec rebuilt from
its ``config.json``), so they cannot drift from what the player feeds it. :func:`check_agents` refuses the
first agent the rules forbid before anything is written or played. ViZDoom's bots are the opponents a
tournament provides, not entrants: rules do not apply to them (:data:`~evaltk.envs.doom_inputs.BOT_INPUTS`
says what they see).
"""

from __future__ import annotations

from collections.abc import Sequence

from evaltk.envs.doom_inputs import BUFFERS, DoomInputs
from evaltk.errors import TournamentError

#: The rules by name, with what each allows.
RULES: dict[str, str] = {
    "open": "anything ViZDoom gives a program",
    "screen-only": "the screen plus the game variables a player's HUD shows (health, armor, ammunition, "
                   "weapons, selected weapon, frags)",
}
DEFAULT_RULES = "open"


def check_rules(name: str) -> None:
    """Raise :class:`TournamentError` unless ``name`` is one of :data:`RULES`."""
    if name not in RULES:
        raise TournamentError(f"unknown rules {name!r}: use one of {', '.join(RULES)}")


def forbidden(inputs: DoomInputs, rules: str) -> list[str]:
    """Return what of ``inputs`` the ``rules`` forbid, as phrases (``"the labels buffer"``); empty when allowed."""
    check_rules(rules)
    if rules == "open":
        return []
    out = [BUFFERS[name] for name in inputs.buffers()]
    if inputs.engine_state:
        out.append("the engine's game state")
    extra = inputs.beyond_hud()
    if extra:
        out.append(f"game variable{'s' if len(extra) > 1 else ''} {', '.join(extra)} (not on a player's HUD)")
    return out


def agent_inputs(ref: str) -> tuple[DoomInputs, str]:
    """Return the inputs of the tournament agent ``ref`` and where they come from (for messages).

    ``ref``: a built-in name (``random``, ``builtin:scripted``) or an evaltk checkpoint directory whose env
    spec is Doom (Sample Factory runs are imported into one before a tournament starts).
    """
    from evaltk.checkpoint import load_spec
    from evaltk.policies import builtin_name
    from evaltk.tournament import agents

    name = builtin_name(ref)
    if name is not None:
        try:
            return agents.builtin_inputs(name), f"built-in {name}"
        except ValueError as exc:
            raise TournamentError(str(exc)) from None
    spec = load_spec(ref)
    env = spec.env_spec
    if agents.is_feature_env(env):  # a built-in saved as a checkpoint (evaltk.policies.save_builtin)
        builtin = spec.model_class.removeprefix("builtin:")
        try:
            return agents.builtin_inputs(builtin), f"built-in {builtin}"
        except ValueError as exc:
            raise TournamentError(f"checkpoint {ref}: {exc}") from None
    if env.family != "doom":
        raise TournamentError(f"checkpoint {ref} was made for env family {env.family!r}; tournaments play "
                              "Doom: pass a Doom checkpoint")
    from evaltk.envs import doom

    scenario = doom.scenario_from_env_spec(env)
    return doom.inputs(scenario), f"its env spec, scenario {scenario.name}"


def check_agents(agent_refs: Sequence[str], rules: str) -> dict[str, DoomInputs]:
    """Return each agent's inputs; :class:`TournamentError` (one line) names the first agent ``rules`` forbid."""
    check_rules(rules)
    found: dict[str, DoomInputs] = {}
    for ref in agent_refs:
        inputs, source = agent_inputs(ref)
        bad = forbidden(inputs, rules)
        if bad:
            raise TournamentError(f"rules {rules!r} refuse agent {ref}: it reads {' and '.join(bad)} ({source}); "
                                  f"{rules} allows {RULES[rules]}: play it under rules 'open' or enter an agent "
                                  "that sees no more")
        found[ref] = inputs
    return found
