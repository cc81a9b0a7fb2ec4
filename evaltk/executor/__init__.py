"""One executor seam for evaluation episodes, suite cases and tournament matches (``--executor local|ray``)."""

from evaltk.executor.base import (
    EXECUTORS,
    Executor,
    ExecutorError,
    Resources,
    UnitResult,
    WorkUnit,
    make_executor,
    stream,
)

__all__ = ["EXECUTORS", "Executor", "ExecutorError", "Resources", "UnitResult", "WorkUnit", "make_executor", "stream"]
