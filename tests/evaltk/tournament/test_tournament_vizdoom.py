"""Real ViZDoom matches: one match, the CLI, a killed and a hung engine, resume, demos, an APPO checkpoint.

Every test tags the processes it starts (``EVALTK_TEST_TAG`` in the environment, inherited by the
player and engine processes) and checks that none is left running.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from evaltk.envs.shm_reaper import engine_children
from evaltk.tournament.formats import TournamentConfig
from evaltk.tournament.match import MatchResult, MatchSpec, run_match
from evaltk.tournament.run import RunOptions, run_tournament
from tests.evaltk.tournament.checkpoints import untrained_appo
from tests.evaltk.tournament.running import freeze_running, match_of, running_players, wait_for
from tests.evaltk.tournament.tags import tagged

pytestmark = pytest.mark.vizdoom


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "evaltk", "tournament", *args]


def _rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_one_match_against_a_bot(tmp_path: Path, tag: str) -> None:
    spec = MatchSpec(match_id="m0", agents=("scripted",), bots=("Rambo",), map="map01", seed=1, timelimit_min=0.25)
    result = run_match(spec, workdir=tmp_path, timeout_s=300)
    assert result.outcome == "played", result.error
    assert result.duration_tics == round(0.25 * 60 * 35)
    kinds = [(p["kind"], p["agent"]) for p in result.participants]
    assert kinds == [("agent", "scripted"), ("bot", "bot:Rambo")]
    assert [p["slot"] for p in result.participants] == [0, 1]


def test_abort_kills_a_running_match_at_once(tmp_path: Path, tag: str) -> None:
    abort = threading.Event()
    spec = MatchSpec(match_id="a0", agents=("random",), bots=("Rambo",), map="map01", seed=2, timelimit_min=30.0)
    box: dict[str, Any] = {}
    # The match would run 30 min and time out after 900 s: only the abort ends it within the join's bound.
    thread = threading.Thread(target=lambda: box.update(result=run_match(spec, workdir=tmp_path, timeout_s=900,
                                                                         abort=abort)))
    thread.start()
    wait_for("the match running", lambda: running_players(tagged(tag)) or None, alive=thread.is_alive)
    abort.set()
    thread.join(timeout=300)
    assert not thread.is_alive(), "the aborted match still runs"
    assert box["result"].outcome == "void"
    assert "aborted" in box["result"].error


def _run_cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[dict[str, Any], str]:
    from evaltk.cli.main import main

    assert main(["tournament", *args]) == 0
    stdout = capsys.readouterr().out
    return json.loads(stdout.strip().splitlines()[-1]), stdout


def test_cli_gauntlet_json_and_rerun_does_nothing(tmp_path: Path, tag: str,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    args = ("gauntlet", "--agent", "random", "--bots", "1", "--matches", "3", "--timelimit", "0.25",
            "--concurrency", "2", "--rules", "screen-only", "--out", str(tmp_path / "t"), "--json")
    summary, _ = _run_cli(capsys, *args)
    assert summary["rules"] == "screen-only"  # random reads nothing, so it plays under the strictest rules
    assert summary["inputs"]["random"]["text"] == "nothing (acts blind)"
    bots = [ref for ref in summary["inputs"] if ref.startswith("bot:")]
    assert bots
    assert all(summary["inputs"][b]["engine_state"] for b in bots)
    assert all(isinstance(summary[k], int) for k in ("wins", "draws", "losses"))
    assert summary["wins"] + summary["draws"] + summary["losses"] == summary["matches_played"] == 3
    for key in ("win_interval", "draw_interval", "loss_interval"):
        assert 0.0 <= summary[key][0] <= summary[key][1] <= 1.0
    results = Path(summary["results"])
    assert len(_rows(results)) == 3
    before = results.read_bytes()
    again, stdout = _run_cli(capsys, *args)
    assert "nothing to play: 3 matches already" in stdout
    assert results.read_bytes() == before
    assert again["wins"] == summary["wins"]


def test_a_larger_matches_continues_an_undecided_sprt(tmp_path: Path, tag: str,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    args = ("match", "scripted", "random", "--sprt", "--elo0", "0", "--elo1", "300", "--timelimit", "0.25",
            "--concurrency", "2", "--out", str(tmp_path / "t"), "--json")
    first, stdout = _run_cli(capsys, *args, "--matches", "2")  # two games cannot decide at these bounds
    assert first["matches_played"] == 2
    assert (first["sprt"]["decision"], first["sprt"]["budget_spent"]) == ("undecided", True)
    assert "→ **budget spent, undecided** after all 2 planned games" in stdout
    results = Path(first["results"])
    before = results.read_bytes()
    more, stdout = _run_cli(capsys, *args, "--matches", "4")
    assert f"extended: {tmp_path / 't'} held --matches 2, now 4 (2 matches already played)" in stdout
    assert (more["schedule"]["extended_from"], more["schedule"]["already_done"], more["schedule"]["played_now"]) == \
        (2, 2, 2)
    assert results.read_bytes().startswith(before)  # the first two games are kept as they were
    played = [r["match_id"] for r in _rows(results) if r["outcome"] == "played"]
    assert sorted(played) == ["p00-00000", "p00-00001", "p00-00002", "p00-00003"]
    assert more["matches_played"] == more["matches_planned"] == 4
    assert more["sprt"]["decision"] != "continue"  # undecided, or H0 after four draws (four wins cannot reach H1)
    assert more["wins"] + more["draws"] + more["losses"] == 4


def test_a_larger_matches_extends_a_gauntlet_in_its_default_folder(tmp_path: Path, tag: str,
                                                                   capsys: pytest.CaptureFixture[str],
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    args = ("gauntlet", "--agent", "random", "--bots", "1", "--timelimit", "0.25", "--concurrency", "1", "--json")
    first, _ = _run_cli(capsys, *args, "--matches", "1")
    more, _ = _run_cli(capsys, *args, "--matches", "2")
    assert more["results"] == first["results"]
    assert (more["schedule"]["already_done"], more["schedule"]["played_now"], more["matches_played"]) == (1, 1, 2)


def _disturb_a_running_match(tmp_path: Path, tag: str, action: signal.Signals, timeout_s: float,
                             timelimit_min: float = 1.0) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Run a 3-match gauntlet in a thread and send ``action`` to the engine of a match known to be running.

    The engine is stopped while its player's game runs (:func:`running.freeze_running`), then gets ``action``
    (SIGSTOP: it stays stopped). Should that match still come back played (its game ended as the signal went
    out), the next match's engine is disturbed, until one is voided. Returns the result rows and the void row of
    the disturbed match.
    """
    config = TournamentConfig(format="gauntlet", agents=("random",), matches=3, bots=1, timelimit_min=timelimit_min)
    out = tmp_path / "t"
    box: dict[str, Any] = {}
    results: queue.Queue[MatchResult] = queue.Queue()

    def work() -> None:
        try:
            box["summary"], _ = run_tournament(config, out, RunOptions(concurrency=1, timeout_s=timeout_s,
                                                                       num_resamples=10), on_result=results.put)
        except BaseException as exc:  # re-raised in the test thread below
            box["error"] = exc

    thread = threading.Thread(target=work)
    thread.start()
    disturbed: list[tuple[str, int]] = []
    outcomes: dict[tuple[str, int], str] = {}

    def outcome(match: tuple[str, int]) -> str | None:
        while not results.empty():
            result = results.get()
            outcomes[(result.match_id, result.attempt)] = result.outcome
        return outcomes.get(match)

    try:
        while not any(outcomes.get(m) == "void" for m in disturbed):
            player, match = wait_for("a gauntlet match running", lambda: next(
                ((p, m) for p in running_players(tagged(tag)) if (m := match_of(p)) and m not in disturbed), None),
                alive=thread.is_alive)
            disturbed.append(match)
            engines = engine_children(player)
            if engines and freeze_running(player, min(engines)) and action != signal.SIGSTOP:
                os.kill(min(engines), action)
            wait_for(f"the result of {match}", partial(outcome, match), alive=thread.is_alive, limit_s=900)
    finally:
        thread.join(timeout=900)
    assert not thread.is_alive(), "the tournament still runs after 900 s"
    if "error" in box:
        raise box["error"]
    summary = box["summary"]
    assert summary["matches_played"] == 3
    assert summary["wins"] + summary["draws"] + summary["losses"] == 3
    assert summary["schedule"]["voided_now"] >= 1
    rows = _rows(out / "results.jsonl")
    return rows, next(r for r in rows if (r["match_id"], r["attempt"]) == disturbed[-1])


