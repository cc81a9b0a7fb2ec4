"""Doom scenarios as data: configuration, observation layout, action mapping, determinism, bots."""

from __future__ import annotations

import hashlib
import json
from typing import Any

import numpy as np
import pytest

from evaltk.envs import EnvSpec, doom, doom_labels
from evaltk.errors import SpecError

pytestmark = pytest.mark.vizdoom

REQUIRED = ("basic", "defend_the_center", "health_gathering", "deadly_corridor", "deathmatch_bots")


def _random_action(spec: dict[str, Any], rng: np.random.Generator) -> np.ndarray:
    if spec["type"] == "discrete":
        return np.array(rng.integers(int(spec["n"])), dtype=np.int64)
    return np.array([rng.integers(int(k)) for k in spec["nvec"]], dtype=np.int64)


def test_required_scenarios_declared() -> None:
    for name in REQUIRED:
        scenario = doom.SCENARIOS[name]
        assert scenario.name == name
    assert doom.SCENARIOS["deathmatch_bots"].bots > 0
    assert doom.SCENARIOS["deathmatch_bots"].cfg == "cig.cfg"


def test_unknown_scenario_names_the_choices() -> None:
    with pytest.raises(SpecError, match="basic"):
        doom.get_scenario("nope")


def test_bad_button_rejected() -> None:
    with pytest.raises(SpecError, match="JUMPP"):
        doom.SCENARIOS["basic"].replace(buttons=("MOVE_LEFT", "MOVE_RIGHT", "ATTACK", "JUMPP"))


@pytest.mark.parametrize("name", ["basic", "defend_the_center", "health_gathering", "deadly_corridor"])
def test_make_game_and_observation(name: str) -> None:
    scenario = doom.SCENARIOS[name]
    game = doom.make_game(scenario, seed=3)
    assert not game.is_running()
    game.init()
    try:
        doom.start_episode(game, scenario, first=True)
        obs = doom.observation(game.get_state(), scenario)
        assert obs.dtype == np.uint8
        assert list(obs.shape) == doom.obs_spec(scenario)["shape"]
        assert obs.std() > 0
        n_buttons = len(scenario.buttons)
        assert game.get_available_buttons_size() == n_buttons
        spec = doom.action_spec(scenario)
        assert spec["type"] == "discrete"
        for a in range(spec["n"]):
            buttons = doom.action_to_buttons(np.int64(a), scenario)
            assert len(buttons) == n_buttons
        game.make_action(doom.action_to_buttons(np.int64(1), scenario), scenario.frameskip)
        assert game.get_episode_time() >= scenario.frameskip
        assert len(doom.measurements(game, scenario)) == len(scenario.measurements)
    finally:
        game.close()


def test_action_mapping_basic() -> None:
    scenario = doom.SCENARIOS["basic"]
    assert doom.action_to_buttons(0, scenario) == [0.0, 0.0, 0.0]
    assert doom.action_to_buttons(1, scenario) == [1.0, 0.0, 0.0]
    assert doom.action_to_buttons(3, scenario) == [0.0, 0.0, 1.0]
    with pytest.raises(SpecError, match="out of range"):
        doom.action_to_buttons(4, scenario)


def test_action_mapping_multi_discrete() -> None:
    scenario = doom.SCENARIOS["deathmatch_bots"]
    spec = doom.action_spec(scenario)
    assert spec["type"] == "multi_discrete"
    action = np.array([1, 2, 0, 1, 0, 0], dtype=np.int64)
    buttons = dict(zip(scenario.buttons, doom.action_to_buttons(action, scenario), strict=True))
    assert buttons["MOVE_FORWARD"] == 1.0
    assert buttons["MOVE_LEFT"] == 1.0
    assert buttons["ATTACK"] == 1.0
    assert buttons["TURN_LEFT_RIGHT_DELTA"] == -12.5
    with pytest.raises(SpecError, match="6 action index"):
        doom.action_to_buttons(np.array([1, 2]), scenario)


def _rollout_hash(seed: int, steps: int) -> str:
    scenario = doom.SCENARIOS["basic"]
    env = doom.DoomEnv(scenario, seed=seed)
    digest = hashlib.sha1()
    rng = np.random.default_rng(0)
    try:
        digest.update(env.reset().tobytes())
        for _ in range(steps):
            obs, reward, _, _ = env.step(int(rng.integers(4)))
            digest.update(obs.tobytes())
            digest.update(np.float64(reward).tobytes())
    finally:
        env.close()
    return digest.hexdigest()


def test_same_seed_same_rollout() -> None:
    assert _rollout_hash(5, 60) == _rollout_hash(5, 60)
    assert _rollout_hash(5, 60) != _rollout_hash(6, 60)


