"""No ViZDoom shared memory or engine outlives an interrupted evaluation, match or training run.

Each test starts the real command (real ViZDoom engines) in a subprocess, waits until its processes
map ViZDoom segments (``/dev/shm/ViZDoomSM*``, ``ViZDoomMQ*``), interrupts it, and checks that every
segment its processes mapped (ViZDoom's and Python ``SharedMemory`` blocks) is gone, no process of it
is left, and nothing printed a traceback or a resource-tracker "leaked" warning.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.evaltk.doom_procs import Outcome, interrupt

pytestmark = pytest.mark.vizdoom


def _assert_clean(out: Outcome, extra_logs: list[Path] | None = None) -> None:
    assert any(n.startswith("ViZDoomSM") for n in out.segments), out.segments
    assert out.left == [], f"left in /dev/shm: {out.left}"
    assert out.alive == [], f"processes left: {out.alive}"
    text = out.stderr + "".join(p.read_text(errors="replace") for p in extra_logs or [])
    assert "Traceback" not in text, text[-3000:]
    assert "leaked" not in text, text[-3000:]
    assert "BrokenPipeError" not in text, text[-3000:]


# SIGKILL of the parent alone is the lighter case of SIGKILL-ALL (every process at once): slow only.
@pytest.mark.parametrize("how", ["SIGINT", pytest.param("SIGKILL", marks=pytest.mark.slow), "SIGKILL-ALL"])
def test_interrupted_evaluation_leaves_no_segment(tmp_path: Path, how: str) -> None:
    out = interrupt(["evaltk", "evaluate", "random", "--env-id", "basic", "--episodes", "500", "--num-envs", "4",
                     "--workers", "2", "--out", str(tmp_path / "ev")], how, min_segments=6)
    _assert_clean(out)
    if how == "SIGINT":
        assert out.returncode == 130
        assert "interrupted:" in out.stderr


# A match's players are the tournament's subprocesses, whose SIGKILL case the training test covers. A match of
# `random` against a bot lasts about a second: 50 of them keep the gauntlet running when the signal comes (with
# 2 it could end first, and a SIGINT landing in its interpreter's shutdown killed it with -2).
@pytest.mark.parametrize("how", ["SIGINT", pytest.param("SIGKILL", marks=pytest.mark.slow)])
def test_interrupted_match_leaves_no_segment(tmp_path: Path, how: str) -> None:
    out = interrupt(["evaltk", "tournament", "gauntlet", "--agent", "random", "--bots", "1", "--matches", "50",
                     "--timelimit", "2", "--concurrency", "1", "--out", str(tmp_path / "t")], how, min_segments=3)
    _assert_clean(out, sorted((tmp_path / "t").rglob("*.err")))
    if how == "SIGINT":
        assert out.returncode == 130


# Training's SIGINT case (the same command) is also checked in the default run by
# tests/trainers/test_appo_runs.py::test_sigint_stops_cleanly_without_orphan_engines: segments, orphans, exit 0.
@pytest.mark.parametrize("how", [pytest.param("SIGINT", marks=pytest.mark.slow), "SIGKILL"])
def test_interrupted_training_leaves_no_segment(tmp_path: Path, how: str) -> None:
    out = interrupt(["trainers.appo", "--out", str(tmp_path / "run"), "--num-workers", "2", "--envs-per-worker", "2",
                     "--rollout", "8", "--batch-size", "16", "--obs-height", "36", "--obs-width", "64",
                     "--hidden-size", "64", "--rnn-size", "64", "--log-every-s", "1", "--max-seconds", "120"],
                    how, min_segments=12)
    _assert_clean(out)
    if how == "SIGINT":
        assert out.returncode == 0
