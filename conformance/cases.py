"""The built-in case kinds of conformance suites and the functions that run them."""

from __future__ import annotations

import time
from pathlib import Path

from conformance.suite import Case, CaseResult, Outcome, register_kind
from conformance.trace import AleBackend, Trace, TraceBackend, load, record_ale, replay

TRACE_FIELDS: dict[str, tuple[tuple[type, ...], bool]] = {
    "rom": ((str,), False),
    "frames": ((int,), False),
    "seed": ((int,), False),
    "repeat_action_probability": ((float, int), False),
    "backend": ((str,), False),
    "trace_file": ((str,), False),
}
TRACE_BACKENDS = ("ale", "gpu_env")


def run_trace_case(case: Case, workdir: Path) -> CaseResult:
    """Replay a trace of ale-py against a backend; record it from ale-py first if no file is given.

    ``backend = "ale"`` checks that the installed ale-py still reproduces the recording (reference drift,
    or determinism when the trace was just recorded); ``backend = "gpu_env"`` checks the emulator.
    """
    start = time.perf_counter()
    p = case.params
    backend_name = str(p.get("backend", "ale"))
    if backend_name not in TRACE_BACKENDS:
        return CaseResult(case, Outcome.ERROR, f"backend {backend_name!r} is not one of {TRACE_BACKENDS}",
                          time.perf_counter() - start)
    if "trace_file" not in p and not {"rom", "frames", "seed"} <= set(p):
        return CaseResult(case, Outcome.ERROR, "a trace case needs trace_file, or rom + frames + seed to record one",
                          time.perf_counter() - start)
    prob = float(p.get("repeat_action_probability", 0.25))
    trace = _get_trace(case, workdir, prob)
    settings = trace.header["settings"]
    backend = _make_backend(backend_name, trace.header["rom"], int(trace.header["seed"]),
                            float(settings["repeat_action_probability"]))
    divergence = replay(trace, backend)
    seconds = time.perf_counter() - start
    details = {"frames": trace.frames, "backend": backend_name, "rom": trace.header["rom"]}
    if divergence is None:
        return CaseResult(case, Outcome.PASSED, f"{trace.frames} frames identical on {backend_name}", seconds, details)
    details["first_divergence"] = divergence.frame
    return CaseResult(case, Outcome.FAILED, divergence.summary(), seconds, details)


def _get_trace(case: Case, workdir: Path, prob: float) -> Trace:
    p = case.params
    if "trace_file" in p:
        return load(Path(str(p["trace_file"])))
    rom, frames, seed = str(p["rom"]), int(p["frames"]), int(p["seed"])
    cached = workdir / "traces" / f"{rom}_seed{seed}_frames{frames}_p{prob:g}.npz"
    if cached.is_file():
        return load(cached)
    trace = record_ale(rom, frames=frames, seed=seed, repeat_action_probability=prob)
    trace.save(cached)
    return trace


def _make_backend(name: str, rom: str, seed: int, prob: float) -> TraceBackend:
    if name == "ale":
        return AleBackend(rom, seed=seed, repeat_action_probability=prob)
    from conformance.gpu_env_backend import GpuEnvBackend

    return GpuEnvBackend(rom, seed=seed, repeat_action_probability=prob)


TRANSFER_FIELDS: dict[str, tuple[tuple[type, ...], bool]] = {
    "checkpoint": ((str,), True),
    "env_id": ((str,), False),
    "episodes": ((int,), True),
    "seed": ((int,), True),
    "seed_b": ((int,), False),
    "backend_a": ((str,), False),
    "backend_b": ((str,), False),
    "baseline": ((str,), False),
    "margin": ((float, int), True),
    "margin_kind": ((str,), True),
    "alpha": ((float,), False),
    "expect": ((str,), False),
    "num_envs": ((int,), False),
}


def run_transfer_case(case: Case, workdir: Path) -> CaseResult:
    """Evaluate a checkpoint on two backends (or against a stored baseline table) and test the verdict.

    Side A is ``baseline`` (a score table) if given, else ``episodes`` episodes on ``backend_a``
    (default ``gym``, the reference) with base seed ``seed``; side B is ``episodes`` episodes on
    ``backend_b`` (default ``gpu_env``) with base seed ``seed_b`` (default ``seed + 1``: independent
    episodes, so the check is statistical, not a replay). Passes when ``evaltk compare``'s verdict
    equals ``expect`` (default ``equivalent``).
    """
    from evaltk.compare import compare
    from evaltk.evaluate import EvalConfig, evaluate
    from evaltk.scores import read_scores

    start = time.perf_counter()
    p = case.params
    env_id = str(p["env_id"]) if "env_id" in p else None

    def side(name: str, seed: int, backend: str) -> list[float]:
        config = EvalConfig(checkpoint=str(p["checkpoint"]), out=workdir / case.name / name,
                            episodes=int(p["episodes"]), seed=seed, num_envs=int(p.get("num_envs", 4)),
                            env_id=env_id, backend=backend)
        return [float(r["return"]) for r in evaluate(config).rows]

    if "baseline" in p:
        scores_a = [float(x) for x in read_scores(Path(str(p["baseline"]))).returns]
    else:
        scores_a = side("a", int(p["seed"]), str(p.get("backend_a", "gym")))
    scores_b = side("b", int(p.get("seed_b", int(p["seed"]) + 1)), str(p.get("backend_b", "gpu_env")))
    result = compare(scores_a, scores_b, float(p["margin"]), str(p["margin_kind"]),
                     alpha=float(p.get("alpha", 0.05)), seed=int(p["seed"]))
    expect = str(p.get("expect", "equivalent"))
    verdict = result.verdict.value
    outcome = Outcome.PASSED if verdict == expect else Outcome.FAILED
    message = f"verdict {verdict} (expected {expect}): {result.summary()}"
    return CaseResult(case, outcome, message, time.perf_counter() - start,
                      {"verdict": verdict, "n_a": len(scores_a), "n_b": len(scores_b)})


def register_all() -> None:
    """Register every built-in case kind with the suite runner."""
    register_kind("trace", TRACE_FIELDS, run_trace_case)
    register_kind("transfer", TRANSFER_FIELDS, run_transfer_case)
