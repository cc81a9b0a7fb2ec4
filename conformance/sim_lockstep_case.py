"""Suite case kind ``sim_lockstep``: two simulators env step by env step (:mod:`conformance.sim_lockstep`).

Fields: ``sim`` (the simulator under test: ``gym``, ``gpu_env``, ``envpool`` or ``MODULE:CALLABLE``),
``reference`` (default ``gym``), ``env_id``, ``steps``, ``seed`` (default 0), ``terminal_obs`` (default
true), ``compare`` (a list of ``obs``, ``reward``, ``terminated``, ``truncated``, ``lives``; default all)
and ``profile`` (default false: stop at the first difference; true: run every step and profile each
compared field, :mod:`conformance.sim_profile`). The case passes when no compared field differs at any
step; its details hold the first difference and, for a non-default case, ``compare``, ``episode_ends``
and the ``profile``. Files go to ``workdir/<case name>/`` (with ``profile``: ``.../FIELD/``).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from conformance.case import Case, CaseResult, FieldSpec, Outcome, at_least
from conformance.cases import simulator_name
from conformance.sim_profile import FIELDS, compare_problem

SIM_LOCKSTEP_FIELDS: dict[str, FieldSpec] = {
    "sim": FieldSpec((str,), required=True, check=simulator_name),
    "reference": FieldSpec((str,), check=simulator_name),
    "env_id": FieldSpec((str,), required=True, check=lambda v: None if "/" in v or "-v" in v else
                        "must be a gymnasium id such as ALE/Pong-v5"),
    "steps": FieldSpec((int,), required=True, check=at_least(1)),
    "seed": FieldSpec((int,), check=at_least(0)),
    "terminal_obs": FieldSpec((bool,)),
    "compare": FieldSpec((list,), check=compare_problem),
    "profile": FieldSpec((bool,)),
}


def check_sim_lockstep_case(params: Mapping[str, Any]) -> str | None:
    """Return why the case's ``env_id`` is not an Atari id ale-py registers (with the close ones), or None."""
    from evaltk.envs.atari import check_env_id
    from evaltk.errors import SpecError

    try:
        check_env_id(str(params["env_id"]))
    except SpecError as exc:
        return str(exc)
    return None


def run_sim_lockstep_case(case: Case, workdir: Path) -> CaseResult:
    """Step ``sim`` and ``reference`` side by side; pass when no compared field differs at any step.

    Without ``profile`` the run stops at the first difference (its files go to ``workdir/<case name>/``); with
    it every step runs and the message and details hold each compared field's profile.
    """
    from conformance.sim_lockstep import SimLockstepConfig, run_sim_lockstep

    start = time.perf_counter()
    p = case.params
    config = SimLockstepConfig(str(p["sim"]), str(p["env_id"]), int(p["steps"]),
                               reference=str(p.get("reference", "gym")), seed=int(p.get("seed", 0)),
                               terminal_obs=bool(p.get("terminal_obs", True)),
                               compare=tuple(p.get("compare", FIELDS)), profile=bool(p.get("profile", False)))
    result = run_sim_lockstep(config, out=workdir / case.name)
    outcome = Outcome.PASSED if result.identical else Outcome.FAILED
    return CaseResult(case, outcome, result.summary(), time.perf_counter() - start,
                      {"identical": result.identical, "steps": result.steps,
                       "first_difference": None if result.first_difference is None
                       else result.first_difference.as_dict(), **result.extras()})
