"""The built-in case kinds of conformance suites and the functions that run them."""

from __future__ import annotations

import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from conformance.case import Case, CaseResult, FieldSpec, Outcome, at_least, between, one_of
from conformance.lockstep import ACTION_SETS, START_MODES, LockstepConfig, LockstepError, run_lockstep
from conformance.policy_trace import policy_problem, policy_trace_for
from conformance.trace import Trace, TraceError, batch_for, cached, load, record_ale, replay, rom_md5, rom_problem
from evaltk.locations import Resolved, resolve
from evaltk.margin import MarginKind
from evaltk.verdict import Verdict, VerdictRule

TRACE_SIMULATORS = ("ale", "gpu_env")  # what replays the recording: ale-py itself (drift) or gpu_env's CPU backend
_BATCH_BACKEND = {"ale": "ale_py", "gpu_env": "cpu"}  # the gpu_env backend that runs each simulator
OLD_TRACE_NAMES = {"backend": "simulator"}
"""A trace case's fields under their older names (older -> current), read as the current ones."""
TRACE_FIELDS: dict[str, FieldSpec] = {
    "rom": FieldSpec((str,)),
    "frames": FieldSpec((int,), required=True, check=at_least(1)),
    "seed": FieldSpec((int,), check=at_least(0)),
    "repeat_action_probability": FieldSpec((float, int), check=between(0.0, 1.0)),
    "simulator": FieldSpec((str,), check=one_of(TRACE_SIMULATORS)),
    "backend": FieldSpec((str,), check=one_of(TRACE_SIMULATORS)),
    "trace_file": FieldSpec((str,)),
    "checkpoint": FieldSpec((str,), check=lambda v: None if v else "must not be empty"),
}


def check_trace_case(params: Mapping[str, Any]) -> str | None:
    """Return why a trace case cannot run, or None.

    It cannot without ``trace_file``, ``rom`` + ``seed`` or ``checkpoint`` + ``seed``, or with a bad trace file or
    a ``rom`` that names no ROM.
    """
    if "trace_file" not in params and not ({"rom", "seed"} <= set(params) or {"checkpoint", "seed"} <= set(params)):
        return ("a trace case needs trace_file, or rom + seed (random play) or checkpoint + seed (the policy's play) "
                "to record one (and frames in every case)")
    if "trace_file" in params:
        try:
            load(Path(str(params["trace_file"])))
        except TraceError as exc:
            return str(exc)
    return rom_problem(str(params["rom"])) if "rom" in params else None


def _evidence_problem(case: Case, trace: Trace, source: str, checkpoint: str | None) -> str | None:
    """Return what makes ``trace`` unfit as evidence for ``case`` (too short, other settings or ROM), or None."""
    p, h = case.params, trace.header
    declared = int(p["frames"])
    if trace.frames < declared:
        return (f"{source} holds {trace.frames} frames but the case declares frames = {declared}: "
                "a shorter trace is not evidence for it; record a trace of at least that length")
    policy = h.get("actions", {}).get("kind") == "policy"
    recorded = {"rom": h.get("rom"), "seed": h["actions"]["env_seed"] if policy else h.get("seed"),
                "repeat_action_probability": h.get("settings", {}).get("repeat_action_probability")}
    problem = policy_problem(p, h, source, checkpoint)
    if problem is not None:
        return problem
    for key, value in recorded.items():
        if key in p and p[key] != value:
            return f"the case sets {key} = {p[key]!r} but {source} was recorded with {value!r}"
    actual = rom_md5(str(h["rom"]))
    if h.get("rom_md5") != actual:
        return (f"{source} was recorded on ROM md5 {h.get('rom_md5')!r}, the installed {h['rom']!r} has md5 "
                f"{actual}: not the same ROM; record the trace again with this ROM")
    return None


def run_trace_case(case: Case, workdir: Path) -> CaseResult:
    """Replay ``frames`` frames of a trace of ale-py on a simulator; record it from ale-py first if no file is given.

    ``simulator = "ale"`` checks that the installed ale-py still reproduces the recording (reference drift,
    or determinism when the trace was just recorded); ``simulator = "gpu_env"`` checks the emulator (its
    CPU backend); the suite loader reads ``backend``, the field's older name, as ``simulator``. A
    trace shorter than ``frames``, recorded with other settings or on another ROM (md5) fails the case.
    """
    start = time.perf_counter()
    p = case.params
    simulator = str(p.get("simulator", "ale"))
    prob = float(p.get("repeat_action_probability", 0.25))
    declared = int(p["frames"])
    where = resolve(str(p["checkpoint"])) if "checkpoint" in p else None
    trace, source = _get_trace(case, workdir, prob, where)
    problem = _evidence_problem(case, trace, source, None if where is None else where.ref)
    details: dict[str, Any] = {"frames": declared, "recorded_frames": trace.frames, "simulator": simulator,
                               "rom": trace.header["rom"]}
    if problem is not None:
        return CaseResult(case, Outcome.FAILED, problem, time.perf_counter() - start, details)
    divergence = replay(trace, batch_for(trace, _BATCH_BACKEND[simulator]), declared)
    seconds = time.perf_counter() - start
    if divergence is None:
        return CaseResult(case, Outcome.PASSED, f"{declared} frames identical on {simulator} "
                          f"({trace.frames} recorded)", seconds, details)
    details["first_divergence"] = divergence.frame
    return CaseResult(case, Outcome.FAILED, divergence.summary(), seconds, details)


