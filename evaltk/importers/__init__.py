"""Import other libraries' checkpoints (Stable-Baselines3, CleanRL, Sample Factory) into evaltk's format.

Nothing is unpickled.

:func:`import_checkpoint` reads a foreign file with :mod:`evaltk.importers.safe_pickle` (an
allow-list interpreter of pickle opcodes), rebuilds the network as an
:class:`~evaltk.importers.nets.ImportedPolicy` layer program, derives the evaltk env spec of the
preprocessing the library trained with, and writes an evaltk checkpoint directory
(``policy.safetensors`` + ``policy.json``). What the reference env cannot reproduce exactly is
listed in ``env.not_equivalent`` and ``provenance.import.caveats``. :func:`resolve_foreign_checkpoint`
is the hook ``evaltk evaluate`` calls: a foreign file becomes a cached evaltk checkpoint. Formats and
caveats are documented in ``docs/importers.md``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evaltk.importers.errors import ForeignCheckpointError, RefusedPickleError
from evaltk.registry import Registry

if TYPE_CHECKING:  # common imports torch: loaded only when a foreign file is read (not for builtins)
    from evaltk.importers.common import Imported

__all__ = [
    "FORMATS",
    "IMPORTERS",
    "ForeignCheckpointError",
    "ImportCaveats",
    "Importer",
    "RefusedPickleError",
    "detect_format",
    "import_caveats",
    "import_checkpoint",
    "read_foreign",
    "recorded_caveats",
    "resolve_foreign_checkpoint",
]


@dataclass(frozen=True)
class Importer:
    """A checkpoint format evaltk imports: what users pass, how it is recognised, what converts it.

    ``files``: the format's files as messages name them (``SB3 .zip``); ``detect(path)``: whether ``path`` (a
    file or folder) is of the format, cheaply; ``load(path, env_id, script)``: the converted checkpoint
    (``script``: CleanRL's, None elsewhere), importing the format's module (and torch) only then.
    """

    files: str
    detect: Callable[[Path], bool]
    load: Callable[[Path, str | None, str | None], Imported]


IMPORTERS: Registry[Importer] = Registry("checkpoint format", ForeignCheckpointError)
"""The formats, by ``--format`` name; :func:`detect_format` tries them in registration order."""
FORMATS = IMPORTERS.keys()
"""The ``--format`` names (a live view of :data:`IMPORTERS`)."""


def _head(path: Path) -> bytes:
    with open(path, "rb") as fh:
        return fh.read(4)


def _is_sb3(path: Path) -> bool:
    if not path.is_file() or not _head(path).startswith(b"PK"):
        return False
    from evaltk.importers.sb3 import is_sb3_zip

    return is_sb3_zip(path.read_bytes())


def _load_sb3(path: Path, env_id: str | None, script: str | None) -> Imported:
    from evaltk.importers import sb3

    return sb3.load(path, env_id=env_id)


def _is_sample_factory(path: Path) -> bool:
    if path.is_dir():
        return any(path.glob("checkpoint_p*/checkpoint_*.pth")) or any(path.glob("checkpoint_*.pth"))
    return path.is_file() and path.name.startswith("checkpoint_") and path.suffix == ".pth"


def _load_sample_factory(path: Path, env_id: str | None, script: str | None) -> Imported:
    from evaltk.importers import sample_factory

    return sample_factory.load(path, env_id=env_id)


def _is_cleanrl(path: Path) -> bool:
    """Recognise a zip that is not SB3's (tried after it), or a state-dict file by its suffix."""
    return path.is_file() and (_head(path).startswith(b"PK") or path.suffix in (".cleanrl_model", ".pt", ".pth"))


def _load_cleanrl(path: Path, env_id: str | None, script: str | None) -> Imported:
    """Load a flax msgpack file (CleanRL's JAX scripts) or a torch state dict (its PyTorch scripts)."""
    from evaltk.importers import cleanrl, cleanrl_jax

    if cleanrl_jax.is_msgpack_file(path):
        return cleanrl_jax.load(path, env_id=env_id, script=script)
    return cleanrl.load(path, env_id=env_id, script=script)


IMPORTERS.register("sb3", Importer("SB3 .zip", _is_sb3, _load_sb3))
IMPORTERS.register("sample-factory", Importer("Sample Factory run folder or checkpoint_*.pth",
                                              _is_sample_factory, _load_sample_factory))
IMPORTERS.register("cleanrl", Importer("CleanRL .cleanrl_model", _is_cleanrl, _load_cleanrl))


def accepted_files() -> str:
    """Name every format's files, for messages: ``SB3 .zip, Sample Factory run folder (...), CleanRL ...``."""
    return ", ".join(importer.files for importer in IMPORTERS.values())


def detect_format(path: Path) -> str | None:
    """Return the format of a foreign checkpoint (the first of :data:`IMPORTERS` that recognises it), else None.

    An evaltk checkpoint directory (with ``policy.json``) and names that are not paths give None.
    """
    if path.is_dir() and (path / "policy.json").exists():
        return None
    for name, importer in IMPORTERS.items():
        if importer.detect(path):
            return name
    return None


def read_foreign(path: str | Path, *, fmt: str | None = None, env_id: str | None = None,
                 script: str | None = None) -> Imported:
    """Read and convert a foreign checkpoint (format detected when ``fmt`` is None); nothing is written."""
    where = Path(path)
    found = fmt or detect_format(where)
    if found is None:
        if not where.exists():
            raise ForeignCheckpointError(f"{where} does not exist: pass another library's checkpoint "
                                         f"({accepted_files()})")
        raise ForeignCheckpointError(f"{where} is not a checkpoint format evaltk imports: pass --format "
                                     f"{'|'.join(FORMATS)} ({accepted_files()})")
    if found not in IMPORTERS:
        raise IMPORTERS.unknown(found, label="--format")
    return IMPORTERS[found].load(where, env_id, script)


def import_checkpoint(path: str | Path, out: str | Path, *, fmt: str | None = None, env_id: str | None = None,
                      script: str | None = None, actions: str | None = None,
                      origin: dict[str, Any] | None = None) -> tuple[Path, Imported]:
    """Convert the foreign checkpoint ``path`` and write it as the evaltk checkpoint directory ``out``.

    ``actions``: ``"greedy"`` (argmax) or ``"sample"`` (from the policy's softmax; not for Q-networks),
    None for the format's default (greedy; Sample Factory: sample, as its ``enjoy``, or greedy when the run's
    config sets ``eval_deterministic``), recorded in ``model_kwargs``
    (see :class:`~evaltk.importers.nets.ImportedPolicy`). ``origin``
    (where ``path`` was downloaded from, e.g. the Hub repo and commit) goes to ``provenance.import.origin``.
    """
    from evaltk.checkpoint import CheckpointSpec, default_provenance, save
    from evaltk.importers.nets import ACTION_MODES, MODEL_CLASS

    if actions is not None and actions not in ACTION_MODES:
        raise ForeignCheckpointError(f"actions {actions!r}: use one of {', '.join(ACTION_MODES)}")
    imported = read_foreign(path, fmt=fmt, env_id=env_id, script=script)
    actions = actions or imported.default_actions
    if actions == "sample" and imported.model_kwargs["head"] == "q":
        raise ForeignCheckpointError(f"{path} is a Q-network: its actions are greedy; drop --actions sample")
    env = {**imported.env.to_json(), "not_equivalent": list(imported.caveats)}
    provenance = default_provenance(trainer=f"imported from {imported.source['format']}",
                                    **{"import": {**imported.source, "caveats": list(imported.caveats),
                                                  **({"origin": origin} if origin else {})}})
    spec = CheckpointSpec(model_class=MODEL_CLASS, model_kwargs={**imported.model_kwargs, "actions": actions},
                          obs_spec=imported.obs_spec,
                          action_spec=imported.action_spec, env=env, provenance=provenance)
    return save(out, spec, imported.tensors), imported


def cache_dir() -> Path:
    """Where :func:`resolve_foreign_checkpoint` keeps imported checkpoints (``$XDG_CACHE_HOME/evaltk/imported``)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "evaltk" / "imported"


@dataclass(frozen=True)
class ImportCaveats:
    """What an imported checkpoint's library did that the reference env does not reproduce (``policy.json``)."""

    fmt: str
    """The library's format (``sb3``, ``cleanrl``, ``sample-factory``, ...)."""
    caveats: tuple[str, ...]
    """FIRE on reset, the wrappers it applied, ...: what :func:`import_checkpoint` recorded."""


def recorded_caveats(checkpoint: str | Path) -> ImportCaveats | None:
    """Return the caveats an evaltk checkpoint directory's ``policy.json`` records of its import, or None.

    None for a built-in name, a directory without ``policy.json`` or one that was not imported.
    """
    import json

    from evaltk.checkpoint_schema import MAX_SPEC_BYTES

    spec = Path(checkpoint) / "policy.json"
    try:
        if spec.stat().st_size > MAX_SPEC_BYTES:
            return None  # not a spec: loading the checkpoint refuses it with the loader's one line
        provenance = json.loads(spec.read_text(encoding="utf-8")).get("provenance") or {}
    except (OSError, ValueError, AttributeError, RecursionError):
        return None  # no spec, or a corrupt one (the loader refuses it, naming the file)
    return import_caveats(provenance) if isinstance(provenance, Mapping) else None


def resolve_foreign_checkpoint(ref: str, fmt: str | None = None, *, env_id: str | None = None,
                               actions: str | None = None) -> tuple[str, ImportCaveats | None]:
    """Return ``ref`` unchanged unless it is a foreign checkpoint; then import it into the cache and return that.

    With the path: the caveats its ``policy.json`` records of an import (:func:`recorded_caveats`; an imported
    checkpoint's, or an evaltk directory ``evaltk import`` wrote). ``actions``: ``greedy`` or ``sample`` (see
    :func:`import_checkpoint`; None: the format's default). The cache entry is keyed by the file's sha256, the
    format, ``env_id`` and ``actions``, so a changed file is re-imported. Builtins (``random``, ``builtin:...``)
    and evaltk directories pass through.
    """
    import hashlib

    path = Path(ref)
    found = fmt or (detect_format(path) if path.exists() else None)
    if found is None:
        return ref, recorded_caveats(ref)
    if found == "sample-factory":
        from evaltk.importers.sample_factory import checkpoint_file

        source = checkpoint_file(path)
    else:
        source = path
    if not source.is_file():
        raise ForeignCheckpointError(f"{source} is not a file: pass the {found} checkpoint file")
    digest = hashlib.sha256(source.read_bytes()).hexdigest()
    key = hashlib.sha256(f"{digest}|{found}|{env_id}{'' if actions is None else '|' + actions}".encode())
    target = cache_dir() / f"{path.stem}-{found}-{key.hexdigest()[:20]}"
    if not (target / "policy.json").exists():
        import_checkpoint(path, target, fmt=found, env_id=env_id, actions=actions)
    return str(target), recorded_caveats(target)


def import_caveats(provenance: Mapping[str, Any]) -> ImportCaveats | None:
    """Return the caveats of an imported checkpoint's ``provenance`` (``policy.json``); None if not imported.

    The caveats are what :func:`import_checkpoint` recorded: what the reference env does not reproduce of
    the library's training and evaluation (FIRE on reset, its wrappers, ...).
    """
    record = provenance.get("import")
    if not isinstance(record, Mapping):
        return None
    caveats = record.get("caveats")
    found = tuple(str(c) for c in caveats) if isinstance(caveats, list) else ()
    return ImportCaveats(str(record.get("format", "another library")), found)


def describe_import(imported: Imported) -> dict[str, Any]:
    """Return a JSON summary of an import (for ``evaltk import --json``)."""
    return {"source": imported.source, "env": imported.env.to_json(), "obs_spec": imported.obs_spec,
            "action_spec": imported.action_spec, "caveats": imported.caveats,
            "tensors": {k: list(v.shape) for k, v in imported.tensors.items()}}
