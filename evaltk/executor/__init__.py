"""One executor seam for evaluation episodes, suite cases and tournament matches (``--executor local|ray``).

:mod:`evaltk.executor.base` holds the seam (work units, results, the protocol); this package holds the registry of
executors by name, each a module (:mod:`evaltk.executor.local`, :mod:`evaltk.executor.ray_executor`) imported only
when chosen.
"""

from __future__ import annotations

from collections.abc import Callable, Generator

from evaltk.executor.base import (
    Executor,
    ExecutorError,
    ExecutorModule,
    Resources,
    UnitResult,
    UnitsFor,
    WorkUnit,
    stream,
)
from evaltk.registry import Registry

EXECUTOR_MODULES: Registry[Callable[[], ExecutorModule]] = Registry("executor", ExecutorError)
"""Executor name -> the function that imports its module (Ray is imported only when ``ray`` is chosen)."""
EXECUTORS = EXECUTOR_MODULES.keys()
"""The executors ``--executor`` accepts (a live view of :data:`EXECUTOR_MODULES`)."""


def _local() -> ExecutorModule:
    from evaltk.executor import local

    return local


def _ray() -> ExecutorModule:
    from evaltk.executor import ray_executor

    return ray_executor


EXECUTOR_MODULES.register("local", _local)
EXECUTOR_MODULES.register("ray", _ray)


def run_units(name: str, units: UnitsFor, *,
              ray_address: str | None = None) -> Generator[UnitResult, None, None]:
    """Build the executor ``name`` (:func:`make_executor`'s defaults), run ``units`` on it and yield the results.

    The executor module builds the executor, asks ``units`` for the work and streams it (:func:`stream`) in one
    call; it is closed when the results end (cancelled first on an exception, or when the caller closes the
    generator early).
    """
    yield from EXECUTOR_MODULES[name]().run_units(units, ray_address=ray_address)


def make_executor(name: str, *, ray_address: str | None = None, workers: int = 1,
                  mode: str = "inline") -> Executor:
    """Build the executor named ``name`` (a name of :data:`EXECUTORS`: ``local`` or ``ray``).

    ``local``: ``mode`` (``inline``, ``threads`` or ``processes``) with ``workers`` at once. ``ray``:
    connects to ``ray_address`` (or ``RAY_ADDRESS``, or a local cluster); Ray is imported only here.
    """
    return EXECUTOR_MODULES[name]().make_executor(ray_address=ray_address, workers=workers, mode=mode)


__all__ = ["EXECUTORS", "EXECUTOR_MODULES", "Executor", "ExecutorError", "Resources", "UnitResult", "WorkUnit",
           "make_executor", "run_units", "stream"]
