"""Run a real ViZDoom command in a subprocess, interrupt it, and list the shared memory its processes left.

Only segments mapped by the command's own process tree are considered (read from ``/proc/<pid>/maps``
while it runs), so ViZDoom runs of other processes on the machine do not disturb the check.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from tests.evaltk.cli_helpers import restore_sigint

ROOT = Path(__file__).resolve().parents[2]
_PREFIXES = ("ViZDoom", "psm_")


def _children() -> dict[int, list[int]]:
    kids: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                ppid = int(Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            kids.setdefault(ppid, []).append(int(entry))
    return kids


def descendants(root: int) -> list[int]:
    """``root`` and every process below it."""
    kids, out, stack = _children(), [], [root]
    while stack:
        pid = stack.pop()
        out.append(pid)
        stack.extend(kids.get(pid, []))
    return out


def mapped_segments(pids: list[int]) -> set[str]:
    """Names of the ``/dev/shm`` ViZDoom and Python ``SharedMemory`` files the processes ``pids`` map."""
    names = set()
    for pid in pids:
        try:
            lines = Path(f"/proc/{pid}/maps").read_text().splitlines()
        except OSError:
            continue
        for line in lines:
            path = line.rsplit(None, 1)[-1]
            if path.startswith("/dev/shm/") and path[len("/dev/shm/"):].startswith(_PREFIXES):
                names.add(path[len("/dev/shm/"):])
    return names


def _running(pid: int) -> bool:
    """Return True while ``pid`` exists and is not a zombie."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


@dataclass
class Outcome:
    """What an interrupted run left behind."""

    segments: set[str]  # every segment its processes mapped
    left: list[str]  # of those, still in /dev/shm after the wait
    alive: list[int]  # its processes still running after the wait
    returncode: int
    stderr: str


def interrupt(argv: list[str], how: str, *, min_segments: int, settle_s: float = 1.5, wait_s: float = 30.0,
              start_timeout_s: float = 120.0) -> Outcome:
    """Run ``python -m argv``; once its tree maps ``min_segments`` ViZDoom segments, interrupt it.

    ``how``: ``"SIGINT"`` or ``"SIGKILL"`` to the parent only, or ``"SIGKILL-ALL"``: SIGKILL to every
    process of the tree (a killed process group) except the shared-memory reapers. Then wait up to
    ``wait_s`` for the segments to go and the processes to end.
    """
    proc = subprocess.Popen([sys.executable, "-m", *argv], cwd=ROOT, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True,
                            preexec_fn=restore_sigint)
    seen: set[str] = set()
    pids: set[int] = set()
    deadline = time.monotonic() + start_timeout_s
    while time.monotonic() < deadline and proc.poll() is None:
        tree = descendants(proc.pid)
        pids.update(tree)
        seen |= mapped_segments(tree)
        if sum(name.startswith("ViZDoom") for name in seen) >= min_segments:
            break
        time.sleep(0.1)
    else:
        proc.kill()
        raise AssertionError(f"{argv}: fewer than {min_segments} ViZDoom segments within {start_timeout_s} s "
                             f"(exit {proc.poll()}): {proc.communicate()[1][-2000:]}")
    end = time.monotonic() + settle_s
    while time.monotonic() < end:
        tree = descendants(proc.pid)
        pids.update(tree)
        seen |= mapped_segments(tree)
        time.sleep(0.1)
    if proc.poll() is not None:  # what the test interrupts must still be running when the signal comes
        raise AssertionError(f"{argv}: ended by itself (exit {proc.returncode}) before it was interrupted: "
                             f"give it more work: {proc.communicate()[1][-2000:]}")
    if how == "SIGKILL-ALL":
        for pid in descendants(proc.pid):
            if "shm_reaper" not in _cmdline(pid):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
    else:
        proc.send_signal(getattr(signal, how))
    _, err = proc.communicate(timeout=120)
    deadline = time.monotonic() + wait_s
    while True:
        left = sorted(n for n in seen if os.path.exists(f"/dev/shm/{n}"))
        alive = sorted(p for p in pids if p != proc.pid and _running(p))
        if (not left and not alive) or time.monotonic() > deadline:
            return Outcome(seen, left, alive, proc.returncode, err)
        time.sleep(0.1)
