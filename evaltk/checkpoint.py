"""Self-describing policy checkpoints: a directory with ``policy.safetensors`` + ``policy.json``.

``policy.json`` holds a :class:`CheckpointSpec` (format version, model class and kwargs,
observation/action spec, the env id with its settings and the full preprocessing spec needed to
rebuild the reference environment, provenance) and, from format version 2, the size and sha256 of
``policy.safetensors``. ``policy.safetensors`` holds the weights (no tensors for built-in policies,
which have a spec only). Loading never unpickles: JSON is parsed with :mod:`json` and tensors with
:mod:`safetensors`, and :func:`load` checks, before building any tensor, the spec against the one
schema of :mod:`evaltk.checkpoint_schema`, the weights against the recorded digest, and the
safetensors header's ``format_version``; then every tensor's dtype (floating point) and values
(finite). Format-1 checkpoints (no digest) still load, with a :class:`~evaltk.errors.CheckpointWarning`:
refusing them would strand every run folder written before the digest existed, and everything but
byte-level corruption is still caught; re-saving adds the digest. Writes are atomic: everything is
written into a temporary directory next to the target, fsynced, then renamed into place.

The format is documented for users in ``docs/evaluation.md``.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import shutil
import subprocess
import tempfile
import time
import warnings
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evaltk.checkpoint_schema import MAX_SPEC_BYTES, MAX_WEIGHTS_BYTES, SUPPORTED_VERSIONS, check_spec
from evaltk.envs.spec import ENV_KEYS, EnvSpec
from evaltk.errors import CheckpointError, CheckpointWarning

if TYPE_CHECKING:  # torch is imported lazily: built-in policies and the CLI start faster without it
    import torch

FORMAT_VERSION: int = 2
"""The version :func:`save` writes. Version 2 added the weights digest (``weights.sha256`` in ``policy.json``)."""
SPEC_FILE = "policy.json"
WEIGHTS_FILE = "policy.safetensors"
#: dtypes a policy tensor may have: weights and normaliser statistics are floating point.
WEIGHT_DTYPES = ("float16", "bfloat16", "float32", "float64")
_MAX_HEADER_BYTES = 100 << 20
_SPEC_FIELDS = ("format_version", "model_class", "model_kwargs", "obs_spec", "action_spec", "env", "provenance")


@dataclass(frozen=True)
class CheckpointSpec:
    """The contents of ``policy.json``; schema-checked once, when built or read (raises :class:`CheckpointError`).

    ``model_class`` is ``"builtin:<name>"`` or ``"<module>:<Class>"`` with a module under ``evaltk.``
    or ``trainers.``; the class provides ``from_checkpoint(ckpt, device) -> Policy``.
    ``obs_spec``: ``{"shape": [...], "dtype": "uint8", "layout": "SHW"}`` (the batch dim is not
    included). ``action_spec``: ``{"type": "discrete", "n": 4}`` or
    ``{"type": "multi_discrete", "nvec": [3, 3, 2]}``. ``env``: the env spec's JSON form, ``{"family", "env_id",
    "kwargs", "preprocessing"}`` (:attr:`env_spec` reads it; see :mod:`evaltk.envs.atari`), with notes such as an
    imported checkpoint's ``not_equivalent`` beside it. ``provenance``: free-form (trainer, git hash, versions,
    env_frames, created, seed, ...).
    """

    model_class: str
    model_kwargs: dict[str, Any]
    obs_spec: dict[str, Any]
    action_spec: dict[str, Any]
    env: dict[str, Any]
    provenance: dict[str, Any] = field(default_factory=dict)
    format_version: int = FORMAT_VERSION

    def __post_init__(self) -> None:
        if not isinstance(self.env, Mapping):
            raise CheckpointError(f"CheckpointSpec env is of type {type(self.env).__name__}, not the env JSON object: "
                                  "pass env=ENV.to_json() (an EnvSpec's JSON form)")
        check_spec(self.to_dict(), weights_required=False)
        _ = self.env_spec  # read here, where the document is checked: later reads of the attribute call nothing

    @cached_property
    def env_spec(self) -> EnvSpec:
        """The env the policy was trained on: ``env`` as an :class:`~evaltk.envs.spec.EnvSpec`, notes dropped.

        Read once, when the spec is built or loaded; not a field (``to_dict`` and equality are the JSON's).
        """
        return EnvSpec.from_json({k: v for k, v in self.env.items() if k in ENV_KEYS}, "policy.json env")

    @property
    def is_builtin(self) -> bool:
        """True for ``builtin:<name>`` policies (no tensors)."""
        return self.model_class.startswith("builtin:")

    def to_dict(self) -> dict[str, Any]:
        """Return the JSON-ready dict of the spec (``format_version`` first; no ``weights`` digest)."""
        data = asdict(self)
        return {"format_version": data.pop("format_version"), **data}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CheckpointSpec:
        """Build a spec from a parsed ``policy.json``; raises :class:`CheckpointError` if it breaks the schema.

        The ``weights`` digest, if present, is checked for form here and against the file by :func:`load`.
        """
        check_spec(data)
        return _checked_spec(data)


def _checked_spec(data: Mapping[str, Any]) -> CheckpointSpec:
    """Return the spec of ``data``, a document that has just passed the schema (:meth:`CheckpointSpec.from_dict`).

    Sets the fields as the dataclass constructor would, without its second schema check; the public
    constructor always checks.
    """
    spec = object.__new__(CheckpointSpec)
    for name in _SPEC_FIELDS:
        object.__setattr__(spec, name, data[name])
    _ = spec.env_spec  # as the constructor does: read at the JSON edge, once
    return spec


@dataclass(frozen=True)
class Checkpoint:
    """A loaded checkpoint: where it came from (None for builtins), its spec and its tensors (CPU)."""

    path: Path | None
    spec: CheckpointSpec
    tensors: dict[str, torch.Tensor]


def _fsync_path(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _check_dtype(name: str, tensor: torch.Tensor, where: str) -> None:
    dtype = str(tensor.dtype).removeprefix("torch.")
    if dtype not in WEIGHT_DTYPES:
        raise CheckpointError(f"{where}: tensor {name!r} has dtype {dtype}; policy tensors must be one of "
                              f"{', '.join(WEIGHT_DTYPES)} (store counters as float64)")


def save(directory: str | Path, spec: CheckpointSpec, tensors: Mapping[str, torch.Tensor]) -> Path:
    """Write ``spec`` and ``tensors`` as a checkpoint directory, atomically; returns its path.

    ``policy.json`` gets ``format_version`` :data:`FORMAT_VERSION` and the weights digest
    (``{"weights": {"sha256": ..., "bytes": ...}}`` of ``policy.safetensors``), which :func:`load`
    checks. Tensors must be floating point (:data:`WEIGHT_DTYPES`). The files are written into a
    temporary directory in the same parent, fsynced, and renamed onto ``directory``. An existing
    checkpoint (or empty directory) there is replaced; any other existing path raises
    :class:`CheckpointError` rather than being overwritten.
    """
    import torch
    from safetensors.torch import save as save_bytes

    target = Path(directory)
    if target.exists() and not (target.is_dir() and (not any(target.iterdir()) or (target / SPEC_FILE).exists())):
        raise CheckpointError(f"{target} exists and is not a checkpoint directory: choose another path")
    for name, tensor in tensors.items():
        if not isinstance(name, str) or not isinstance(tensor, torch.Tensor):
            raise CheckpointError(f"tensors must map names to torch.Tensor, got {name!r}: {type(tensor).__name__}")
        _check_dtype(name, tensor, f"cannot save {target}")
    plain = {k: v.detach().to("cpu").contiguous() for k, v in tensors.items()}
    payload = save_bytes(plain, metadata={"format_version": str(FORMAT_VERSION)})
    document = {**spec.to_dict(), "format_version": FORMAT_VERSION,
                "weights": {"sha256": hashlib.sha256(payload).hexdigest(), "bytes": len(payload)}}
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.tmp-", dir=target.parent))
    try:
        with open(tmp / SPEC_FILE, "w", encoding="utf-8") as fh:
            json.dump(document, fh, indent=2, sort_keys=False, allow_nan=False)
            fh.write("\n")
            fh.flush()
            os.fsync(fh.fileno())
        with open(tmp / WEIGHTS_FILE, "wb") as fh:
            fh.write(payload)
            fh.flush()
            os.fsync(fh.fileno())
        _fsync_path(tmp)
        old: Path | None = None
        if target.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{target.name}.old-", dir=target.parent))
            os.replace(target, old / "ckpt")
        os.replace(tmp, target)
        _fsync_path(target.parent)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return target


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _read_spec(path: Path) -> tuple[CheckpointSpec, dict[str, Any]]:
    """Read ``policy.json`` of checkpoint directory ``path`` (size-limited; NaN/Infinity refused) into its spec.

    Returns the spec (:meth:`CheckpointSpec.from_dict`: the schema checked once) and the document (with the
    ``weights`` digest :func:`load` checks the weights file against).
    """
    if not path.exists():
        raise CheckpointError(f"checkpoint directory {path} does not exist: pass a directory holding "
                              f"{SPEC_FILE} and {WEIGHTS_FILE} (or builtin:random / builtin:scripted)")
    if not path.is_dir():
        raise CheckpointError(f"checkpoint {path} is a file, not a directory: pass the directory that holds "
                              f"{SPEC_FILE} and {WEIGHTS_FILE}")
    spec_path = path / SPEC_FILE
    if not spec_path.is_file():
        raise CheckpointError(f"{spec_path} is missing: a checkpoint directory needs {SPEC_FILE} and "
                              f"{WEIGHTS_FILE}; re-export it with evaltk.checkpoint.save")
    try:
        if spec_path.stat().st_size > MAX_SPEC_BYTES:
            raise CheckpointError(f"{spec_path} is over {MAX_SPEC_BYTES >> 20} MiB: it is not a policy spec "
                                  "(a real one is a few KiB); re-export the checkpoint")
        data = json.loads(spec_path.read_text(encoding="utf-8"), parse_constant=_refuse_constant)
    except OSError as exc:
        raise CheckpointError(f"cannot read {spec_path}: {exc.strerror}") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise CheckpointError(f"{spec_path} is not valid JSON ({exc}): the file is corrupt; "
                              "re-export the checkpoint") from None
    except RecursionError:
        raise CheckpointError(f"{spec_path} is nested too deeply to be a policy spec: the file is corrupt; "
                              "re-export the checkpoint") from None
    try:
        return CheckpointSpec.from_dict(data), dict(data)
    except CheckpointError as exc:
        raise CheckpointError(f"{spec_path}: {exc}") from None


def load_spec(directory: str | Path) -> CheckpointSpec:
    """Read and check only ``policy.json`` of a checkpoint directory (see :mod:`evaltk.checkpoint_schema`)."""
    return _read_spec(Path(directory))[0]


def _read_weights(weights: Path, document: Mapping[str, Any]) -> bytes:
    """Return the bytes of ``weights``, checked against the digest in ``document`` (warn if it has none)."""
    if not weights.is_file():
        raise CheckpointError(f"{weights} is missing: a checkpoint directory needs {SPEC_FILE} and "
                              f"{WEIGHTS_FILE}; re-export it with evaltk.checkpoint.save")
    size = weights.stat().st_size
    if size > MAX_WEIGHTS_BYTES:
        raise CheckpointError(f"{weights} is {size} bytes, over the {MAX_WEIGHTS_BYTES >> 30} GiB limit for "
                              "policy weights")
    recorded = document.get("weights")
    if recorded is not None and size != recorded["bytes"]:
        raise CheckpointError(f"{weights} is not a valid safetensors file for this checkpoint: it is {size} bytes but "
                              f"{SPEC_FILE} records {recorded['bytes']} (truncated or replaced); re-export the "
                              "checkpoint")
    try:
        payload = weights.read_bytes()
    except OSError as exc:
        raise CheckpointError(f"cannot read {weights}: {exc.strerror}") from None
    if recorded is None:
        warnings.warn(CheckpointWarning(
            f"{weights.parent} is a format-{document['format_version']} checkpoint without a weights digest, so a "
            "corrupted byte in its weights cannot be detected; re-save it with evaltk.checkpoint.save "
            "(load + save) to add one"), stacklevel=3)
    elif hashlib.sha256(payload).hexdigest() != recorded["sha256"]:
        raise CheckpointError(f"{weights} does not match the sha256 recorded in {SPEC_FILE}: the weights are "
                              "corrupt or were changed after saving; re-export the checkpoint")
    return payload


def _check_header(weights: Path, payload: bytes, version: int) -> None:
    """Check the safetensors header of ``payload``: well-formed, and a known ``format_version`` in its metadata."""
    bad = f"{weights} is not a valid safetensors file"
    if len(payload) < 8:
        raise CheckpointError(f"{bad} (only {len(payload)} bytes): the file is corrupt; re-export the checkpoint")
    length = int.from_bytes(payload[:8], "little")
    if length > min(len(payload) - 8, _MAX_HEADER_BYTES):
        raise CheckpointError(f"{bad} (header length {length} exceeds the file): the file is corrupt; "
                              "re-export the checkpoint")
    try:
        header = json.loads(payload[8:8 + length].decode("utf-8"), parse_constant=_refuse_constant)
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        raise CheckpointError(f"{bad} (header: {exc}): the file is corrupt; re-export the checkpoint") from None
    meta = header.get("__metadata__") if isinstance(header, dict) else None
    found = meta.get("format_version") if isinstance(meta, dict) else None
    if found is None and version == 1:
        return
    known = [str(v) for v in SUPPORTED_VERSIONS]
    if found not in known or found != str(version):
        raise CheckpointError(f"{weights} has format_version {found!r} in its safetensors metadata, but "
                              f"{SPEC_FILE} says {version} (this evaltk reads {', '.join(known)}): the files do "
                              "not belong together or come from an unknown evaltk; re-export the checkpoint")


def _check_tensors(weights: Path, tensors: Mapping[str, torch.Tensor]) -> None:
    import torch

    for name, tensor in tensors.items():
        _check_dtype(name, tensor, str(weights))
        if not bool(torch.isfinite(tensor).all()):
            raise CheckpointError(f"{weights}: tensor {name!r} holds NaN or infinite values; the weights are "
                                  "corrupt (or training diverged): use an earlier checkpoint")


def load(directory: str | Path) -> Checkpoint:
    """Load a checkpoint directory (never unpickles). Tensors are returned on the CPU.

    In order, before any tensor is built: ``policy.json`` is read (at most 4 MiB, no NaN) and
    checked against the schema of :mod:`evaltk.checkpoint_schema`; ``policy.safetensors`` is checked
    against the recorded size and sha256 (format 1 has no digest: a :class:`CheckpointWarning` says
    so) and its header's ``format_version``. Then every tensor must be floating point and finite.
    Any failure raises :class:`CheckpointError` naming the file.
    """
    from safetensors import SafetensorError
    from safetensors.torch import load as load_bytes

    path = Path(directory)
    spec, document = _read_spec(path)
    weights = path / WEIGHTS_FILE
    payload = _read_weights(weights, document)
    _check_header(weights, payload, spec.format_version)
    try:
        tensors = load_bytes(payload)
    except (SafetensorError, OSError, ValueError, RuntimeError) as exc:
        raise CheckpointError(f"{weights} is not a valid safetensors file ({exc}): the file is corrupt; "
                              "re-export the checkpoint") from None
    _check_tensors(weights, tensors)
    return Checkpoint(path=path, spec=spec, tensors=dict(tensors))


def _git_hash() -> str | None:
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=Path(__file__).resolve().parent,
                             capture_output=True, text=True, timeout=5, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None if out.returncode == 0 else None


def default_provenance(**extra: Any) -> dict[str, Any]:
    """Return provenance fields every checkpoint should carry (time, git hash, versions) plus ``extra``."""
    import ale_py
    import gymnasium
    import numpy

    from evaltk import __version__, installed_versions

    prov: dict[str, Any] = {
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "git_hash": _git_hash(),
        "versions": {"evaltk": __version__, "python": platform.python_version(),
                     "torch": installed_versions(["torch"])["torch"], "numpy": numpy.__version__,
                     "gymnasium": gymnasium.__version__, "ale_py": ale_py.__version__},
    }
    prov.update(extra)
    return prov
