"""Traces of a policy's own play: the A2C checkpoint on ale-py, replayed on gpu_env with full state equality."""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from conformance.suite import Case, Outcome, run_case
from conformance.trace import load
from evaltk.cli.main import main

SUITES = Path(__file__).resolve().parents[2] / "suites"
CHECKPOINT = SUITES / "checkpoints" / "a2c_breakout"
SHIPPED = SUITES / "traces" / "breakout_a2c_policy_seed1_4000.npz"


def _case(trace_file: Path, frames: int, seed: int = 1, checkpoint: Path = CHECKPOINT) -> Case:
    return Case("trace", "policy", {"checkpoint": str(checkpoint), "seed": seed, "frames": frames,
                                    "trace_file": str(trace_file), "simulator": "gpu_env"})


def test_the_shipped_policy_trace_is_the_checkpoints_play() -> None:
    trace = load(SHIPPED)
    actions = trace.header["actions"]
    assert actions["kind"] == "policy"
    assert actions["env_seed"] == 1
    assert trace.header["initial_reset"] == 1
    minimal = {0, 1, 3, 4}  # Breakout's minimal set as full-set indices: the policy's four actions
    assert set(np.unique(trace.action).tolist()) <= minimal


def test_one_changed_action_fails_at_that_frame(tmp_path: Path) -> None:
    trace = load(SHIPPED)
    action = trace.action.copy()
    action[1000] = 3 if action[1000] != 3 else 4  # frame 1001: RIGHT instead of LEFT/FIRE (or the reverse)
    path = dataclasses.replace(trace, action=action).save(tmp_path / "changed.npz")
    result = run_case(_case(path, 4000), tmp_path)
    assert result.outcome is Outcome.FAILED
    assert result.details["first_divergence"] == 1001
    assert "ram" in result.message


def test_recorded_with_other_seeds_it_replays_on_gpu_env_for_its_whole_length(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "seed2.npz"
    assert main(["conformance", "record", "--checkpoint", str(CHECKPOINT), "--frames", "600", "--seed", "2",
                 "--out", str(out), "--json"]) == 0
    line = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert line["frames"] == 600
    result = run_case(_case(out, 600, seed=2), tmp_path)
    assert result.outcome is Outcome.PASSED, result.message
    assert result.message == "600 frames identical on gpu_env (600 recorded)"


@pytest.mark.slow
@pytest.mark.parametrize("seed", [3, 4])
def test_full_length_policy_traces_of_other_seeds_replay_on_gpu_env(tmp_path: Path, seed: int) -> None:
    case = Case("trace", "policy", {"checkpoint": str(CHECKPOINT), "seed": seed, "frames": 4000,
                                    "simulator": "gpu_env"})
    result = run_case(case, tmp_path)  # records the checkpoint's play on ale-py, then replays it
    assert result.outcome is Outcome.PASSED, result.message


def test_a_trace_is_evidence_only_for_its_own_checkpoint_and_play(tmp_path: Path) -> None:
    other = tmp_path / "other_ckpt"
    shutil.copytree(CHECKPOINT, other)
    weights = bytearray((other / "policy.safetensors").read_bytes())
    weights[-1] ^= 1
    (other / "policy.safetensors").write_bytes(bytes(weights))
    result = run_case(_case(SHIPPED, 4000, checkpoint=other), tmp_path)
    assert result.outcome is Outcome.FAILED
    assert "record the trace again from this checkpoint" in result.message
    random = run_case(_case(SUITES / "traces" / "breakout_seed1_2000.npz", 2000), tmp_path)
    assert random.outcome is Outcome.FAILED
    assert "not a policy's play" in random.message
