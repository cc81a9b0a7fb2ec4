"""Tournament rules: each kind of agent's declared inputs, and ``--rules screen-only`` refusing before any match."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from evaltk.envs.doom_inputs import BOT_INPUTS, DoomInputs
from evaltk.errors import TournamentError
from evaltk.policies import save_builtin
from evaltk.tournament import agents, rules
from tests.data_paths import data_path

APPO_DUEL = Path(__file__).resolve().parents[3] / "suites" / "checkpoints" / "appo_duel"
APPO_DUEL_PIXELS = APPO_DUEL.with_name("appo_duel_pixels")
SCRIPTED = DoomInputs(labels=True, depth=True, game_variables=("HEALTH", "SELECTED_WEAPON_AMMO"))


def test_open_allows_anything_and_screen_only_names_what_it_forbids() -> None:
    everything = DoomInputs(screen="RES_160X120", labels=True, depth=True, automap=True,
                            game_variables=("HEALTH", "ATTACK_READY", "POSITION_X"), engine_state=True)
    assert rules.forbidden(everything, "open") == []
    assert rules.forbidden(everything, "screen-only") == [
        "the labels buffer", "the depth buffer", "the automap buffer", "the engine's game state",
        "game variables ATTACK_READY, POSITION_X (not on a player's HUD)"]
    hud = DoomInputs(screen="RES_160X120", game_variables=("HEALTH", "ARMOR", "SELECTED_WEAPON_AMMO", "FRAGCOUNT",
                                                            "AMMO5", "WEAPON5"))
    assert rules.forbidden(hud, "screen-only") == []
    with pytest.raises(TournamentError, match="unknown rules 'closed': use one of open, screen-only"):
        rules.forbidden(hud, "closed")


def test_what_each_kind_of_agent_declares(tmp_path: Path) -> None:
    assert rules.agent_inputs("random") == (DoomInputs(), "built-in random")
    assert rules.agent_inputs("builtin:scripted") == (SCRIPTED, "built-in scripted")
    assert agents.builtin_inputs("scripted") == agents.ScriptedDoomAgent.INPUTS == SCRIPTED
    assert rules.agent_inputs(str(APPO_DUEL)) == (DoomInputs(screen="RES_160X120", labels=True),
                                                  "its env spec, scenario duel_bots_marked")
    assert rules.agent_inputs(str(APPO_DUEL_PIXELS)) == (DoomInputs(screen="RES_160X120"),
                                                         "its env spec, scenario duel_bots")
    saved = save_builtin(tmp_path / "scripted", "scripted", agents.builtin_env())  # a built-in as a checkpoint
    assert rules.agent_inputs(str(saved)) == (SCRIPTED, "built-in scripted")
    assert BOT_INPUTS.engine_state


def test_check_agents_refuses_the_first_forbidden_agent_in_one_line() -> None:
    assert rules.check_agents(["random", str(APPO_DUEL)], "open")[str(APPO_DUEL)].labels
    assert rules.check_agents(["random"], "screen-only") == {"random": DoomInputs()}
    assert rules.check_agents([str(APPO_DUEL_PIXELS)], "screen-only") == {
        str(APPO_DUEL_PIXELS): DoomInputs(screen="RES_160X120")}  # the DAgger student sees the screen alone
    with pytest.raises(TournamentError) as caught:
        rules.check_agents(["random", str(APPO_DUEL)], "screen-only")
    message = str(caught.value)
    assert "\n" not in message
    assert f"refuse agent {APPO_DUEL}: it reads the labels buffer" in message


@pytest.mark.vizdoom
def test_a_sample_factory_run_declares_its_measurement_variables(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("sf_examples", reason="needs sample-factory (its scenario files)")
    from evaltk.locations import local_checkpoint

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    imported = local_checkpoint(str(data_path("sf_doom/duel_bots"))).ref
    inputs, source = rules.agent_inputs(imported)
    assert (inputs.screen, inputs.labels, inputs.depth) == ("RES_160X120", False, False)
    assert inputs.beyond_hud() == ("USER2", "ATTACK_READY", "PLAYER_COUNT")  # its config's DoomAdditionalInput
    assert "sf_doom_duel_bots" in source
    with pytest.raises(TournamentError, match="game variables USER2, ATTACK_READY, PLAYER_COUNT"):
        rules.check_agents([imported], "screen-only")


def _tournament(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "evaltk", "tournament", *args, "--rules", "screen-only",
                           "--out", str(tmp_path / "t")], capture_output=True, text=True, timeout=300)


@pytest.mark.vizdoom
@pytest.mark.parametrize(("args", "agent", "reads"), [
    (("gauntlet", "--agent", str(APPO_DUEL), "--bots", "1", "--matches", "2"), str(APPO_DUEL), "the labels buffer"),
    (("gauntlet", "--agent", "builtin:scripted", "--bots", "1"), "builtin:scripted",
     "the labels buffer and the depth buffer"),
    (("match", "random", "scripted", "--sprt"), "scripted", "the labels buffer and the depth buffer"),
], ids=["appo_duel", "scripted", "match-second-agent"])
def test_screen_only_refuses_before_any_match(tmp_path: Path, tag: str, args: tuple[str, ...], agent: str,
                                              reads: str) -> None:
    run = _tournament(tmp_path, *args)
    assert run.returncode == 2
    assert run.stdout == ""
    lines = run.stderr.splitlines()
    assert len(lines) == 1, run.stderr
    assert lines[0].startswith(f"error: rules 'screen-only' refuse agent {agent}: it reads {reads} ")
    assert not (tmp_path / "t").exists()  # no manifest, results, logs or demos: nothing was played


@pytest.mark.vizdoom
def test_screen_only_plays_the_shipped_pixel_agent(tmp_path: Path) -> None:
    run = _tournament(tmp_path, "gauntlet", "--agent", str(APPO_DUEL_PIXELS), "--bots", "1", "--matches", "1",
                      "--timelimit", "0.25")
    assert run.returncode == 0, run.stderr
    rows = (tmp_path / "t" / "results.jsonl").read_text().splitlines()
    assert len(rows) == 1
    assert f"| {APPO_DUEL_PIXELS} | screen 160x120 |" in run.stdout  # the inputs table: what the agent sees
