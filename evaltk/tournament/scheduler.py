"""Run many matches concurrently with crash recovery and resume.

The results file holds one JSON line per finished or voided match (:class:`~evaltk.tournament.match.MatchResult`),
appended and flushed (fsync) as each match ends. On start the scheduler reads it: matches with an
``outcome == "played"`` line are done; each ``"void"`` line counts as a failed attempt. A voided
match is put back at the front of the queue and played again (same seed, a new port) up to
``max_attempts`` times; past that the tournament stops with a :class:`TournamentError` once the
running matches end — every result already written is kept.
"""

from __future__ import annotations

import json
import os
import threading
from collections import Counter, deque
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evaltk.errors import TournamentError
from evaltk.tournament.match import MatchResult, MatchSpec, run_match


class ResultsFile:
    """Append-only JSON-lines file of match results, safe to share between threads."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()

    def read(self) -> list[dict[str, Any]]:
        """Every complete line of the file (a torn last line from a crash is ignored)."""
        if not self.path.exists():
            return []
        rows = []
        for line in self.path.read_text().splitlines():
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError:
                continue
        return rows

    def played(self) -> dict[str, dict[str, Any]]:
        """Finished matches by match id."""
        return {r["match_id"]: r for r in self.read() if r.get("outcome") == "played"}

    def void_counts(self) -> Counter[str]:
        """Count the voided attempts per match id."""
        return Counter(r["match_id"] for r in self.read() if r.get("outcome") == "void")

    def append(self, row: dict[str, Any]) -> None:
        """Append one row and flush it to disk (after a newline if a crash left a torn last line)."""
        with self._lock:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            torn = False
            if self.path.exists() and self.path.stat().st_size:
                with open(self.path, "rb") as f:
                    f.seek(-1, os.SEEK_END)
                    torn = f.read(1) != b"\n"
            with open(self.path, "a") as f:
                f.write(("\n" if torn else "") + json.dumps(row, separators=(",", ":")) + "\n")
                f.flush()
                os.fsync(f.fileno())


@dataclass(frozen=True)
class ScheduleSummary:
    """What one scheduler run did."""

    already_done: int
    played: int
    voided: int
    stopped_early: bool


StopRule = Callable[[dict[str, dict[str, Any]]], bool]


def run_schedule(specs: Sequence[MatchSpec], results: ResultsFile, *, workdir: Path, concurrency: int,
                 timeout_s: float, max_attempts: int = 3, stop: StopRule | None = None,
                 on_result: Callable[[MatchResult], None] | None = None) -> ScheduleSummary:
    """Play every match of ``specs`` not yet in ``results``, ``concurrency`` at a time, in order.

    ``stop(played_by_id)`` is asked before each new match starts (and once at the start); when it
    returns True no new match starts, and the running ones finish and are recorded.
    """
    if concurrency < 1:
        raise TournamentError(f"concurrency {concurrency} must be at least 1")
    played = results.played()
    attempts = results.void_counts()
    already = sum(1 for s in specs if s.match_id in played)
    pending = deque(s for s in specs if s.match_id not in played)
    n_played = n_void = 0
    failed: list[str] = []
    stopped = False
    running: dict[Future[MatchResult], MatchSpec] = {}
    abort = threading.Event()
    with ThreadPoolExecutor(max_workers=concurrency) as pool:
        try:
            while pending or running:
                while pending and len(running) < concurrency and not failed:
                    if stop is not None and stop(played):
                        stopped = True
                        pending.clear()
                        break
                    spec = pending.popleft()
                    running[pool.submit(run_match, spec, workdir=workdir, timeout_s=timeout_s,
                                        attempt=attempts[spec.match_id] + 1, abort=abort)] = spec
                if not running:
                    break
                done, _ = wait(list(running), return_when=FIRST_COMPLETED)
                for fut in done:
                    spec = running.pop(fut)
                    result = fut.result()
                    results.append(result.to_json())
                    if on_result is not None:
                        on_result(result)
                    if result.outcome == "played":
                        played[spec.match_id] = result.to_json()
                        n_played += 1
                        continue
                    n_void += 1
                    attempts[spec.match_id] += 1
                    if attempts[spec.match_id] >= max_attempts:
                        failed.append(f"{spec.match_id} ({result.error})")
                    else:
                        pending.appendleft(spec)
                if failed:
                    pending.clear()
        except BaseException:
            abort.set()  # running matches are killed at once and not recorded
            pool.shutdown(wait=True, cancel_futures=True)
            raise
    if failed:
        raise TournamentError(f"match {failed[0]} was voided {max_attempts} times; results so far are kept in "
                              f"{results.path}; fix the cause (see the logs) and re-run to resume")
    return ScheduleSummary(already_done=already, played=n_played, voided=n_void, stopped_early=stopped)
