"""Run a tournament end to end: match list, resume, schedule, summarise, report."""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evaltk.errors import TournamentError
from evaltk.executor import EXECUTOR_MODULES, make_executor
from evaltk.tournament.formats import TournamentConfig, match_list, prepare_out
from evaltk.tournament.match import MatchResult
from evaltk.tournament.report import write_reports
from evaltk.tournament.rules import DEFAULT_RULES, check_agents
from evaltk.tournament.scheduler import ResultsFile, ScheduleSummary, run_schedule
from evaltk.tournament.summary import sprt_state, summarise

RESULTS_NAME = "results.jsonl"


@dataclass(frozen=True)
class RunOptions:
    """How to run (not part of the tournament's identity): concurrency, per-match timeout, retries, executor."""

    concurrency: int = os.cpu_count() or 1
    timeout_s: float = 300.0
    max_attempts: int = 3
    num_resamples: int = 200
    executor: str = "local"
    """``local`` (``concurrency`` matches in threads here) or ``ray`` (each match a Ray task; see docs/executor.md)."""
    ray_address: str | None = None

    def __post_init__(self) -> None:
        if self.concurrency < 1:
            raise TournamentError(f"--concurrency {self.concurrency} must be at least 1")
        if not (math.isfinite(self.timeout_s) and self.timeout_s > 0):
            raise TournamentError(f"--match-timeout {self.timeout_s} must be a positive number of wall seconds")
        if self.max_attempts < 1:
            raise TournamentError(f"--max-attempts {self.max_attempts} must be at least 1")
        if self.num_resamples < 1:
            raise TournamentError(f"num_resamples {self.num_resamples} must be at least 1")
        EXECUTOR_MODULES.check(self.executor, label="--executor")


def default_out(config: TournamentConfig) -> Path:
    """Default output directory of a config: ``./evaltk-tournaments/<format>-<digest>``."""
    return Path("evaltk-tournaments") / f"{config.format}-{config.digest()}"


def run_tournament(config: TournamentConfig, out: Path, options: RunOptions,
                   on_result: Callable[[MatchResult], None] | None = None, *,
                   rules: str = DEFAULT_RULES) -> tuple[dict[str, Any], ScheduleSummary]:
    """Play what is missing of ``config`` into ``out`` and return ``(summary, schedule summary)``.

    Every agent's declared inputs are checked against ``rules`` (:mod:`evaltk.tournament.rules`) first: an agent
    they forbid raises :class:`TournamentError` before ``out`` is created or a match starts. Already-finished
    tournaments (all planned matches played, or the SPRT decided) play nothing; a larger ``config.matches`` than
    ``out`` holds extends it (:func:`~evaltk.tournament.formats.prepare_out`). The summary gains ``rules``,
    ``inputs`` (per agent and bot), ``reports`` (paths of summary.json, report.md, report.png) and ``schedule``
    (with ``extended_from``: the planned matches before an extension, else None).
    """
    specs = match_list(config)
    inputs = check_agents(config.agents, rules)
    out = out.resolve()
    extended_from = prepare_out(config, out)
    results = ResultsFile(out / RESULTS_NAME)

    def stop(played: dict[str, dict[str, Any]]) -> bool:
        state = sprt_state(config, list(played.values()))
        return state is not None and state.decision != "continue"

    with make_executor(options.executor, ray_address=options.ray_address, mode="threads",
                       workers=options.concurrency) as executor:
        sched = run_schedule(specs, results, workdir=out, concurrency=options.concurrency,
                             timeout_s=options.timeout_s, max_attempts=options.max_attempts,
                             stop=stop if config.sprt is not None else None, on_result=on_result, executor=executor)
    wanted = {s.match_id for s in specs}
    rows = [r for mid, r in sorted(results.played().items()) if mid in wanted]
    summary = summarise(config, rows, results_path=str(results.path), num_resamples=options.num_resamples,
                        inputs=inputs)
    summary["rules"] = rules
    summary["schedule"] = {"already_done": sched.already_done, "played_now": sched.played, "voided_now": sched.voided,
                           "stopped_early": sched.stopped_early, "voided_total": sum(results.void_counts().values()),
                           "extended_from": extended_from}
    summary["reports"] = write_reports(summary, out)
    return summary, sched
