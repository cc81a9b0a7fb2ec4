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
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evaltk.importers.errors import ForeignCheckpointError, RefusedPickleError

if TYPE_CHECKING:  # common imports torch: loaded only when a foreign file is read (not for builtins)
    from evaltk.importers.common import Imported

FORMATS = ("sb3", "cleanrl", "sample-factory")

__all__ = ["FORMATS", "ForeignCheckpointError", "RefusedPickleError", "detect_format", "import_caveats",
           "import_checkpoint", "read_foreign", "resolve_foreign_checkpoint"]


def detect_format(path: Path) -> str | None:
    """Return ``"sb3"``, ``"cleanrl"`` or ``"sample-factory"`` for a foreign checkpoint, None for anything else.

    An evaltk checkpoint directory (with ``policy.json``) and names that are not paths give None.
    """
    if path.is_dir():
        if (path / "policy.json").exists():
            return None
        if any(path.glob("checkpoint_p*/checkpoint_*.pth")) or any(path.glob("checkpoint_*.pth")):
            return "sample-factory"
        return None
    if not path.is_file():
        return None
    if path.name.startswith("checkpoint_") and path.suffix == ".pth":
        return "sample-factory"
    with open(path, "rb") as fh:
        head = fh.read(4)
    if head.startswith(b"PK"):
        from evaltk.importers.sb3 import is_sb3_zip

        return "sb3" if is_sb3_zip(path.read_bytes()) else "cleanrl"
    if path.suffix in (".cleanrl_model", ".pt", ".pth"):
        return "cleanrl"
    return None


def read_foreign(path: str | Path, *, fmt: str | None = None, env_id: str | None = None,
                 script: str | None = None) -> Imported:
    """Read and convert a foreign checkpoint (format detected when ``fmt`` is None); nothing is written."""
    where = Path(path)
    found = fmt or detect_format(where)
    if found is None:
        if not where.exists():
            raise ForeignCheckpointError(f"{where} does not exist: pass an SB3 .zip, a CleanRL .cleanrl_model or a "
                                         "Sample Factory experiment folder")
        raise ForeignCheckpointError(f"{where} is not a checkpoint format evaltk imports: pass --format "
                                     f"{'|'.join(FORMATS)} (SB3 .zip, CleanRL .cleanrl_model, Sample Factory "
                                     "checkpoint_*.pth)")
    if found == "sb3":
        from evaltk.importers import sb3

        return sb3.load(where, env_id=env_id)
    if found == "cleanrl":
        from evaltk.importers import cleanrl

        return cleanrl.load(where, env_id=env_id, script=script)
    if found == "sample-factory":
        from evaltk.importers import sample_factory

        return sample_factory.load(where, env_id=env_id)
    raise ForeignCheckpointError(f"unknown --format {found!r}: use one of {', '.join(FORMATS)}")


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
    env = {**imported.env, "not_equivalent": list(imported.caveats)}
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


def resolve_foreign_checkpoint(ref: str, fmt: str | None = None, *, env_id: str | None = None,
                               actions: str | None = None) -> str:
    """Return ``ref`` unchanged unless it is a foreign checkpoint; then import it into the cache and return that.

    ``actions``: ``greedy`` or ``sample`` (see :func:`import_checkpoint`; None: the format's default). The
    cache entry is keyed by the file's sha256, the format, ``env_id`` and ``actions``, so a changed file is
    re-imported. Builtins (``random``, ``builtin:...``) and evaltk directories pass through.
    """
    import hashlib

    path = Path(ref)
    found = fmt or (detect_format(path) if path.exists() else None)
    if found is None:
        return ref
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
    return str(target)


def import_caveats(provenance: Mapping[str, Any]) -> tuple[str, list[str]] | None:
    """Return ``(format, caveats)`` of an imported checkpoint's ``provenance`` (``policy.json``); None if not imported.

    The caveats are what :func:`import_checkpoint` recorded: what the reference env does not reproduce of
    the library's training and evaluation (FIRE on reset, its wrappers, ...).
    """
    record = provenance.get("import")
    if not isinstance(record, Mapping):
        return None
    caveats = record.get("caveats")
    found = [str(c) for c in caveats] if isinstance(caveats, list) else []
    return str(record.get("format", "another library")), found


def describe_import(imported: Imported) -> dict[str, Any]:
    """Return a JSON summary of an import (for ``evaltk import --json``)."""
    return {"source": imported.source, "env": imported.env, "obs_spec": imported.obs_spec,
            "action_spec": imported.action_spec, "caveats": imported.caveats,
            "tensors": {k: list(v.shape) for k, v in imported.tensors.items()}}
