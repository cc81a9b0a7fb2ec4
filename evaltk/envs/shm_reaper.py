"""Remove ViZDoom's shared memory and engine processes when the Python process that owns them dies.

A started ``DoomGame`` owns three POSIX shared-memory files named after the random 10-character instance id
its controller draws in ``init()``: ``/dev/shm/ViZDoomMQDoom<id>`` and ``ViZDoomMQCtr<id>`` (made by the
controller), ``ViZDoomSM<id>`` (made by the ``vizdoom`` engine child, started with ``+viz_instance_id <id>``;
10.7 MB in all at 160x120). ``DoomGame.close()`` removes them; a process killed with SIGKILL (or SIGTERM
without a handler, or a killed process group) never gets there, and the engine even outlives it.

So every process that starts games (through :func:`init_game`) is a recorded *owner*
(:mod:`evaltk.envs.shm_owners`: a record named by its pid and start time, with its ``init()`` windows and
segment names) and starts one *reaper*: a tiny stdlib-only Python process in its own session (so a killed
process group does not take it along), reading a pipe from its owner and holding the lock of its owner's
record. It learns the owner's segments three ways, so that a kill in the middle of ``init()`` is covered
too: the owner sends the names after each ``init()`` (:func:`track`, read from ``/proc/self/maps``: exactly
this game's); the reaper reads the owner's ``/proc/<pid>/maps`` and engine children every 0.25 s; and at
the end it reads the maps of every ``vizdoom`` engine whose environment carries the owner's tag
(:data:`OWNER_ENV`, set before the first game, inherited by the engine). When the pipe reaches EOF (the
owner exited, however) or the owner's pid is gone, the reaper SIGKILLs those engines, unlinks the recorded
segments that still exist, and runs :func:`sweep` on its owner's record: files made within the owner's
``init()`` windows (a game killed before its names were known) that no live owner claims and no process
maps go too. A sweep never touches a live owner's files, nor a dead owner's record that its reaper still
holds. Linux only (``/proc``); elsewhere :func:`track` does nothing.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import sys
import threading
import time
from typing import IO, Any

from evaltk.envs import shm_owners

SHM_DIR = shm_owners.SHM_DIR
PREFIX = shm_owners.PREFIX
#: Environment variable tagging a reaper's owner (``<pid>:<start time>``), inherited by its engines.
OWNER_ENV = "EVALTK_DOOM_OWNER"
_LOCK = threading.Lock()
_PIPE: tuple[int, int, str] | None = None  # (owner pid, write end of the pipe to its reaper, owner record path)
_TOKENS = iter(range(1, 1 << 62))
#: The reaper's command: ``python -I -S`` (no site-packages, no environment) with only this package's root on the path.
_BOOT = "import sys; sys.path.insert(0, sys.argv[1]); from evaltk.envs.shm_reaper import main; main(sys.argv[2:])"
_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def stat_fields(pid: int | str) -> list[str] | None:
    """Fields 3 on of ``/proc/<pid>/stat`` (state, ppid, pgrp, ...), or None when the process is gone.

    ``fields[0]`` is the state, ``[1]`` the parent pid, ``[2]`` the process group, ``[11]``/``[12]`` user and
    system CPU in clock ticks, ``[19]`` the start time.
    """
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None


def start_time(pid: int) -> str | None:
    """Field 22 of ``/proc/<pid>/stat`` (start time in clock ticks): tells a pid from a reused one."""
    fields = stat_fields(pid)
    return fields[19] if fields is not None and len(fields) > 19 else None


def own_segments(pid: int | str = "self") -> set[str]:
    """Names of the ``/dev/shm/ViZDoom*`` files mapped by process ``pid`` (this one by default) right now."""
    found = set()
    with contextlib.suppress(OSError), open(f"/proc/{pid}/maps") as fh:
        for line in fh:
            path = line.rsplit(None, 1)[-1] if "/dev/shm/" in line else ""
            name = os.path.basename(path)
            if path.startswith(f"{SHM_DIR}/{PREFIX}") and "/" not in name:
                found.add(name)
    return found


def _is_engine(pid: int | str) -> bool:
    try:
        with open(f"/proc/{pid}/comm") as comm:
            return comm.read().strip() == "vizdoom"
    except OSError:
        return False


def engine_children(pid: int | str = "self") -> set[int]:
    """PIDs of the children of process ``pid`` (this one by default) that run the ``vizdoom`` engine."""
    pids: set[int] = set()
    with contextlib.suppress(OSError):
        for task in os.listdir(f"/proc/{pid}/task"):
            with contextlib.suppress(OSError), open(f"/proc/{pid}/task/{task}/children") as fh:
                pids.update(int(child) for child in fh.read().split() if _is_engine(child))
    return pids


def tagged_pids(var: str, tag: str) -> set[int]:
    """PIDs of this user's processes whose environment has ``var=tag`` (orphans of a dead owner too)."""
    needle = f"{var}={tag}".encode()
    found = set()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            with contextlib.suppress(OSError), open(f"/proc/{entry}/environ", "rb") as fh:
                if needle in fh.read().split(b"\0"):
                    found.add(int(entry))
    return found


