"""Who chooses the actions of a recorded Doom trace: ``builtin:random``, ``builtin:scripted`` or a checkpoint.

:func:`decider` returns a :data:`conformance.doom_trace.Decide` for :func:`conformance.doom_trace.record_doom`:

* ``builtin:random``: every action head uniform, from ``numpy.random.default_rng(seed)``;
* ``builtin:scripted``: the tournament's scripted agent (:class:`evaltk.tournament.agents.ScriptedDoomAgent`)
  on its feature vector (labels and depth buffers, so both are recorded and hashed), its buttons mapped
  onto the scenario's by name (buttons the scenario lacks are dropped);
* a checkpoint location (:func:`evaltk.locations.resolve`: a directory, ``hf://``):
  :func:`evaltk.policies.load_policy` on the model observation of
  :func:`evaltk.envs.doom.observation`; its scenario must be the one recorded.
"""

from __future__ import annotations

import numpy as np

from conformance.doom_trace import Decide, DoomGameTics
from conformance.trace_file import TraceError

BUILTINS = ("builtin:random", "builtin:scripted")


def buffers_for(agent: str) -> tuple[str, ...]:
    """Return the extra buffers an agent needs to see (the scripted agent reads labels and depth)."""
    return ("depth", "labels") if agent == "builtin:scripted" else ()


def decider(agent: str, scenario: str, *, seed: int) -> Decide:
    """Return the decision function of ``agent`` for ``scenario``; TraceError names a bad agent."""
    rng = np.random.default_rng(seed)
    if agent == "builtin:random":
        return _random(rng)
    if agent == "builtin:scripted":
        return _scripted(rng)
    if agent.startswith("builtin:"):
        raise TraceError(f"unknown built-in agent {agent!r}: use one of {', '.join(BUILTINS)} or a checkpoint path")
    return _checkpoint(agent, scenario, rng)


def _random(rng: np.random.Generator) -> Decide:
    from evaltk.envs.doom import action_to_buttons

    def decide(game: DoomGameTics, new_episode: bool) -> list[float]:
        del new_episode
        sizes = [len(h.options) for h in game.scenario.action_heads]
        return action_to_buttons(np.array([rng.integers(0, n) for n in sizes]), game.scenario)

    return decide


def _scripted(rng: np.random.Generator) -> Decide:
    import vizdoom

    from evaltk.envs import doom_labels
    from evaltk.tournament import agents

    agent = agents.ScriptedDoomAgent()
    agent.reset(1, rng)

    def decide(game: DoomGameTics, new_episode: bool) -> list[float]:
        state, sc = game.state(), game.scenario
        labels = doom_labels.visible_labels(state.labels)
        depth = state.depth_buffer
        feats = agents.state_features(labels, depth, int(game.game.get_screen_width()),
                                      int(game.game.get_screen_height()),
                                      game.game.get_game_variable(vizdoom.GameVariable.HEALTH),
                                      game.game.get_game_variable(vizdoom.GameVariable.SELECTED_WEAPON_AMMO))
        action = agent.act(feats[None, :], np.array([new_episode]))[0]
        values = dict(zip(agents.BUILTIN_BUTTONS, agents.action_to_buttons(action, sc.frameskip), strict=True))
        return [float(values.get(b, 0.0)) for b in sc.buttons]

    return decide


def _checkpoint(ref: str, scenario: str, rng: np.random.Generator) -> Decide:
    from evaltk.envs.doom import action_to_buttons, observation, scenario_from_env_spec
    from evaltk.locations import resolve
    from evaltk.policies import load_policy

    policy = load_policy(resolve(ref).ref)  # a location: a directory, another library's file or hf://
    env = policy.spec.env_spec
    if env.family != "doom":
        raise TraceError(f"checkpoint {ref} plays {env.env_id!r} ({env.family}), not a Doom scenario")
    theirs = scenario_from_env_spec(env)
    if theirs.name != scenario:
        raise TraceError(f"checkpoint {ref} plays scenario {theirs.name!r}: record it with --scenario {theirs.name}")
    policy.reset(1, rng)

    def decide(game: DoomGameTics, new_episode: bool) -> list[float]:
        obs = observation(game.state(), theirs)[None]
        action = policy.act(obs, np.array([new_episode]))[0]
        return action_to_buttons(action, game.scenario)

    return decide
