"""evaltk.shipped and the commands that name shipped items: `evaltk shipped`, `conformance run --builtin`."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from evaltk import shipped
from evaltk.checkpoint import load
from evaltk.cli.main import main
from tests.evaltk.cli_helpers import error_line

ROOT = Path(__file__).resolve().parents[2]


def test_a_checkout_ships_its_own_suites_folder() -> None:
    assert shipped.suites_dir() == ROOT / "suites"
    listed = {(item.kind, item.name): item.path for item in shipped.items()}
    suites = {("suite", p.stem): p for p in (ROOT / "suites").glob("*.toml")}
    assert suites
    assert suites.items() <= listed.items()
    assert listed[("checkpoint", "a2c_breakout")] == ROOT / "suites" / "checkpoints" / "a2c_breakout"
    assert shipped.suite_path("gpu_env_traces.toml") == shipped.suite_path("gpu_env_traces")


def test_the_shipped_checkpoint_loads() -> None:
    checkpoint = load(shipped.checkpoint_path("a2c_breakout"))
    assert checkpoint.spec.env["env_id"] == "ALE/Breakout-v5"


def test_unknown_names_list_what_is_shipped() -> None:
    with pytest.raises(shipped.ShippedDataError, match=r"no shipped checkpoint called 'gpu_env_traces'.*a2c_breakout"):
        shipped.checkpoint_path("gpu_env_traces")
    with pytest.raises(shipped.ShippedDataError, match=r"no shipped suite called 'nope'.*gpu_env_traces"):
        shipped.suite_path("nope")


def test_shipped_command_prints_a_path_for_another_command(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["shipped", "a2c_breakout", "--json"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == str(ROOT / "suites" / "checkpoints" / "a2c_breakout")
    assert json.loads(out[-1]) == {"kind": "checkpoint", "name": "a2c_breakout", "path": out[0]}
    assert main(["shipped"]) == 0
    listing = capsys.readouterr().out
    assert f"in {ROOT / 'suites'}" in listing
    assert "gpu_env_traces" in listing
    assert "no shipped suite or checkpoint called 'x'" in error_line(capsys, ["shipped", "x"])


def test_conformance_runs_a_shipped_suite_by_name(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["conformance", "run", "--builtin", "gpu_env_traces", "--workdir", str(tmp_path), "--json"]) == 0
    report = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert report["suite"] == "gpu-env-traces"
    declared = tomllib.loads(shipped.suite_path("gpu_env_traces").read_text(encoding="utf-8"))["case"]
    assert report["passed"] == len(report["cases"]) == len(declared) >= 5


def test_conformance_run_takes_one_suite(capsys: pytest.CaptureFixture[str]) -> None:
    assert "no shipped suite called 'nope'" in error_line(capsys, ["conformance", "run", "--builtin", "nope"])
    neither = error_line(capsys, ["conformance", "run"])
    both = error_line(capsys, ["conformance", "run", "suites/gpu_env_traces.toml", "--builtin", "gpu_env_traces"])
    assert neither == both
    assert "name a suite file (SUITE) or a shipped suite (--builtin NAME)" in neither