def tagged_engines(tag: str) -> set[int]:
    """PIDs of ``vizdoom`` engines whose environment has ``OWNER_ENV=tag`` (orphans of a dead owner too)."""
    return {pid for pid in tagged_pids(OWNER_ENV, tag) if _is_engine(pid)}


def _pipe() -> int | None:
    """Return the write end of the pipe to this process's reaper, starting it on first use (and in a forked child).

    First this process's owner record is created and locked (:func:`shm_owners.create`); the reaper inherits
    the locked descriptor. The write end is a bare descriptor that stays open until this process exits, when
    the kernel closes it and the reaper reads EOF (a file object would be finalised unclosed at interpreter
    exit). The reaper detaches (:func:`_detach`), so this process has no child to wait for.
    """
    global _PIPE
    if not os.path.isdir("/proc/self/task"):
        return None
    if _PIPE is None or _PIPE[0] != os.getpid():
        if _PIPE is not None:  # forked: the inherited write end is the parent's pipe, for the parent's exit to close
            with contextlib.suppress(OSError):
                os.close(_PIPE[1])
        pid, start = os.getpid(), str(start_time(os.getpid()))
        os.environ[OWNER_ENV] = f"{pid}:{start}"
        lock = shm_owners.create(pid, start)
        read_end, write_end = os.pipe()
        # An empty environment: the reaper needs none, and must not carry a match's tag (it would be
        # killed with the match it is to clean up after) or look like one of the owner's processes.
        try:
            subprocess.run([sys.executable, "-I", "-S", "-c", _BOOT, _ROOT, str(pid), start],
                           stdin=read_end, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env={},
                           start_new_session=True, close_fds=True, pass_fds=(lock,), check=False)
        except BaseException:
            os.close(write_end)
            raise
        finally:
            os.close(read_end)
            os.close(lock)  # the reaper's copy holds the lock from here on
        _PIPE = (pid, write_end, shm_owners.record_path(pid, start))
    return _PIPE[1]


def _send(lines: list[str]) -> None:
    with _LOCK:
        fd = _pipe()
        if fd is None or not lines:
            return
        data = memoryview("".join(f"{line}\n" for line in lines).encode())
        with contextlib.suppress(BrokenPipeError, OSError):
            while data:
                data = data[os.write(fd, data):]


def watch() -> None:
    """Start this process's reaper (if not yet running), so that the next ``init()`` is covered while it runs."""
    with _LOCK:
        _pipe()


def track(before: set[str], engines_before: set[int], *, window: str | None = None) -> tuple[set[str], set[int]]:
    """Register what a game started since ``before``/``engines_before``; return (segments, engine pids).

    Call with :func:`own_segments` and :func:`engine_children` taken just before ``init()``, right after it
    returns. The names go into this process's owner record together with the end of ``window`` (the token
    :func:`init_game` opened), in one write, and to the reaper.
    """
    names = own_segments() - before
    engines = engine_children() - engines_before
    lines = [f"add {n}" for n in sorted(names)]
    if _PIPE is not None and _PIPE[0] == os.getpid():
        ends = [f"end {window} {shm_owners.now()!r}"] if window is not None else []
        shm_owners.append(_PIPE[2], lines + ends)
    lines += [f"engine {pid} {start_time(pid)}" for pid in sorted(engines) if start_time(pid) is not None]
    _send(lines)
    return names, engines


