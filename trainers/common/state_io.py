"""Training-state files shared by the trainers: atomic JSON writes and optimizer state as flat tensors.

Optimizer state goes to safetensors (tensors) plus JSON (param groups), never to a pickle:
:func:`flatten_optimizer` turns ``optimizer.state_dict()`` into ``{"opt.<param>.<key>": tensor}`` and
the param groups; :func:`unflatten_optimizer` inverts it for ``optimizer.load_state_dict``.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

import torch


def write_json_atomic(path: Path, data: dict[str, Any]) -> None:
    """Write ``data`` as JSON to ``path`` through a synced temporary file and a rename (never half-written)."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        json.dump(data, fh, indent=2)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def flatten_optimizer(state: dict[str, Any]) -> tuple[dict[str, torch.Tensor], dict[str, Any]]:
    """``optimizer.state_dict()`` -> (tensors named ``opt.<param index>.<key>``, ``{"param_groups": ...}``)."""
    tensors: dict[str, torch.Tensor] = {}
    for idx, per_param in state["state"].items():
        for key, value in per_param.items():
            tensors[f"opt.{idx}.{key}"] = value if isinstance(value, torch.Tensor) else torch.tensor(value)
    return tensors, {"param_groups": state["param_groups"]}


def unflatten_optimizer(tensors: dict[str, torch.Tensor], meta: dict[str, Any]) -> dict[str, Any]:
    """Invert :func:`flatten_optimizer`: a state dict for ``optimizer.load_state_dict``."""
    per: dict[int, dict[str, torch.Tensor]] = {}
    for name, value in tensors.items():
        if name.startswith("opt."):
            _, idx, key = name.split(".", 2)
            per.setdefault(int(idx), {})[key] = value
    return {"state": per, "param_groups": meta["param_groups"]}
