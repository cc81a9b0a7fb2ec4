"""The Ray executor: every unit is a Ray task with its declared CPUs, GPUs and custom resources.

Ray is imported only when this executor is built. A task lost with its worker or its node is
retried by Ray (``max_retries``, on another node when its node is gone); an exception raised by
the unit itself is not retried and is raised again in the driver, unwrapped. A unit that no node of
the cluster could ever hold (more CPUs than any node has, a custom resource no node declares) is
refused before it is submitted, with the ``ray start`` option that fixes it.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
from collections.abc import Generator
from typing import Any

from evaltk.executor.base import ExecutorContext, ExecutorError, UnitResult, UnitsFor, WorkUnit, run_on

INSTALL_HINT = "pip install 'evaltk[ray]'"
MAX_RETRIES = 3
"""Times Ray restarts a unit whose worker or node died, before the driver reports it lost."""
LOCAL_OBJECT_STORE_BYTES = 100_000_000
"""Object store of a one-node cluster started by the driver itself (units return small rows)."""


def _call(unit: WorkUnit) -> Any:
    return unit.fn(*unit.args, **unit.kwargs)


def import_ray() -> Any:
    """Import and return the ``ray`` module, or raise a one-line :class:`ExecutorError` naming the extra."""
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    try:
        import ray
    except ImportError:
        raise ExecutorError(f"--executor ray needs Ray, which is not installed: {INSTALL_HINT}") from None
    return ray


class RayExecutor(ExecutorContext):
    """Run units as Ray tasks on the cluster at ``address`` (``RAY_ADDRESS``, or a running local cluster)."""

    name = "ray"
    in_process = False

    def __init__(self, *, address: str | None = None, max_retries: int = MAX_RETRIES) -> None:
        if max_retries < 0:
            raise ExecutorError(f"max_retries = {max_retries}: use 0 or more")
        ray = import_ray()
        self._ray = ray
        self.max_retries = max_retries
        self._owns_connection = not ray.is_initialized()
        if self._owns_connection:
            self.address = self._connect(ray, address or os.environ.get("RAY_ADDRESS"))
        else:
            self.address = address or "(already connected)"
        self._remote = ray.remote(_call)
        self._running: dict[Any, WorkUnit] = {}
        self._node_totals = self._alive_node_totals()

    @staticmethod
    def _connect(ray: Any, address: str | None) -> str:
        quiet: dict[str, Any] = {"logging_level": logging.ERROR, "log_to_driver": False}
        if address:
            try:
                ray.init(address=address, **quiet)
            except (ConnectionError, ValueError, RuntimeError) as exc:
                first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
                raise ExecutorError(f"cannot connect to the Ray cluster at {address} ({first}): start it with "
                                    "`ray start --head` or pass the head's address as --ray-address HOST:PORT"
                                    ) from None
            return address
        with contextlib.suppress(ConnectionError):
            ray.init(address="auto", **quiet)
            return "auto"
        ray.init(include_dashboard=False, object_store_memory=LOCAL_OBJECT_STORE_BYTES, **quiet)
        return "local"

    def _alive_node_totals(self) -> list[dict[str, float]]:
        return [dict(n["Resources"]) for n in self._ray.nodes() if n.get("Alive")]

    def _check_feasible(self, unit: WorkUnit) -> None:
        need: dict[str, float] = {"CPU": unit.resources.num_cpus, "GPU": unit.resources.num_gpus,
                                  **unit.resources.custom}
        need = {k: v for k, v in need.items() if v > 0}
        for attempt in range(2):
            if any(all(node.get(k, 0.0) >= v for k, v in need.items()) for node in self._node_totals):
                return
            if attempt == 0:
                self._node_totals = self._alive_node_totals()
        have = ", ".join(json.dumps({k: node.get(k, 0.0) for k in need}) for node in self._node_totals) or "no nodes"
        custom = {k: v for k, v in need.items() if k not in ("CPU", "GPU")}
        fix = (f"start a node with `ray start --num-cpus {need.get('CPU', 1):g}"
               + (f" --num-gpus {need['GPU']:g}" if "GPU" in need else "")
               + (f" --resources '{json.dumps(custom)}'" if custom else "") + "`")
        raise ExecutorError(f"unit {unit.unit_id} needs {json.dumps(need)} but no node of the Ray cluster at "
                            f"{self.address} has that much (nodes: {have}): {fix}")

    def slots(self) -> int:
        """Return the cluster's CPUs (at least 1): units beyond that would only wait in Ray's queue."""
        return max(1, int(sum(node.get("CPU", 0.0) for node in self._node_totals)))

    def submit(self, unit: WorkUnit) -> None:
        """Submit ``unit`` as a Ray task with its resources and ``max_retries``."""
        self._check_feasible(unit)
        res = unit.resources
        ref = self._remote.options(num_cpus=res.num_cpus, num_gpus=res.num_gpus, resources=dict(res.custom),
                                   max_retries=self.max_retries, retry_exceptions=False,
                                   name=unit.unit_id).remote(unit)
        self._running[ref] = unit

    def in_flight(self) -> int:
        """Tasks submitted and not yet returned."""
        return len(self._running)

    def next_done(self) -> UnitResult:
        """Wait for the first task to finish; raise its own exception, or :class:`ExecutorError` if it was lost."""
        if not self._running:
            raise ExecutorError("next_done() with no unit in flight: submit a unit first")
        ray = self._ray
        done, _ = ray.wait(list(self._running), num_returns=1)
        ref = done[0]
        unit = self._running.pop(ref)
        try:
            value = ray.get(ref)
        except ray.exceptions.RayTaskError as exc:
            cause = exc.cause
            if isinstance(cause, BaseException):
                raise cause from None
            raise ExecutorError(f"unit {unit.unit_id} failed on the cluster: {exc}") from None
        except ray.exceptions.RayError as exc:
            first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            raise ExecutorError(f"unit {unit.unit_id} was lost {self.max_retries + 1} times ({type(exc).__name__}: "
                                f"{first}); results so far are kept: re-run the same command to resume") from None
        finally:
            self._node_totals = self._alive_node_totals()
        return UnitResult(unit.unit_id, value)

    def cancel(self) -> None:
        """Cancel every task in flight (a KeyboardInterrupt inside each, so its cleanup runs)."""
        for ref in list(self._running):
            with contextlib.suppress(Exception):
                self._ray.cancel(ref, force=False)
        if self._running:
            with contextlib.suppress(Exception):
                self._ray.wait(list(self._running), num_returns=len(self._running), timeout=30)
        self._running.clear()

    def close(self) -> None:
        """Disconnect from the cluster (and stop it, if this executor started it)."""
        if self._owns_connection and self._ray.is_initialized():
            self._ray.shutdown()
        self._owns_connection = False


def make_executor(*, ray_address: str | None = None, workers: int = 1, mode: str = "inline") -> RayExecutor:
    """Return a :class:`RayExecutor` on ``ray_address`` (Ray schedules the units: ``workers`` and ``mode`` unused)."""
    return RayExecutor(address=ray_address)


def run_units(units: UnitsFor, *, ray_address: str | None = None) -> Generator[UnitResult, None, None]:
    """Build a :class:`RayExecutor`, run the units ``units`` gives for it and yield their results; then close it."""
    yield from run_on(make_executor(ray_address=ray_address), units)
