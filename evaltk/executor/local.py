"""The local executor: units run on this machine, as evaltk has always run them.

Three modes, one interface:

* ``inline``: each unit runs in this process when :meth:`LocalExecutor.next_done` is called, one at a
  time, in submission order (suite cases; an evaluation, whose env workers are its own processes).
* ``threads``: ``workers`` threads (tournament matches: each match's players are processes already).
* ``processes``: a pool of ``workers`` processes (CPU-bound units such as the all-ROM lockstep sweep).

Declared :class:`~evaltk.executor.base.Resources` are not enforced here: ``workers`` is the limit.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Generator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, ThreadPoolExecutor, wait
from concurrent.futures import Executor as FuturesExecutor
from typing import Any

from evaltk.executor.base import ExecutorContext, ExecutorError, UnitResult, UnitsFor, WorkUnit, run_on

MODES = ("inline", "threads", "processes")


def _call(unit: WorkUnit) -> Any:
    return unit.fn(*unit.args, **unit.kwargs)


class LocalExecutor(ExecutorContext):
    """Run units in this process, in ``workers`` threads or in a pool of ``workers`` processes."""

    name = "local"

    def __init__(self, *, mode: str = "inline", workers: int = 1) -> None:
        if mode not in MODES:
            raise ExecutorError(f"local executor mode {mode!r}: use one of {', '.join(MODES)}")
        if workers < 1:
            raise ExecutorError(f"local executor workers = {workers}: use 1 or more")
        self.mode = mode
        self.workers = 1 if mode == "inline" else workers
        self.in_process = mode != "processes"
        self._queue: deque[WorkUnit] = deque()
        self._running: dict[Future[Any], WorkUnit] = {}
        self._pool: FuturesExecutor | None = None

    def slots(self) -> int:
        """``workers`` (1 inline)."""
        return self.workers

    def submit(self, unit: WorkUnit) -> None:
        """Queue ``unit`` (inline) or hand it to the pool."""
        if self.mode == "inline":
            self._queue.append(unit)
            return
        if self._pool is None:
            self._pool = (ThreadPoolExecutor(max_workers=self.workers) if self.mode == "threads"
                          else ProcessPoolExecutor(max_workers=self.workers))
        self._running[self._pool.submit(_call, unit)] = unit

    def in_flight(self) -> int:
        """Units queued or running."""
        return len(self._queue) + len(self._running)

    def next_done(self) -> UnitResult:
        """Run the next queued unit (inline) or wait for the first pool unit to finish."""
        if self._queue:
            unit = self._queue.popleft()
            return UnitResult(unit.unit_id, _call(unit))
        if not self._running:
            raise ExecutorError("next_done() with no unit in flight: submit a unit first")
        done, _ = wait(list(self._running), return_when=FIRST_COMPLETED)
        fut = next(iter(done))
        unit = self._running.pop(fut)
        return UnitResult(unit.unit_id, fut.result())

    def cancel(self) -> None:
        """Drop queued units and pool units not yet started; wait for the running ones to return."""
        self._queue.clear()
        for fut in self._running:
            fut.cancel()
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None
        self._running.clear()

    def close(self) -> None:
        """Shut the pool down (waiting for running units)."""
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None


def make_executor(*, ray_address: str | None = None, workers: int = 1, mode: str = "inline") -> LocalExecutor:
    """Return a :class:`LocalExecutor`; a ``ray_address`` is refused (the local executor uses no cluster)."""
    if ray_address is not None:
        raise ExecutorError(f"--ray-address {ray_address} needs --executor ray (the local executor uses no cluster)")
    return LocalExecutor(mode=mode, workers=workers)


def run_units(units: UnitsFor, *, ray_address: str | None = None) -> Generator[UnitResult, None, None]:
    """Build an inline :class:`LocalExecutor`, run the units ``units`` gives for it, yield their results; close it."""
    yield from run_on(make_executor(ray_address=ray_address), units)
