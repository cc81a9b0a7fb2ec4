"""The file discipline every evaltk trace follows (Atari and Doom): one checked ``.npz`` per recording.

A trace file is a zip of ``.npy`` arrays (loaded with ``allow_pickle=False``): ``header`` (UTF-8 JSON as
``uint8[n]``) and one array per recorded field, all with the same length along the first axis. The
header carries ``format`` and ``version``, the declared length under a count key (``frames`` or
``tics``) and ``digest`` (``"sha256:<hex>"`` of the header without it and of every field array, in the
declared field order, see :func:`content_digest`).

:func:`save` writes a file atomically; :func:`read` checks everything (the zip, the format and version,
every array's dtype and shape, the declared length and the digest) and names the file and the problem
in a :class:`TraceError` otherwise. A file of the other trace format is named as such, with the case
kind that reads it.
"""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
import zlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from evaltk.atomic import write_bytes_atomic
from evaltk.errors import SuiteError

_ZIP_MAGIC = b"PK\x03\x04"
#: Every trace format evaltk writes -> what it is and the suite case kind that reads it.
KNOWN_FORMATS: dict[str, str] = {
    "evaltk-trace": 'an Atari trace of ale-py (suite kind "trace")',
    "evaltk-doom-trace": 'a ViZDoom trace (suite kind "doom_trace")',
}


class TraceError(SuiteError):
    """A trace file is missing, corrupt, tampered with, of another kind or of an unknown format version."""


@dataclass(frozen=True)
class Layout:
    """One trace format: its name, version, count key and per-step fields.

    ``fields`` maps a name to ``(dtype, tail)``; ``tail`` is the shape after the step axis, where ``-1``
    accepts any size (e.g. the number of buttons of a Doom scenario).
    """

    format: str
    version: int
    count_key: str
    fields: Mapping[str, tuple[str, tuple[int, ...]]]
    how_to_record: str


def content_digest(header: Mapping[str, Any], arrays: Mapping[str, np.ndarray],
                   fields: Mapping[str, Any]) -> str:
    """Return ``"sha256:<hex>"`` of the header (sorted JSON, no ``digest``) and of every array in ``fields`` order."""
    h = hashlib.sha256(json.dumps({k: v for k, v in header.items() if k != "digest"}, sort_keys=True).encode())
    for name in fields:
        a = np.ascontiguousarray(arrays[name])
        h.update(f"{name}:{a.dtype.str}:{a.shape}".encode())
        h.update(a.tobytes())
    return "sha256:" + h.hexdigest()


