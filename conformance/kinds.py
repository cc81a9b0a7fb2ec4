"""The built-in case kinds of conformance suites, listed explicitly: kind name -> :class:`conformance.case.Kind`.

Adding a kind means writing its fields and runner (a module of its own, like :mod:`conformance.bots_case`)
and adding one entry here; :mod:`conformance.suite` checks and runs cases against this table only.
"""

from __future__ import annotations

from collections.abc import Mapping

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
from conformance.sim_lockstep_case import SIM_LOCKSTEP_FIELDS, run_sim_lockstep_case

KINDS: Mapping[str, Kind] = {
    "trace": Kind(TRACE_FIELDS, run_trace_case, check_trace_case, frozenset({"trace_file", "checkpoint"}),
                  old_names=OLD_TRACE_NAMES),
    "transfer": Kind(TRANSFER_FIELDS, run_transfer_case, build=build_transfer_case, old_names=OLD_TRANSFER_NAMES),
    "lockstep": Kind(LOCKSTEP_FIELDS, run_lockstep_case, check_lockstep_case, frozenset()),
    "sim_lockstep": Kind(SIM_LOCKSTEP_FIELDS, run_sim_lockstep_case, path_fields=frozenset()),
    "doom_trace": Kind(DOOM_TRACE_FIELDS, run_doom_trace_case, check_doom_trace_case, frozenset({"trace_file"})),
    "doom_demo": Kind(DOOM_DEMO_FIELDS, run_doom_demo_case, check_doom_demo_case, frozenset({"results"})),
    "bots": Kind(BOTS_FIELDS, run_bots_case, check_bots_case, frozenset(), frozenset({"checkpoint", "baseline"})),
}
