"""Built-in Doom agents: features, scripted decisions, random reproducibility, policies registration."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from evaltk.tournament import agents


def _obs(visible: float = 0.0, angle: float = 0.0, height: float = 0.0,
         depths: tuple[float, float, float] = (20, 20, 20), ammo: float = 10.0) -> np.ndarray:
    return np.array([[visible, angle, height, *depths, 100.0, ammo]], dtype=np.float32)


def _scripted() -> agents.ScriptedDoomAgent:
    agent = agents.ScriptedDoomAgent()
    agent.reset(1, np.random.default_rng(0))
    return agent


def test_state_features_pick_the_biggest_player_label() -> None:
    depth = np.zeros((120, 160), dtype=np.uint8)
    depth[:, 107:] = 30
    labels = [("Medikit", 0, 0, 10, 10), ("DoomPlayer", 120, 40, 20, 30), ("DoomPlayer", 10, 40, 4, 6)]
    f = agents.state_features(labels, depth, 160, 120, health=80.0, ammo=5.0)
    assert f.dtype == np.float32
    assert f.shape == (agents.NUM_FEATURES,)
    assert f[0] == 1.0
    # centre x = 130 px -> offset 0.625 of the half-width -> atan(0.625 * tan 45 deg)
    assert f[1] == pytest.approx(np.degrees(np.arctan(0.625)), rel=1e-5)
    assert f[2] == pytest.approx(30 / 120)
    assert f[3] == 0.0
    assert f[5] > 29.0
    assert (f[6], f[7]) == (80.0, 5.0)
    empty = agents.state_features([], None, 160, 120, 100.0, 0.0)
    assert empty[0] == 0.0


def test_scripted_turns_toward_enemy_and_fires_only_when_centred() -> None:
    agent = _scripted()
    first = np.array([True])
    off_centre = agent.act(_obs(visible=1, angle=15.0, height=0.2), first)[0]
    assert agents.TURN_BINS[off_centre[3]] == 15.0
    assert off_centre[2] == 0
    centred = agent.act(_obs(visible=1, angle=1.0, height=0.2), np.array([False]))[0]
    assert centred[2] == 1
    too_close = agent.act(_obs(visible=1, angle=0.0, height=0.9), np.array([False]))[0]
    assert too_close[2] == 0
    no_ammo = agent.act(_obs(visible=1, angle=0.0, height=0.2, ammo=0.0), np.array([False]))[0]
    assert no_ammo[2] == 0


def test_scripted_turns_away_from_walls() -> None:
    agent = _scripted()
    act = agent.act(_obs(depths=(2.0, 1.0, 9.0)), np.array([True]))[0]
    assert act[0] == 0
    assert agents.TURN_BINS[act[3]] > 0  # right is more open
    act = agent.act(_obs(depths=(9.0, 1.0, 2.0)), np.array([False]))[0]
    assert agents.TURN_BINS[act[3]] < 0


def test_random_agent_is_reproducible_and_in_range() -> None:
    obs = np.zeros((3, agents.NUM_FEATURES), dtype=np.float32)
    runs = []
    for _ in range(2):
        agent = agents.RandomDoomAgent()
        agent.reset(3, np.random.default_rng(42))
        runs.append(np.stack([agent.act(obs, np.zeros(3, bool)) for _ in range(50)]))
    np.testing.assert_array_equal(runs[0], runs[1])
    assert runs[0].dtype == np.int64
    assert np.all(runs[0] >= 0)
    assert np.all(runs[0] < np.asarray(agents.ACTION_NVEC))
    with pytest.raises(RuntimeError, match="reset"):
        agents.RandomDoomAgent().act(obs, np.zeros(3, bool))


def test_action_to_buttons_spreads_turn_over_frameskip() -> None:
    buttons = agents.action_to_buttons(np.array([1, 2, 1, len(agents.TURN_BINS) - 1]), frameskip=4)
    assert buttons == [1.0, 0.0, 0.0, 1.0, 1.0, agents.TURN_BINS[-1] / 4]
    assert len(buttons) == len(agents.BUILTIN_BUTTONS)


def test_builtins_of_evaltk_policies_are_these_agents_on_the_feature_env(tmp_path: Path) -> None:
    from evaltk import policies

    policy = policies.load_policy("builtin:scripted", env=agents.builtin_env("map02"))
    assert isinstance(policy, agents.ScriptedDoomAgent)
    assert policy.spec.model_class == "builtin:scripted"
    assert policy.spec.obs_spec == agents.obs_spec()
    assert policy.spec.env["kwargs"]["map"] == "map02"
    assert isinstance(policies.make_builtin("random", agents.builtin_env()), agents.RandomDoomAgent)
    saved = policies.save_builtin(tmp_path / "scripted", "scripted", agents.builtin_env())
    assert isinstance(policies.load_policy(saved), agents.ScriptedDoomAgent)
    assert policies.builtin_name("builtin:random") == "random"
    assert policies.builtin_name("random") == "random"
    assert policies.builtin_name("/some/checkpoint") is None
    with pytest.raises(ValueError, match="unknown built-in"):
        agents.make_agent("nope", agents.builtin_env())
