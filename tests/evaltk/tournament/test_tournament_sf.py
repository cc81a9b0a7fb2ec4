"""A Sample Factory Doom agent (an experiment folder written by Sample Factory itself) in real tournaments.

The agent is ``tests/data/sf_doom/duel_bots`` (``doom_duel_bots``: Sample Factory's duel-vs-bots env,
measurements and seven action heads). ``evaltk tournament round-robin`` takes the folder as it is
(imported on load), plays it against ``builtin:scripted`` and an evaltk APPO checkpoint with a
ViZDoom bot in every match, and finishes with ratings; a ``bots`` suite case plays it against the
bots from the same folder.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.data_paths import data_path
from tests.evaltk.tournament.checkpoints import untrained_appo

pytest.importorskip("sf_examples", reason="needs sample-factory (its scenario files)")
pytestmark = pytest.mark.vizdoom


def test_sample_factory_agent_round_robin_finishes_with_ratings(tmp_path: Path, tag: str,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    sf_agent = data_path("sf_doom/duel_bots")
    appo = untrained_appo(tmp_path / "appo", "duel", 32)
    cmd = [sys.executable, "-m", "evaltk", "tournament", "round-robin", "--agents", str(sf_agent), "builtin:scripted",
           str(appo), "--matches", "2", "--bots", "1", "--timelimit", "0.2", "--concurrency", "2",
           "--out", str(tmp_path / "t"), "--json"]
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stderr[-2000:]
    summary = json.loads(run.stdout.strip().splitlines()[-1])
    assert summary["matches_played"] == 6
    imported = [a for a in summary["agents"] if "sample-factory" in a]
    assert len(imported) == 1, summary["agents"]
    league = summary["bradley_terry"]  # ratings with intervals, agents and the bots
    assert set(summary["agents"]) <= {r["agent"] for r in league}
    assert all(r["ci"][0] <= r["rating"] <= r["ci"][1] for r in league)
    assert len(summary["pairs"]) == 3
    rows = [json.loads(line) for line in Path(summary["results"]).read_text().splitlines()]
    played = [p for row in rows for p in row["participants"] if p["agent"] == imported[0]]
    assert len(played) == 4  # two matches against each of the two other agents


def test_sample_factory_agent_in_a_bots_suite_case(tmp_path: Path, tag: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from conformance.bots_case import check_bots_case, run_bots_case
    from conformance.suite import Case

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    params = {"checkpoint": str(data_path("sf_doom/duel_bots")), "bots": 1, "matches": 2, "map": "map01",
              "timelimit": 0.2, "seed": 0, "min_frags_per_minute": -100.0, "alpha": 0.05, "concurrency": 2}
    assert check_bots_case(params) is None
    result = run_bots_case(Case(kind="bots", name="sf-duel-bots", params=params), tmp_path / "work")
    assert result.outcome.value == "passed", result.message
    assert "frags per minute" in result.message
