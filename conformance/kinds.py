"""The case kinds of conformance suites: kind name -> :class:`conformance.case.Kind`, one ``register`` call each.

Adding a kind means writing its fields and runner (a module of its own, like :mod:`conformance.bots_case`)
and one :func:`register` call here; :mod:`conformance.suite` checks and runs cases against :data:`KINDS` only.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from conformance.bots_case import BOTS_FIELDS, check_bots_case, run_bots_case
from conformance.case import Kind
from conformance.cases import (
    LOCKSTEP_FIELDS,
    OLD_TRACE_NAMES,
    OLD_TRANSFER_NAMES,
    TRACE_FIELDS,
    TRANSFER_FIELDS,
    build_transfer_case,
    check_lockstep_case,
    check_trace_case,
    run_lockstep_case,
    run_trace_case,
    run_transfer_case,
)
from conformance.doom_cases import (
    DOOM_DEMO_FIELDS,
    DOOM_TRACE_FIELDS,
    check_doom_demo_case,
    check_doom_trace_case,
    run_doom_demo_case,
    run_doom_trace_case,
)
from conformance.sim_lockstep_case import SIM_LOCKSTEP_FIELDS, check_sim_lockstep_case, run_sim_lockstep_case
from evaltk.errors import SuiteError
from evaltk.registry import Registry

KIND_REGISTRY: Registry[Kind] = Registry("case kind", SuiteError)
KINDS: Mapping[str, Kind] = MappingProxyType(KIND_REGISTRY)
"""The registered kinds (a read-only, live view of :data:`KIND_REGISTRY`)."""


def register(name: str, kind: Kind, *, replace: bool = False) -> None:
    """Register the case kind ``name`` (``kind = "NAME"`` in a suite file)."""
    KIND_REGISTRY.register(name, kind, replace=replace)


register("trace", Kind(TRACE_FIELDS, run_trace_case, check_trace_case, frozenset({"trace_file", "checkpoint"}),
                       old_names=OLD_TRACE_NAMES))
register("transfer", Kind(TRANSFER_FIELDS, run_transfer_case, build=build_transfer_case, old_names=OLD_TRANSFER_NAMES))
register("lockstep", Kind(LOCKSTEP_FIELDS, run_lockstep_case, check_lockstep_case, frozenset()))
register("sim_lockstep", Kind(SIM_LOCKSTEP_FIELDS, run_sim_lockstep_case, check_sim_lockstep_case,
                              path_fields=frozenset()))
register("doom_trace", Kind(DOOM_TRACE_FIELDS, run_doom_trace_case, check_doom_trace_case, frozenset({"trace_file"})))
register("doom_demo", Kind(DOOM_DEMO_FIELDS, run_doom_demo_case, check_doom_demo_case, frozenset({"results"})))
register("bots", Kind(BOTS_FIELDS, run_bots_case, check_bots_case, frozenset(), frozenset({"checkpoint", "baseline"})))
