"""Suite case kinds for Doom recordings: ``doom_trace`` (a ViZDoom trace replayed tic for tic) and ``doom_demo``.

``doom_trace`` (``trace_file``, ``scenario``, ``seed``, ``tics``, optional ``frameskip``): the trace is
loaded and checked when the suite is loaded (kind, length, digest); running the case replays ``tics``
tics on the installed ViZDoom with the case's seed and frameskip (the recorded ones by default) and
compares reward, game variables, done flag and buffer hashes every tic. A trace shorter than ``tics``,
of another scenario or recorded with other settings fails the case; a divergence names the first tic,
the variables that moved and a difference image. A recorded ViZDoom version other than the installed one
is named in the message whether the case passes or fails.

``doom_demo`` (``results``: a tournament's ``results.jsonl`` or its folder; optional ``min_demos``): every
played match recorded with ``--record`` is replayed (:func:`evaltk.tournament.demos.verify_demo`) and its
per-slot frags compared with the recorded ones; the case passes when every demo reproduces them.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from conformance.case import Case, CaseResult, FieldSpec, Outcome, at_least
from conformance.doom_trace import DoomTrace, load_doom, replay_doom, version_note
from conformance.trace_file import TraceError
from evaltk.registry import did_you_mean


def known_scenario(name: Any) -> str | None:
    """Return why ``name`` is not a scenario of :data:`evaltk.envs.doom.SCENARIOS`, or None."""
    from evaltk.envs.doom import SCENARIOS

    if name in SCENARIOS:
        return None
    hint = did_you_mean(str(name), SCENARIOS)
    return f"is not a known Doom scenario: {hint}use one of {', '.join(sorted(SCENARIOS))}"


DOOM_TRACE_FIELDS: dict[str, FieldSpec] = {
    "trace_file": FieldSpec((str,), required=True),
    "scenario": FieldSpec((str,), required=True, check=known_scenario),
    "seed": FieldSpec((int,), required=True, check=at_least(0)),
    "tics": FieldSpec((int,), required=True, check=at_least(1)),
    "frameskip": FieldSpec((int,), check=at_least(1)),
}


def check_doom_trace_case(params: Mapping[str, Any]) -> str | None:
    """Load the trace file (kind, length, digest) before anything runs; return the problem, or None."""
    try:
        load_doom(str(params["trace_file"]))
    except TraceError as exc:
        return str(exc)
    return None


def _settings_problems(case: Case, trace: DoomTrace) -> tuple[list[str], list[str]]:
    """Return ``(blocking, replayed)``: problems that stop the replay, and settings replayed as the case asks."""
    from evaltk.envs.doom import get_scenario

    p, h = case.params, trace.header
    blocking = []
    if trace.tics < int(p["tics"]):
        blocking.append(f"the trace holds {trace.tics} tics but the case declares tics = {p['tics']}: a shorter "
                        "trace is not evidence for it; record one of at least that length")
    if p["scenario"] != h["scenario"]:
        blocking.append(f"the case sets scenario = {p['scenario']!r} but the trace was recorded on {h['scenario']!r}")
    else:
        now = json.loads(json.dumps(get_scenario(str(h["scenario"])).to_dict()))
        changed = sorted(k for k in set(now) | set(h["scenario_spec"]) if now.get(k) != h["scenario_spec"].get(k))
        if changed:
            blocking.append(f"scenario {h['scenario']!r} is defined differently now than when the trace was recorded "
                            f"({', '.join(changed)} differ): record it again")
    replayed = [f"{key} = {p[key]} (recorded with {h[key]})" for key in ("seed", "frameskip")
                if key in p and p[key] != h[key]]
    return blocking, replayed


def run_doom_trace_case(case: Case, workdir: Path) -> CaseResult:
    """Replay a Doom trace on the installed ViZDoom (see the module docstring)."""
    start = time.perf_counter()
    p = case.params
    trace = load_doom(str(p["trace_file"]))
    note = version_note(trace.header)
    details: dict[str, Any] = {"tics": int(p["tics"]), "recorded_tics": trace.tics,
                               "vizdoom_recorded": trace.header.get("vizdoom_version"), "scenario": p["scenario"]}
    blocking, replayed = _settings_problems(case, trace)
    if blocking:
        return CaseResult(case, Outcome.FAILED, "; ".join(blocking) + note, time.perf_counter() - start, details)
    seed, frameskip = int(p["seed"]), int(p.get("frameskip", trace.header["frameskip"]))
    divergence = replay_doom(trace, tics=int(p["tics"]), seed=seed, frameskip=frameskip,
                             png_dir=workdir / case.name)
    other = f"; replayed with other settings than recorded: {', '.join(replayed)}" if replayed else ""
    seconds = time.perf_counter() - start
    if divergence is None and not replayed:
        return CaseResult(case, Outcome.PASSED, f"{p['tics']} tics identical on ViZDoom "
                          f"({p['scenario']}, seed {seed}, frameskip {frameskip}){note}", seconds, details)
    if divergence is None:
        return CaseResult(case, Outcome.FAILED, f"{p['tics']} tics identical, but{other.removeprefix(';')}{note}",
                          seconds, details)
    details["first_divergence"] = divergence.tic
    return CaseResult(case, Outcome.FAILED, divergence.summary() + other + note, seconds, details)


DOOM_DEMO_FIELDS: dict[str, FieldSpec] = {
    "results": FieldSpec((str,), required=True),
    "min_demos": FieldSpec((int,), check=at_least(1)),
    "timeout_s": FieldSpec((float, int), check=at_least(1)),
}


def _results_path(params: Mapping[str, Any]) -> Path:
    path = Path(str(params["results"]))
    return path / "results.jsonl" if path.is_dir() else path


def _recorded_rows(params: Mapping[str, Any]) -> list[dict[str, Any]]:
    from evaltk.tournament.scheduler import ResultsFile

    path = _results_path(params)
    rows = [r for _, r in sorted(ResultsFile(path).played().items()) if r.get("demo")]
    base = path.parent
    for row in rows:  # demo paths are stored as written; a shipped tournament keeps them next to results.jsonl
        if not Path(row["demo"]).is_file():
            row["demo"] = str(base / "demos" / Path(row["demo"]).name)
    return rows


def check_doom_demo_case(params: Mapping[str, Any]) -> str | None:
    """Check that ``results`` is a tournament results file with enough recorded demos that exist."""
    path = _results_path(params)
    if not path.is_file():
        return f"results {params['results']} is neither a results.jsonl file nor a tournament folder holding one"
    try:
        rows = _recorded_rows(params)
    except (ValueError, KeyError, TypeError) as exc:
        return f"results file {path} is not a tournament results file ({type(exc).__name__}: {exc})"
    need = int(params.get("min_demos", 1))
    if len(rows) < need:
        return f"results file {path} has {len(rows)} recorded demos, fewer than min_demos = {need}: run with --record"
    missing = [r["demo"] for r in rows if not Path(r["demo"]).is_file()]
    return f"demo files {missing} do not exist (looked next to {path})" if missing else None


def run_doom_demo_case(case: Case, workdir: Path) -> CaseResult:
    """Replay every recorded demo of a tournament and compare per-slot frags with the recorded ones."""
    from evaltk.tournament.demos import verify_demo

    del workdir
    start = time.perf_counter()
    rows = _recorded_rows(case.params)
    checks = [verify_demo(row, timeout_s=float(case.params.get("timeout_s", 120.0))) for row in rows]
    bad = [c for c in checks if not c.reproduced]
    details = {"demos": len(checks), "reproduced": len(checks) - len(bad)}
    seconds = time.perf_counter() - start
    if not bad:
        return CaseResult(case, Outcome.PASSED, f"{len(checks)} of {len(checks)} demos reproduced their recorded "
                          f"frags", seconds, details)
    first = bad[0]
    return CaseResult(case, Outcome.FAILED, f"{len(bad)} of {len(checks)} demos did not reproduce their frags; "
                      f"first: {first.demo}: recorded {first.recorded}, replayed {first.replayed}"
                      f"{' (a game with bots: bot decisions are not in the demo)' if first.has_bots else ''}",
                      seconds, details)
