"""Owner records of ViZDoom shared memory: who made which ``/dev/shm/ViZDoom*`` file, and which are garbage.

ViZDoom names a game's three files after a random 10-character instance id that its controller draws
inside ``DoomGame.init()``: the controller creates ``ViZDoomMQDoom<id>`` and ``ViZDoomMQCtr<id>`` (boost
message queues), starts the engine with ``+viz_instance_id <id>``, and the engine creates ``ViZDoomSM<id>``.
The names are unknown until ``init()`` returns, and a file is briefly unmapped between its creation and its
mapping, so neither a name nor "no process maps it" tells whose a file is while games start.

So every process that starts games keeps a *record*, one file per owner in :func:`owners_dir` named
``<pid>-<start time>`` (the start time from ``/proc/<pid>/stat`` tells a reused pid from the owner). The
owner appends lines to it: ``begin <token> <time>`` before ``init()`` (an *open window*: any ViZDoom file
created from then on may be its), ``add <name>`` for each segment its game maps and ``end <token> <time>``
after ``init()`` returns (one write), ``del <name>`` after ``close()``. :func:`garbage` decides from the
records which files may go: those of a dead owner (recorded names, or files created within one of its
windows) that no live owner claims (by name, or by an open window that began before the file was made) and
no process maps. This module only reads and writes records; :mod:`evaltk.envs.shm_reaper` runs the sweep.
Standard library only: it is imported by the reaper process, which has no site-packages.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import time
from dataclasses import dataclass, field

SHM_DIR = "/dev/shm"
PREFIX = "ViZDoom"
#: Seconds by which a file's ctime (the kernel's coarse clock) may precede a window's ``time.time()`` start.
SLACK_S = 0.5


def owners_dir() -> str:
    """Return the directory of this user's owner records: ``/dev/shm/evaltk-doom-owners-<uid>`` (mode 0700)."""
    return f"/dev/shm/evaltk-doom-owners-{os.getuid()}"


def record_path(pid: int, start: str, directory: str | None = None) -> str:
    """Path of the record of owner ``pid`` started at ``start`` (clock ticks since boot)."""
    return os.path.join(directory or owners_dir(), f"{pid}-{start}")


def create(pid: int, start: str, directory: str | None = None) -> int:
    """Create the record of owner ``pid``/``start`` and return a descriptor holding its exclusive ``flock``.

    Whoever holds the lock (the owner's reaper, which inherits the descriptor) cleans up after the owner;
    a sweep by another process leaves a locked record alone.
    """
    path = record_path(pid, start, directory)
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)
    return fd


def append(path: str, lines: list[str]) -> None:
    """Append ``lines`` to the record ``path`` in one write (a reader sees all of them or none).

    A record that is gone (its owner's clean-up is over) is not made again.
    """
    if lines:
        try:
            fd = os.open(path, os.O_WRONLY | os.O_APPEND)
        except FileNotFoundError:
            return
        try:
            os.write(fd, "".join(f"{line}\n" for line in lines).encode())
        finally:
            os.close(fd)


@dataclass
class Record:
    """One owner's record: its segments and its ``init()`` windows (``end`` None while the window is open)."""

    path: str
    pid: int
    start: str
    names: set[str] = field(default_factory=set)
    windows: dict[str, tuple[float, float | None]] = field(default_factory=dict)


def parse(path: str, text: str) -> Record | None:
    """Parse the record in ``text`` (a file named ``<pid>-<start>``), or None for a file of another shape."""
    pid, _, start = os.path.basename(path).partition("-")
    if not (pid.isdigit() and start.isdigit()):
        return None
    record = Record(path, int(pid), start)
    for line in text.split("\n")[:-1]:  # a last line without its newline is still being written
        cmd, *args = line.split()
        if cmd == "add" and args:
            record.names.add(args[0])
        elif cmd == "del" and args:
            record.names.discard(args[0])
        elif cmd == "begin" and len(args) == 2:
            record.windows[args[0]] = (float(args[1]), None)
        elif cmd == "end" and len(args) == 2 and args[0] in record.windows:
            record.windows[args[0]] = (record.windows[args[0]][0], float(args[1]))
    return record


def read_all(directory: str | None = None) -> list[Record]:
    """Every record in ``directory`` (this user's by default)."""
    directory = directory or owners_dir()
    records = []
    with contextlib.suppress(FileNotFoundError):
        for entry in sorted(os.listdir(directory)):
            path = os.path.join(directory, entry)
            with contextlib.suppress(OSError, ValueError):
                with open(path) as fh:
                    record = parse(path, fh.read())
                if record is not None:
                    records.append(record)
    return records


def try_lock(path: str) -> int | None:
    """Return a descriptor holding ``path``'s exclusive lock, or None when another process (a live reaper) holds it."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        if os.stat(path).st_ino != os.fstat(fd).st_ino:  # deleted (and made again) since it was opened
            raise FileNotFoundError(path)
    except OSError:
        os.close(fd)
        return None
    return fd


def _in_window(ctime: float, windows: dict[str, tuple[float, float | None]]) -> bool:
    return any(begin - SLACK_S <= ctime and (end is None or ctime <= end + SLACK_S)
               for begin, end in windows.values())


def claimed(dead: Record, files: dict[str, float]) -> set[str]:
    """Return the files (name -> ctime) that may be ``dead``'s: recorded by it, or created within one of its windows."""
    return {name for name, ctime in files.items() if name in dead.names or _in_window(ctime, dead.windows)}


def protected(live: list[Record], files: dict[str, float]) -> set[str]:
    """Return the files that may be a live owner's: recorded by one, or made since one's still open window began."""
    names = set().union(*(record.names for record in live)) if live else set()
    opened = [begin for record in live for begin, end in record.windows.values() if end is None]
    early = min(opened, default=None)
    if early is not None:
        names |= {name for name, ctime in files.items() if ctime >= early - SLACK_S}
    return names & set(files)


def garbage(dead: Record, live: list[Record], files: dict[str, float], mapped: set[str]) -> set[str]:
    """Return the files of ``dead`` (a dead owner's record) that may be unlinked: not a live owner's, mapped by none."""
    return claimed(dead, files) - protected(live, files) - mapped


def vizdoom_files() -> dict[str, float]:
    """Return this user's ``/dev/shm/ViZDoom*`` files: name -> ctime."""
    files = {}
    with contextlib.suppress(OSError):
        for name in os.listdir(SHM_DIR):
            if name.startswith(PREFIX):
                with contextlib.suppress(OSError):
                    st = os.stat(os.path.join(SHM_DIR, name))
                    if st.st_uid == os.getuid():
                        files[name] = st.st_ctime
    return files


def now() -> float:
    """Return the wall clock that windows are written in (compared with files' ctimes)."""
    return time.time()
