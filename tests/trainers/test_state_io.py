"""The training state's digest: checked at ``--resume``; a corrupted state is refused, an old one warns."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from evaltk.errors import CheckpointError
from trainers.appo import checkpointing
from trainers.appo.config import AppoConfig
from trainers.appo.runner import build_model
from trainers.appo.scenario import resolve_scenario
from trainers.common.state_io import DIGEST_KEY, file_sha256

ROOT = Path(__file__).resolve().parents[2]
TINY = {"num_workers": 1, "envs_per_worker": 2, "rollout": 8, "batch_size": 16, "obs_height": 36, "obs_width": 64,
        "hidden_size": 32, "rnn_size": 32}


def _saved_run(run_dir: Path) -> Path:
    """Write one APPO checkpoint pair into ``run_dir``; return its ``.train`` directory."""
    cfg = AppoConfig(out=str(run_dir), **TINY)  # type: ignore[arg-type]
    scenario = resolve_scenario(cfg)
    model = build_model(cfg, scenario)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    torch.stack([p.square().sum() for p in model.parameters()]).sum().backward()  # type: ignore[no-untyped-call]
    optimizer.step()
    state = checkpointing.TrainState(train_step=3, env_frames=96, train_seconds=1.0, resumes=0,
                                     optimizer=optimizer.state_dict(), torch_rng=torch.get_rng_state(),
                                     sampler_rng=torch.Generator().manual_seed(1).get_state())
    checkpointing.save(run_dir, cfg, scenario, model, state)
    (train_dir,) = (run_dir / "checkpoints").glob("*.train")
    return train_dir


def test_the_digest_is_recorded_and_checked(tmp_path: Path) -> None:
    train_dir = _saved_run(tmp_path)
    meta = json.loads((train_dir / "train_state.json").read_text())
    assert meta[DIGEST_KEY] == file_sha256(train_dir / "train_state.safetensors")
    _, state = checkpointing.load_latest(tmp_path)
    assert state.train_step == 3


def test_a_corrupted_state_is_refused(tmp_path: Path) -> None:
    train_dir = _saved_run(tmp_path)
    data = bytearray((train_dir / "train_state.safetensors").read_bytes())
    data[-5] ^= 0x40  # inside the last tensor's bytes: still a valid safetensors file
    (train_dir / "train_state.safetensors").write_bytes(bytes(data))
    with pytest.raises(CheckpointError, match="corrupted"):
        checkpointing.load_latest(tmp_path)


def test_a_state_without_digest_loads_with_a_warning(tmp_path: Path) -> None:
    train_dir = _saved_run(tmp_path)
    meta = json.loads((train_dir / "train_state.json").read_text())
    del meta[DIGEST_KEY]
    (train_dir / "train_state.json").write_text(json.dumps(meta))
    with pytest.warns(UserWarning, match=DIGEST_KEY):
        _, state = checkpointing.load_latest(tmp_path)
    assert state.env_frames == 96


def test_resume_of_a_corrupted_state_is_one_error_line(tmp_path: Path) -> None:
    train_dir = _saved_run(tmp_path / "run")
    data = bytearray((train_dir / "train_state.safetensors").read_bytes())
    data[-5] ^= 0x40
    (train_dir / "train_state.safetensors").write_bytes(bytes(data))
    flags = [f"--{k.replace('_', '-')}={v}" for k, v in TINY.items()]
    proc = subprocess.run([sys.executable, "-m", "trainers.appo", "--out", str(tmp_path / "run"), "--resume",
                           "--serial", *flags], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2, proc.stderr
    (line,) = proc.stderr.strip().splitlines()
    assert line.startswith("error: --resume:")
    assert "corrupted" in line