def _get_trace(case: Case, workdir: Path, prob: float, where: Resolved | None) -> tuple[Trace, str]:
    p = case.params
    if "trace_file" in p:
        return load(Path(str(p["trace_file"]))), f"trace file {p['trace_file']}"
    if where is not None:
        return policy_trace_for(where, int(p["frames"]), int(p["seed"]), workdir)
    rom, frames, seed = str(p["rom"]), int(p["frames"]), int(p["seed"])
    path = workdir / "traces" / f"{rom}_seed{seed}_frames{frames}_p{prob:g}.npz"
    trace = cached(path, lambda: record_ale(rom, frames=frames, seed=seed, repeat_action_probability=prob))
    return trace, f"recorded trace {path}"


MARGIN_KINDS = tuple(k.value for k in MarginKind)
VERDICTS = tuple(v.value for v in Verdict)
OLD_TRANSFER_NAMES = {"backend_a": "simulator_a", "backend_b": "simulator_b"}
"""A transfer case's simulator fields under their older names (older -> current), read as the current ones."""
TRANSFER_DOOM_FIX = ('set simulator_b = "gym" and give a baseline table (gym runs ViZDoom, and no other simulator '
                     "runs Doom envs to compare it with)")
"""What a transfer case of a Doom checkpoint does instead of a simulator that runs Atari only."""


def simulator_name(value: Any) -> str | None:
    """Return why ``value`` names no simulator (:func:`evaltk.simulators.check_name`), or None."""
    from evaltk.simulators import SimulatorError, check_name

    try:
        check_name(str(value), option="simulator")
    except SimulatorError as exc:
        return str(exc).removeprefix(f"simulator {str(value)!r} ")  # the loader names the field and its value
    return None


TRANSFER_FIELDS: dict[str, FieldSpec] = {
    "checkpoint": FieldSpec((str,), required=True, check=lambda v: None if v else "must not be empty"),
    "env_id": FieldSpec((str,)),
    "episodes": FieldSpec((int,), required=True, check=at_least(2)),
    "seed": FieldSpec((int,), required=True, check=at_least(0)),
    "seed_b": FieldSpec((int,), check=at_least(0)),
    "simulator_a": FieldSpec((str,), check=simulator_name),
    "simulator_b": FieldSpec((str,), check=simulator_name),
    "backend_a": FieldSpec((str,), check=simulator_name),
    "backend_b": FieldSpec((str,), check=simulator_name),
    "baseline": FieldSpec((str,)),
    "margin": FieldSpec((float, int), required=True, check=between(0.0, float("inf"), open_ends=True)),
    "margin_kind": FieldSpec((str,), required=True, check=one_of(MARGIN_KINDS)),
    "alpha": FieldSpec((float,), check=between(0.0, 0.5, open_ends=True)),
    "expect": FieldSpec((str,), check=one_of(VERDICTS)),
    "num_envs": FieldSpec((int,), check=at_least(1)),
    "unpaired": FieldSpec((bool,)),
    "allow_different_envs": FieldSpec((bool,)),
}


def transfer_rule(params: Mapping[str, Any]) -> VerdictRule:
    """Return the case's verdict rule (the rest as ``evaltk compare`` and ``evaltk validate`` default it).

    From ``margin``, ``margin_kind``, ``alpha``, ``unpaired`` (``--unpaired``) and ``allow_different_envs``.
    """
    return VerdictRule(margin=float(params["margin"]), kind=MarginKind(str(params["margin_kind"])),
                       alpha=float(params.get("alpha", 0.05)), paired=not bool(params.get("unpaired", False)),
                       allow_different_envs=bool(params.get("allow_different_envs", False)))


def build_transfer_case(params: Mapping[str, Any]) -> dict[str, Any]:
    """Return ``{"rule": the verdict rule}``, built once when the suite loads.

    A bad rule raises :class:`~evaltk.verdict.CompareError`.
    """
    return {"rule": transfer_rule(params)}


