"""Declared Doom inputs: a scenario's inputs are exactly what its observation reads, checked on real game states."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from evaltk.envs import EnvSpec, doom
from evaltk.envs.doom_inputs import BOT_INPUTS, HUD_VARIABLES, DoomInputs
from evaltk.errors import SpecError

pytestmark = pytest.mark.vizdoom

#: A tracked variable no observation reads: perturbing it must never change one.
UNREAD = 4321.0


def _sf_battle() -> doom.DoomScenario:
    """Sample Factory's ``doom_battle`` as its importer rebuilds it (measurement vector from the cfg's variables)."""
    sf_doom = pytest.importorskip("evaltk.importers.sf_doom")
    pytest.importorskip("sf_examples", reason="needs sample-factory (its scenario files)")
    folder = doom.scenario_folder(doom.SCENARIOS["basic"].replace(scenario_dir="sample_factory"))
    pre = sf_doom.scenario({"res_w": 128, "res_h": 72, "env_frameskip": 4}, "doom_battle", folder, "test")
    return doom.scenario_from_env_spec(EnvSpec("doom", "sf_doom_battle", {}, pre))


def _view(state: Any, *, labels: bool, variables: list[float]) -> SimpleNamespace:
    """Return what of ``state`` an agent with these inputs may see (no labels: none given; no depth or automap)."""
    return SimpleNamespace(screen_buffer=state.screen_buffer, labels_buffer=state.labels_buffer if labels else None,
                           labels=state.labels if labels else [], depth_buffer=None, automap_buffer=None,
                           game_variables=np.asarray(variables, dtype=np.float64))


def _scenario(name: str) -> doom.DoomScenario:
    return _sf_battle() if name == "sf_doom_battle" else doom.SCENARIOS[name]


@pytest.mark.parametrize("name", ["basic", "defend_the_center", "duel_bots", "duel_bots_marked", "sf_doom_battle"])
def test_the_observation_reads_the_declared_inputs_and_nothing_else(name: str) -> None:
    scenario = _scenario(name)
    declared = doom.inputs(scenario)
    assert declared.screen == scenario.resolution
    game = doom.make_game(scenario, seed=5)
    game.init()
    try:
        doom.start_episode(game, scenario, first=True)
        state = game.get_state()
        names = [v.name for v in game.get_available_game_variables()]
        values = [float(v) for v in (state.game_variables if state.game_variables is not None else ())]
        full = doom.observation(state, scenario)
        # Every undeclared input removed or perturbed: the observation is the same.
        blanked = [v if n in declared.game_variables else UNREAD for n, v in zip(names, values, strict=True)]
        seen = doom.observation(_view(state, labels=declared.labels, variables=blanked), scenario)
        assert np.array_equal(seen, full)
        # Every declared input matters.
        for name in declared.game_variables:
            low, high = ([0.0 if n == name else v for n, v in zip(names, values, strict=True)],
                         [30.0 if n == name else v for n, v in zip(names, values, strict=True)])
            assert not np.array_equal(doom.observation(_view(state, labels=declared.labels, variables=low), scenario),
                                      doom.observation(_view(state, labels=declared.labels, variables=high), scenario))
        if declared.labels:
            with pytest.raises(SpecError, match="labels buffer"):
                doom.observation(_view(state, labels=False, variables=values), scenario)
    finally:
        game.close()


def test_what_each_scenario_declares() -> None:
    assert doom.inputs(doom.SCENARIOS["duel_bots_marked"]) == DoomInputs(screen="RES_160X120", labels=True)
    assert doom.inputs(doom.SCENARIOS["duel_bots"]) == DoomInputs(screen="RES_160X120")
    # Tracked for shaping and scoring, never fed to the policy:
    assert doom.inputs(doom.SCENARIOS["deathmatch_bots"]).game_variables == ()
    battle = doom.inputs(_sf_battle())
    assert battle.game_variables == ("SELECTED_WEAPON", "SELECTED_WEAPON_AMMO", "HEALTH", "USER2")
    assert battle.beyond_hud() == ("USER2",)


def test_descriptions_and_json() -> None:
    marked = doom.inputs(doom.SCENARIOS["duel_bots_marked"])
    assert marked.describe() == "screen 160x120 + labels buffer"
    assert marked.to_json() == {"screen": "RES_160X120", "labels": True, "depth": False, "automap": False,
                                "game_variables": [], "engine_state": False, "text": "screen 160x120 + labels buffer"}
    assert DoomInputs().describe() == "nothing (acts blind)"
    assert BOT_INPUTS.describe() == "engine game state (ViZDoom bot)"
    assert DoomInputs(game_variables=("HEALTH", "POSITION_X")).beyond_hud() == ("POSITION_X",)
    assert {"HEALTH", "ARMOR", "SELECTED_WEAPON", "SELECTED_WEAPON_AMMO", "FRAGCOUNT", "AMMO5", "WEAPON5"} <= \
        set(HUD_VARIABLES)
    assert not {"POSITION_X", "ATTACK_READY", "PLAYER_COUNT", "USER2", "HITCOUNT"} & set(HUD_VARIABLES)
