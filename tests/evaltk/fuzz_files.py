"""Real files to mutate in the fuzz tests: a tiny trained-format APPO checkpoint and score tables.

The checkpoint is a real :class:`trainers.appo.network.ActorCritic` (hidden and GRU size 8) for the
ViZDoom ``basic`` scenario, saved with :func:`evaltk.checkpoint.save` as the trainer saves it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import torch

from evaltk.checkpoint import SPEC_FILE, WEIGHTS_FILE, CheckpointSpec, save

_BASIC_ENV: dict[str, Any] = {
    "family": "doom", "env_id": "basic", "kwargs": {},
    "preprocessing": {"name": "basic", "cfg": "basic.cfg", "buttons": ["MOVE_LEFT", "MOVE_RIGHT", "ATTACK"],
                      "action_heads": [{"name": "action", "options": [[], [["MOVE_LEFT", 1.0]],
                                                                      [["MOVE_RIGHT", 1.0]], [["ATTACK", 1.0]]]}],
                      "map": None, "frameskip": 4, "resolution": "RES_160X120", "obs_size": [72, 128],
                      "measurements": [], "reward_scale": 0.01, "reward_shaping": {}, "bots": 0, "timelimit": None,
                      "episode_timeout": None, "skill": None, "game_args": "", "true_objective": None,
                      "obs_layout": "CHW", "interpolation": "bilinear"},
}


def tiny_policy_checkpoint(directory: Path) -> Path:
    """Save a tiny real APPO policy for Doom ``basic`` under ``directory``; return the checkpoint path."""
    from trainers.appo.model import MODEL_CLASS
    from trainers.appo.network import build_model, model_kwargs

    torch.manual_seed(0)
    model = build_model({"obs_shape": [3, 72, 128], "action_nvec": [4], "hidden_size": 8, "rnn_size": 8})
    spec = CheckpointSpec(model_class=MODEL_CLASS, model_kwargs=model_kwargs(model),
                          obs_spec={"shape": [3, 72, 128], "dtype": "uint8", "layout": "CHW"},
                          action_spec={"type": "discrete", "n": 4}, env=_BASIC_ENV,
                          provenance={"trainer": "tests", "seed": 0})
    return save(directory, spec, model.state_dict())


def read_doc(ckpt: Path) -> dict[str, Any]:
    """Return the parsed ``policy.json`` of ``ckpt``."""
    data: dict[str, Any] = json.loads((ckpt / SPEC_FILE).read_text())
    return data


def write_doc(ckpt: Path, data: Any) -> None:
    """Write ``data`` as ``policy.json`` of ``ckpt`` (NaN written as the bare literal, as a careless tool would)."""
    (ckpt / SPEC_FILE).write_text(json.dumps(data))


def weights_path(ckpt: Path) -> Path:
    """Return the weights file of ``ckpt``."""
    return ckpt / WEIGHTS_FILE