def init_game(game: Any) -> tuple[set[str], set[int]]:
    """Run ``game.init()`` (a ``vizdoom.DoomGame``) as this process's recorded owner; return what :func:`track` does.

    The owner record gets an open window before ``init()`` (every ViZDoom file made from then on may be this
    game's, so no sweep takes it) and the game's segment names with the window's end after it, also when
    ``init()`` raises. The reaper covers the game until :func:`untrack`.
    """
    watch()
    token = f"{threading.get_ident()}.{next(_TOKENS)}"
    if _PIPE is not None and _PIPE[0] == os.getpid():
        shm_owners.append(_PIPE[2], [f"begin {token} {shm_owners.now()!r}"])
    before = own_segments(), engine_children()
    try:
        game.init()
    finally:
        tracked = track(*before, window=token)
    return tracked


def add_segment(name: str, *, after_pid: int | None = None) -> None:
    """Have the reaper unlink ``/dev/shm/<name>`` (e.g. a ``SharedMemory`` of this process) if this process dies.

    With ``after_pid`` (e.g. Python's resource tracker, which frees such blocks itself when it
    survives), the reaper waits until that process is gone and unlinks the block only if it is left.
    """
    base = os.path.basename(name.lstrip("/"))
    start = start_time(after_pid) if after_pid is not None else None
    _send([f"add {base}" if start is None else f"addafter {base} {after_pid} {start}"])


def remove_segment(name: str) -> None:
    """Undo :func:`add_segment` (the segment was unlinked normally)."""
    if _PIPE is not None and _PIPE[0] == os.getpid():
        _send([f"del {os.path.basename(name.lstrip('/'))}"])


def untrack(names: set[str], engines: set[int]) -> None:
    """Take back what :func:`track` registered (after ``close()`` removed it)."""
    if _PIPE is not None and _PIPE[0] == os.getpid():
        shm_owners.append(_PIPE[2], [f"del {n}" for n in sorted(names)])
        _send([f"del {n}" for n in sorted(names)] + [f"unengine {pid}" for pid in sorted(engines)])


