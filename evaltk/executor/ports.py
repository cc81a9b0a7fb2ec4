"""Node-wide port leases: a block of UDP/TCP ports that no other process on this machine holds.

Multiplayer Doom matches host on a UDP port. On a cluster several worker processes of one node play
matches at once, and a per-process set of reserved ports cannot see the others; nodes themselves
never share ports (each match binds its own host's loopback). So a lease is an exclusive
``fcntl.flock`` on ``<tmp>/evaltk-ports/<base>.lock``, held by the leasing process until it is
released or the process dies (the kernel drops the lock), plus a bind check of every port of the
block. The first candidate is keyed by the unit's id (``match_id``) in :data:`PORT_RANGE`, which lies
below Linux's ephemeral range and above Ray's default worker ports, so re-plays of a match try the
same port first and different matches spread over the range.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import socket
import tempfile
import threading
import zlib
from pathlib import Path

PORT_RANGE = (20_000, 32_000)
"""Ports leased, [low, high): above Ray's default worker ports (10002-19999), below the ephemeral range (32768+)."""
_LOCK = threading.Lock()
_HELD: dict[int, int] = {}  # base port -> fd of its lock file, in this process


def lock_dir() -> Path:
    """Directory of the lock files (shared by every process of this machine and user)."""
    path = Path(os.environ.get("EVALTK_PORT_LOCK_DIR") or Path(tempfile.gettempdir()) / "evaltk-ports")
    path.mkdir(parents=True, exist_ok=True)
    return path


def bindable(port: int) -> bool:
    """Return whether ``port`` can be bound on 127.0.0.1 for both UDP and TCP right now."""
    for kind in (socket.SOCK_DGRAM, socket.SOCK_STREAM):
        with socket.socket(socket.AF_INET, kind) as sock:
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                return False
    return True


def lease_ports(key: str, span: int = 2) -> int | None:
    """Lease ``span`` consecutive free ports, the first candidate keyed by ``key``; return the base, or None if full."""
    low, high = PORT_RANGE
    blocks = (high - low) // span
    first = zlib.crc32(key.encode()) % blocks
    folder = lock_dir()
    with _LOCK:
        for step in range(blocks):
            base = low + ((first + step) % blocks) * span
            if base in _HELD:
                continue
            fd = os.open(folder / f"{base}.lock", os.O_CREAT | os.O_RDWR, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                os.close(fd)
                continue
            if all(bindable(p) for p in range(base, base + span)):
                _HELD[base] = fd
                return base
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)
    return None


def release_ports(base: int) -> None:
    """Release the lease on ``base`` taken by :func:`lease_ports` in this process (no-op if not held)."""
    with _LOCK:
        fd = _HELD.pop(base, None)
        if fd is not None:
            with contextlib.suppress(OSError):
                fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)
