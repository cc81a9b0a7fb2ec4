"""The executor seam on a real two-node Ray cluster on loopback (started here, torn down even on failure).

Not ``local_mode``: ``ray start --head`` and a second ``ray start --address`` node, one CPU each
(:mod:`cluster`). Each check runs the same work with ``--executor local`` and ``--executor ray`` and
compares what lands on disk: score-table rows, JUnit verdicts, tournament results. One test kills
every process of the second node (raylet and workers, SIGKILL) while its units run and checks that
the table still has each episode exactly once, equal to the local run.
"""

from __future__ import annotations

import contextlib
import csv
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("ray", reason="the Ray executor tests need the [ray] extra: pip install 'evaltk[ray]'")

from evaltk.cli.main import main
from tests.evaltk.executor.cluster import NODE_VAR, LocalCluster

ROOT = Path(__file__).resolve().parents[3]
TRACES = ROOT / "suites" / "traces"
EPISODES = 8


@pytest.fixture(scope="module")
def cluster() -> Iterator[LocalCluster]:
    """Yield a two-node cluster for the whole module; this process is its driver (connected once).

    Its folder is a short one under /tmp: Ray's socket paths inside it must stay under AF_UNIX's 107 bytes,
    which pytest's per-worker temporary folders (``.../pytest-N/popen-gw0/...``) can exceed.
    """
    import ray

    c = LocalCluster(Path(tempfile.mkdtemp(prefix="evaltk-ray-")), engines=2)
    try:
        c.start(connect=True)
        yield c
    finally:
        if ray.is_initialized():
            ray.shutdown()
        c.kill()
        shutil.rmtree(c.tmp, ignore_errors=True)
        assert c.pids() == [], "Ray processes of the test cluster survived the teardown"


def _rows(table: Path) -> list[dict[str, str]]:
    with open(table, newline="") as fh:
        return sorted(csv.DictReader(fh), key=lambda r: int(r["index"]))


def _evaluate(out: Path, *extra: str, episodes: int = 6, game: str = "ALE/Breakout-v5") -> list[dict[str, str]]:
    argv = ["evaluate", "builtin:random", "--env-id", game, "--episodes", str(episodes), "--seed", "5",
            "--num-envs", "2", "--workers", "0", "--fast-reset", "--out", str(out), *extra]
    assert main(argv) == 0
    return _rows(out / "episodes.csv")


@pytest.fixture(scope="module")
def local_rows(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, str]]:
    """Return the local executor's table of the cross-check evaluation (EPISODES Breakout episodes)."""
    return _evaluate(tmp_path_factory.mktemp("local") / "eval", episodes=EPISODES)


@pytest.mark.slow
def test_evaluate_on_ray_writes_the_local_table(cluster: LocalCluster, local_rows: list[dict[str, str]],
                                                tmp_path: Path) -> None:
    rows = _evaluate(tmp_path / "ray", "--executor", "ray", "--ray-address", cluster.address, episodes=EPISODES)
    assert rows == local_rows
    assert [int(r["index"]) for r in rows] == list(range(EPISODES))
    # a re-run finds every episode on disk: nothing runs, nothing is appended
    before = (tmp_path / "ray" / "episodes.csv").read_bytes()
    assert _evaluate(tmp_path / "ray", "--executor", "ray", "--ray-address", cluster.address, episodes=EPISODES) == rows
    assert (tmp_path / "ray" / "episodes.csv").read_bytes() == before


def _busy_workers(cluster: LocalCluster, node: str) -> list[str]:
    titles = []
    for pid in cluster.pids(node):
        try:
            title = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0].decode(errors="replace")
        except OSError:
            continue
        if title.startswith("ray::") and "episodes:" in title:
            titles.append(title)
    return titles


def test_a_node_killed_mid_run_loses_and_duplicates_nothing(cluster: LocalCluster, local_rows: list[dict[str, str]],
                                                            tmp_path: Path) -> None:
    out = tmp_path / "ray"
    box: dict[str, Any] = {}

    def work() -> None:
        try:
            box["rows"] = _evaluate(out, "--executor", "ray", "--ray-address", cluster.address, episodes=EPISODES)
        except BaseException as exc:  # re-raised below
            box["error"] = exc

    thread = threading.Thread(target=work)
    thread.start()
    busy: list[str] = []
    deadline = time.monotonic() + 120
    while not busy and thread.is_alive() and time.monotonic() < deadline:
        busy = _busy_workers(cluster, "second")
        time.sleep(0.05)
    assert busy, "no unit ever ran on the second node"
    killed = cluster.kill("second")
    thread.join(timeout=300)
    try:
        assert not thread.is_alive(), "the evaluation did not finish after the node was killed"
        if "error" in box:
            raise box["error"]
        assert killed
        assert box["rows"] == local_rows
        indices = [int(r["index"]) for r in _rows(out / "episodes.csv")]
        assert indices == sorted(set(indices)) == list(range(EPISODES))
    finally:
        cluster.start_second()
    # a re-run (now on two nodes again) finds every episode on disk: nothing runs, nothing is appended
    before = (out / "episodes.csv").read_bytes()
    assert _evaluate(out, "--executor", "ray", "--ray-address", cluster.address, episodes=EPISODES) == local_rows
    assert (out / "episodes.csv").read_bytes() == before


def _suite(tmp_path: Path) -> Path:
    path = tmp_path / "mini.toml"
    path.write_text(f"""[suite]
name = "mini"
[[case]]
kind = "trace"
name = "pong-300"
rom = "pong"
seed = 0
frames = 300
trace_file = "{TRACES / 'pong_seed0_2000.npz'}"
simulator = "ale"
[[case]]
kind = "trace"
name = "breakout-wrong-seed"
seed = 7
frames = 300
trace_file = "{TRACES / 'breakout_seed1_2000.npz'}"
simulator = "gpu_env"
[[case]]
kind = "trace"
name = "qbert-too-long"
frames = 2500
trace_file = "{TRACES / 'qbert_seed3_2000.npz'}"
simulator = "ale"
""")
    return path


