"""Self-describing policy checkpoints: a directory with ``policy.safetensors`` + ``policy.json``.

``policy.json`` holds a :class:`CheckpointSpec` (format version, model class and kwargs,
observation/action spec, the env id with its settings and the full preprocessing spec needed to
rebuild the reference environment, provenance). ``policy.safetensors`` holds the weights (an empty
file for built-in policies, which have a spec and no tensors). Loading never unpickles: JSON is
parsed with :mod:`json` and tensors with :mod:`safetensors`. Writes are atomic: everything is
written into a temporary directory next to the target, fsynced, then renamed into place.

The format is documented for users in ``docs/evaluation.md``.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import subprocess
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evaltk.errors import CheckpointError

if TYPE_CHECKING:  # torch is imported lazily: built-in policies and the CLI start faster without it
    import torch

FORMAT_VERSION: int = 1
SPEC_FILE = "policy.json"
WEIGHTS_FILE = "policy.safetensors"
_SPEC_KEYS = ("model_class", "model_kwargs", "obs_spec", "action_spec", "env", "provenance")
_ACTION_TYPES = ("discrete", "multi_discrete")


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _check_obs_spec(obs_spec: Any) -> None:
    if not isinstance(obs_spec, dict):
        raise CheckpointError(f"obs_spec must be a JSON object, got {obs_spec!r}; "
                              'write e.g. {"shape": [4, 84, 84], "dtype": "uint8", "layout": "SHW"}')
    shape = obs_spec.get("shape")
    if not isinstance(shape, list) or not shape or not all(_is_int(d) and d > 0 for d in shape):
        raise CheckpointError(f"obs_spec.shape must be a non-empty list of positive ints, got {shape!r}")
    if not isinstance(obs_spec.get("dtype"), str):
        raise CheckpointError(f"obs_spec.dtype must be a numpy dtype name such as 'uint8', "
                              f"got {obs_spec.get('dtype')!r}")


def _check_action_spec(action_spec: Any) -> None:
    if not isinstance(action_spec, dict) or action_spec.get("type") not in _ACTION_TYPES:
        raise CheckpointError(f"action_spec must be {{'type': 'discrete', 'n': N}} or "
                              f"{{'type': 'multi_discrete', 'nvec': [...]}}, got {action_spec!r}")
    if action_spec["type"] == "discrete":
        n: Any = action_spec.get("n")
        if not (_is_int(n) and n > 0):
            raise CheckpointError(f"action_spec.n must be a positive int, got {n!r}")
    else:
        nvec: Any = action_spec.get("nvec")
        if not isinstance(nvec, list) or not nvec or not all(_is_int(v) and v > 0 for v in nvec):
            raise CheckpointError(f"action_spec.nvec must be a non-empty list of positive ints, got {nvec!r}")


def _check_env(env: Any) -> None:
    if not isinstance(env, dict):
        raise CheckpointError(f"env must be a JSON object with 'family' and 'env_id', got {env!r}")
    for key in ("family", "env_id"):
        if not isinstance(env.get(key), str) or not env[key]:
            raise CheckpointError(f"env.{key} must be a non-empty string, got {env.get(key)!r} "
                                  "(e.g. family 'atari', env_id 'ALE/Breakout-v5')")
    for key in ("kwargs", "preprocessing"):
        if not isinstance(env.get(key, {}), dict):
            raise CheckpointError(f"env.{key} must be a JSON object, got {env.get(key)!r}")


@dataclass(frozen=True)
class CheckpointSpec:
    """The contents of ``policy.json``; validated on construction (raises :class:`CheckpointError`).

    ``model_class`` is ``"builtin:<name>"`` or ``"<module>:<Class>"`` with a module under ``evaltk.``
    or ``trainers.``; the class provides ``from_checkpoint(ckpt, device) -> Policy``.
    ``obs_spec``: ``{"shape": [...], "dtype": "uint8", "layout": "SHW"}`` (the batch dim is not
    included). ``action_spec``: ``{"type": "discrete", "n": 4}`` or
    ``{"type": "multi_discrete", "nvec": [3, 3, 2]}``. ``env``: ``{"family", "env_id", "kwargs",
    "preprocessing"}`` (see :mod:`evaltk.envs.atari`). ``provenance``: free-form (trainer, git hash,
    versions, env_frames, created, seed, ...).
    """

    model_class: str
    model_kwargs: dict[str, Any]
    obs_spec: dict[str, Any]
    action_spec: dict[str, Any]
    env: dict[str, Any]
    provenance: dict[str, Any] = field(default_factory=dict)
    format_version: int = FORMAT_VERSION

    def __post_init__(self) -> None:
        if self.format_version != FORMAT_VERSION:
            raise CheckpointError(
                f"checkpoint format_version {self.format_version!r} is not supported; this evaltk reads "
                f"version {FORMAT_VERSION}: re-export the checkpoint with a matching evaltk")
        if not isinstance(self.model_class, str) or ":" not in self.model_class:
            raise CheckpointError(f"model_class must be 'builtin:<name>' or '<module>:<Class>', "
                                  f"got {self.model_class!r}")
        if not isinstance(self.model_kwargs, dict):
            raise CheckpointError(f"model_kwargs must be a JSON object, got {self.model_kwargs!r}")
        if not isinstance(self.provenance, dict):
            raise CheckpointError(f"provenance must be a JSON object, got {self.provenance!r}")
        _check_obs_spec(self.obs_spec)
        _check_action_spec(self.action_spec)
        _check_env(self.env)

    @property
    def is_builtin(self) -> bool:
        """True for ``builtin:<name>`` policies (no tensors)."""
        return self.model_class.startswith("builtin:")

    def to_dict(self) -> dict[str, Any]:
        """Return the JSON-ready dict written to ``policy.json`` (``format_version`` first)."""
        data = asdict(self)
        return {"format_version": data.pop("format_version"), **data}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CheckpointSpec:
        """Build a spec from a parsed ``policy.json``; raises :class:`CheckpointError` if it is malformed."""
        if not isinstance(data, Mapping):
            raise CheckpointError(f"policy.json must hold a JSON object, got {type(data).__name__}")
        version = data.get("format_version")
        if version != FORMAT_VERSION:
            raise CheckpointError(
                f"policy.json has format_version {version!r}, this evaltk reads version {FORMAT_VERSION}: "
                "re-export the checkpoint with a matching evaltk (or upgrade evaltk)")
        missing = [k for k in _SPEC_KEYS if k not in data]
        if missing:
            raise CheckpointError(f"policy.json lacks the field(s) {', '.join(missing)}: "
                                  "re-export the checkpoint with evaltk.checkpoint.save")
        unknown = sorted(set(data) - {*_SPEC_KEYS, "format_version"})
        if unknown:
            raise CheckpointError(f"policy.json has unknown field(s) {', '.join(unknown)}: "
                                  "remove them or upgrade evaltk")
        return cls(format_version=version, **{k: data[k] for k in _SPEC_KEYS})


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


def save(directory: str | Path, spec: CheckpointSpec, tensors: Mapping[str, torch.Tensor]) -> Path:
    """Write ``spec`` and ``tensors`` as a checkpoint directory, atomically; returns its path.

    The files are written into a temporary directory in the same parent, fsynced, and renamed onto
    ``directory``. An existing checkpoint (or empty directory) there is replaced; any other existing
    path raises :class:`CheckpointError` rather than being overwritten.
    """
    import torch
    from safetensors.torch import save_file

    target = Path(directory)
    if target.exists() and not (target.is_dir() and (not any(target.iterdir()) or (target / SPEC_FILE).exists())):
        raise CheckpointError(f"{target} exists and is not a checkpoint directory: choose another path")
    for name, tensor in tensors.items():
        if not isinstance(name, str) or not isinstance(tensor, torch.Tensor):
            raise CheckpointError(f"tensors must map names to torch.Tensor, got {name!r}: {type(tensor).__name__}")
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.tmp-", dir=target.parent))
    try:
        with open(tmp / SPEC_FILE, "w", encoding="utf-8") as fh:
            json.dump(spec.to_dict(), fh, indent=2, sort_keys=False)
            fh.write("\n")
            fh.flush()
            os.fsync(fh.fileno())
        plain = {k: v.detach().to("cpu").contiguous() for k, v in tensors.items()}
        save_file(plain, str(tmp / WEIGHTS_FILE), metadata={"format_version": str(FORMAT_VERSION)})
        _fsync_path(tmp / WEIGHTS_FILE)
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


def load_spec(directory: str | Path) -> CheckpointSpec:
    """Read and validate only ``policy.json`` of a checkpoint directory."""
    path = Path(directory)
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
        data = json.loads(spec_path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise CheckpointError(f"{spec_path} is not valid JSON ({exc}): the file is corrupt; "
                              "re-export the checkpoint") from None
    try:
        return CheckpointSpec.from_dict(data)
    except TypeError as exc:
        raise CheckpointError(f"{spec_path} is malformed ({exc}): re-export the checkpoint") from None


def load(directory: str | Path) -> Checkpoint:
    """Load a checkpoint directory (never unpickles). Tensors are returned on the CPU.

    Raises :class:`CheckpointError` for a missing directory or file, corrupt JSON or safetensors,
    an unsupported ``format_version`` or a malformed spec.
    """
    from safetensors import SafetensorError
    from safetensors.torch import load_file

    path = Path(directory)
    spec = load_spec(path)
    weights = path / WEIGHTS_FILE
    if not weights.is_file():
        raise CheckpointError(f"{weights} is missing: a checkpoint directory needs {SPEC_FILE} and "
                              f"{WEIGHTS_FILE}; re-export it with evaltk.checkpoint.save")
    try:
        tensors = load_file(str(weights), device="cpu")
    except (SafetensorError, OSError, ValueError) as exc:
        raise CheckpointError(f"{weights} is not a valid safetensors file ({exc}): the file is corrupt; "
                              "re-export the checkpoint") from None
    return Checkpoint(path=path, spec=spec, tensors=dict(tensors))


def check_tensor_shapes(ckpt: Checkpoint, expected: Mapping[str, Sequence[int]]) -> None:
    """Check that ``ckpt`` holds exactly the tensors in ``expected`` with those shapes.

    Models call this from ``from_checkpoint`` with the shapes their ``model_kwargs`` imply; a mismatch
    raises :class:`CheckpointError` naming the tensor, the expected and the found shape.
    """
    where = ckpt.path if ckpt.path is not None else ckpt.spec.model_class
    missing = sorted(set(expected) - set(ckpt.tensors))
    if missing:
        raise CheckpointError(f"checkpoint {where} lacks tensor(s) {', '.join(missing)} that "
                              f"{ckpt.spec.model_class} with model_kwargs {ckpt.spec.model_kwargs} needs")
    extra = sorted(set(ckpt.tensors) - set(expected))
    if extra:
        raise CheckpointError(f"checkpoint {where} has unexpected tensor(s) {', '.join(extra)} for "
                              f"{ckpt.spec.model_class}: it was saved by a different model")
    for name, shape in expected.items():
        found = tuple(ckpt.tensors[name].shape)
        if found != tuple(shape):
            raise CheckpointError(
                f"checkpoint {where}: tensor {name!r} has shape {list(found)}, expected {list(shape)} from "
                f"model_kwargs {ckpt.spec.model_kwargs}: the weights do not match the declared model")


def _git_hash() -> str | None:
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=Path(__file__).resolve().parent,
                             capture_output=True, text=True, timeout=5, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None if out.returncode == 0 else None


def _version(dist: str) -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(dist)
    except PackageNotFoundError:
        return None


def default_provenance(**extra: Any) -> dict[str, Any]:
    """Return provenance fields every checkpoint should carry (time, git hash, versions) plus ``extra``."""
    import ale_py
    import gymnasium
    import numpy

    from evaltk import __version__

    prov: dict[str, Any] = {
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "git_hash": _git_hash(),
        "versions": {"evaltk": __version__, "python": platform.python_version(), "torch": _version("torch"),
                     "numpy": numpy.__version__, "gymnasium": gymnasium.__version__, "ale_py": ale_py.__version__},
    }
    prov.update(extra)
    return prov