def run_transfer_case(case: Case, workdir: Path) -> CaseResult:
    """Evaluate a checkpoint on two simulators (or against a stored baseline table) and test the verdict.

    The case is ``evaltk validate`` through another door, with the same comparison
    (:func:`evaltk.verdict.compare`) and the same verdict line. Side A, the reference, is ``baseline`` (a score
    table, checked against the checkpoint's env before any episode: a table of another env is a case error naming
    both, unless ``allow_different_envs = true``) or ``episodes`` episodes on ``simulator_a`` (default ``gym``)
    with base seed ``seed``; side B is ``episodes`` episodes on ``simulator_b`` (default ``gpu_env``) with base
    seed ``seed_b`` (default ``seed``). Rows pair by seed unless ``unpaired = true``; episodes that are the same
    step for step on at least 10 shared seeds give ``identical``. Inference runs on the command line's torch
    threads (the :class:`~evaltk.evaluation.plan.EvalRequest` default). Passes when the verdict equals ``expect``
    (default ``equivalent``).
    """
    from evaltk.evaluation.plan import EvalConfig, plan_all
    from evaltk.evaluation.run import plan_sample, run_plan
    from evaltk.evaluation.samples import load_sample
    from evaltk.evaluation.validate import side_label
    from evaltk.verdict import check_envs, compare

    start = time.perf_counter()
    p = case.params
    rule: VerdictRule = case.built["rule"]

    def config(name: str, seed: int, simulator: str) -> EvalConfig:
        return EvalConfig(checkpoint=str(p["checkpoint"]), out=workdir / case.name / name, episodes=int(p["episodes"]),
                          seed=seed, num_envs=int(p.get("num_envs", 4)),
                          env_id=str(p["env_id"]) if "env_id" in p else None, simulator=simulator)

    sides = [config("b", int(p.get("seed_b", p["seed"])), str(p.get("simulator_b", "gpu_env")))]
    if "baseline" not in p:  # both sides planned together: one policy load, every simulator checked first
        sides.insert(0, config("a", int(p["seed"]), str(p.get("simulator_a", "gym"))))
    plans = plan_all(sides, options=["simulator_a", "simulator_b"][-len(sides):], doom_fix=TRANSFER_DOOM_FIX)
    b_plan = plans[-1]
    if "baseline" in p:
        a = load_sample(Path(str(p["baseline"])), label=side_label("reference", None, baseline=True))
        b_header = plan_sample(b_plan, [], side_label("sim", b_plan.simulator_name))
        check_envs(a, b_header, allow_different_envs=rule.allow_different_envs)
    else:
        a = run_plan(plans[0]).sample.with_label(side_label("reference", plans[0].simulator_name))
    b = run_plan(b_plan).sample.with_label(side_label("sim", b_plan.simulator_name))
    result = compare(a, b, rule)
    expect = str(p.get("expect", "equivalent"))
    verdict = result.verdict.value
    outcome = Outcome.PASSED if verdict == expect else Outcome.FAILED
    message = f"expected {expect}: {result.verdict_line()}; {result.decision.explanation}"
    return CaseResult(case, outcome, message, time.perf_counter() - start,
                      {"verdict": verdict, "n_a": a.n, "n_b": b.n, "comparison": result.to_dict()})


LOCKSTEP_FIELDS: dict[str, FieldSpec] = {
    "game": FieldSpec((str,), required=True, check=lambda v: None if v else "must not be empty"),
    "frames": FieldSpec((int,), required=True, check=at_least(1)),
    "seed": FieldSpec((int,), check=at_least(0)),
    "start": FieldSpec((str,), check=one_of(START_MODES)),
    "num_envs": FieldSpec((int,), check=at_least(1)),
    "actions": FieldSpec((str,), check=one_of(ACTION_SETS)),
    "repeat_action_probability": FieldSpec((float, int), check=between(0.0, 1.0)),
    "frameskip": FieldSpec((int,), check=at_least(1)),
    "mode": FieldSpec((int,), check=at_least(0)),
    "difficulty": FieldSpec((int,), check=at_least(0)),
    "max_num_frames_per_episode": FieldSpec((int,), check=at_least(0)),
    "warmup_frames": FieldSpec((int,), check=at_least(0)),
}


def lockstep_config(params: Mapping[str, Any]) -> LockstepConfig:
    """Return the :class:`conformance.lockstep.LockstepConfig` of a ``lockstep`` case (the CLI's defaults)."""
    p = params
    return LockstepConfig(
        str(p["game"]), int(p["frames"]), seed=int(p.get("seed", 0)), start=str(p.get("start", "ale-state")),
        num_envs=int(p.get("num_envs", 1)), actions=str(p.get("actions", "minimal")),
        repeat_action_probability=float(p.get("repeat_action_probability", 0.0)), frameskip=int(p.get("frameskip", 1)),
        mode=p.get("mode"), difficulty=p.get("difficulty"),
        max_num_frames_per_episode=int(p.get("max_num_frames_per_episode", 0)), warmup_frames=p.get("warmup_frames"))


def check_lockstep_case(params: Mapping[str, Any]) -> str | None:
    """Return why a ``lockstep`` case's settings cannot run together (:class:`LockstepError`'s message), or None."""
    try:
        lockstep_config(params)
    except LockstepError as exc:
        return str(exc)
    return None


def run_lockstep_case(case: Case, workdir: Path) -> CaseResult:
    """Step gpu_env next to live ale-py (:func:`conformance.lockstep.run_lockstep`); pass when every frame is equal.

    A divergence fails the case; its difference image goes to ``workdir/<case name>/``.
    """
    start = time.perf_counter()
    result = run_lockstep(lockstep_config(case.params), png_dir=workdir / case.name)
    outcome = Outcome.FAILED if result.diverged else Outcome.PASSED
    return CaseResult(case, outcome, result.summary(), time.perf_counter() - start, result.as_dict())