def _check_rescheduled(rows: list[dict[str, Any]]) -> None:
    """Check that every voided match was played again with the same seed.

    (On a heavily loaded machine a further match may also time out; it too must be replayed.)
    """
    voids = [r for r in rows if r["outcome"] == "void"]
    played = [r for r in rows if r["outcome"] == "played"]
    assert voids
    assert sorted(r["match_id"] for r in played) == ["g00000", "g00001", "g00002"]
    for void in voids:
        replay = next(r for r in played if r["match_id"] == void["match_id"])
        assert replay["attempt"] > void["attempt"]
        assert replay["spec"]["seed"] == void["spec"]["seed"]


def test_killed_engine_match_is_voided_and_replayed(tmp_path: Path, tag: str) -> None:
    rows, void = _disturb_a_running_match(tmp_path, tag, signal.SIGKILL, 60.0)
    _check_rescheduled(rows)
    assert "exited with status" in void["error"]


def test_hung_engine_times_out_and_is_replayed(tmp_path: Path, tag: str) -> None:
    # A 15 s match (0.25 min of game time) plays in about a second here; the 20 s timeout only a stopped engine
    # reaches, even on a loaded machine.
    rows, void = _disturb_a_running_match(tmp_path, tag, signal.SIGSTOP, 20.0, timelimit_min=0.25)
    _check_rescheduled(rows)
    assert "timed out" in void["error"]


