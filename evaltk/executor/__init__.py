"""One executor seam for evaluation episodes, suite cases and tournament matches (``--executor local|ray``)."""

from evaltk.executor.base import (
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

__all__ = ["EXECUTORS", "Executor", "ExecutorError", "Resources", "UnitResult", "WorkUnit", "make_executor",
           "run_units", "stream"]
