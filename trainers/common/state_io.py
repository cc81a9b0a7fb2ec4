"""Training-state files shared by the trainers: atomic JSON, optimizer state as flat tensors, checkpoints.

Optimizer state goes to safetensors (tensors) plus JSON (param groups), never to a pickle:
:func:`flatten_optimizer` turns ``optimizer.state_dict()`` into ``{"opt.<param>.<key>": tensor}`` and
the param groups; :func:`unflatten_optimizer` inverts it for ``optimizer.load_state_dict``.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
from safetensors import SafetensorError
from safetensors.torch import load_file, save_file

from evaltk.atomic import write_json_atomic
from evaltk.checkpoint import Checkpoint, CheckpointSpec
from evaltk.checkpoint import load as load_checkpoint
from evaltk.checkpoint import save as save_policy
from evaltk.errors import CheckpointError
from evaltk.policies import check_tensor_shapes


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


DIGEST_KEY = "train_state_sha256"
"""Key of ``train_state.json`` holding the hex SHA-256 of ``train_state.safetensors``."""


def file_sha256(path: Path) -> str:
    """Return the hex SHA-256 of the file at ``path``."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


LATEST = "latest.json"
"""The pointer file in a run's ``checkpoints/``: ``{"policy": <name>, "train": "<name>.train"}``."""


def write_train_state(ckpt_dir: Path, name: str, tensors: dict[str, torch.Tensor], meta: dict[str, Any],
                      keep: int) -> None:
    """Write checkpoint ``name``'s training state, point ``latest.json`` at it, keep the newest ``keep``.

    ``<name>.train/`` holds ``train_state.safetensors`` (``tensors``) and ``train_state.json`` (``meta`` plus
    :data:`DIGEST_KEY`: the SHA-256 of the safetensors file, checked by :func:`read_latest`); it is built in a
    temporary directory and renamed, and ``latest.json`` is replaced only afterwards, so an interrupted write
    leaves the previous checkpoint current. The policy directory ``<name>`` must
    exist already (written by :func:`evaltk.checkpoint.save`).
    """
    train_dir = ckpt_dir / f"{name}.train"
    tmp = Path(tempfile.mkdtemp(prefix=f".{name}.train.tmp-", dir=ckpt_dir))
    try:
        save_file({k: v.detach().cpu().contiguous() for k, v in tensors.items()}, str(tmp / "train_state.safetensors"))
        write_json_atomic(tmp / "train_state.json", {**meta, DIGEST_KEY: file_sha256(tmp / "train_state.safetensors")})
        if train_dir.exists():
            shutil.rmtree(train_dir)
        os.replace(tmp, train_dir)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    write_json_atomic(ckpt_dir / LATEST, {"policy": name, "train": f"{name}.train"})
    _prune(ckpt_dir, keep=keep, current=name)


def _prune(ckpt_dir: Path, keep: int, current: str) -> None:
    names = sorted(p.name for p in ckpt_dir.iterdir() if p.is_dir() and p.name.startswith("ckpt_")
                   and not p.name.endswith(".train"))
    for old in names[:-keep]:
        if old != current:
            shutil.rmtree(ckpt_dir / old, ignore_errors=True)
            shutil.rmtree(ckpt_dir / f"{old}.train", ignore_errors=True)


def latest_policy_path(run_dir: Path) -> Path | None:
    """Path of the newest complete policy checkpoint of the run in ``run_dir``, or None."""
    pointer = run_dir / "checkpoints" / LATEST
    if not pointer.is_file():
        return None
    return run_dir / "checkpoints" / str(json.loads(pointer.read_text(encoding="utf-8"))["policy"])


def read_latest(run_dir: Path) -> tuple[Checkpoint, dict[str, torch.Tensor], dict[str, Any]]:
    """Read the newest checkpoint of ``run_dir``: its policy, training-state tensors and metadata.

    Raises :class:`~evaltk.errors.CheckpointError` when there is none or it cannot be read (for
    ``--resume``: the message says how to go on).
    """
    pointer = run_dir / "checkpoints" / LATEST
    if not pointer.is_file():
        raise CheckpointError(f"--resume: {pointer} does not exist, so {run_dir} has no checkpoint to resume; "
                              "drop --resume to start a new run")
    try:
        names = json.loads(pointer.read_text(encoding="utf-8"))
        policy = load_checkpoint(run_dir / "checkpoints" / str(names["policy"]))
        train_dir = run_dir / "checkpoints" / str(names["train"])
        meta = json.loads((train_dir / "train_state.json").read_text(encoding="utf-8"))
        _check_digest(train_dir, meta)
        tensors = load_file(str(train_dir / "train_state.safetensors"))
    except (OSError, ValueError, KeyError, TypeError, SafetensorError) as exc:
        raise CheckpointError(f"--resume: the checkpoint named by {pointer} is unreadable ({exc}); "
                              "start a new run in another --out") from None
    return policy, tensors, meta