def test_basic_episode_reward_scaled_and_autoreset() -> None:
    env = doom.DoomEnv(doom.SCENARIOS["basic"], seed=0)
    try:
        env.reset()
        total = 0.0
        for _ in range(400):
            obs, reward, done, info = env.step(0)
            total += reward
            if done:
                break
        assert done
        # Standing still: only the living reward of -1 per tic for the cfg's 300-tic timeout, scaled by 0.01.
        assert info["episode_reward"] == pytest.approx(total)
        assert info["timeout"] == 1.0
        assert -3.1 < info["episode_reward"] < -2.5
        assert obs.std() > 0
    finally:
        env.close()


def test_bots_added_every_episode() -> None:
    scenario = doom.SCENARIOS["deathmatch_bots"].replace(bots=2, timelimit=0.05)
    env = doom.DoomEnv(scenario, seed=1)
    try:
        env.reset()
        episodes = 0
        rng = np.random.default_rng(1)
        spec = doom.action_spec(scenario)
        for _ in range(200):
            _, _, done, info = env.step(_random_action(spec, rng))
            if done:
                episodes += 1
                assert "true_objective" in info
                env.step(_random_action(spec, rng))
                names = [n for n, live in zip(env.game.get_server_state().players_names,
                                              env.game.get_server_state().players_in_game, strict=False) if n]
                assert len(names) == 1 + scenario.bots, names
                if episodes == 2:
                    break
        assert episodes == 2
    finally:
        env.close()


def test_env_spec_round_trip() -> None:
    for scenario in doom.SCENARIOS.values():
        rebuilt = doom.scenario_from_env_spec(doom.env_spec(scenario))
        assert rebuilt == scenario
        stored = json.loads(json.dumps(doom.env_spec(scenario).to_json()))  # as policy.json holds it
        assert doom.scenario_from_env_spec(EnvSpec.from_json(stored)) == scenario


def test_self_play_scenarios_are_in_the_one_registry() -> None:
    assert set(doom.SELF_PLAY_SCENARIOS) <= set(doom.SCENARIOS)
    duel, deathmatch = doom.SCENARIOS["duel"], doom.SCENARIOS["deathmatch"]
    assert (duel.bots, deathmatch.bots) == (0, 4)
    assert duel.buttons == doom.SCENARIOS["deathmatch_bots_map01"].buttons
    assert dict(duel.reward_shaping) == doom.DUEL_SHAPING


def test_players_grid_marks_the_cells_that_hold_a_players_pixel() -> None:
    mask = np.zeros((120, 160), dtype=bool)
    assert not doom_labels.players_grid(mask).any()
    mask[0, 0] = mask[119, 159] = mask[60, 85] = True  # cells (0, 0), (5, 15) and (3, 8) of 6 x 16
    grid = doom_labels.players_grid(mask).reshape(doom_labels.PLAYERS_GRID)
    assert sorted(zip(*np.nonzero(grid), strict=True)) == [(0, 0), (3, 8), (5, 15)]


def test_privileged_view_is_the_marked_frame_and_the_players_grid_of_the_labels_buffer() -> None:
    """A screen-only env with the labels buffer on: its observation never holds a mark.

    The teacher's view of the same frame is that observation with the other player painted, and the grid is the
    labels buffer's.
    """
    student, teacher = doom.SCENARIOS["duel_bots"], doom.SCENARIOS["duel_bots_marked"]
    env = doom.DoomEnv(student, seed=1, labels=True)
    marked = np.zeros((3, *teacher.obs_size), dtype=np.uint8)
    grid = np.zeros(doom_labels.PLAYERS_GRID[0] * doom_labels.PLAYERS_GRID[1], dtype=np.uint8)
    mark = np.array(doom_labels.MARK_RGB, dtype=np.uint8)[:, None, None]
    try:
        obs = env.reset()
        for _ in range(2000):  # walk and turn until the bot is in view (seed 1: within 150 steps)
            obs, _, _, _ = env.step(np.array([1, 0, 0, 0, 0, 9]))
            doom.privileged_view(env.state, teacher, obs_out=marked, players_out=grid)
            if grid.any():
                break
        assert grid.any(), "the bot never came into view"
        assert env.state is not None
        mask = doom_labels.enemy_mask(env.state)
        assert mask is not None
        assert mask.any()
        np.testing.assert_array_equal(grid, doom_labels.players_grid(mask))
        np.testing.assert_array_equal(obs, doom.observation(env.state, student))
        painted = (marked == mark).all(axis=0)
        changed = (obs != marked).any(axis=0)
        assert painted.any()
        assert not (changed & ~painted).any()
        assert not (obs == mark).all(axis=0).any()
    finally:
        env.close()
    plain = doom.DoomEnv(student, seed=1)
    try:
        plain.reset()
        with pytest.raises(SpecError, match="labels"):
            doom.privileged_view(plain.state, teacher, obs_out=marked, players_out=grid)
    finally:
        plain.close()