def _verdicts(junit: Path) -> list[tuple[str, str, str]]:
    out = []
    for tc in ET.parse(junit).getroot().iter("testcase"):
        child = next(iter(tc), None)
        kind = "passed" if child is None or child.tag == "system-out" else child.tag
        out.append((tc.get("name", ""), kind, (child.text or "") if child is not None and kind != "passed" else ""))
    return out


def test_suite_on_ray_gives_the_local_junit_verdicts(cluster: LocalCluster, tmp_path: Path) -> None:
    suite = _suite(tmp_path)
    verdicts = {}
    for name in ("local", "ray"):
        junit = tmp_path / f"{name}.xml"
        code = main(["conformance", "run", str(suite), "--executor", name, "--junit", str(junit),
                     "--workdir", str(tmp_path / name)])
        assert code == 1  # two cases fail, on purpose
        verdicts[name] = _verdicts(junit)
    assert verdicts["ray"] == verdicts["local"]
    assert [v[1] for v in verdicts["ray"]] == ["passed", "failure", "failure"]


def test_unit_no_node_can_hold_is_refused_with_the_fix(cluster: LocalCluster) -> None:
    from evaltk.executor import ExecutorError, Resources, WorkUnit
    from evaltk.executor.ray_executor import RayExecutor

    with RayExecutor(address=cluster.address) as ex, pytest.raises(ExecutorError, match="ray start --num-cpus 4"):
        ex.submit(WorkUnit("big", os.getpid, resources=Resources(num_cpus=4)))
    with RayExecutor(address=cluster.address) as ex, pytest.raises(ExecutorError, match='"gpu_box": 1'):
        ex.submit(WorkUnit("gpu", os.getpid, resources=Resources(custom={"gpu_box": 1})))


def test_units_spread_over_both_nodes_and_exceptions_come_back_unwrapped(cluster: LocalCluster) -> None:
    import ray

    from evaltk.executor import WorkUnit, stream
    from evaltk.executor.ray_executor import RayExecutor

    # the workers cannot import this test module: ship its functions by value
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])  # type: ignore[no-untyped-call]
    with RayExecutor(address=cluster.address) as ex:
        results = list(stream(ex, [WorkUnit(f"u{i}", _slow_node_id, (0.5,)) for i in range(6)]))
        assert sorted(r.unit_id for r in results) == [f"u{i}" for i in range(6)]
        assert {r.value for r in results} == {f"{cluster.tag}-head", f"{cluster.tag}-second"}
        with pytest.raises(ZeroDivisionError):
            list(stream(ex, [WorkUnit("bad", divmod, (1, 0))]))


def _slow_node_id(seconds: float) -> str:
    time.sleep(seconds)
    return os.environ[NODE_VAR]  # inherited from the node's `ray start`


@pytest.mark.vizdoom
def test_gauntlet_on_ray_gives_the_local_results(cluster: LocalCluster, tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    import json

    pytest.importorskip("vizdoom", reason="tournaments need the [doom] extra")
    results = {}
    for name in ("local", "ray"):
        out = tmp_path / name
        assert main(["tournament", "gauntlet", "--agent", "random", "--bots", "1", "--matches", "2",
                     "--timelimit", "0.1", "--concurrency", "2", "--executor", name, "--out", str(out),
                     "--json"]) == 0
        capsys.readouterr()
        rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
        results[name] = {r["match_id"]: (r["outcome"], r["spec"],
                                         [(p["name"], p["frags"]) for p in r["participants"]]) for r in rows}
    assert results["ray"] == results["local"]
    assert sorted(results["ray"]) == ["g00000", "g00001"]


def _evaltk(cluster: LocalCluster, cwd: Path, *args: str) -> None:
    """Run ``python -m evaltk ARGS`` as a user would, finding the cluster through ``RAY_ADDRESS``."""
    env = dict(os.environ, RAY_ADDRESS=cluster.address)
    subprocess.run([sys.executable, "-m", "evaltk", *args], env=env, check=True, cwd=cwd, timeout=3600)


@pytest.mark.slow
def test_must_show_pong_24_episodes_same_table(cluster: LocalCluster, tmp_path: Path) -> None:
    for name in ("local", "ray"):
        _evaltk(cluster, tmp_path, "evaluate", "builtin:random", "--env-id", "ALE/Pong-v5", "--episodes", "24",
                "--seed", "5", "--executor", name, "--out", str(tmp_path / name))
    rows = _rows(tmp_path / "ray" / "episodes.csv")
    assert rows == _rows(tmp_path / "local" / "episodes.csv")
    assert [int(r["index"]) for r in rows] == list(range(24))


@pytest.mark.slow
def test_must_show_gpu_env_trace_suite_same_verdicts(cluster: LocalCluster, tmp_path: Path) -> None:
    for name in ("local", "ray"):
        with contextlib.suppress(subprocess.CalledProcessError):  # exit 1 on a failed case: the verdicts are compared
            _evaltk(cluster, tmp_path, "conformance", "run", str(ROOT / "suites" / "gpu_env_traces.toml"),
                    "--executor", name, "--junit", str(tmp_path / f"j_{name}.xml"), "--workdir", str(tmp_path / name))
    assert _verdicts(tmp_path / "j_ray.xml") == _verdicts(tmp_path / "j_local.xml")
    assert len(_verdicts(tmp_path / "j_ray.xml")) == 6