def _check_digest(train_dir: Path, meta: dict[str, Any]) -> None:
    """Refuse a ``train_state.safetensors`` whose SHA-256 differs from ``meta``'s; warn when none is recorded."""
    path = train_dir / "train_state.safetensors"
    want = meta.pop(DIGEST_KEY, None)
    if want is None:
        warnings.warn(f"--resume: {train_dir / 'train_state.json'} records no {DIGEST_KEY} (written by an older "
                      "version), so the training state cannot be checked for corruption; loading it unchecked",
                      stacklevel=3)
        return
    got = file_sha256(path)
    if got != want:
        raise CheckpointError(f"--resume: {path} is corrupted (SHA-256 {got[:12]}..., train_state.json records "
                              f"{str(want)[:12]}...); restore the file from a backup or start a new run in "
                              "another --out")


def write_run_config(run_dir: Path, sections: dict[str, Any], *, resumed_from_key: str,
                     resumed_from: int | None, **provenance: Any) -> None:
    """Write a run's ``config.json``: ``sections`` (the resolved config and the like), provenance, starts.

    Provenance is :func:`evaltk.checkpoint.default_provenance` (git hash, versions) plus ``provenance``,
    torch threads, host and CPU count. ``starts`` keeps every invocation across resumes: argv, UTC time
    and ``{resumed_from_key: resumed_from}``.
    """
    import platform
    import sys
    import time

    from evaltk.checkpoint import default_provenance

    path = run_dir / "config.json"
    history: list[dict[str, Any]] = []
    if path.is_file():
        history = json.loads(path.read_text(encoding="utf-8")).get("starts", [])
    history.append({"argv": sys.argv, "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                    resumed_from_key: resumed_from})
    data = {**sections,
            "provenance": default_provenance(**provenance, torch_threads=torch.get_num_threads(),
                                             host=platform.node(), cpus=os.cpu_count()),
            "starts": history}
    write_json_atomic(path, data)


def save_checkpoint(run_dir: Path, name: str, spec: CheckpointSpec, weights: dict[str, torch.Tensor],
                    optimizer: dict[str, Any], tensors: dict[str, torch.Tensor], meta: dict[str, Any],
                    keep: int) -> Path:
    """Write checkpoint ``name`` of the run in ``run_dir``: the policy, then its training state; returns the policy.

    The policy (``spec`` + ``weights``) goes to ``checkpoints/<name>/`` (:func:`evaltk.checkpoint.save`); the
    optimizer state (flattened, :func:`flatten_optimizer`), ``tensors`` and ``meta`` to ``<name>.train/``
    (:func:`write_train_state`, which moves ``latest.json`` and keeps the newest ``keep``).
    """
    ckpt_dir = run_dir / "checkpoints"
    ckpt_dir.mkdir(parents=True, exist_ok=True)
    policy_path = save_policy(ckpt_dir / name, spec, weights)
    opt_tensors, opt_meta = flatten_optimizer(optimizer)
    write_train_state(ckpt_dir, name, {**opt_tensors, **tensors}, {**meta, "optimizer": opt_meta}, keep=keep)
    return policy_path


def load_checkpoint_state(run_dir: Path) -> tuple[Checkpoint, dict[str, torch.Tensor], dict[str, Any],
                                                   dict[str, Any]]:
    """Read the newest checkpoint of ``run_dir``: (policy, training-state tensors, metadata, optimizer state).

    The inverse of :func:`save_checkpoint`; errors as :func:`read_latest`.
    """
    policy, tensors, meta = read_latest(run_dir)
    try:
        optimizer = unflatten_optimizer(tensors, meta["optimizer"])
    except (KeyError, TypeError, ValueError) as exc:
        raise CheckpointError(f"--resume: the optimizer state of {run_dir} is missing or mangled ({exc}); "
                              "start a new run in another --out") from None
    return policy, tensors, meta, optimizer


def model_from_checkpoint(ckpt: Checkpoint, build: Callable[[dict[str, Any]], Any]) -> Any:
    """Build a model with ``build(ckpt.spec.model_kwargs)``, check the stored tensor shapes, load the tensors.

    The model is built on torch's meta device and then given empty storage on the default device, so
    its initialisation, which the stored tensors overwrite, does not run (the A2C model's orthogonal
    initialisation of its FC layer alone took 70 ms). A model with state outside its state dict (a
    non-persistent buffer, a tensor attribute), which the tensors would not fill, or one the meta device
    cannot build is built for real.
    """
    device = torch.get_default_device()
    try:
        with torch.device("meta"):
            model = build(ckpt.spec.model_kwargs)
    except (NotImplementedError, RuntimeError):  # something the meta device cannot do: built for real below
        model = None
    if model is not None and _state_dict_is_whole(model):
        model = model.to_empty(device=device)
    else:
        model = build(ckpt.spec.model_kwargs)
    check_tensor_shapes(ckpt, model.tensor_shapes())
    model.load_state_dict(ckpt.tensors)
    return model


def _state_dict_is_whole(model: torch.nn.Module) -> bool:
    """Whether a full state dict sets every tensor ``model`` holds (no non-persistent buffer, no tensor attribute)."""
    saved = set(model.state_dict())
    held = {name for name, _ in model.named_parameters()} | {name for name, _ in model.named_buffers()}
    loose = any(isinstance(value, torch.Tensor) for module in model.modules() for value in vars(module).values())
    return held <= saved and not loose
