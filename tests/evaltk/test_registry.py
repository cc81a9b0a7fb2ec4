"""One registration rule (:class:`evaltk.registry.Registry`) and one "did you mean", for every kind of named thing.

Each registry of evaltk (simulators, executors, importer formats, built-in policies) is tested here through its
public ``register`` and its lookup: an unknown name is one line naming the close names and then every name, and a
registered entry is the one used (through the real CLI where a command takes the name).
"""

from __future__ import annotations

import csv
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from evaltk.cli.main import main
from evaltk.errors import SpecError
from evaltk.executor import EXECUTOR_MODULES, ExecutorError, WorkUnit, make_executor, run_units
from evaltk.executor.local import LocalExecutor
from evaltk.registry import Registry, did_you_mean
from evaltk.simulators import NAMES, SIMULATORS, Simulator, SimulatorError, check_name, get, register
from evaltk.simulators.gym_ale import GymSimulator
from tests.evaltk.cli_helpers import error_line

ENV_ID = "ALE/Breakout-v5"


def test_did_you_mean_names_the_close_choices_ignoring_case() -> None:
    assert did_you_mean("basci", ["basic", "duel", "deathmatch"]) == "did you mean basic? "
    assert did_you_mean("PONG", ["pong", "tennis"]) == "did you mean pong? "
    assert did_you_mean("zzz", ["basic", "duel"]) == ""
    assert did_you_mean("gpu_evn", ["gym", "gpu_env", "envpool"]) == "did you mean gpu_env? "


def test_registry_registers_once_and_names_what_is_not_registered() -> None:
    things: Registry[int] = Registry("widget", SpecError, other_forms="a path")
    things.register("alpha", 1)
    things.register("beta", 2)
    assert things["beta"] == 2
    assert things.names() == ("alpha", "beta")  # registration order
    with pytest.raises(SpecError) as raised:
        things["alpah"]
    assert str(raised.value) == "unknown widget 'alpah': did you mean alpha? use one of alpha, beta, or a path"
    assert str(things.unknown("gamma", label="--widget")) == ("--widget 'gamma' is not a widget: use one of alpha, "
                                                              "beta, or a path")
    assert things.check("alpha") == "alpha"
    with pytest.raises(ValueError, match="registered already"):
        things.register("alpha", 3)
    things.register("alpha", 3, replace=True)
    assert things["alpha"] == 3
    for bad in ("", "a:b", "a/b", " a"):
        with pytest.raises(ValueError, match="plain word"):
            things.register(bad, 0)


class _Renamed(GymSimulator):
    """The reference simulator under another name: what a registered simulator records is its own name."""

    name = "gym_again"


@pytest.fixture
def gym_again() -> Iterator[list[str]]:
    """Register ``gym_again`` (a real simulator); yield the names its factory was called with; unregister it."""
    calls: list[str] = []

    def factory(name: str) -> Simulator:
        calls.append(name)
        return _Renamed()

    register("gym_again", factory)
    try:
        yield calls
    finally:
        SIMULATORS.pop("gym_again")


def test_a_registered_simulator_is_used_by_evaluate(gym_again: list[str], tmp_path: Path) -> None:
    assert "gym_again" in NAMES  # NAMES is a live view of the registry
    assert check_name("gym_again") == "gym_again"
    out = tmp_path / "ev"
    assert main(["evaluate", "builtin:random", "--env-id", ENV_ID, "--sim", "gym_again", "--episodes", "1",
                 "--num-envs", "1", "--workers", "0", "--max-episode-frames", "200", "--out", str(out)]) == 0
    assert gym_again == ["gym_again"]
    with open(out / "episodes.csv", newline="") as fh:
        assert [row["simulator"] for row in csv.DictReader(fh)] == ["gym_again"]


def test_an_unknown_simulator_is_one_line_with_the_close_names(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    line = error_line(capsys, ["evaluate", "builtin:scripted", "--env-id", ENV_ID, "--sim", "gpu_evn",
                               "--out", str(tmp_path / "o")])
    assert line == ("error: --sim 'gpu_evn' is not a simulator: did you mean gpu_env? use one of gym, gpu_env, "
                    "envpool, or MODULE:CALLABLE for your own factory (e.g. mysim:make_env; see docs/simulators.md)")
    with pytest.raises(SimulatorError, match="--reference 'gim' is not a simulator: did you mean gym\\?"):
        get("gim", option="--reference")
    assert not (tmp_path / "o").exists()


def test_a_registered_executor_module_builds_and_runs_the_units() -> None:
    from evaltk.executor import local

    EXECUTOR_MODULES.register("here", lambda: local)
    try:
        assert isinstance(make_executor("here"), LocalExecutor)
        units = [WorkUnit(f"u{i}", os.getpid) for i in range(2)]
        assert [(r.unit_id, r.value) for r in run_units("here", lambda _: units)] == [("u0", os.getpid()),
                                                                                      ("u1", os.getpid())]
    finally:
        EXECUTOR_MODULES.pop("here")
    with pytest.raises(ExecutorError, match="unknown executor 'here': use one of local, ray"):
        make_executor("here")
    with pytest.raises(ExecutorError, match="unknown executor 'rey': did you mean ray\\? use one of local, ray"):
        list(run_units("rey", lambda _: units))


def test_cli_choices_name_the_close_ones(capsys: pytest.CaptureFixture[str]) -> None:
    """A value outside an option's choices (here the executors' registry) gets the same suggestion."""
    with pytest.raises(SystemExit) as info:
        main(["evaluate", "builtin:random", "--executor", "rey", "--out", "o"])
    assert info.value.code == 2
    assert capsys.readouterr().err.strip().splitlines() == [
        "error: evaltk evaluate: argument --executor: invalid choice: 'rey': did you mean ray? use one of local, ray "
        "(see 'evaltk evaluate --help')"]
    with pytest.raises(SystemExit):
        main(["evalute"])
    assert "invalid choice: 'evalute': did you mean evaluate" in capsys.readouterr().err


def test_a_misspelt_checkpoint_gets_the_close_builtin_and_every_form(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    line = error_line(capsys, ["evaluate", "scriptd", "--env-id", ENV_ID, "--out", str(tmp_path / "o")])
    assert line.startswith("error: checkpoint 'scriptd' is not a built-in policy, a file or folder here, or an "
                           "hf:// location: did you mean scripted? pass a built-in (random, scripted; also as "
                           "builtin:NAME), an evaltk checkpoint directory")
    assert "hf://ORG/REPO[@REVISION][/PATH]" in line
    line = error_line(capsys, ["evaluate", "builtin:scriptd", "--env-id", ENV_ID, "--out", str(tmp_path / "o")])
    assert "'builtin:scriptd' is not a built-in policy" in line
    assert "did you mean scripted?" in line
    assert not (tmp_path / "o").exists()
