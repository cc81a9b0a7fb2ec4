"""The built-in case kinds of conformance suites and the functions that run them."""

from __future__ import annotations

import time
from pathlib import Path

from conformance.suite import Case, CaseResult, Outcome, register_kind
from conformance.trace import AleBackend, Trace, TraceBackend, load, record_ale, replay

TRACE_FIELDS: dict[str, tuple[tuple[type, ...], bool]] = {
    "rom": ((str,), True),
    "frames": ((int,), True),
    "seed": ((int,), True),
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


def register_all() -> None:
    """Register every built-in case kind with the suite runner."""
    register_kind("trace", TRACE_FIELDS, run_trace_case)
