"""``evaltk tournament population --rules``: a population's members and baselines, each shown with its inputs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.evaltk.tournament.checkpoints import untrained_appo

pytestmark = pytest.mark.vizdoom


def _population(run_dir: Path) -> None:
    """Write a two-member population run: ``population.json`` and each member's latest (untrained) checkpoint."""
    from trainers.appo.selfplay import population as pop
    from trainers.common.state_io import LATEST

    members = [pop.Member(id=0, hyperparams={}), pop.Member(id=1, hyperparams={})]
    run_dir.mkdir()
    pop.write(run_dir, pop.PopulationState(scenario="duel", appo={}, selfplay={}, members=members))
    for member in members:
        folder = pop.member_dir(run_dir, member) / "checkpoints"
        untrained_appo(folder / "policy", "duel", 32)
        (folder / LATEST).write_text(json.dumps({"policy": "policy"}))


def _population_cli(run_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "evaltk", "tournament", "population", str(run_dir), "--matches", "1",
                           "--timelimit", "0.1", "--concurrency", "2", "--rules", "screen-only", *args],
                          capture_output=True, text=True, timeout=600)


def test_a_screen_only_population_rates_members_with_their_inputs(tmp_path: Path, tag: str) -> None:
    run_dir = tmp_path / "run"
    _population(run_dir)
    refused = _population_cli(run_dir)  # the default baselines include scripted, which reads labels and depth
    assert refused.returncode == 2
    assert refused.stderr.splitlines() == [refused.stderr.strip()]
    assert "refuse agent scripted: it reads the labels buffer and the depth buffer" in refused.stderr
    assert not (run_dir / "tournament").exists()
    rated = _population_cli(run_dir, "--baselines", "random", "--json")
    assert rated.returncode == 0, rated.stderr[-3000:]
    summary = json.loads(rated.stdout.strip().splitlines()[-1])
    assert summary["rules"] == "screen-only"
    assert {r["name"]: r["inputs"] for r in summary["ratings"]} == {
        "m0": "screen 160x120", "m1": "screen 160x120", "random": "nothing (acts blind)"}
    assert "screen 160x120" in rated.stdout
