"""One executor seam for evaluation episodes, suite cases and tournament matches (``--executor local|ray``)."""

from evaltk.executor.base import (
    EXECUTOR_MODULES,
    EXECUTORS,
    Executor,
    ExecutorError,
    Resources,
    UnitResult,
    WorkUnit,
    make_executor,
    run_units,
    stream,
)

__all__ = ["EXECUTORS", "EXECUTOR_MODULES", "Executor", "ExecutorError", "Resources", "UnitResult", "WorkUnit",
           "make_executor", "run_units", "stream"]
