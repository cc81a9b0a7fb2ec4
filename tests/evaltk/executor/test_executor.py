"""The executor seam without a cluster: local modes, streaming, unit ids, port leases, options, no-Ray errors."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from conformance.suite import load_suite
from evaltk.errors import SuiteError
from evaltk.executor import ExecutorError, Resources, WorkUnit, make_executor, run_units, stream
from evaltk.executor.local import LocalExecutor
from evaltk.executor.ports import PORT_RANGE, lease_ports, release_ports

ROOT = Path(__file__).resolve().parents[3]


def test_inline_runs_in_submission_order_in_this_process() -> None:
    seen: list[str] = []

    def record(name: str) -> int:
        seen.append(name)
        return os.getpid()

    units = [WorkUnit(f"u{i}", record, (f"u{i}",)) for i in range(3)]
    with LocalExecutor() as ex:
        results = list(stream(ex, units))
    assert [r.unit_id for r in results] == seen == ["u0", "u1", "u2"]
    assert {r.value for r in results} == {os.getpid()}


def test_threads_return_units_as_they_finish() -> None:
    # "slow" is submitted first and cannot finish until the caller has seen a result: the first result
    # must therefore be "fast" (a gate "fast" opened itself would race "fast"'s own return).
    gate = threading.Event()

    def slow() -> str:
        assert gate.wait(30), "the first result never reached the caller"
        return "slow"

    def fast() -> str:
        return "fast"

    values: list[str] = []
    with LocalExecutor(mode="threads", workers=2) as ex:
        for result in stream(ex, [WorkUnit("slow", slow), WorkUnit("fast", fast)]):
            values.append(result.value)
            gate.set()
    assert values == ["fast", "slow"]


def test_processes_run_picklable_units_in_other_processes() -> None:
    with LocalExecutor(mode="processes", workers=2) as ex:
        pids = {r.value for r in stream(ex, [WorkUnit(f"p{i}", os.getpid) for i in range(4)])}
    assert pids
    assert os.getpid() not in pids


def test_unit_exceptions_surface_and_duplicate_ids_are_refused() -> None:
    with LocalExecutor(mode="threads", workers=2) as ex, pytest.raises(ZeroDivisionError):
        list(stream(ex, [WorkUnit("bad", divmod, (1, 0))]))
    with LocalExecutor() as ex, pytest.raises(ExecutorError, match="'a' submitted twice"):
        list(stream(ex, [WorkUnit("a", int), WorkUnit("a", int)]))


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"num_cpus": -1}, "num_cpus = -1"), ({"num_gpus": float("nan")}, "num_gpus = nan"),
    ({"custom": {"vizdoom_engine": -2}}, "vizdoom_engine = -2")])
def test_bad_resources_are_named(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ExecutorError, match=message):
        Resources(**kwargs)  # type: ignore[arg-type]


def test_make_executor_rejects_bad_choices() -> None:
    with pytest.raises(ExecutorError, match="unknown executor 'dask'"):
        make_executor("dask")
    with pytest.raises(ExecutorError, match=r"--ray-address 1\.2\.3\.4:6379 needs --executor ray"):
        make_executor("local", ray_address="1.2.3.4:6379")
    with pytest.raises(ExecutorError, match="mode 'fibers'"):
        LocalExecutor(mode="fibers")



def test_run_units_builds_the_executor_asks_for_the_units_and_streams_them() -> None:
    asked: list[bool] = []

    def units(in_process: bool) -> list[WorkUnit]:
        asked.append(in_process)
        return [WorkUnit(f"u{i}", os.getpid) for i in range(2)]

    results = list(run_units("local", units))
    assert asked == [True]  # the inline local executor runs units in this process
    assert [(r.unit_id, r.value) for r in results] == [("u0", os.getpid()), ("u1", os.getpid())]
    with pytest.raises(ExecutorError, match="unknown executor 'dask'"):
        list(run_units("dask", units))
    with pytest.raises(ExecutorError, match=r"--ray-address 1\.2\.3\.4:6379 needs --executor ray"):
        list(run_units("local", units, ray_address="1.2.3.4:6379"))
    assert asked == [True]  # refused before any unit was asked for

def test_port_leases_are_exclusive_across_processes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EVALTK_PORT_LOCK_DIR", str(tmp_path))
    base = lease_ports("g00001")
    assert base is not None
    assert PORT_RANGE[0] <= base < PORT_RANGE[1]
    code = ("from evaltk.executor.ports import lease_ports; print(lease_ports('g00001'))")
    other = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                           env=dict(os.environ, EVALTK_PORT_LOCK_DIR=str(tmp_path))).stdout.strip()
    assert int(other) != base  # held here: the other process moves on to the next block
    release_ports(base)
    again = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                           env=dict(os.environ, EVALTK_PORT_LOCK_DIR=str(tmp_path))).stdout.strip()
    assert int(again) == base  # released (and the other process's lease died with it): same block, keyed by id


def _suite(tmp_path: Path, head: str) -> Path:
    path = tmp_path / "s.toml"
    trace = ROOT / "suites" / "traces" / "pong_seed0_2000.npz"
    path.write_text(f'[suite]\nname = "s"\n{head}\n[[case]]\nkind = "trace"\nname = "c"\nframes = 10\n'
                    f'trace_file = "{trace}"\n')
    return path


@pytest.mark.parametrize(("head", "message"), [
    ('executor = "dask"', r"\[suite\] executor 'dask' is not an executor: use one of local, ray"),
    ('executor = "rey"', r"\[suite\] executor 'rey' is not an executor: did you mean ray\? use one of local, ray"),
    ("executor = 3", "executor = 3 should be a non-empty string"),
    ('ray_address = "h:1"', 'ray_address needs executor = "ray"')])
def test_suite_executor_key_is_checked(tmp_path: Path, head: str, message: str) -> None:
    with pytest.raises(SuiteError, match=message):
        load_suite(_suite(tmp_path, head))


def test_suite_executor_key_is_read(tmp_path: Path) -> None:
    suite = load_suite(_suite(tmp_path, 'executor = "ray"\nray_address = "10.0.0.1:6379"'))
    assert (suite.executor, suite.ray_address) == ("ray", "10.0.0.1:6379")


@pytest.mark.parametrize("argv", [
    ["evaluate", "builtin:random", "--env-id", "ALE/Breakout-v5", "--episodes", "1", "--executor", "ray"],
    ["conformance", "run", str(ROOT / "suites" / "reference_drift.toml"), "--executor", "ray"]],
    ids=["evaluate", "conformance"])
def test_without_ray_installed_the_error_is_one_line_naming_the_extra(tmp_path: Path, argv: list[str]) -> None:
    # ``sys.modules['ray'] = None`` makes ``import ray`` fail exactly as it does where Ray is not installed
    code = "import sys; sys.modules['ray'] = None; from evaltk.cli.main import main; sys.exit(main(sys.argv[1:]))"
    if argv[0] == "evaluate":
        argv = [*argv, "--out", str(tmp_path / "out")]
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, cwd=tmp_path,
                          timeout=300)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert lines == ["error: --executor ray needs Ray, which is not installed: pip install 'evaltk[ray]'"], lines
    assert time.perf_counter() - start < 300
