"""`evaltk compare` end to end, and reading score tables (evaltk.evaluation.scores)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from evaltk.cli.main import main
from evaltk.errors import ScoreTableError
from evaltk.evaluation.scores import read_scores

EVALUATE_HEADER = "checkpoint,env_id,backend,index,seed,return,frames,steps,truncated"


def _write_csv(path: Path, returns: np.ndarray, *, evaluate_format: bool = False) -> Path:
    lines = [EVALUATE_HEADER if evaluate_format else "episode,return"]
    for i, r in enumerate(returns):
        if evaluate_format:
            lines.append(f"builtin:random,ALE/Pong-v5,gym,{i},{1000 + i},{float(r)!r},4000,1000,false")
        else:
            lines.append(f"{i},{float(r)!r}")
    path.write_text("\n".join(lines) + "\n")
    return path


def test_cli_json_last_line_and_report_files(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    run_dir = tmp_path / "eval_a"
    run_dir.mkdir()
    _write_csv(run_dir / "episodes.csv", rng.normal(10, 2, 300), evaluate_format=True)
    b = tmp_path / "b.jsonl"
    b.write_text("".join(json.dumps({"return": float(v)}) + "\n" for v in rng.normal(10, 2, 300)))
    out = tmp_path / "report"
    proc = subprocess.run(
        [sys.executable, "-m", "evaltk", "compare", str(run_dir), str(b), "--margin", "0.5", "--margin-kind", "sd",
         "--out", str(out), "--json", "--bootstrap-seed", "3", "--resamples", "999"],
        capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    payload = json.loads(proc.stdout.strip().splitlines()[-1])
    assert payload["verdict"] == "equivalent"
    assert payload["margin"] == 0.5
    assert payload["n_a"] == 300
    assert payload["n_b"] == 300
    assert len(payload["ci"]) == 2
    assert {"welch_t", "mann_whitney_u", "brunner_munzel", "ks", "permutation",
                                         "tost"} <= set(payload["tests"])
    assert (out / "compare.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "**Verdict: equivalent**" in (out / "compare.md").read_text()
    assert json.loads((out / "compare.json").read_text())["verdict"] == "equivalent"


def test_cli_inconclusive_prints_recommendation(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rng = np.random.default_rng(1)
    a = _write_csv(tmp_path / "a.csv", rng.normal(10, 2, 6))
    b = _write_csv(tmp_path / "b.csv", rng.normal(10, 2, 6))
    assert main(["compare", str(a), str(b), "--margin", "0.5", "--margin-kind", "sd", "--json",
                 "--resamples", "199"]) == 0
    out = capsys.readouterr().out
    payload = json.loads(out.strip().splitlines()[-1])
    assert payload["verdict"] == "inconclusive"
    assert payload["recommendation"]["episodes_per_side"] > 6
    assert "episodes per side" in out


def test_cli_zero_variance_both_sides(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = _write_csv(tmp_path / "a.csv", np.full(10, -21.0))
    b = _write_csv(tmp_path / "b.csv", np.full(10, -21.0))
    assert main(["compare", str(a), str(b), "--margin", "1", "--json", "--resamples", "199"]) == 0
    payload = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert payload["verdict"] == "equivalent"
    assert payload["constant_samples"]
    assert payload["tests"]["welch_t"]["pvalue"] is None  # undefined, printed as JSON null


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (None, "does not exist"),
        ("", "empty"),
        ("episode,return\n", "no episodes"),
        ("episode,score\n0,1\n1,2\n", "no 'return' column"),
        ("episode,return\n0,1.5\n1,abc\n", "b.csv:3"),
        ("episode,return\n0,1.5\n1,nan\n", "not finite"),
        ("episode,return\n0,1.5\n1\n", "fewer fields"),
    ],
)
def test_bad_score_tables_give_one_line_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                              content: str | None, expected: str) -> None:
    a = _write_csv(tmp_path / "a.csv", np.arange(5.0))
    b = tmp_path / "b.csv"
    if content is not None:
        b.write_text(content)
    assert main(["compare", str(a), str(b), "--margin", "1"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error:")
    assert expected in err
    assert "\n" not in err


def test_single_episode_is_a_clear_cli_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = _write_csv(tmp_path / "a.csv", np.arange(5.0))
    b = _write_csv(tmp_path / "b.csv", np.array([3.0]))
    assert main(["compare", str(a), str(b), "--margin", "1"]) == 2
    assert "at least 2 episodes per side" in capsys.readouterr().err


def test_read_scores_jsonl_and_directory(tmp_path: Path) -> None:
    p = tmp_path / "s.jsonl"
    p.write_text('{"return": 1}\n\n{"return": 2.5, "checkpoint": "ck"}\n')
    table = read_scores(p)
    assert table.returns.tolist() == [1.0, 2.5]
    assert table.labels == {"checkpoint": ["ck"]}
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"return": 1}\n{"return": \n')
    with pytest.raises(ScoreTableError, match=r"bad\.jsonl:2"):
        read_scores(bad)
    d = tmp_path / "two"
    d.mkdir()
    (d / "x.csv").write_text("return\n1\n")
    (d / "y.csv").write_text("return\n1\n")
    with pytest.raises(ScoreTableError, match="several score tables"):
        read_scores(d)
    table = read_scores(d / "x.csv")
    assert table.n == 1
