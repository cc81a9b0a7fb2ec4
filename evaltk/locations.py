"""Checkpoint locations (``docs/hub.md``): every command turns what the user typed into a local checkpoint here.

A location is a local path (an evaltk checkpoint directory, or another library's checkpoint that
:mod:`evaltk.importers` converts into its cache), a built-in policy (``random``, ``builtin:NAME``),
or ``hf://ORG/REPO[@REVISION][/PATH]`` on the Hugging Face Hub (:mod:`evaltk.hub`). :func:`resolve`
returns the evaltk checkpoint directory (or built-in name) the loaders read, and the label score
tables record: for the Hub, ``hf://ORG/REPO@<commit sha>[/PATH]`` naming the exact checkpoint (the
same label reads back offline from the cache); :func:`local_checkpoint` the same with the directory
made absolute, for other processes; :func:`anchor` takes a relative path from a given folder (a suite
file's). :func:`pin` gives that label alone, and
:func:`table_provenance` the provenance score tables and reports record for it. A name that is none of these
gets one message wherever it was typed (:func:`not_a_checkpoint`: the close built-in names, then every form a
location takes); :func:`check` gives it without fetching or importing anything.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evaltk import hub
from evaltk.errors import CheckpointError
from evaltk.importers import ImportCaveats
from evaltk.registry import did_you_mean


@dataclass(frozen=True)
class Located:
    """Where a location's checkpoint lies here, before any import.

    ``path``: the local path (or built-in name) as found; ``fmt``: the Hub checkpoint's format
    (``evaltk``, ``sb3``, ``cleanrl``, ``sample-factory``; None for local paths: the importers
    detect it); ``env_id``: the env id the Hub repo's metadata names; ``label``: what tables record;
    ``source``: the Hub record (:meth:`evaltk.hub.HubCheckpoint.provenance`), None for local paths;
    ``provenance``: :func:`table_provenance` of the label.
    """

    path: str
    label: str
    fmt: str | None = None
    env_id: str | None = None
    source: dict[str, Any] | None = None
    provenance: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Resolved:
    """A resolved location: ``ref`` (an evaltk checkpoint directory or a built-in name), ``label``, ``source``.

    ``provenance`` is :func:`table_provenance` of the label: what score tables record for it.
    """

    ref: str
    label: str
    source: dict[str, Any] | None = None
    provenance: dict[str, Any] = field(default_factory=dict)
    caveats: ImportCaveats | None = None
    """What the checkpoint's library did that the reference env does not reproduce (an imported checkpoint)."""


def locate(ref: str) -> Located:
    """Find ``ref``'s checkpoint on this machine: a Hub location is fetched into the Hub cache, others pass through."""
    if not hub.is_hub(ref):
        return Located(ref, ref)
    found = hub.fetch(ref)
    return Located(str(found.local), str(found.pinned), found.fmt, found.env_id, found.provenance(),
                   table_provenance(str(found.pinned)))


def not_a_checkpoint(ref: str, *, what: str = "checkpoint") -> CheckpointError:
    """Return the error for ``ref``, which names no checkpoint: the close built-in names, then every accepted form.

    ``what`` names the input in the message (``checkpoint``, ``agent``).
    """
    from evaltk.importers import accepted_files
    from evaltk.policies import BUILTINS

    if Path(ref).exists():
        head = f"{what} {ref!r} is neither an evaltk checkpoint directory (no policy.json) nor another library's"
    else:
        head = f"{what} {ref!r} is not a built-in policy, a file or folder here, or an hf:// location"
    return CheckpointError(f"{head}: {did_you_mean(ref.removeprefix('builtin:'), BUILTINS)}pass a built-in "
                           f"({', '.join(BUILTINS)}; also as builtin:NAME), an evaltk checkpoint directory (with "
                           f"policy.json), another library's checkpoint ({accepted_files()}) or "
                           "hf://ORG/REPO[@REVISION][/PATH]")


def check(ref: str, *, what: str = "checkpoint") -> None:
    """Refuse ``ref`` (:func:`not_a_checkpoint`) unless it can name a checkpoint; nothing is fetched or imported.

    Accepted: an existing path, a registered built-in (``NAME`` or ``builtin:NAME``) or ``hf://...``.
    """
    from evaltk.policies import BUILTINS

    name = ref.removeprefix("builtin:")
    if Path(ref).exists() or name in BUILTINS or hub.is_hub(ref):
        return
    raise not_a_checkpoint(ref, what=what)


