"""The executor seam: work units with an id and declared resources in, results out as they finish.

A :class:`WorkUnit` is a picklable call (a module-level function and its arguments) with a unique
``unit_id`` (a seed range, a suite case, a match id) and the :class:`Resources` it needs. An
:class:`Executor` runs units (:mod:`evaltk.executor.local` in this process, its threads or a process
pool; :mod:`evaltk.executor.ray_executor` as Ray tasks on a cluster) and hands back one
:class:`UnitResult` per unit, in the order they finish. The driver (evaluate, the suite runner, the
tournament scheduler) writes each result as it arrives, keyed by the unit's id, so a retried or
re-run unit never writes a second row.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable, Generator, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Protocol, Self

from evaltk.errors import EvaltkError


class ExecutorError(EvaltkError):
    """An executor cannot start or cannot run a unit (no Ray, no such cluster, a unit no node can hold)."""


@dataclass(frozen=True)
class Resources:
    """What one unit occupies while it runs: CPUs, GPUs and custom resources (e.g. ``vizdoom_engine``).

    The local executor runs units within its own concurrency limit and ignores these; Ray schedules a
    unit only on a node with that much free (``ray start --num-cpus/--num-gpus/--resources``).
    """

    num_cpus: float = 1.0
    num_gpus: float = 0.0
    custom: Mapping[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        amounts = {"num_cpus": self.num_cpus, "num_gpus": self.num_gpus, **self.custom}
        for name, value in amounts.items():
            if not (isinstance(value, int | float) and math.isfinite(value) and value >= 0):
                raise ExecutorError(f"resource {name} = {value!r}: declare a finite amount >= 0")


@dataclass(frozen=True)
class WorkUnit:
    """One keyed piece of work: ``fn(*args, **kwargs)`` needing ``resources``.

    ``fn`` must be importable by name (a module-level function) and ``args``/``kwargs`` picklable for
    the process pool and Ray; the in-process local executor also accepts closures.
    """

    unit_id: str
    fn: Callable[..., Any]
    args: tuple[Any, ...] = ()
    kwargs: Mapping[str, Any] = field(default_factory=dict)
    resources: Resources = field(default_factory=Resources)


@dataclass(frozen=True)
class UnitResult:
    """The value ``unit.fn`` returned, with the unit's id and how many times it was started."""

    unit_id: str
    value: Any
    attempts: int = 1


class Executor(Protocol):
    """Runs :class:`WorkUnit` s and returns their results as they finish.

    ``submit`` queues a unit; ``next_done`` blocks until some submitted unit finishes and returns its
    result (an exception raised by ``fn`` is raised again here, unwrapped). ``slots`` is how many
    units are worth keeping in flight; ``cancel`` stops every unit still running (their results are
    dropped) and ``close`` releases the executor's workers or its cluster connection.
    """

    name: str
    in_process: bool
    """True when units run in this process (threads or inline): they may share objects such as an Event."""

    def slots(self) -> int:
        """Units worth keeping in flight (the pool size, or the cluster's CPUs)."""
        ...

    def submit(self, unit: WorkUnit) -> None:
        """Queue ``unit``; its id must not be in flight already."""
        ...

    def in_flight(self) -> int:
        """Units submitted and not yet returned by :meth:`next_done`."""
        ...

    def next_done(self) -> UnitResult:
        """Block until a unit finishes; return its result or raise what its ``fn`` raised."""
        ...

    def cancel(self) -> None:
        """Stop every unit in flight; their results are never returned."""
        ...

    def close(self) -> None:
        """Release workers or the cluster connection (idempotent)."""
        ...

    def __enter__(self) -> Executor:
        """Return the executor itself."""
        ...

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        """Cancel what is still running on an exception, then close."""
        ...


class ExecutorContext:
    """The ``with`` behaviour every executor shares: cancel what is still running on an exception, then close."""

    def cancel(self) -> None:
        """Stop every unit in flight (the executor's own)."""
        raise NotImplementedError

    def close(self) -> None:
        """Release workers or the cluster connection (the executor's own)."""
        raise NotImplementedError

    def __enter__(self) -> Self:
        """Return the executor itself."""
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        """Cancel on an exception, then close."""
        if exc is not None:
            with contextlib.suppress(Exception):
                self.cancel()
        self.close()


def stream(executor: Executor, units: Iterable[WorkUnit]) -> Iterator[UnitResult]:
    """Run ``units`` on ``executor``, at most ``executor.slots()`` in flight; yield each result as it finishes.

    Each unit id is yielded at most once (a duplicate id in ``units`` is refused); on an exception
    (from a unit, or thrown into the generator) the units still running are cancelled.
    """
    pending = iter(units)
    seen: set[str] = set()
    exhausted = False
    try:
        while True:
            while not exhausted and executor.in_flight() < executor.slots():
                unit = next(pending, None)
                if unit is None:
                    exhausted = True
                    break
                if unit.unit_id in seen:
                    raise ExecutorError(f"work unit id {unit.unit_id!r} submitted twice: unit ids must be unique")
                seen.add(unit.unit_id)
                executor.submit(unit)
            if executor.in_flight() == 0:
                return
            yield executor.next_done()
    except BaseException:
        executor.cancel()
        raise


UnitsFor = Callable[[bool], Iterable[WorkUnit]]
"""Returns a driver's units, given whether the executor runs them in this process (``Executor.in_process``)."""


def run_on(executor: Executor, units: UnitsFor) -> Generator[UnitResult, None, None]:
    """Run the units ``units`` gives for ``executor`` on it (:func:`stream`), yield their results; then close it.

    It is closed when the results end, cancelled first on an exception or when the caller closes the generator.
    """
    with executor:
        yield from stream(executor, units(executor.in_process))


class ExecutorModule(Protocol):
    """What an executor's module provides (:mod:`evaltk.executor.local`, :mod:`evaltk.executor.ray_executor`)."""

    def make_executor(self, *, ray_address: str | None = None, workers: int = 1, mode: str = "inline") -> Executor:
        """Build the executor (``workers``/``mode``: where it has them; ``ray_address``: where it uses a cluster)."""
        ...

    def run_units(self, units: UnitsFor, *, ray_address: str | None = None) -> Generator[UnitResult, None, None]:
        """Build the executor, run the units ``units`` gives for it, yield their results; then close it."""
        ...
