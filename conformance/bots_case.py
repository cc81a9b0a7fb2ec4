"""Suite case kind ``bots``: an agent against ViZDoom's scripted bots with one declared statistical expectation.

Fields: ``checkpoint`` (a built-in tournament agent, ``random``/``scripted`` with or without ``builtin:``,
or a Doom checkpoint location, :mod:`evaltk.locations`: a directory, relative to the suite file's folder, a
Sample Factory Doom experiment folder (imported on load) or ``hf://ORG/REPO[@REV][/PATH]``; ``baseline`` the same),
``matches`` (>= 1; the maximum with an SPRT), ``bots`` (default 1), ``bot_names``, ``map`` (default
``map01``), ``timelimit`` (game minutes, default 1), ``seed``, ``frameskip``, ``executor``
(``local``/``ray``), ``concurrency``, ``match_timeout``, ``rules`` (:mod:`evaltk.tournament.rules`: ``open``, the
default, or ``screen-only``; an agent whose declared inputs the rules forbid fails the suite's check when it
is a built-in or an evaltk checkpoint directory, and errors the case before any match otherwise) and exactly
one expectation:

* ``min_win_rate = W``: a gauntlet; passes when the one-sided lower confidence bound (Wilson, level
  ``1 - alpha``) on the win rate (strictly more frags than the best bot) is at least ``W``;
* ``min_frags_per_minute = F``: a gauntlet; passes when the one-sided lower bound (percentile bootstrap over
  matches of the agent's frags per game minute, level ``1 - alpha``) is at least ``F``;
* ``baseline = AGENT`` with ``elo0``, ``elo1`` (and ``beta``): a head-to-head ``match`` of the agent against
  ``AGENT`` (bots added to every game when ``bots`` > 0) with the tournament's GSPRT, which stops as soon as
  it decides; passes on H1 (the agent is at least ``elo1`` stronger), fails on H0 or when ``matches`` run
  out undecided ("budget spent, undecided"; a larger ``matches`` continues the same test on a re-run).

Matches run through :func:`evaltk.tournament.run.run_tournament` in ``<workdir>/<case>/<config digest>``
(the digest leaves ``matches`` out): a re-run resumes, a larger ``matches`` extends the tournament, a voided
match is played again (not counted). The statistic and its interval are in
the message.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from conformance.case import Case, CaseResult, FieldSpec, Outcome, at_least, between, one_of
from evaltk.registry import did_you_mean
from evaltk.tournament.agents import DOOM_AGENTS
from evaltk.tournament.rules import RULES

#: The built-in agents a tournament plays (``evaltk.tournament.agents.make_agent``).
DOOM_BUILTINS = tuple(DOOM_AGENTS)
EXPECTATIONS = ("min_win_rate", "min_frags_per_minute", "baseline")
_SPRT_ONLY = ("elo0", "elo1", "beta")
SECONDS_PER_MINUTE = 60.0


def _maps() -> tuple[str, ...]:
    from evaltk.tournament.match import SUPPORTED_MAPS

    return SUPPORTED_MAPS


def _known_map(value: Any) -> str | None:
    return None if value in _maps() else f"is not a supported map; use one of {', '.join(_maps())}"


BOTS_FIELDS: dict[str, FieldSpec] = {
    "checkpoint": FieldSpec((str,), required=True, check=lambda v: None if v else "must not be empty"),
    "matches": FieldSpec((int,), required=True, check=at_least(1)),
    "bots": FieldSpec((int,), check=between(0, 15)),
    "bot_names": FieldSpec((list,)),
    "map": FieldSpec((str,), check=_known_map),
    "timelimit": FieldSpec((float, int), check=between(0.0, 60.0, open_ends=True)),
    "seed": FieldSpec((int,), check=at_least(0)),
    "frameskip": FieldSpec((int,), check=between(1, 35)),
    "min_win_rate": FieldSpec((float, int), check=between(0.0, 1.0)),
    "min_frags_per_minute": FieldSpec((float, int)),
    "baseline": FieldSpec((str,), check=lambda v: None if v else "must not be empty"),
    "elo0": FieldSpec((float, int)),
    "elo1": FieldSpec((float, int)),
    "alpha": FieldSpec((float,), check=between(0.0, 0.5, open_ends=True)),
    "beta": FieldSpec((float,), check=between(0.0, 0.5, open_ends=True)),
    "executor": FieldSpec((str,), check=one_of(("local", "ray"))),
    "concurrency": FieldSpec((int,), check=at_least(1)),
    "match_timeout": FieldSpec((float, int), check=at_least(1)),
    "rules": FieldSpec((str,), check=one_of(tuple(RULES))),
}


def _agent(ref: str, resolved: bool) -> str:
    """Return a tournament agent reference: with ``resolved``, the location made a local checkpoint directory.

    Built-in names stay as they are; a location (:func:`evaltk.locations.local_checkpoint`: a path, another
    library's file, ``hf://``) becomes the absolute evaltk checkpoint directory the players load. Without
    ``resolved`` (checking a suite before it runs) nothing is fetched: the reference is returned as written.
    """
    from evaltk.locations import local_checkpoint

    return local_checkpoint(ref).ref if resolved else ref


def tournament_config(params: Mapping[str, Any], *, resolved: bool = True) -> Any:
    """Return the :class:`evaltk.tournament.formats.TournamentConfig` a ``bots`` case plays.

    ``resolved=False`` leaves the agents as written (for checking the other settings without fetching anything).
    """
    from evaltk.tournament.formats import SprtConfig, TournamentConfig

    alpha = float(params.get("alpha", 0.05))
    agents: tuple[str, ...] = (_agent(str(params["checkpoint"]), resolved),)
    sprt, fmt = None, "gauntlet"
    if "baseline" in params:
        fmt, agents = "match", (*agents, _agent(str(params["baseline"]), resolved))
        sprt = SprtConfig(elo0=float(params["elo0"]), elo1=float(params["elo1"]), alpha=alpha,
                          beta=float(params.get("beta", 0.05)))
    return TournamentConfig(format=fmt, agents=agents, matches=int(params["matches"]),
                            bots=int(params.get("bots", 1)), bot_names=tuple(params.get("bot_names", ())),
                            maps=(str(params.get("map", "map01")),), timelimit_min=float(params.get("timelimit", 1.0)),
                            frameskip=int(params.get("frameskip", 4)), seed=int(params.get("seed", 0)), sprt=sprt)


def check_bots_case(params: Mapping[str, Any]) -> str | None:
    """Return why a ``bots`` case cannot run (expectations, SPRT fields, agents, tournament settings), or None."""
    from evaltk.errors import TournamentError

    declared = [k for k in EXPECTATIONS if k in params]
    if len(declared) != 1:
        what = "none" if not declared else f"{len(declared)} ({', '.join(declared)})"
        return (f"a bots case declares exactly one expectation ({', '.join(EXPECTATIONS)}); it declares {what}")
    if "baseline" in params:
        missing = [k for k in ("elo0", "elo1") if k not in params]
        if missing:
            return f"an SPRT against baseline needs elo0 and elo1 (missing {', '.join(missing)})"
    else:
        extra = [k for k in _SPRT_ONLY if k in params]
        if extra:
            return f"{', '.join(extra)} belong to an SPRT against a baseline; add baseline = AGENT or drop them"
        if int(params.get("bots", 1)) < 1:
            return "a win-rate or frag-rate expectation plays against bots: set bots >= 1"
    for key in ("checkpoint", "baseline"):
        problem = _agent_problem(str(params[key])) if key in params else None
        if problem is None and key in params:
            problem = _rules_problem(str(params[key]), str(params.get("rules", "open")))
        if problem is not None:
            return f"{key}: {problem}"
    try:
        tournament_config(params, resolved=False).check()
    except TournamentError as exc:
        return str(exc)
    return None


def _agent_problem(ref: str) -> str | None:
    from evaltk.locations import is_remote
    from evaltk.policies import builtin_name

    name = builtin_name(ref)
    if is_remote(ref):
        return None  # fetched and read when the case runs
    if name in DOOM_BUILTINS or (name is None and (Path(ref) / "policy.json").is_file()):
        return None
    from evaltk.importers import detect_format

    if name is None and detect_format(Path(ref)) is not None:
        return None
    if name is not None:
        return (f"unknown built-in Doom agent {ref!r}: {did_you_mean(name, DOOM_BUILTINS)}use one of "
                f"{', '.join(DOOM_BUILTINS)}")
    from evaltk.locations import not_a_checkpoint

    return str(not_a_checkpoint(ref, what="agent"))


def _rules_problem(ref: str, rules: str) -> str | None:
    """Return why ``rules`` refuse the agent ``ref``, read without importing or fetching (else None).

    A built-in or an evaltk checkpoint directory is checked here; another library's run or an ``hf://``
    location is checked when the case runs, after its import, before any match.
    """
    from evaltk.errors import TournamentError
    from evaltk.policies import builtin_name
    from evaltk.tournament.rules import check_agents

    if builtin_name(ref) is None and not (Path(ref) / "policy.json").is_file():
        return None
    try:
        check_agents([ref], rules)
    except TournamentError as exc:
        return str(exc)
    return None


def run_bots_case(case: Case, workdir: Path) -> CaseResult:
    """Play the case's tournament (resuming) and test its expectation (see the module docstring)."""
    from evaltk.tournament.run import RunOptions, run_tournament
    from evaltk.tournament.scheduler import ResultsFile

    start = time.perf_counter()
    p = case.params
    config = tournament_config(p)
    options = RunOptions(concurrency=int(p.get("concurrency", 2)), timeout_s=float(p.get("match_timeout", 300.0)),
                         executor=str(p.get("executor", "local")))
    summary, sched = run_tournament(config, workdir / case.name / config.digest(), options,
                                    rules=str(p.get("rules", "open")))
    rows = list(ResultsFile(Path(summary["results"])).played().values())
    alpha = float(p.get("alpha", 0.05))
    if "baseline" in p:
        passed, message = _sprt_verdict(summary)
    elif "min_win_rate" in p:
        passed, message = _win_rate_verdict(summary, float(p["min_win_rate"]), alpha)
    else:
        passed, message = _frag_rate_verdict(rows, float(p["min_frags_per_minute"]), alpha, int(p.get("seed", 0)))
    voided = summary["schedule"]["voided_total"]
    message += f"; {summary['matches_played']} matches played" + (f", {voided} voided and replayed" if voided else "")
    details = {"matches_played": summary["matches_played"], "voided": voided, "stopped_early": sched.stopped_early}
    return CaseResult(case, Outcome.PASSED if passed else Outcome.FAILED, message, time.perf_counter() - start,
                      details)


def _win_rate_verdict(summary: Mapping[str, Any], bound: float, alpha: float) -> tuple[bool, str]:
    from evaltk.tournament.ratings import wilson_interval

    wins, n = int(summary["wins"]), int(summary["matches"])
    low, high = wilson_interval(wins, n, confidence=1.0 - 2.0 * alpha)
    passed = low >= bound
    return passed, (f"win rate {wins}/{n} = {wins / n:.3f}, Wilson {1 - 2 * alpha:.0%} interval [{low:.3f}, "
                    f"{high:.3f}]: lower bound {low:.3f} {'>=' if passed else '<'} min_win_rate {bound:g} "
                    f"(alpha {alpha:g}; {summary['draws']} draws, {summary['losses']} losses)")


def frags_per_minute(rows: Sequence[Mapping[str, Any]]) -> np.ndarray:
    """Return the agent's frags per game minute in each played gauntlet row (``float64[matches]``)."""
    from evaltk.envs.doom import TICRATE

    rates = []
    for row in rows:
        agent = next(p for p in row["participants"] if p["kind"] == "agent")
        minutes = max(int(row["duration_tics"]), 1) / TICRATE / SECONDS_PER_MINUTE
        rates.append(float(agent["frags"]) / minutes)
    return np.asarray(rates, dtype=np.float64)


def _frag_rate_verdict(rows: Sequence[Mapping[str, Any]], bound: float, alpha: float, seed: int) -> tuple[bool, str]:
    from evaltk.stats.bootstrap import bootstrap_ci

    rates = frags_per_minute(rows)
    if rates.size < 2 or np.all(rates == rates[0]):
        low = high = float(rates.mean())
        method = "no spread: the interval is the mean"
    else:
        ci = bootstrap_ci(rates, rng=np.random.default_rng([seed, 36]), method="percentile", level=1.0 - 2.0 * alpha)
        low, high, method = ci.low, ci.high, f"percentile bootstrap {1 - 2 * alpha:.0%}"
    passed = low >= bound
    return passed, (f"frags per minute {rates.mean():.3f}, {method} interval [{low:.3f}, {high:.3f}]: lower bound "
                    f"{low:.3f} {'>=' if passed else '<'} min_frags_per_minute {bound:g} (alpha {alpha:g})")


def _sprt_verdict(summary: Mapping[str, Any]) -> tuple[bool, str]:
    s = summary["sprt"]
    elo, ci = summary["elo"], summary["elo_ci"]

    def show(x: Any) -> str:
        return "n/a" if x is None else f"{x:+.0f}"

    from evaltk.tournament.summary import SPRT_WORDS

    decision = s["decision"]
    verdict = SPRT_WORDS[decision]
    return decision == "H1", (f"SPRT elo0={s['elo0']:g} elo1={s['elo1']:g} alpha={s['alpha']:g} beta={s['beta']:g}: "
                              f"LLR {s['llr']:.2f} in [{s['lower']:.2f}, {s['upper']:.2f}] -> {verdict}; "
                              f"W/D/L {summary['wins']}/{summary['draws']}/{summary['losses']}, Elo {show(elo)} "
                              f"[{show(ci[0])}, {show(ci[1])}]")
