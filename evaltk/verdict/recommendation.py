"""Power and recommendation: how many episodes per side would reach a verdict, and the minimum-information finding."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from evaltk.margin import MarginKind
from evaltk.stats import power
from evaltk.stats.checks import FloatArray, StatsInputError
from evaltk.stats.paired import PairedSample
from evaltk.stats.rank import prob_superior
from evaltk.verdict.decision import sample_scores
from evaltk.verdict.result import TARGET_POWER, Decision, InformationCheck, Recommendation, Verdict, fmt


def unit_sd(a: FloatArray, b: FloatArray, kind: MarginKind, pairs: PairedSample | None = None) -> float:
    """Per-observation SD of the quantity's estimator, in the quantity's units (equal-SD planning).

    For a paired design it is ``SD(B - A) / sqrt(2)`` (so ``se = sd sqrt(2 / n)`` as the planning formulas assume).
    """
    if pairs is not None:
        sd_diff = float(np.std(pairs.b - pairs.a, ddof=1)) / math.sqrt(2.0)
        if kind is MarginKind.SD:
            pooled = math.sqrt((pairs.a.var(ddof=1) + pairs.b.var(ddof=1)) / 2.0)
            return sd_diff / pooled if pooled > 0 else 0.0
        return sd_diff
    if kind is MarginKind.PROB:
        ps = prob_superior(b, a)
        if ps.degenerate:
            return math.sqrt(1.0 / 12.0)
        return math.sqrt((ps.var_x + ps.var_y) / 2.0)
    if kind is MarginKind.SD:
        return 1.0
    sd = math.sqrt((a.var(ddof=1) + b.var(ddof=1)) / 2.0)
    return sd / abs(float(a.mean())) if kind is MarginKind.RELATIVE else sd


def recommend(a: Any, b: Any, decision: Decision, pairs: PairedSample | None = None) -> Recommendation | None:
    """Episodes per side for 80 % power to reach a verdict; ``None`` unless the verdict is inconclusive.

    If the estimate lies inside the margin the plan is for equivalence assuming a true difference
    of 0 (the best case) and the observed SD; if it lies beyond the margin, for showing the
    difference exceeds the margin assuming the observed difference is the true one. For a paired
    decision (``pairs``) the numbers are pairs, planned with the SD of the per-seed differences.
    """
    if decision.verdict is not Verdict.INCONCLUSIVE or decision.constant:
        return None
    xa, xb = sample_scores(a, "A"), sample_scores(b, "B")
    kind = decision.kind
    center = 0.5 if kind is MarginKind.PROB else 0.0
    delta = decision.estimate - center
    used_pairs = pairs if decision.design == "paired" else None
    sd = unit_sd(xa, xb, kind, used_pairs)
    if not (math.isfinite(sd) and sd > 0):
        return None
    m = decision.margin
    sd_words = "the SD of the observed episodes" if kind is not MarginKind.SD else "the SD units of the margin"

    def tost_n(true_difference: float) -> int | None:
        try:
            return power.tost_sample_size(m, true_difference=true_difference, sd=sd, alpha=decision.alpha,
                                          power=TARGET_POWER).n_per_side
        except StatsInputError:
            return None

    at_zero = tost_n(0.0)
    at_observed = tost_n(delta) if abs(delta) < m else None
    if abs(delta) > m:
        try:
            n: int | None = power.beyond_margin_sample_size(m, delta, sd=sd, alpha=decision.alpha,
                                                            power=TARGET_POWER).n_per_side
        except StatsInputError:
            n = None
        target = "difference"
        assumption = f"the true difference equals the observed {fmt(delta)} and {sd_words}"
    else:
        n, target = at_zero, "equivalence"
        assumption = f"a true difference of 0 (the best case) and {sd_words}"
    if n is None:
        return None
    if used_pairs is not None:
        assumption += " (pairs on shared seeds, planned with the SD of the per-seed differences)"
    return Recommendation(target, n, max(0, n - decision.n_a), max(0, n - decision.n_b), assumption, at_zero,
                          at_observed)


def information_check(decision: Decision, recommendation: Recommendation | None,
                      min_episodes: int) -> InformationCheck | None:
    """Return the minimum-information finding for a withheld verdict (``None`` when the rule did not apply)."""
    if not decision.too_little_information:
        return None
    need = max(min_episodes, recommendation.episodes_per_side if recommendation is not None else 0)
    unit = "pairs" if decision.design == "paired" else "episodes per side"
    spread = ("no spread at all was seen, " if decision.constant else "")
    reason = (f"too little information: {decision.n_a} vs {decision.n_b} episodes, {spread}a verdict needs at "
              f"least {min_episodes} {unit}; about {need} {unit} would decide")
    return InformationCheck(decision.n_a, decision.n_b, min_episodes, need, reason)