def save(path: str | Path, layout: Layout, header: Mapping[str, Any], arrays: Mapping[str, np.ndarray]) -> Path:
    """Write ``arrays`` with ``header`` (plus the step count and the digest) atomically; return the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    count = int(next(iter(arrays.values())).shape[0])
    full = {**header, layout.count_key: count}
    full["digest"] = content_digest(full, arrays, layout.fields)
    raw = np.frombuffer(json.dumps(full, sort_keys=True).encode(), dtype=np.uint8)
    buffer = io.BytesIO()
    np.savez_compressed(buffer, allow_pickle=False, header=raw, **{n: arrays[n] for n in layout.fields})
    write_bytes_atomic(path, buffer.getvalue())
    return path


def read_header(path: str | Path, layout: Layout) -> dict[str, Any]:
    """Return the header of ``path`` after the checks of :func:`read` that need no frame data."""
    return read(path, layout)[0]


def read(path: str | Path, layout: Layout) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """Read and check a trace of ``layout``; return ``(header without digest, arrays)`` or raise :class:`TraceError`."""
    path = Path(path)
    if not path.is_file():
        what = "is a directory" if path.is_dir() else "does not exist"
        raise TraceError(f"trace file {path} {what}: {layout.how_to_record}")
    header, arrays = _read_members(path, layout)
    fmt, version = header.get("format"), header.get("version")
    other = _kind_problem(path, fmt, layout)
    if other is not None:
        raise TraceError(other)
    if fmt != layout.format or version != layout.version:
        raise TraceError(f"trace file {path} has format {fmt!r} version {version!r}; this evaltk reads "
                         f"{layout.format!r} version {layout.version} (with a step count and a digest): "
                         f"{layout.how_to_record}")
    for name, (dtype, tail) in layout.fields.items():
        a = arrays[name]
        fits = a.ndim == 1 + len(tail) and all(w in (-1, n) for w, n in zip(tail, a.shape[1:], strict=True))
        if a.dtype != np.dtype(dtype) or not fits:
            dims = "".join(f", {n}" if n >= 0 else ", *" for n in tail)
            want = f"{dtype}[T{dims}]"
            raise TraceError(f"trace file {path}: array {name!r} is {a.dtype}{list(a.shape)}, expected {want}")
    lengths = {name: int(arrays[name].shape[0]) for name in layout.fields}
    if len(set(lengths.values())) != 1:
        raise TraceError(f"trace file {path} has arrays of different lengths {lengths}; {layout.how_to_record}")
    declared = header.get(layout.count_key)
    count = next(iter(lengths.values()))
    if isinstance(declared, bool) or not isinstance(declared, int) or declared != count:
        raise TraceError(f"trace file {path}: the header declares {layout.count_key}={declared!r} but the arrays "
                         f"hold {count}: the file was cut or edited; {layout.how_to_record}")
    digest = content_digest(header, arrays, layout.fields)
    if header.get("digest") != digest:
        raise TraceError(f"trace file {path}: content digest {header.get('digest')!r} does not match the content "
                         f"({digest}): the file was modified or damaged; {layout.how_to_record}")
    return {k: v for k, v in header.items() if k != "digest"}, {n: arrays[n] for n in layout.fields}


def _read_members(path: Path, layout: Layout) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise TraceError(f"trace file {path} cannot be read ({exc.strerror or exc})") from exc
    if not data:
        raise TraceError(f"trace file {path} is empty (0 bytes): {layout.how_to_record}")
    if not data.startswith(_ZIP_MAGIC):
        raise TraceError(f"trace file {path} is not an evaltk trace: a trace is a .npz (zip) archive, this file "
                         f"starts with bytes {data[:8].hex()}; {layout.how_to_record}")
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as npz:
            missing = sorted({"header", *layout.fields} - set(npz.files))
            if missing:
                other = _other_kind(path, npz, layout) if "header" in npz.files else None
                raise TraceError(other or f"trace file {path} lacks the arrays {missing}: not a complete trace; "
                                 f"{layout.how_to_record}")
            raw = np.asarray(npz["header"])
            arrays = {name: np.asarray(npz[name]) for name in layout.fields}
    except TraceError:
        raise
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError, ValueError, KeyError, RuntimeError,
            NotImplementedError) as exc:  # RuntimeError: an encrypted member; NotImplementedError: a compression method
        raise TraceError(f"trace file {path} is truncated or corrupt ({type(exc).__name__}: {exc}): "
                         f"{layout.how_to_record}") from exc
    if raw.dtype != np.uint8 or raw.ndim != 1:
        raise TraceError(f"trace file {path}: the header is {raw.dtype}[{raw.shape}], not UTF-8 JSON bytes")
    try:
        header = json.loads(raw.tobytes().decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise TraceError(f"trace file {path}: the header is not UTF-8 JSON ({exc}); {layout.how_to_record}") from exc
    if not isinstance(header, dict):
        raise TraceError(f"trace file {path}: the header is a JSON {type(header).__name__}, not an object")
    return header, arrays


def _kind_problem(path: Path, fmt: Any, layout: Layout) -> str | None:
    """Return the message for a file of another known trace format, or None."""
    if fmt == layout.format or fmt not in KNOWN_FORMATS:
        return None
    return (f"trace file {path} is {KNOWN_FORMATS[str(fmt)]}, not {KNOWN_FORMATS[layout.format]}: "
            "use the case kind that reads it, or record the right kind of trace")


def _other_kind(path: Path, npz: Any, layout: Layout) -> str | None:
    """Return :func:`_kind_problem` for an archive whose header names another format (None if unreadable)."""
    try:
        header = json.loads(np.asarray(npz["header"]).tobytes().decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, ValueError, OSError, zlib.error, zipfile.BadZipFile, EOFError):
        return None
    return _kind_problem(path, header.get("format"), layout) if isinstance(header, dict) else None
