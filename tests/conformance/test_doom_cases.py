"""Doom suite kinds: bad input refused with one line before anything runs; bots and demo gates catch what they guard."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from conformance.suite import Case, Outcome, Suite, load_suite, run_case, write_junit
from evaltk.cli.main import main
from evaltk.errors import SuiteError

pytestmark = pytest.mark.vizdoom
SUITES = Path(__file__).resolve().parents[2] / "suites"
DOOM_TRACE = SUITES / "doom_traces" / "basic_seed7_600.npz"
ATARI_TRACE = SUITES / "traces" / "pong_seed0_2000.npz"
BOTS = 'kind = "bots"\nname = "b"\ncheckpoint = "builtin:scripted"\n'
APPO_DUEL = SUITES / "checkpoints" / "appo_duel"


def _suite(tmp_path: Path, case: str) -> Path:
    path = tmp_path / "s.toml"
    path.write_text(f'[suite]\nname = "s"\n\n[[case]]\n{case}')
    return path


@pytest.mark.parametrize(("case", "problem"), [
    (f'kind = "doom_trace"\nname = "d"\ntrace_file = "{DOOM_TRACE}"\nscenario = "doom3"\nseed = 7\ntics = 5\n',
     r"field 'scenario' = 'doom3' is not a known Doom scenario: use one of basic"),
    (f'kind = "doom_trace"\nname = "d"\ntrace_file = "{DOOM_TRACE}"\nscenario = "basci"\nseed = 7\ntics = 5\n',
     r"field 'scenario' = 'basci' is not a known Doom scenario: did you mean basic\? use one of basic"),
    (f'kind = "doom_trace"\nname = "d"\ntrace_file = "{ATARI_TRACE}"\nscenario = "basic"\nseed = 7\ntics = 5\n',
     r"is an Atari trace of ale-py \(suite kind \"trace\"\), not a ViZDoom trace"),
    (f'kind = "trace"\nname = "a"\ntrace_file = "{DOOM_TRACE}"\nframes = 5\n',
     r"is a ViZDoom trace \(suite kind \"doom_trace\"\), not an Atari trace"),
    ('kind = "doom_trace"\nname = "d"\ntrace_file = "nope.npz"\nscenario = "basic"\nseed = 7\ntics = 5\n',
     r"field 'trace_file': file .*nope\.npz does not exist"),
    (BOTS + "matches = 4\nmap = \"e1m1\"\nmin_win_rate = 0.5\n", r"field 'map' = 'e1m1' is not a supported map"),
    (BOTS + "matches = 4\n", r"declares exactly one expectation .*; it declares none"),
    (BOTS + "matches = 4\nmin_win_rate = 0.5\nmin_frags_per_minute = 1.0\n",
     r"it declares 2 \(min_win_rate, min_frags_per_minute\)"),
    (BOTS + "matches = 0\nmin_win_rate = 0.5\n", r"field 'matches' = 0 must be >= 1"),
    (BOTS + "matches = 4\nbaseline = \"builtin:random\"\nelo1 = 10.0\n", r"needs elo0 and elo1 \(missing elo0\)"),
    (BOTS + "matches = 4\nmin_win_rate = 0.5\nelo0 = 0.0\n", r"elo0 belong to an SPRT against a baseline"),
    ('kind = "bots"\nname = "b"\ncheckpoint = "no/such/dir"\nmatches = 2\nmin_win_rate = 0.1\n',
     r"checkpoint: agent '/.*/no/such/dir' is not a built-in policy, a file or folder here, or an hf:// location: "
     r"pass a built-in \(random, scripted"),
    (BOTS + 'matches = 4\nbaseline = "builtin:nope"\nelo0 = 0.0\nelo1 = 10.0\n',
     r"baseline: unknown built-in Doom agent 'builtin:nope': use one of random, scripted"),
    (BOTS + 'matches = 4\nbaseline = "builtin:scriptd"\nelo0 = 0.0\nelo1 = 10.0\n',
     r"baseline: unknown built-in Doom agent 'builtin:scriptd': did you mean scripted\? use one of random, scripted"),
    ('kind = "doom_demo"\nname = "m"\nresults = "nowhere"\n', r"field 'results': file .*nowhere does not exist"),
    (BOTS + 'matches = 4\nmin_win_rate = 0.5\nrules = "closed"\n',
     r"field 'rules' = 'closed' must be one of 'open', 'screen-only'"),
    (BOTS + 'matches = 4\nmin_win_rate = 0.5\nrules = "screen-only"\n',
     r"checkpoint: rules 'screen-only' refuse agent builtin:scripted: it reads the labels buffer and the depth buffer"),
    ('kind = "bots"\nname = "b"\ncheckpoint = "builtin:random"\nbaseline = "builtin:scripted"\nmatches = 4\n'
     'elo0 = 0.0\nelo1 = 10.0\nrules = "screen-only"\n',
     r"baseline: rules 'screen-only' refuse agent builtin:scripted"),
    (f'kind = "bots"\nname = "b"\ncheckpoint = "{APPO_DUEL}"\nmatches = 4\nmin_win_rate = 0.5\nrules = "screen-only"\n',
     r"checkpoint: rules 'screen-only' refuse agent .*appo_duel: it reads the labels buffer \(its env spec"),
])
def test_bad_cases_are_refused_when_the_suite_loads(tmp_path: Path, case: str, problem: str) -> None:
    with pytest.raises(SuiteError, match=problem) as err:
        load_suite(_suite(tmp_path, case))
    assert "\n" not in str(err.value)


def test_a_bots_case_takes_its_agents_from_the_suite_folder_in_any_working_folder(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from conformance.bots_case import tournament_config

    agent = SUITES / "checkpoints" / "appo_duel"
    folder = tmp_path / "suite"
    folder.mkdir()
    twin = shutil.copytree(agent, folder / "agents" / "twin")
    relative = os.path.relpath(agent, folder)
    suite = _suite(folder, f'kind = "bots"\nname = "b"\ncheckpoint = "{relative}"\nbaseline = "agents/twin"\n'
                           'elo0 = 0.0\nelo1 = 10.0\nmatches = 2\n')
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    params = load_suite(suite).cases[0].params
    assert (params["checkpoint"], params["baseline"]) == (str(agent), str(twin))
    assert tournament_config(params).agents == (str(agent), str(twin))
    builtins = load_suite(_suite(folder, BOTS + 'matches = 2\nbaseline = "random"\nelo0 = 0.0\nelo1 = 10.0\n'))
    assert (builtins.cases[0].params["checkpoint"], builtins.cases[0].params["baseline"]) == ("builtin:scripted",
                                                                                             "random")


def test_a_truncated_trace_is_one_error_line_from_the_command_line(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    cut = tmp_path / "cut.npz"
    cut.write_bytes(DOOM_TRACE.read_bytes()[:3000])
    suite = _suite(tmp_path, f'kind = "doom_trace"\nname = "d"\ntrace_file = "{cut}"\nscenario = "basic"\n'
                   "seed = 7\ntics = 5\n")
    assert main(["conformance", "run", str(suite), "--workdir", str(tmp_path / "w")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert err[0].startswith("error: ")
    assert "cut.npz is truncated or corrupt" in err[0]
    assert not (tmp_path / "w").exists()


def test_record_doom_command_writes_a_trace_and_refuses_an_unknown_scenario(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "t.npz"
    assert main(["conformance", "record-doom", "--scenario", "basic", "--seed", "2", "--tics", "30",
                 "--out", str(out), "--json"]) == 0
    line = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert line["tics"] == 30
    assert out.is_file()
    case = Case("doom_trace", "c", {"trace_file": str(out), "scenario": "basic", "seed": 2, "tics": 30})
    assert run_case(case, tmp_path).outcome is Outcome.PASSED
    assert main(["conformance", "record-doom", "--scenario", "doom3", "--tics", "3", "--out", str(out)]) == 2
    assert "unknown Doom scenario 'doom3'" in capsys.readouterr().err


def test_a_bots_case_expecting_competence_fails_for_the_random_agent(tmp_path: Path) -> None:
    params = {"checkpoint": "builtin:random", "bots": 1, "matches": 2, "timelimit": 0.5, "seed": 1,
              "min_frags_per_minute": -0.5}
    result = run_case(Case("bots", "random-vs-bot", params), tmp_path)
    assert result.outcome is Outcome.FAILED, result.message
    assert "frags per minute" in result.message
    assert "interval [" in result.message
    assert "< min_frags_per_minute -0.5" in result.message
    assert "2 matches played" in result.message
    junit = write_junit(Suite(tmp_path, "s", "", (result.case,)), [result], tmp_path / "junit.xml")
    failure = ET.parse(junit).getroot().find("testsuite/testcase/failure")
    assert failure is not None
    assert "interval [" in failure.get("message", "")
    again = run_case(Case("bots", "random-vs-bot", params), tmp_path)  # resumes: nothing played again
    assert again.message == result.message
    assert again.seconds < result.seconds


def test_an_sprt_case_at_its_budget_fails_undecided_and_a_larger_matches_continues_it(tmp_path: Path) -> None:
    params = {"checkpoint": "builtin:scripted", "baseline": "builtin:random", "bots": 0, "matches": 2,
              "timelimit": 0.25, "seed": 0, "elo0": 0.0, "elo1": 300.0, "concurrency": 2}
    result = run_case(Case("bots", "sprt", params), tmp_path)  # two games cannot decide at these bounds
    assert result.outcome is Outcome.FAILED, result.message
    assert "-> budget spent, undecided;" in result.message
    assert "2 matches played" in result.message
    longer = run_case(Case("bots", "sprt", {**params, "matches": 4}), tmp_path)
    assert "4 matches played" in longer.message, longer.message  # the same tournament, two more games
    assert len(list((tmp_path / "sprt").iterdir())) == 1  # one tournament folder: its name leaves matches out


def test_a_sample_factory_run_under_screen_only_errors_before_any_match(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("sf_examples", reason="needs sample-factory (its scenario files)")
    from tests.data_paths import data_path

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    params = {"checkpoint": str(data_path("sf_doom/duel_bots")), "bots": 1, "matches": 2, "timelimit": 0.2,
              "min_frags_per_minute": -100.0, "rules": "screen-only"}
    suite = _suite(tmp_path, 'kind = "bots"\nname = "sf"\n' + "".join(
        f"{k} = {json.dumps(v)}\n" for k, v in params.items()))
    case = load_suite(suite).cases[0]  # an experiment folder is read when the case runs, after its import
    result = run_case(case, tmp_path / "work")
    assert result.outcome is Outcome.ERROR
    assert "game variables USER2, ATTACK_READY, PLAYER_COUNT (not on a player's HUD)" in result.message
    assert not (tmp_path / "work" / "sf").exists()  # no tournament folder: nothing was played


def test_a_demo_whose_recorded_frags_were_changed_fails(tmp_path: Path) -> None:
    shipped = SUITES / "doom_demo"
    copy = tmp_path / "demo"
    shutil.copytree(shipped, copy)
    rows = [json.loads(line) for line in (copy / "results.jsonl").read_text().splitlines()]
    rows[0]["participants"][0]["frags"] += 5
    (copy / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    result = run_case(Case("doom_demo", "d", {"results": str(copy), "min_demos": 2}), tmp_path)
    assert result.outcome is Outcome.FAILED
    assert "1 of 2 demos did not reproduce their frags" in result.message
    assert "recorded [" in result.message


def test_the_pytest_plugin_carries_doom_cases_with_their_messages(tmp_path: Path) -> None:
    body = "\n".join(f'[[case]]\nkind = "doom_trace"\nname = "{name}"\ntrace_file = "{DOOM_TRACE}"\n'
                     f'scenario = "basic"\nseed = {seed}\ntics = 60\n' for name, seed in (("same", 7), ("other", 8)))
    path = tmp_path / "doom_suite.toml"
    path.write_text(f'[suite]\nname = "p"\n\n{body}')
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "conformance.pytest_plugin", str(path),
                             "-p", "no:cacheprovider", "--rootdir", str(tmp_path)],
                            capture_output=True, text=True, cwd=SUITES.parent)
    assert "1 failed, 1 passed" in result.stdout, result.stdout + result.stderr
    assert "first divergence at tic" in result.stdout
    assert "seed = 8 (recorded with 7)" in result.stdout
