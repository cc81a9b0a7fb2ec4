"""``evaltk evaluate --until-verdict``: evaluate in batches against a baseline table and stop once decided.

The candidate (B, this evaluation) is one live plan (:class:`evaltk.evaluation.run.PlanSource`) of ``max_episodes``
episodes; the baseline table (A, complete) is a fixed sample. :func:`evaltk.verdict.sequential.compare_sequential`,
the one sequential comparison, makes the looks: paired by seed when the baseline holds the seeds this evaluation
runs (same base ``--seed``), each look running only the episodes it lacks. The score table is the usual resumable
``OUT/episodes.csv`` (a rerun resumes and re-decides); the command (:mod:`evaltk.cli.evaluate`) writes every look to
``OUT/sequential.json`` and ``OUT/sequential.md`` (:func:`evaltk.report.comparison_report.write_sequential_report`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from evaltk.evaluation.plan import EvalConfig, EvaluationPlan, plan
from evaltk.evaluation.run import PlanSource
from evaltk.evaluation.samples import load_sample
from evaltk.verdict import CompareError, check_envs
from evaltk.verdict.rule import VerdictRule
from evaltk.verdict.sequential import FixedSource, LookFn, SequentialComparison, check_budget, compare_sequential

BASELINE_LABEL = "A (baseline)"
CANDIDATE_LABEL = "B (this evaluation)"


@dataclass(frozen=True)
class UntilVerdictConfig:
    """What ``--until-verdict`` was asked for (see the module docstring)."""

    baseline: Path
    """The reference score table (A), complete."""
    rule: VerdictRule
    """What the verdict is decided by; a sequential rule (``looks``, ``spending``) with an absolute or sd margin."""
    max_episodes: int = 100
    """The episode budget of this evaluation (B)."""


def evaluate_until_verdict(config: EvalConfig, uv: UntilVerdictConfig, on_look: LookFn | None = None,
                           on_plan: Callable[[EvaluationPlan], None] | None = None) -> SequentialComparison:
    """Evaluate ``config`` in batches until the sequential verdict against ``uv.baseline`` is decided.

    Every input is checked before the first episode: the rule, the budget, the baseline table and its env
    (the env check of :func:`evaltk.verdict.compare`). ``on_plan`` sees the one plan once it is checked, before
    any episode; ``on_look`` sees each look.
    """
    rule = uv.rule
    if not rule.sequential:
        raise CompareError("--until-verdict decides at looks: give it a VerdictRule(sequential=True, ...)")
    check_budget("--max-episodes", uv.max_episodes, rule.min_episodes)
    table = load_sample(uv.baseline, label=BASELINE_LABEL)
    if table.n < rule.min_episodes:
        raise CompareError(f"the baseline {uv.baseline} has {table.n} episodes; a verdict needs at least "
                           f"{rule.min_episodes}")
    baseline = FixedSource(table, grows=False)
    candidate = PlanSource(plan(dataclasses.replace(config, episodes=uv.max_episodes)), label=CANDIDATE_LABEL)
    check_envs(baseline.header(), candidate.header(), allow_different_envs=rule.allow_different_envs)
    if on_plan is not None:
        on_plan(candidate.plan)
    return compare_sequential(baseline, candidate, rule, on_look=on_look)
