"""``evaltk evaluate --until-verdict``: evaluate in batches against a baseline table and stop once decided.

The candidate (B, this evaluation) is evaluated in ``looks`` batches up to ``max_episodes``; after
each batch the group-sequential TOST (:mod:`evaltk.stats.group_sequential`) compares it with the
baseline table (A, complete). When the baseline holds every seed this evaluation will run (same
base ``--seed``, at least ``max_episodes`` rows) the looks are paired by seed. Every look is
written to ``OUT/sequential.json`` and ``OUT/sequential.md``; the score table is the usual
resumable ``OUT/episodes.csv`` (a rerun resumes and re-decides).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from evaltk.evaluate import run_plan
from evaltk.plan import EvalConfig, plan
from evaltk.scores import TABLE_FILE, row_digests
from evaltk.seeding import episode_seed
from evaltk.stats.checks import FloatArray
from evaltk.stats.group_sequential import SEQUENTIAL_KINDS, SequentialDesign, information_fraction
from evaltk.table_comparison import LoadedTable, check_envs, load_table
from evaltk.verdict import CompareError, Pairing
from evaltk.verdict.result import IdenticalRows
from evaltk.verdict.rule import VerdictRule
from evaltk.verdict.sequential import (
    LookFn,
    SequentialComparison,
    check_budget,
    look_sizes,
    rows_identical,
    run_sequential,
)


@dataclass(frozen=True)
class UntilVerdictConfig:
    """What ``--until-verdict`` was asked for (see the module docstring)."""

    baseline: Path
    """The reference score table (A), complete."""
    rule: VerdictRule
    """What the verdict is decided by; a sequential rule (``looks``, ``spending``) with an absolute or sd margin."""
    max_episodes: int = 100
    """The episode budget of this evaluation (B)."""


def _check(uv: UntilVerdictConfig) -> None:
    if not uv.rule.sequential:
        raise CompareError("--until-verdict decides at looks: give it a VerdictRule(sequential=True, ...)")
    check_budget("--max-episodes", uv.max_episodes, uv.rule.min_episodes)


def _baseline_pairs(base: LoadedTable, seed: int, n: int, kind: str) -> np.ndarray | None:
    """A's returns on the seeds B will run (in B's episode order), or ``None`` when they are not all there."""
    if base.seeds is None or kind not in SEQUENTIAL_KINDS:
        return None
    where = {int(s): i for i, s in enumerate(base.seeds)}
    planned = [episode_seed(seed, i) for i in range(n)]
    if not all(s in where for s in planned):
        return None
    return base.returns[[where[s] for s in planned]]


def evaluate_until_verdict(config: EvalConfig, uv: UntilVerdictConfig,
                           on_look: LookFn | None = None) -> SequentialComparison:
    """Evaluate ``config`` in batches until the sequential verdict against ``uv.baseline`` is decided."""
    _check(uv)
    rule = uv.rule
    base = load_table(uv.baseline)
    n_max = uv.max_episodes
    a_pairs = _baseline_pairs(base, config.seed, n_max, rule.kind.value)
    paired = a_pairs is not None
    sizes = look_sizes(n_max, rule.looks, rule.min_episodes)
    n_a = base.returns.size
    if not paired and n_a < rule.min_episodes:
        raise CompareError(f"the baseline {base.table.path} has {n_a} episodes; a verdict needs at least "
                           f"{rule.min_episodes}")
    fractions = [information_fraction(n_a, s, n_a, n_max, paired=paired) for s in sizes]
    design = SequentialDesign.build(fractions, alpha=rule.alpha, spending=rule.spending)
    first = plan(dataclasses.replace(config, episodes=sizes[0]))  # checks the input, opens OUT before any episode
    env = first.settings["env"]
    check_envs(base, LoadedTable(base.table, np.zeros(0), None, str(env.get("env_id")), env),
               allow_different_envs=rule.allow_different_envs)
    pairing = Pairing(n_max, 0, 0, True, None, "baseline holds every seed of this evaluation") if paired else None

    looked: list[dict[str, Any]] = []

    def batches() -> Iterator[tuple[FloatArray, FloatArray]]:
        for size in sizes:
            result = run_plan(plan(dataclasses.replace(config, episodes=size)))
            looked[:] = result.rows[:size]
            b_k = np.array([r["return"] for r in looked], dtype=np.float64)
            yield (a_pairs[:size] if a_pairs is not None else base.returns), b_k

    def identical(n: int) -> IdenticalRows | None:
        """Return the finding when the first ``n`` episodes equal the baseline's step for step, else None."""
        if base.seeds is None:
            return None
        return rows_identical(base.seeds, base.digests, [int(r["seed"]) for r in looked[:n]], row_digests(looked[:n]),
                              rule.min_episodes)

    seq = run_sequential(batches(), design, rule.kind, rule.margin, paired=paired,
                         budget=(n_max if paired else n_a, n_max), pairing=pairing, on_look=on_look,
                         identical=identical)
    return _finish(seq, config, base, uv)


def _finish(seq: SequentialComparison, config: EvalConfig, base: LoadedTable,
            uv: UntilVerdictConfig) -> SequentialComparison:
    from evaltk.report.comparison_report import write_sequential_report

    payload: dict[str, Any] = seq.to_dict()
    b_table = load_table(config.out / TABLE_FILE)
    payload["environments"] = check_envs(base, b_table, allow_different_envs=True).to_dict()
    payload["environments"]["allowed"] = uv.rule.allow_different_envs
    payload["inputs"] = {"a": str(base.table.path), "b": str(b_table.table.path)}
    write_sequential_report(payload, config.out)
    return seq
