"""Atomic file writes: a temporary file in the target's folder, synced, then renamed over the target.

A reader (or a run resumed after a crash) sees the old file or the new one, never half of one.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any


def write_bytes_atomic(path: Path, data: bytes) -> None:
    """Replace ``path`` with ``data`` atomically (mode 0644); the temporary file is removed on failure."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_json_atomic(path: Path, obj: Any) -> None:
    """Replace ``path`` with ``obj`` as indented JSON (one trailing newline), atomically."""
    write_bytes_atomic(path, (json.dumps(obj, indent=2) + "\n").encode("utf-8"))


def write_json_files(files: Mapping[Path, Any]) -> None:
    """Write each ``path: obj`` of ``files`` with :func:`write_json_atomic`, in order (their folders must exist)."""
    for path, obj in files.items():
        write_json_atomic(path, obj)