def test_agent_match_demo_replays_to_recorded_frags(tmp_path: Path, tag: str,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    from evaltk.tournament.demos import verify_demo
    from evaltk.tournament.scheduler import ResultsFile

    spec = MatchSpec(match_id="d0", agents=("scripted", "random"), bots=(), map="map01", seed=4, timelimit_min=0.25,
                     record=True)
    result = run_match(spec, workdir=tmp_path, timeout_s=300)
    assert result.outcome == "played", result.error
    assert result.demo is not None
    assert Path(result.demo).stat().st_size > 0
    check = verify_demo(result.to_json())
    assert not check.has_bots
    assert check.recorded == [p["frags"] for p in sorted(result.participants, key=lambda p: p["slot"])]
    assert check.reproduced, (check.recorded, check.replayed)
    ResultsFile(tmp_path / "results.jsonl").append(result.to_json())
    summary, _ = _run_cli(capsys, "verify-demos", str(tmp_path), "--json")
    assert (summary["demos"], summary["reproduced"], summary["without_bots"]) == (1, 1, 1)


@pytest.mark.slow
def test_appo_checkpoint_plays_a_gauntlet(tmp_path: Path, tag: str) -> None:
    ckpt = untrained_appo(tmp_path / "appo", "deathmatch_bots", 64)
    run = subprocess.run(_cli("gauntlet", "--agent", str(ckpt), "--bots", "1", "--matches", "1", "--timelimit", "0.25",
                              "--out", str(tmp_path / "t"), "--json"), capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    summary = json.loads(run.stdout.strip().splitlines()[-1])
    assert summary["matches_played"] == 1
    assert summary["agents"] == [str(ckpt)]


@pytest.mark.slow
def test_scripted_beats_random_with_sprt(tmp_path: Path, tag: str) -> None:
    run = subprocess.run(_cli("match", "scripted", "random", "--sprt", "--elo0", "0", "--elo1", "100",
                              "--matches", "100", "--timelimit", "0.5", "--concurrency", "2",
                              "--out", str(tmp_path / "t"), "--json"), capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stderr
    summary = json.loads(run.stdout.strip().splitlines()[-1])
    assert summary["sprt"]["decision"] == "H1"
    assert summary["wins"] > summary["losses"]
