"""Smoke tests of the equal-work benchmark scripts: each runs end to end at tiny sizes (the numbers mean nothing).

They check what a reader of the output relies on: both sides of every row, the load line, the geometric
mean and a JSON payload that matches the table.
"""

from __future__ import annotations

import ast
import json

import pytest

from evaltk.errors import SpecError
from tests.benchmark_modules import BENCHMARKS
from tests.benchmark_modules import load_benchmark as _load


def _payload(out: str) -> dict[str, object]:
    last = out.strip().splitlines()[-1]
    data = json.loads(last)
    assert isinstance(data, dict)
    return data


def test_atari_cpu_runs_every_setting_with_both_sides(capsys: pytest.CaptureFixture[str]) -> None:
    bench = _load("atari_cpu")
    rc = bench.main(["--quick", "--games", "pong", "--num-envs", "2", "--rounds", "1", "--steps", "3",
                     "--dqn-steps", "2", "--single-frames", "10", "--warmup", "1", "--json",
                     "--setting", "raw", "dqn", "single"])
    out = capsys.readouterr().out
    assert rc == 0
    assert "load average (1/5/15 min) before [" in out
    assert " cores (" in out
    for side in ("gpu_env AtariBatch (2 envs, 2 threads)", "ale_py.AtariVectorEnv (2 envs, 2 threads)",
                 "gpu_env make_vec (2 envs, 2 threads)", "gpu_env AtariBatch (1 env, 1 thread)",
                 "ale_py.ALEInterface (1x, Python loop)"):
        assert side in out
    assert out.count("**geometric mean**") == 3
    data = _payload(out)
    sections = data["sections"]
    assert isinstance(sections, list)
    assert [s["setting"] for s in sections] == ["raw", "dqn", "single"]
    for section in sections:
        (row,) = section["rows"]
        assert row["game"] == "pong"
        assert row["ours_fps"] > 0
        assert row["ref_fps"] > 0
        assert row["ratio"] == pytest.approx(row["ours_fps"] / row["ref_fps"])
        assert section["notes"], "every remaining difference is printed as a note"
        assert f"| pong | {row['ours_fps']:,.0f} | {row['ref_fps']:,.0f} | {row['ratio']:.2f} |" in out


def test_atari_cpu_runs_every_drop_in_table_with_both_sides(capsys: pytest.CaptureFixture[str]) -> None:
    bench = _load("atari_cpu")
    settings = ["envpool", "envpool_async", "ale_vector", "dqn_envpool", "sb3", "cleanrl"]
    rc = bench.main(["--quick", "--games", "pong", "--num-envs", "2", "--threads", "1", "--rounds", "1",
                     "--dqn-steps", "2", "--warmup", "1", "--json", "--setting", *settings])
    out = capsys.readouterr().out
    assert rc == 0
    import envpool

    for side in ("gpu_env.envpool (2 envs, 1 threads)", f"EnvPool {envpool.__version__} (2 envs, 1 threads)",
                 "gpu_env.ale_vector (2 envs, 1 threads)", "SB3 make_atari_env (DummyVecEnv) (2 envs)",
                 "CleanRL make_env (SyncVectorEnv) (2 envs)"):
        assert side in out
    sections = _payload(out)["sections"]
    assert isinstance(sections, list)
    assert [s["setting"] for s in sections] == settings
    for section in sections:
        (row,) = section["rows"]
        assert row["ours_fps"] > 0
        assert row["ref_fps"] > 0


@pytest.mark.parametrize(("argv", "message"), [(["--steps", "0"], "--steps must be >= 1, got 0"),
                                               (["--games", "pongg"], "unknown game(s) pongg")])
def test_atari_cpu_rejects_bad_input_in_one_line(argv: list[str], message: str,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    bench = _load("atari_cpu")
    with pytest.raises(SystemExit):
        bench.main(argv)
    assert message in capsys.readouterr().err


def test_eval_throughput_runs_both_backends_on_the_same_episodes(capsys: pytest.CaptureFixture[str]) -> None:
    bench = _load("eval_throughput")
    rc = bench.main(["--policies", "random", "--episodes", "1", "--num-envs", "1", "--rounds", "1", "--json"])
    out = capsys.readouterr().out
    assert rc == 0
    assert "--sim gpu_env steps/s | --sim gym steps/s" in out
    assert "load average (1/5/15 min) before [" in out
    (result,) = _payload(out)["results"]  # type: ignore[misc]
    assert result["rows_identical"] is True
    assert result["gpu_env"]["steps"] == result["gym"]["steps"] > 0
    assert f"**{result['ratio']:.2f}**" in out
    assert "torch threads 1 (both sides)" in out


def test_eval_throughput_hands_its_torch_threads_to_the_engine() -> None:
    # The engine refuses 0 threads: the value reaches evaluate(), not only torch's global setting.
    bench = _load("eval_throughput")
    with pytest.raises(SpecError, match="--torch-threads 0"):
        bench.run_evaluate("builtin:random", "ALE/Breakout-v5", "gym", 1, 1, 0, torch_threads=0)


_REPO_PACKAGES = ("gpu_env", "evaltk", "trainers", "conformance")


def _imports_repo(tree: ast.AST) -> bool:
    for node in ast.walk(tree):
        names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                 else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
        if any(n.split(".")[0] in _REPO_PACKAGES for n in names):
            return True
    return False


def checkout_first(source: str) -> bool:
    """Whether a script that imports the repo's packages puts its own checkout first on ``sys.path`` before.

    A script run as ``python benchmarks/x.py`` has ``benchmarks/`` as ``sys.path[0]``, so without the insert it
    imports whatever copy is installed (an editable install of another worktree): a before/after run would time
    the same code twice.
    """
    tree = ast.parse(source)
    if not _imports_repo(tree):
        return True
    for stmt in tree.body:
        if isinstance(stmt, ast.If) and "sys.path.insert(0, str(ROOT))" in ast.unparse(stmt):
            return True
        if _imports_repo(stmt):
            return False
    return False


def test_checkout_first_tells_a_guarded_script_from_an_unguarded_one() -> None:
    guarded = ("import sys\nfrom pathlib import Path\nROOT = Path(__file__).resolve().parents[1]\n"
               "if str(ROOT) not in sys.path:\n    sys.path.insert(0, str(ROOT))\nimport gpu_env\n")
    assert checkout_first(guarded)
    assert not checkout_first("import sys\nimport gpu_env\n")
    assert not checkout_first("def f():\n    from evaltk.stats import welch_t\n")
    assert checkout_first("import numpy\n")


@pytest.mark.parametrize("script", sorted(p.name for p in BENCHMARKS.glob("*.py")))
def test_every_benchmark_runs_the_checkout_it_lies_in(script: str) -> None:
    assert checkout_first((BENCHMARKS / script).read_text(encoding="utf-8")), (
        f"benchmarks/{script} imports the repo's packages without putting its checkout first on sys.path")
