"""The training state and models rebuilt from checkpoints.

The state's digest is checked at ``--resume`` (a corrupted state is refused, an old one warns); a model from a
checkpoint (:func:`~trainers.common.state_io.model_from_checkpoint`) holds its tensors and skips initialisation.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from evaltk.checkpoint import Checkpoint
from evaltk.checkpoint import load as load_checkpoint
from evaltk.errors import CheckpointError
from trainers.appo import checkpointing
from trainers.appo.config import AppoConfig
from trainers.appo.runner import build_model
from trainers.appo.scenario import resolve_scenario
from trainers.common.state_io import DIGEST_KEY, file_sha256, model_from_checkpoint

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


A2C_CHECKPOINT = ROOT / "suites" / "checkpoints" / "a2c_breakout"


def test_a_model_from_a_checkpoint_holds_its_tensors_and_skips_the_initialisation() -> None:
    from trainers.a2c.model import build_model as build_a2c

    ckpt = load_checkpoint(A2C_CHECKPOINT)
    before = torch.get_rng_state()
    model = model_from_checkpoint(ckpt, build_a2c)
    assert torch.equal(torch.get_rng_state(), before)  # no initialisation drew from torch's generator
    state = model.state_dict()
    assert state.keys() == ckpt.tensors.keys()
    assert all(torch.equal(state[k], v) and state[k].device.type == "cpu" for k, v in ckpt.tensors.items())


class _Held(torch.nn.Module):
    """A layer plus state the checkpoint does not carry: a non-persistent buffer or a tensor attribute."""

    def __init__(self, kind: str) -> None:
        super().__init__()
        self.layer = torch.nn.Linear(3, 2)
        if kind == "buffer":
            self.register_buffer("scale", torch.full((3,), 7.0), persistent=False)
        elif kind == "attribute":
            self.scale = torch.full((3,), 7.0)
        else:  # "meta-hostile": reads a tensor's data, which the meta device cannot (no state outside the dict)
            self.count = int(torch.ones(3).sum().item())

    def tensor_shapes(self) -> dict[str, list[int]]:
        return {k: list(v.shape) for k, v in self.state_dict().items()}


@pytest.mark.parametrize("kind", ["buffer", "attribute", "meta-hostile"])
def test_state_outside_the_state_dict_is_built_for_real(kind: str) -> None:
    tensors = {"layer.weight": torch.arange(6.0).reshape(2, 3), "layer.bias": torch.tensor([1.0, -1.0])}
    ckpt = Checkpoint(A2C_CHECKPOINT, load_checkpoint(A2C_CHECKPOINT).spec, tensors)
    model = model_from_checkpoint(ckpt, lambda kwargs: _Held(kind))
    assert torch.equal(model.layer.weight, tensors["layer.weight"])
    if kind == "meta-hostile":
        assert model.count == 3
    else:
        assert torch.equal(model.scale, torch.full((3,), 7.0))
