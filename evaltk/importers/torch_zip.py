"""Open a ``torch.save`` file (the zip format torch writes since 1.6, or a plain pickle) without unpickling.

The zip holds ``<prefix>/data.pkl``, ``<prefix>/data/<key>`` storages, ``<prefix>/byteorder`` and
``<prefix>/version``. Each entry's size is checked before it is read, each storage's size against what
``data.pkl`` declares, and the pickle itself is interpreted by :mod:`evaltk.importers.safe_pickle`'s
allow-list (never by ``pickle`` or ``torch.load``).
"""

from __future__ import annotations

import io
import zipfile
from typing import Any

import torch

from evaltk.importers.errors import ForeignCheckpointError
from evaltk.importers.safe_pickle import MAX_PICKLE_BYTES, Storage, itemsize, read_pickle

MAX_STORAGE_BYTES = 8 << 30
"""Largest total of tensor storages read from one file (8 GiB)."""


def _zip_prefix(names: list[str], name: str) -> str:
    pkl = [n for n in names if n.endswith("/data.pkl") and n.count("/") == 1]
    if len(pkl) != 1:
        raise ForeignCheckpointError(f"{name} is a zip file but not a torch checkpoint (it has {len(pkl)} "
                                     "<prefix>/data.pkl entries, a torch.save file has one)")
    return pkl[0].removesuffix("data.pkl")


def _read_member(zf: zipfile.ZipFile, info: zipfile.ZipInfo, limit: int, name: str) -> bytes:
    if info.file_size > limit:
        raise ForeignCheckpointError(f"{name}: zip entry {info.filename} is {info.file_size} bytes, over the "
                                     f"{limit} bytes allowed")
    data = zf.read(info)
    if len(data) != info.file_size:
        raise ForeignCheckpointError(f"{name}: zip entry {info.filename} is truncated")
    return data


def read_torch(data: bytes, *, name: str) -> Any:
    """Return the object in the ``torch.save`` bytes ``data`` (zip format, or a plain pickle), never unpickling.

    Raises :class:`RefusedPickleError` for a disallowed object and :class:`ForeignCheckpointError` for
    a malformed file (a storage whose zip entry is not ``numel * itemsize`` bytes, a big-endian file,
    a view outside its storage, ...).
    """
    if not data.startswith(b"PK"):
        if data[:1] == b"\x80" and data[2:12] == b"\x8a\x0a\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8":
            raise ForeignCheckpointError(f"{name} uses torch's legacy (pre-1.6) format, which is not read: re-save "
                                         "it with torch.save in a current torch")
        return read_pickle(data, name=name)
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            return _read_zip(zf, name)
    except ForeignCheckpointError:
        raise
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, EOFError, ValueError, NotImplementedError,
            KeyError, RuntimeError, OverflowError) as exc:
        raise ForeignCheckpointError(f"{name} is not a readable zip file ({type(exc).__name__}: {str(exc)[:100]}): "
                                     "the file is corrupt or truncated") from None
    except Exception as exc:  # zlib.error and other decompressor errors have no common base
        raise ForeignCheckpointError(f"{name} is not a readable zip file ({type(exc).__name__}): the file is "
                                     "corrupt or truncated") from None


def _read_zip(zf: zipfile.ZipFile, name: str) -> Any:
    infos = {i.filename: i for i in zf.infolist()}
    prefix = _zip_prefix(list(infos), name)
    order = infos.get(prefix + "byteorder")
    if order is not None and _read_member(zf, order, 16, name).strip() not in (b"little", b""):
        raise ForeignCheckpointError(f"{name} was written on a big-endian machine, which is not read: re-save it "
                                     "on a little-endian one")
    budget = [MAX_STORAGE_BYTES]
    seen: dict[str, Storage] = {}

    def storage(key: str, dtype: torch.dtype, numel: int) -> Storage:
        entry = infos.get(f"{prefix}data/{key}")
        if entry is None:
            raise ForeignCheckpointError(f"{name}: storage {key!r} named in data.pkl has no zip entry "
                                         f"{prefix}data/{key}: the file is truncated or corrupt")
        want = numel * itemsize(dtype)
        if entry.file_size != want:
            raise ForeignCheckpointError(f"{name}: storage {key!r} holds {entry.file_size} bytes but data.pkl "
                                         f"declares {numel} x {dtype} = {want}: the file is corrupt")
        if key in seen:
            if seen[key].dtype != dtype:
                raise ForeignCheckpointError(f"{name}: storage {key!r} is used with two dtypes: the file is corrupt")
            return seen[key]
        if want > budget[0]:
            raise ForeignCheckpointError(f"{name}: storages exceed {MAX_STORAGE_BYTES >> 30} GiB in all")
        budget[0] -= want
        seen[key] = Storage(_read_member(zf, entry, want, name), dtype)
        return seen[key]

    pkl = _read_member(zf, infos[prefix + "data.pkl"], MAX_PICKLE_BYTES, name)
    return read_pickle(pkl, name=name, storages=storage)
