"""Long-lived player processes that play one match after another (``run_match(..., pool=...)``).

A fresh player process per match pays Python's and torch's imports and the model's construction every
match (about 3.5 CPU-seconds of a one-minute duel that plays in about 2.5). A :class:`PlayerPool` keeps
its players: each is ``python -m <module> --serve`` in its own session (the player and the engines it
starts form one process group), reads one request per line on stdin — the slot's JSON
:class:`~evaltk.tournament.player.PlayerSpec`, the extras, and ``env`` (variables to set before the
game starts: the match's tag, which its engine inherits) — and writes one JSON report per line to a
dedicated pipe (fd ``EVALTK_REPORT_FD``; stdout and stderr go to the player's log file, so nothing an
engine prints can be taken for a report). A player that fails, hangs or dies is never reused: its
process group is SIGKILLed with the match's other processes and the match is voided, exactly as
without a pool; the next match gets a new player.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

#: Environment variable naming the pipe a serving player writes its reports to.
REPORT_FD_ENV = "EVALTK_REPORT_FD"
#: Seconds a closing pool waits for its idle players to exit after their stdin's EOF.
CLOSE_WAIT_S = 5.0


class PooledPlayer:
    """One serving player process: requests go to its stdin, reports come back on its report pipe."""

    def __init__(self, module: str, log: Path, env: dict[str, str]) -> None:
        read_fd, write_fd = os.pipe()
        self.log = log
        try:
            with open(log, "ab") as out:
                self.proc: subprocess.Popen[bytes] = subprocess.Popen(
                    [sys.executable, "-m", module, "--serve"], stdin=subprocess.PIPE, stdout=out,
                    stderr=subprocess.STDOUT, env={**env, REPORT_FD_ENV: str(write_fd)}, pass_fds=(write_fd,),
                    start_new_session=True)
        except BaseException:
            os.close(read_fd)
            raise
        finally:
            os.close(write_fd)
        self._reports = read_fd
        self._buffer = b""
        self.matches = 0

    @property
    def pid(self) -> int:
        """The player's process id (also its process group id)."""
        return self.proc.pid

    def send(self, request: dict[str, Any]) -> None:
        """Start a match: write one request line (raises OSError if the player is gone)."""
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(request).encode() + b"\n")
        self.proc.stdin.flush()

    def poll_report(self) -> dict[str, Any] | None:
        """Return the report of the current match if it has fully arrived, else None (never blocks)."""
        while b"\n" not in self._buffer:
            ready, _, _ = select.select([self._reports], [], [], 0)
            if not ready:
                return None
            chunk = os.read(self._reports, 65536)
            if not chunk:
                return None  # the player closed its pipe: it is exiting; the caller sees its exit status
            self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        self.matches += 1
        report: dict[str, Any] = json.loads(line)
        return report

    def kill(self) -> None:
        """SIGKILL the player's process group (the player and its engines) and reap the player."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait()
        self._close_pipes()

    def _close_pipes(self) -> None:
        with contextlib.suppress(OSError):
            os.close(self._reports)
        self._reports = -1
        if self.proc.stdin is not None:
            with contextlib.suppress(OSError):
                self.proc.stdin.close()


class PlayerPool:
    """Serving players of one module, shared by the match threads of a run (thread-safe).

    ``acquire(n)`` hands out ``n`` idle players (starting new ones as needed); after a played match
    ``release`` returns them, after a voided one ``discard`` kills them. ``close`` ends every player.
    """

    def __init__(self, module: str, logs: Path, env: dict[str, str] | None = None) -> None:
        self.module = module
        self.logs = logs
        self.env = dict(os.environ if env is None else env)
        self.env.setdefault("OMP_NUM_THREADS", "1")
        self._lock = threading.Lock()
        self._idle: list[PooledPlayer] = []
        self._live: set[PooledPlayer] = set()
        self._started = 0
        self._closed = False

    @property
    def started(self) -> int:
        """Player processes started so far (a measure of reuse: matches x players / started)."""
        return self._started

    def acquire(self, n: int) -> list[PooledPlayer]:
        """Return ``n`` idle players, starting new ones when there are not enough."""
        with self._lock:
            if self._closed:
                raise RuntimeError("the player pool is closed")
            got: list[PooledPlayer] = []
            while self._idle and len(got) < n:
                player = self._idle.pop()
                if player.proc.poll() is None:
                    got.append(player)
                else:
                    self._live.discard(player)
                    player.kill()
            try:
                while len(got) < n:
                    self.logs.mkdir(parents=True, exist_ok=True)
                    player = PooledPlayer(self.module, self.logs / f"player{self._started:04d}.log", self.env)
                    self._started += 1
                    self._live.add(player)
                    got.append(player)
            except BaseException:
                # A start failed half-way (no process or file left): the players already in hand have played
                # nothing and go back to the idle list for the next acquire.
                self._idle.extend(got)
                raise
            return got

    def release(self, players: Sequence[PooledPlayer]) -> None:
        """Return players whose match was played to the pool."""
        with self._lock:
            for player in players:
                if self._closed or player.proc.poll() is not None:
                    self._live.discard(player)
                    player.kill()
                else:
                    self._idle.append(player)

    def discard(self, players: Sequence[PooledPlayer]) -> None:
        """Kill players of a voided match; they are never handed out again."""
        with self._lock:
            for player in players:
                self._live.discard(player)
                self._idle = [p for p in self._idle if p is not player]
        for player in players:
            player.kill()

    def close(self) -> None:
        """End every player: idle ones get EOF and a few seconds to exit, then every group is killed."""
        with self._lock:
            self._closed = True
            players, self._idle, self._live = list(self._live), [], set()
        for player in players:
            if player.proc.stdin is not None:
                with contextlib.suppress(OSError):
                    player.proc.stdin.close()
        deadline = time.monotonic() + CLOSE_WAIT_S
        for player in players:
            with contextlib.suppress(subprocess.TimeoutExpired):
                player.proc.wait(timeout=max(0.0, deadline - time.monotonic()))
            player.kill()

    def __enter__(self) -> PlayerPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