def processes_in_groups(pgids: set[int]) -> list[int]:
    """Pids of live (not zombie) processes whose process group is in ``pgids``."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            fields = stat_fields(entry)
            if fields is not None and int(fields[2]) in pgids and fields[0] != "Z":
                found.append(int(entry))
    return found


def group_cpu_seconds(pgids: set[int]) -> float:
    """User+system CPU seconds of the live processes in the process groups ``pgids`` (workers and their engines)."""
    ticks = 0
    for pid in processes_in_groups(pgids):
        fields = stat_fields(pid)
        if fields is not None:
            ticks += int(fields[11]) + int(fields[12])
    return ticks / os.sysconf("SC_CLK_TCK")


def kill_groups(pgids: set[int], *, wait_s: float = 2.0) -> None:
    """SIGKILL every process of the process groups ``pgids`` and unlink their engines' shared memory.

    A ViZDoom engine killed this way cannot remove its ``/dev/shm/ViZDoom*`` files, so the segments the
    groups' processes map are read first (:func:`own_segments`) and unlinked once the processes are gone
    (waiting up to ``wait_s``). Groups already gone are a no-op.
    """
    members = processes_in_groups(pgids) if pgids else []
    names: set[str] = set()
    for pid in members:
        names |= own_segments(pid)
    for pgid in pgids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, signal.SIGKILL)
    deadline = time.monotonic() + wait_s
    while members and processes_in_groups(pgids) and time.monotonic() < deadline:
        time.sleep(0.05)
    _unlink(names)


ENGINE_DIED = 4
"""Exit status of a process that :class:`EngineWatchdog` ended because a ViZDoom engine it watched died."""


class EngineWatchdog:
    """Exit this process with :data:`ENGINE_DIED` when a watched ViZDoom engine dies.

    ViZDoom's controller notices a dead engine only at some points of a tic: killed at others (e.g. SIGKILL during
    ``make_action``), the caller waits on the engine's message queue forever. A thread polls the watched
    engines' ``/proc`` entries every ``period_s`` instead; on a death it writes ``message`` (``{pid}`` filled in)
    to stderr and exits at once (``os._exit``: the main thread is blocked in ViZDoom), so the process that
    started this one sees the status and voids and replays the work; this process's reaper removes the game's
    shared memory. :meth:`unwatch` an engine before ``game.close()``, which ends it on purpose. Use it only in a
    process whose only job is to drive games (a tournament player, an evaluation worker). As a context manager
    the thread runs for the block.
    """

    def __init__(self, message: str, *, period_s: float = 0.2) -> None:
        self.message = message
        self.period_s = period_s
        self._engines: dict[int, str | None] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._poll, name="engine-watchdog", daemon=True)
        self._thread.start()

    def watch(self, engines: set[int]) -> None:
        """Start watching the engine processes ``engines`` (pids; their start times tell a reused pid)."""
        with self._lock:
            self._engines.update({pid: start_time(pid) for pid in engines})

    def unwatch(self, engines: set[int]) -> None:
        """Stop watching ``engines`` (before they are closed on purpose)."""
        with self._lock:
            for pid in engines:
                self._engines.pop(pid, None)

    def dead(self) -> list[int]:
        """PIDs of watched engines that are no longer running."""
        with self._lock:
            return [pid for pid, start in self._engines.items() if not running(pid, start)]

    def exit_now(self, pid: int) -> None:
        """Write the message for the dead engine ``pid`` and exit this process with :data:`ENGINE_DIED`."""
        sys.stderr.write(self.message.format(pid=pid) + "\n")
        sys.stderr.flush()
        os._exit(ENGINE_DIED)

    def _poll(self) -> None:
        while not self._stop.wait(self.period_s):
            with self._lock:
                dead = [pid for pid, start in self._engines.items() if not running(pid, start)]
                if dead and not self._stop.is_set():
                    self.exit_now(dead[0])

    def close(self) -> None:
        """Stop the thread (nothing is watched any more)."""
        self._stop.set()
        with self._lock:
            self._engines.clear()
        self._thread.join()

    def __enter__(self) -> EngineWatchdog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def running(pid: int, start: str | None) -> bool:
    """Whether process ``pid`` started at ``start`` still runs (not exited, not a zombie, pid not reused)."""
    fields = stat_fields(pid)
    return start is not None and fields is not None and fields[19:20] == [start] and fields[0] not in ("Z", "X")


def _apply(line: str, names: set[str], engines: dict[int, str], later: dict[str, tuple[int, str]]) -> None:
    cmd, _, arg = line.partition(" ")
    if cmd == "add":
        names.add(os.path.basename(arg))
    elif cmd == "addafter":
        name, pid, start = [*arg.split(), "", "", ""][:3]
        if pid.isdigit():
            later[os.path.basename(name)] = (int(pid), start)
    elif cmd == "del":
        names.discard(os.path.basename(arg))
        later.pop(os.path.basename(arg), None)
    elif cmd == "engine":
        engine, _, start = arg.partition(" ")
        engines[int(engine)] = start
    elif cmd == "unengine":
        engines.pop(int(arg), None)


def _record_engines(pids: set[int], names: set[str], engines: dict[int, str]) -> None:
    for pid in pids:
        start = start_time(pid)
        if start is not None:
            engines.setdefault(pid, start)
            names.update(own_segments(pid))


def reap(owner: int, owner_start: str, stream: IO[str]) -> None:
    """Run the reaper: record the owner's games until it is gone, then kill their engines and unlink their memory."""
    names: set[str] = set()
    engines: dict[int, str] = {}
    later: dict[str, tuple[int, str]] = {}
    buffer = ""
    fd = stream.fileno()
    while start_time(owner) == owner_start:
        names.update(own_segments(owner))
        _record_engines(engine_children(owner), names, engines)
        ready, _, _ = select.select([fd], [], [], 0.25)
        if not ready:
            continue
        chunk = os.read(fd, 65536).decode(errors="replace")
        if not chunk:
            break
        buffer += chunk
        *lines, buffer = buffer.split("\n")
        for line in lines:
            _apply(line, names, engines, later)
    deadline = time.monotonic() + 30.0  # EOF comes as the owner exits: wait until it no longer runs (a zombie is dead)
    while running(owner, owner_start) and time.monotonic() < deadline:
        time.sleep(0.02)
    _record_engines(tagged_engines(f"{owner}:{owner_start}"), names, engines)
    _kill(engines)
    _unlink(names)
    record = shm_owners.record_path(owner, owner_start)
    deadline = time.monotonic() + 30.0  # a live owner's open window may hold back a file of this owner's
    while sweep(mine=record, others=False)[1] and time.monotonic() < deadline:
        time.sleep(0.25)
    sweep()
    deadline = time.monotonic() + 30.0
    while any(start_time(pid) == start for pid, start in later.values()) and time.monotonic() < deadline:
        time.sleep(0.1)
    _unlink(set(later))