def resolve(ref: str, *, fmt: str | None = None, env_id: str | None = None, actions: str | None = None) -> Resolved:
    """Resolve ``ref`` to a local evaltk checkpoint (importing another library's file into the cache).

    ``fmt`` forces an importer format; ``env_id`` (the user's ``--env-id``) wins over the one the
    Hub repo's metadata names; ``actions`` (``greedy``/``sample``) is how an imported policy acts, refused
    for anything but another library's checkpoint. Bad locations raise
    :class:`~evaltk.errors.CheckpointError` subclasses (a name that is no path, built-in or ``hf://``:
    :func:`not_a_checkpoint`).
    """
    from evaltk.importers import ForeignCheckpointError, resolve_foreign_checkpoint

    where = locate(ref)
    foreign = not (where.fmt == "evaltk" and fmt is None)
    local, caveats = resolve_foreign_checkpoint(where.path, fmt or where.fmt, env_id=env_id or where.env_id,
                                                actions=actions) if foreign else (where.path, None)
    if local == where.path and not Path(local).exists():  # a built-in, or a name that is nothing
        check(ref)
    if actions is not None and local == where.path:
        raise ForeignCheckpointError(f"--deterministic/--stochastic choose how another library's checkpoint acts; "
                                     f"{where.label} is not one (an evaltk checkpoint's policy.json fixes it, e.g. "
                                     "evaltk import --actions): drop the option")
    return Resolved(local, where.label, where.source, where.provenance, caveats)


def is_remote(ref: str) -> bool:
    """Return True when ``ref`` names a checkpoint :func:`locate` fetches (``hf://``), not a path on this machine."""
    return hub.is_hub(ref)


def local_checkpoint(ref: str, *, actions: str | None = None) -> Resolved:
    """Return :func:`resolve` of ``ref`` with ``ref`` made an absolute directory (other processes read it too).

    Built-in names (``random``, ``builtin:NAME``) pass through unresolved, as the players and loaders take them.
    ``actions`` applies to another library's checkpoint and is ignored for the others (a tournament's agents mix
    them).
    """
    from evaltk.importers import detect_format
    from evaltk.policies import builtin_name

    if builtin_name(ref) is not None:
        return Resolved(ref, ref)
    if actions is not None:
        where = locate(ref)
        foreign = where.fmt not in (None, "evaltk") or (where.fmt is None and detect_format(Path(where.path)))
        actions = actions if foreign else None
    found = resolve(ref, actions=actions)
    return Resolved(str(Path(found.ref).resolve()), found.label, found.source, found.provenance, found.caveats)


def anchor(ref: str, folder: Path) -> str:
    """Return ``ref`` with a relative local path taken from ``folder`` (made absolute).

    Built-in names (``random``, ``builtin:NAME``), ``hf://`` locations and absolute paths are returned as they are.
    A suite file's checkpoint fields go through here, so that a suite runs the same from any working folder.
    """
    from evaltk.policies import builtin_name

    if builtin_name(ref) is not None or is_remote(ref) or Path(ref).is_absolute():
        return ref
    return str((folder / ref).resolve())


def pin(ref: str) -> str:
    """Return the label tables record for ``ref``: ``hf://ORG/REPO@SHA[/PATH]`` for the Hub, else ``ref`` itself."""
    return str(hub.fetch(ref).pinned) if hub.is_hub(ref) else ref


def table_provenance(label: str) -> dict[str, Any]:
    """Return the provenance a score table, its summary and reports record for the checkpoint ``label``.

    A Hub label gives ``{"checkpoint": {"source": "hf", "repo": ..., "revision": <commit sha>, "path": ...}}``
    (the manifest's ``provenance`` field, :func:`evaltk.evaluation.scores.open_table`); a local path or builtin ``{}``.
    """
    if not hub.is_hub(label):
        return {}
    where = hub.parse(label)
    return {"checkpoint": {"source": "hf", "repo": where.repo, "revision": where.revision, "path": where.path}}
