"""``evaltk evaluate`` through the real CLI: JSON output, interruption by signals and resume, bad input."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from evaltk.checkpoint import SPEC_FILE, WEIGHTS_FILE
from evaltk.cli.main import main
from evaltk.envs import env_for_id
from evaltk.evaluation.run import episode_seed
from evaltk.evaluation.scores import SETTINGS_FILE, TABLE_FILE, read_table
from evaltk.policies import save_builtin
from tests.evaltk.cli_helpers import error_line, restore_sigint

EVALTK = [sys.executable, "-m", "evaltk"]


def _args(out: Path, episodes: int, *extra: str) -> list[str]:
    return ["evaluate", "builtin:random", "--env-id", "ALE/Breakout-v5", "--episodes", str(episodes), "--seed", "4",
            "--num-envs", "2", "--out", str(out), *extra]


def test_json_last_line(tmp_path: Path) -> None:
    proc = subprocess.run([*EVALTK, *_args(tmp_path, 2, "--json")], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    last = json.loads(proc.stdout.strip().splitlines()[-1])
    assert last["n_episodes"] == 2
    assert last["out"] == str(tmp_path / TABLE_FILE)
    rows = read_table(tmp_path / TABLE_FILE)
    assert last["mean_return"] == pytest.approx(sum(r.episode_return for r in rows) / 2)
    assert last["ci"][0] <= last["mean_return"] <= last["ci"][1]
    assert "mean return" in proc.stdout


def _wait_for_rows(table: Path, n: int, proc: subprocess.Popen[str], timeout: float = 90.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if table.exists() and table.read_text().count("\n") >= n + 1:
            return
        if proc.poll() is not None:
            pytest.fail(f"evaluation ended early: {proc.communicate()}")
        time.sleep(0.1)
    pytest.fail(f"no {n} rows after {timeout} s")


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGKILL])
def test_interrupted_run_keeps_rows_and_resumes(tmp_path: Path, sig: signal.Signals) -> None:
    episodes = 8  # 4 batches of 2: the signal, sent at the 2nd row, always arrives before the end
    proc = subprocess.Popen([*EVALTK, *_args(tmp_path, episodes)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True,
                            preexec_fn=restore_sigint)
    _wait_for_rows(tmp_path / TABLE_FILE, 2, proc)
    os.killpg(proc.pid, sig) if sig == signal.SIGINT else proc.send_signal(sig)
    _, err = proc.communicate(timeout=60)
    kept = read_table(tmp_path / TABLE_FILE, repair=True)
    if sig == signal.SIGINT:
        assert proc.returncode == 130, err
        assert "re-run the same command to resume" in err
    else:
        assert proc.returncode == -signal.SIGKILL
    assert 2 <= len(kept) < episodes
    for row in kept:
        assert row.seed == episode_seed(4, row.index)
    resumed = subprocess.run([*EVALTK, *_args(tmp_path, episodes, "--json")], capture_output=True, text=True,
                             timeout=180)
    assert resumed.returncode == 0, resumed.stderr
    summary = json.loads(resumed.stdout.strip().splitlines()[-1])["summary"]
    assert summary["resumed_episodes"] == len(kept)
    assert summary["new_episodes"] == episodes - len(kept)
    rows = read_table(tmp_path / TABLE_FILE)
    assert sorted(r.index for r in rows) == list(range(episodes))
    assert rows[: len(kept)] == kept


def test_unknown_env_id(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    line = error_line(capsys, ["evaluate", "random", "--env-id", "ALE/Brekout-v5", "--out", str(tmp_path)])
    assert "unknown Atari env id 'ALE/Brekout-v5'" in line
    assert "did you mean ALE/Breakout-v5" in line


def test_missing_and_corrupt_checkpoints(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = str(tmp_path / "out")
    assert "is not a built-in policy, a file or folder here" in error_line(
        capsys, ["evaluate", str(tmp_path / "none"), "--out", out])
    ckpt = save_builtin(tmp_path / "c", "random", env_for_id("ALE/Breakout-v5"))
    (ckpt / SPEC_FILE).write_text("{oops")
    assert "not valid JSON" in error_line(capsys, ["evaluate", str(ckpt), "--out", out])
    ckpt = save_builtin(tmp_path / "c", "random", env_for_id("ALE/Breakout-v5"))
    (ckpt / WEIGHTS_FILE).write_bytes(b"\x00" * 3)
    assert "not a valid safetensors file" in error_line(capsys, ["evaluate", str(ckpt), "--out", out])


def test_spec_not_matching_env(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = str(tmp_path / "out")
    ckpt = save_builtin(tmp_path / "c", "random", env_for_id("ALE/Breakout-v5"))
    line = error_line(capsys, ["evaluate", str(ckpt), "--env-id", "ALE/Pong-v5", "--out", out])
    assert "{'type': 'discrete', 'n': 4} does not match ALE/Pong-v5's {'type': 'discrete', 'n': 6}" in line
    spec = json.loads((ckpt / SPEC_FILE).read_text())
    spec["obs_spec"]["shape"] = [4, 84, 84]
    spec["model_class"] = "evaltk.no_such:Net"
    (ckpt / SPEC_FILE).write_text(json.dumps(spec))
    assert "cannot be imported" in error_line(capsys, ["evaluate", str(ckpt), "--out", out])


def test_malformed_score_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = _args(tmp_path, 1)
    assert main(argv) == 0
    capsys.readouterr()
    (tmp_path / TABLE_FILE).write_text("garbage without header\n")
    assert "has columns" in error_line(capsys, argv)
    (tmp_path / SETTINGS_FILE).unlink()
    assert "exists without evaluation.json" in error_line(capsys, argv)


def test_help_mentions_resume(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["evaluate", "--help"])
    assert "re-running the same command resumes" in capsys.readouterr().out


def test_torch_threads_must_be_positive(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*_args(tmp_path / "out", 1), "--torch-threads", "0"]) == 2
    err = capsys.readouterr().err
    assert "--torch-threads 0: use 1 or more" in err
    assert not (tmp_path / "out").exists()  # refused before anything was written


def test_a_builtin_policy_run_never_imports_torch(tmp_path: Path) -> None:
    # torch costs ~3 s of start-up per command; only checkpoints with networks need it.
    code = ("import sys; from evaltk.cli.main import main; "
            f"rc = main({_args(tmp_path, 1)!r}); print(rc, 'torch' in sys.modules)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.stdout.split()[-2:] == ["0", "False"], proc.stdout + proc.stderr
