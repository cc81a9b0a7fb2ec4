"""Run many matches concurrently with crash recovery and resume.

The results file holds one JSON line per finished or voided match (:class:`~evaltk.tournament.match.MatchResult`),
appended and flushed (fsync) as each match ends. On start the scheduler reads it: matches with an
``outcome == "played"`` line are done; each ``"void"`` line counts as a failed attempt. A voided
match is put back at the front of the queue and played again (same seed, a new port) up to
``max_attempts`` times; past that the tournament stops with a :class:`TournamentError` once the
running matches end — every result already written is kept.

Matches run on an :class:`~evaltk.executor.Executor`: by default ``concurrency`` threads of this
process (each match's players are processes of their own); with the Ray executor each match is a Ray
task declaring one CPU and one ``vizdoom_engine`` per player, and hosting on a node-wide port lease
(:mod:`evaltk.executor.ports`). Either way this process alone writes the results file, one line per
finished attempt, and a match id already played is never played (or written) again.
"""

from __future__ import annotations

import json
import os
import threading
from collections import Counter, deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evaltk.errors import TournamentError
from evaltk.executor import Executor, Resources, WorkUnit
from evaltk.executor.local import LocalExecutor
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
ENGINE_RESOURCE = "vizdoom_engine"
"""Custom Ray resource: ViZDoom engines a node runs at once (``ray start --resources '{"vizdoom_engine": 8}'``)."""


def match_unit(spec: MatchSpec, *, workdir: Path, timeout_s: float, attempt: int,
               abort: threading.Event | None) -> WorkUnit:
    """Return the work unit of one attempt at ``spec``: a CPU and an engine per player; ``abort`` only in process."""
    players = float(len(spec.agents))
    kwargs: dict[str, Any] = {"workdir": workdir, "timeout_s": timeout_s, "attempt": attempt}
    if abort is not None:
        kwargs["abort"] = abort
    return WorkUnit(f"match:{spec.match_id}#{attempt}", run_match, (spec,), kwargs,
                    Resources(num_cpus=players, custom={ENGINE_RESOURCE: players}))


def run_schedule(specs: Sequence[MatchSpec], results: ResultsFile, *, workdir: Path, concurrency: int,
                 timeout_s: float, max_attempts: int = 3, stop: StopRule | None = None,
                 on_result: Callable[[MatchResult], None] | None = None,
                 executor: Executor | None = None) -> ScheduleSummary:
    """Play every match of ``specs`` not yet in ``results``, ``concurrency`` at a time, in order.

    ``executor`` runs the matches (default: ``concurrency`` threads here); the caller closes it.

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
    running: dict[str, MatchSpec] = {}
    abort = threading.Event()
    own = executor is None
    pool = executor if executor is not None else LocalExecutor(mode="threads", workers=concurrency)
    try:
        try:
            while pending or running:
                while pending and len(running) < concurrency and not failed:
                    if stop is not None and stop(played):
                        stopped = True
                        pending.clear()
                        break
                    spec = pending.popleft()
                    if spec.match_id in played:  # a duplicate spec: never play (or write) a match twice
                        continue
                    unit = match_unit(spec, workdir=workdir, timeout_s=timeout_s, attempt=attempts[spec.match_id] + 1,
                                      abort=abort if pool.in_process else None)
                    pool.submit(unit)
                    running[unit.unit_id] = spec
                if not running:
                    break
                done = pool.next_done()
                spec = running.pop(done.unit_id)
                result = done.value
                if result.outcome == "played" and spec.match_id not in played:
                    results.append(result.to_json())
                    played[spec.match_id] = result.to_json()
                    n_played += 1
                elif result.outcome != "played":
                    results.append(result.to_json())
                    n_void += 1
                    attempts[spec.match_id] += 1
                    if attempts[spec.match_id] >= max_attempts:
                        failed.append(f"{spec.match_id} ({result.error})")
                    else:
                        pending.appendleft(spec)
                if on_result is not None:
                    on_result(result)
                if failed:
                    pending.clear()
        except BaseException:
            abort.set()  # running matches are killed at once and not recorded
            pool.cancel()
            raise
    finally:
        if own:
            pool.close()
    if failed:
        raise TournamentError(f"match {failed[0]} was voided {max_attempts} times; results so far are kept in "
                              f"{results.path}; fix the cause (see the logs) and re-run to resume")
    return ScheduleSummary(already_done=already, played=n_played, voided=n_void, stopped_early=stopped)