def _kill(engines: dict[int, str]) -> None:
    """SIGKILL the engines (pid -> start time) that still run, and wait up to 5 s for them to go."""
    for pid, start in engines.items():
        if start_time(pid) == start:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 5.0
    while any(start_time(pid) == start for pid, start in engines.items()) and time.monotonic() < deadline:
        time.sleep(0.02)


def mapped_anywhere() -> set[str]:
    """Names of the ``/dev/shm/ViZDoom*`` files that any process this user can read maps."""
    mapped: set[str] = set()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            mapped |= own_segments(entry)
    return mapped


def sweep(directory: str | None = None, *, mine: str | None = None, others: bool = True
          ) -> tuple[set[str], set[str]]:
    """Clean up after dead owners; return the names unlinked and those a live owner's open window still holds back.

    For each record in ``directory`` (default :func:`shm_owners.owners_dir`) of a dead owner whose lock this
    process gets (``mine``: the one it holds already; a live reaper's record is its job; ``others=False``: only
    ``mine``): SIGKILL the owner's engines, close its open windows, unlink :func:`shm_owners.garbage`, and
    delete the record once no open window holds a file of it back.
    """
    records = shm_owners.read_all(directory)
    live = [record for record in records if running(record.pid, record.start)]
    removed: set[str] = set()
    pending: set[str] = set()
    for dead in records:
        if dead in live or (dead.path != mine and not others):
            continue
        lock = None if dead.path == mine else shm_owners.try_lock(dead.path)
        if dead.path == mine or lock is not None:
            try:
                gone, held = _clean(dead, directory)
                removed |= gone
                pending |= held
            finally:
                if lock is not None:
                    os.close(lock)
    return removed, pending


def _clean(dead: shm_owners.Record, directory: str | None) -> tuple[set[str], set[str]]:
    """Sweep one dead owner's record (its lock held); return the files unlinked and those held back.

    The live owners' records are read after the files are listed: a file listed was made after its owner's
    window opened, so the read sees that window (open, or closed with the file's name recorded).
    """
    _kill({pid: str(start_time(pid)) for pid in tagged_engines(f"{dead.pid}:{dead.start}")})
    stamp = shm_owners.now()
    opened = [token for token, (_, end) in dead.windows.items() if end is None]
    shm_owners.append(dead.path, [f"end {token} {stamp!r}" for token in opened])
    dead.windows.update({token: (dead.windows[token][0], stamp) for token in opened})
    files = shm_owners.vizdoom_files()
    mapped = mapped_anywhere()
    live = [record for record in shm_owners.read_all(directory) if running(record.pid, record.start)]
    gone = shm_owners.garbage(dead, live, files, mapped)
    _unlink(gone)
    # What is left is a live owner's (recorded, or mapped by a live game), or held back by an open window.
    held = shm_owners.claimed(dead, files) - gone - mapped - set().union(set(), *(record.names for record in live))
    if not any(os.path.exists(os.path.join(SHM_DIR, name)) for name in held):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(dead.path)
    return gone, held


def _unlink(names: set[str]) -> None:
    for name in names:
        if name and not name.startswith("."):
            with contextlib.suppress(FileNotFoundError, PermissionError, IsADirectoryError):
                os.unlink(os.path.join(SHM_DIR, name))


def _detach() -> None:
    """Fork and end the parent at once (the owner waits for it): the reaper runs on, adopted by init, not the owner."""
    if os.fork():
        os._exit(0)


def main(argv: list[str]) -> None:
    """Run the reaper process (:data:`_BOOT`); ``argv`` is the owner's pid and start time; its pipe is stdin."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is for the owner; the reaper outlives it
    _detach()
    reap(int(argv[0]), argv[1], sys.stdin)
