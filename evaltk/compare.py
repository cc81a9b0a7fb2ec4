"""The transfer verdict: whether two samples of episode scores agree within a declared margin.

``A`` is the reference (e.g. scores on the reference environment) and ``B`` the candidate; every
quantity is "B relative to A". The margin ``M`` is given in the units of the quantity its kind
compares:

============  =======================================  =========================  ==============================
kind          quantity                                 equivalence region         TOST / difference test
============  =======================================  =========================  ==============================
absolute      ``mean(B) - mean(A)`` (score units)      ``(-M, M)``                Welch + bootstrap-t / Welch t
relative      ``(mean(B) - mean(A)) / |mean(A)|``      ``(-M, M)``                contrast + bootstrap-t / Welch
sd            ``(mean(B) - mean(A)) / pooled SD``      ``(-M, M)``                nct + delta method / Welch t
prob          ``P(B > A) + 0.5 P(B = A)``              ``(0.5 - M, 0.5 + M)``     rank TOST / Brunner-Munzel
============  =======================================  =========================  ==============================

Where two methods are named, each one-sided p-value is the larger of the two (an
intersection-union test: it keeps its level when either method is accurate, e.g. the t test for
normal scores and the bootstrap-t for skewed ones), and the interval is the union of the two.

Decision rule at level ``alpha`` (checked in this order):

* ``equivalent`` - the TOST rejects both one-sided nulls, i.e. the ``1 - 2 alpha`` CI lies inside
  the region.
* ``different`` - the primary difference test rejects at ``alpha`` *and* the ``1 - alpha`` CI lies
  entirely outside the region (the difference is shown to exceed the margin).
* ``inconclusive`` - anything else, with the number of episodes per side that would give 80 %
  power (:mod:`evaltk.stats.power`). A non-significant difference is never called equivalent.

Minimum information: no verdict without at least ``min_episodes`` (default
:data:`MIN_EPISODES` = 10) episodes per side (pairs, for a paired design). Below that the verdict
is ``inconclusive`` whatever the data look like - constant, near-constant or spread out - with
the reason and the number of episodes per side that would decide. The rule depends on counts
only, so a tiny perturbation of the values cannot change the kind of answer. From
``min_episodes`` on, two constant samples make the quantity known exactly (the verdict follows
from where it lies relative to the margin, and the explanation says so); near-constant ones get
Welch's test, whose verdict tends to the same answer as the variance goes to 0.

Paired designs: with ``seeds_a`` and ``seeds_b`` the rows are matched by episode seed
(:mod:`evaltk.stats.paired`). When every shared seed gives the same return on both sides the
verdict is ``identical`` - a fact about the data, not a statistical inference - and
:attr:`Comparison.identical` says so ("identical episode for episode, n = 20 shared seeds").
Otherwise, for ``absolute`` and ``sd`` margins, the verdict comes from the paired TOST on the
per-seed differences (``relative`` and ``prob`` stay unpaired, with a note).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import asdict, dataclass, field
from enum import Enum
from typing import Any

import numpy as np
from scipy import stats

from evaltk.errors import EvaltkError
from evaltk.margin import MarginKind
from evaltk.stats import equivalence, power
from evaltk.stats.bootstrap import bootstrap_diff_ci
from evaltk.stats.bootstrap_t import BootstrapMoments
from evaltk.stats.multiple import holm_bonferroni
from evaltk.stats.paired import (
    PairedSample,
    pair_by_seed,
    paired_ci,
    paired_t,
    standardized_paired_parts,
    tost_paired,
    tost_paired_standardized,
)
from evaltk.stats.rank import prob_superior
from evaltk.stats.results import ConfidenceInterval, EquivalenceResult, TestResult
from evaltk.stats.tests_two_sample import (
    brunner_munzel,
    ks_test,
    mann_whitney_u,
    permutation_test,
    welch_t,
)
from evaltk.stats.validate import FloatArray, StatsInputError, as_sample, check_alpha

__all__ = [
    "MIN_EPISODES",
    "CompareError",
    "Comparison",
    "Decision",
    "IdenticalRows",
    "InformationCheck",
    "MarginKind",
    "Pairing",
    "Recommendation",
    "Verdict",
    "compare",
    "decide",
    "information_check",
    "recommend",
]

TARGET_POWER = 0.8
MIN_EPISODES = 10
"""Fewest episodes per side (pairs when paired) for any verdict but ``inconclusive`` (rule of three:
ten equal episodes still leave room for outcomes of probability up to 0.3 that were never seen)."""
PAIRED_KINDS = (MarginKind.ABSOLUTE, MarginKind.SD)


class CompareError(EvaltkError):
    """The comparison cannot be made as asked (bad margin, too few episodes, undefined relative margin)."""


class Verdict(Enum):
    """The three possible outcomes of a comparison."""

    EQUIVALENT = "equivalent"
    DIFFERENT = "different"
    INCONCLUSIVE = "inconclusive"
    IDENTICAL = "identical"


QUANTITY = {
    MarginKind.ABSOLUTE: "mean(B) - mean(A)",
    MarginKind.RELATIVE: "(mean(B) - mean(A)) / |mean(A)|",
    MarginKind.SD: "(mean(B) - mean(A)) / pooled SD",
    MarginKind.PROB: "P(B > A) + 0.5 P(B = A)",
}


@dataclass(frozen=True)
class Recommendation:
    """How many episodes per side would give 80 % power to reach a conclusion.

    Attributes:
        target: ``"equivalence"`` (show the TOST passes) or ``"difference"`` (show it exceeds the margin).
        episodes_per_side: total episodes needed per side for ``target``.
        more_a: additional episodes for A (``episodes_per_side - n_a``, at least 0).
        more_b: additional episodes for B.
        assumption: what ``episodes_per_side`` assumes (true difference, SD).
        equivalence_if_no_difference: episodes per side for 80 % TOST power if the true difference is 0.
        equivalence_if_observed: the same if the true difference equals the observed one (``None`` when the
            observed difference is not inside the margin).

    """

    target: str
    episodes_per_side: int
    more_a: int
    more_b: int
    assumption: str
    equivalence_if_no_difference: int | None = None
    equivalence_if_observed: int | None = None

    def summary(self) -> str:
        """One line for people."""
        extra = ""
        if self.target == "equivalence" and self.equivalence_if_observed is not None:
            extra = f" ({self.equivalence_if_observed} per side if the true difference equals the observed one)"
        elif self.target == "difference" and self.equivalence_if_no_difference is not None:
            extra = f" (to show equivalence if the true difference is 0: {self.equivalence_if_no_difference} per side)"
        return (f"for 80% power to show {self.target}: {self.episodes_per_side} episodes per side "
                f"(+{self.more_a} for A, +{self.more_b} for B), assuming {self.assumption}{extra}")

    def to_dict(self) -> dict[str, Any]:
        """Plain dict for JSON output."""
        return asdict(self)


@dataclass(frozen=True)
class Decision:
    """The verdict and the two primary tests behind it.

    Attributes:
        verdict: the outcome.
        kind: margin kind.
        margin: ``M`` as given.
        low: lower bound of the equivalence region (quantity units).
        high: upper bound.
        quantity: what is compared (see module docstring).
        estimate: point estimate of the quantity.
        tost: the equivalence test (its ``ci`` is the ``1 - 2 alpha`` interval).
        difference: the primary difference test (Welch t, or Brunner-Munzel for ``prob``).
        ci: ``1 - alpha`` interval of the quantity.
        alpha: the level.
        explanation: why this verdict, in words.
        n_a: episodes in A.
        n_b: episodes in B.
        constant: True when both samples were constant (quantity known exactly).
        design: ``"unpaired"`` or ``"paired"`` (tests on the per-seed differences; ``n_a == n_b`` pairs).
        too_little_information: True when the minimum-information rule withheld a verdict.

    """

    verdict: Verdict
    kind: MarginKind
    margin: float
    low: float
    high: float
    quantity: str
    estimate: float
    tost: EquivalenceResult | None
    difference: TestResult | None
    ci: ConfidenceInterval
    alpha: float
    explanation: str
    n_a: int
    n_b: int
    constant: bool = False
    design: str = "unpaired"
    too_little_information: bool = False


@dataclass(frozen=True)
class IdenticalRows:
    """Every shared seed gave exactly the same return in A and in B (e.g. frame-exact backends).

    Attributes:
        n_shared: number of shared seeds.
        only_a: rows of A whose seed B lacks (not part of the finding).
        only_b: rows of B whose seed A lacks.

    """

    n_shared: int
    only_a: int = 0
    only_b: int = 0

    def summary(self) -> str:
        """One line, e.g. ``identical episode for episode, n = 20 shared seeds``."""
        extra = ""
        if self.only_a or self.only_b:
            extra = f" ({self.only_a} rows of A and {self.only_b} of B have seeds the other side lacks)"
        return f"identical episode for episode, n = {self.n_shared} shared seeds{extra}"

    def to_dict(self) -> dict[str, Any]:
        """Plain dict for JSON output (with the one-line ``message``)."""
        return {**asdict(self), "message": self.summary()}


@dataclass(frozen=True)
class Pairing:
    """How the rows of A and B matched by episode seed.

    Attributes:
        n_shared: seeds present on both sides.
        only_a: rows of A whose seed B lacks.
        only_b: rows of B whose seed A lacks.
        used: True when the verdict came from the paired tests.
        correlation: Pearson correlation of the paired returns (``None`` if undefined).
        note: why pairing was or was not used.

    """

    n_shared: int
    only_a: int
    only_b: int
    used: bool
    correlation: float | None
    note: str

    def to_dict(self) -> dict[str, Any]:
        """Plain dict for JSON output."""
        return asdict(self)


@dataclass(frozen=True)
class InformationCheck:
    """Why the minimum-information rule withheld a verdict, and what would decide.

    Attributes:
        n_a: episodes of A (pairs when paired).
        n_b: episodes of B.
        min_episodes: the rule's minimum per side.
        episodes_to_decide: episodes per side that would decide (at least ``min_episodes``).
        reason: in words.

    """

    n_a: int
    n_b: int
    min_episodes: int
    episodes_to_decide: int
    reason: str

    def to_dict(self) -> dict[str, Any]:
        """Plain dict for JSON output."""
        return asdict(self)


def _sample(values: Any, name: str) -> FloatArray:
    try:
        return as_sample(values, name)
    except StatsInputError as exc:
        raise CompareError(f"{exc} (a comparison needs at least 2 episodes per side)") from exc


def _region(kind: MarginKind, margin: float) -> tuple[float, float]:
    if not (isinstance(margin, int | float) and math.isfinite(margin) and margin > 0):
        raise CompareError(f"margin must be a positive number, got {margin!r}; e.g. --margin 0.5 --margin-kind sd")
    if kind is MarginKind.PROB:
        if margin >= 0.5:
            raise CompareError(f"a prob margin must be below 0.5, got {margin!r}; 0.1 is common")
        return 0.5 - margin, 0.5 + margin
    return -float(margin), float(margin)


def _fmt(v: float) -> str:
    return f"{v:.4g}"


def _constant_decision(a: FloatArray, b: FloatArray, kind: MarginKind, margin: float, alpha: float) -> Decision:
    """Both samples constant: the quantity is known exactly, no test is needed (or defined)."""
    low, high = _region(kind, margin)
    va, vb = float(a[0]), float(b[0])
    diff = vb - va
    if kind is MarginKind.ABSOLUTE:
        value = diff
    elif kind is MarginKind.RELATIVE:
        if va == 0.0 and diff != 0.0:
            raise CompareError("a relative margin needs a nonzero mean of A, but every A return is 0; "
                               "use --margin-kind absolute")
        value = 0.0 if diff == 0.0 else diff / abs(va)
    elif kind is MarginKind.SD:
        value = 0.0 if diff == 0.0 else math.copysign(math.inf, diff)
    else:
        value = 0.5 if diff == 0.0 else (1.0 if diff > 0 else 0.0)
    if low < value < high:
        verdict = Verdict.EQUIVALENT
    elif value < low or value > high:
        verdict = Verdict.DIFFERENT
    else:
        verdict = Verdict.INCONCLUSIVE
    explanation = (
        f"all {a.size} returns of A equal {_fmt(va)} and all {b.size} returns of B equal {_fmt(vb)}: with no "
        f"variability the {QUANTITY[kind]} is known exactly ({_fmt(value)}), so the verdict follows from the "
        f"margin region ({_fmt(low)}, {_fmt(high)}); the statistical tests are undefined here. This assumes "
        "the scores really are deterministic; if rare other values are possible, run more episodes."
    )
    ci = ConfidenceInterval(value, value, value, 1.0 - alpha, "exact (constant samples)", QUANTITY[kind])
    return Decision(verdict, kind, float(margin), low, high, QUANTITY[kind], value, None, None, ci, alpha,
                    explanation, a.size, b.size, constant=True)


def _primary(a: FloatArray, b: FloatArray, kind: MarginKind, low: float, high: float, alpha: float,
             rng: np.random.Generator, n_boot: int) -> tuple[EquivalenceResult, TestResult, ConfidenceInterval]:
    level = 1.0 - alpha
    try:
        if kind is MarginKind.ABSOLUTE:
            moments = BootstrapMoments.draw(b, a, rng=rng, n_resamples=n_boot)
            tost = equivalence.tost_welch(b, a, low, high, alpha=alpha, moments=moments)
            ci = equivalence.mean_difference_ci(b, a, level=level, moments=moments)
        elif kind is MarginKind.RELATIVE:
            moments = BootstrapMoments.draw(b, a, rng=rng, n_resamples=n_boot)
            tost = equivalence.tost_relative(b, a, low, high, alpha=alpha, moments=moments)
            ci = equivalence.relative_ci(b, a, level=level, moments=moments)
        elif kind is MarginKind.SD:
            tost = equivalence.tost_standardized(b, a, low, high, alpha=alpha)
            ci = equivalence.standardized_ci(b, a, level=level)
        else:
            tost = equivalence.tost_prob_superior(b, a, low, high, alpha=alpha)
            ps = prob_superior(b, a)
            half = float(stats.t.ppf(1.0 - alpha / 2.0, ps.df)) * ps.se
            ci = ConfidenceInterval(ps.estimate, ps.estimate - half, ps.estimate + half, level,
                                    "brunner-munzel-t", QUANTITY[kind])
    except StatsInputError as exc:
        raise CompareError(str(exc)) from exc
    difference = brunner_munzel(b, a) if kind is MarginKind.PROB else welch_t(b, a)
    ci = ConfidenceInterval(ci.estimate, ci.low, ci.high, ci.level, ci.method, QUANTITY[kind])
    return tost, difference, ci


def _primary_paired(pairs: PairedSample, kind: MarginKind, low: float, high: float,
                    alpha: float) -> tuple[EquivalenceResult, TestResult, ConfidenceInterval]:
    """Paired TOST, paired t and the ``1 - alpha`` CI on the per-seed differences ``B - A``."""
    a, b = pairs.a, pairs.b
    try:
        if kind is MarginKind.ABSOLUTE:
            tost = tost_paired(b, a, low, high, alpha=alpha)
            diff = b - a
            if diff.var() == 0.0:
                est = float(diff.mean())
                ci = ConfidenceInterval(est, est, est, 1.0 - alpha, "exact (constant differences)", QUANTITY[kind])
            else:
                ci = paired_ci(b, a, level=1.0 - alpha)
        else:
            tost = tost_paired_standardized(b, a, low, high, alpha=alpha)
            d, se, df = standardized_paired_parts(b, a)
            half = float(stats.t.ppf(1.0 - alpha / 2.0, df)) * se
            ci = ConfidenceInterval(d, d - half, d + half, 1.0 - alpha, "paired delta-method t", QUANTITY[kind])
    except StatsInputError as exc:
        raise CompareError(str(exc)) from exc
    ci = ConfidenceInterval(ci.estimate, ci.low, ci.high, ci.level, ci.method, QUANTITY[kind])
    return _sized(tost, pairs.n, pairs.n), _sized(paired_t(b, a), pairs.n, pairs.n), ci


def _sized(result: Any, n_a: int, n_b: int) -> Any:
    """Return ``result`` with ``n_a``/``n_b`` naming A's and B's sizes (the stats functions take B first)."""
    return dataclasses.replace(result, n_a=n_a, n_b=n_b)


def _withhold(decision: Decision, min_episodes: int) -> Decision:
    """Apply the minimum-information rule: fewer than ``min_episodes`` per side gives no verdict."""
    if min(decision.n_a, decision.n_b) >= min_episodes:
        return decision
    unit = "pairs" if decision.design == "paired" else "episodes per side"
    why = (f"too little information: {decision.n_a} episodes of A and {decision.n_b} of B"
           f"{' (shared seeds)' if decision.design == 'paired' else ''}, but a verdict needs at least "
           f"{min_episodes} {unit} (with fewer, rare outcomes may simply not have been seen yet, and the spread "
           f"cannot be estimated); the data alone would say {decision.verdict.value}: {decision.explanation}")
    return dataclasses.replace(decision, verdict=Verdict.INCONCLUSIVE, explanation=why, too_little_information=True)


def decide(
    a: Any,
    b: Any,
    margin: float,
    kind: MarginKind | str,
    *,
    alpha: float = 0.05,
    rng: np.random.Generator | None = None,
    n_boot: int = 1999,
    min_episodes: int = MIN_EPISODES,
    pairs: PairedSample | None = None,
) -> Decision:
    """Return the verdict for reference scores ``a`` and candidate scores ``b`` (``float[n]``, n >= 2 each).

    Only the primary tests run here (fast enough for calibration simulations); :func:`compare`
    adds the diagnostics, bootstrap interval and episode recommendation. ``rng`` drives the
    bootstrap-t part of the absolute and relative tests (``n_boot`` resamples); ``None`` means
    ``numpy.random.default_rng(0)``, so the same inputs always give the same verdict. With
    ``pairs`` (rows matched by seed, :func:`evaltk.stats.paired.pair_by_seed`) and an ``absolute``
    or ``sd`` margin the tests are paired. Fewer than ``min_episodes`` per side (pairs) give
    ``inconclusive`` (module docstring).
    """
    try:
        kind = MarginKind(kind)
    except ValueError:
        raise CompareError(f"margin kind must be one of {[k.value for k in MarginKind]}, got {kind!r}") from None
    try:
        check_alpha(alpha)
    except StatsInputError as exc:
        raise CompareError(str(exc)) from exc
    if not (isinstance(min_episodes, int) and min_episodes >= 2):
        raise CompareError(f"min_episodes must be an integer >= 2, got {min_episodes!r}; the default is {MIN_EPISODES}")
    xa, xb = _sample(a, "A"), _sample(b, "B")
    low, high = _region(kind, margin)
    if pairs is not None and kind in PAIRED_KINDS:
        if pairs.n < 2:
            raise CompareError(f"a paired comparison needs at least 2 shared seeds, got {pairs.n}; "
                               "run both sides with the same --seed, or compare unpaired")
        tost, difference, ci = _primary_paired(pairs, kind, low, high, alpha)
        return _withhold(_verdict(tost, difference, ci, kind, margin, alpha, pairs.n, pairs.n, "paired"),
                         min_episodes)
    if xa.var() == 0.0 and xb.var() == 0.0:
        return _withhold(_constant_decision(xa, xb, kind, margin, alpha), min_episodes)
    generator = np.random.default_rng(0) if rng is None else rng
    tost, difference, ci = _primary(xa, xb, kind, low, high, alpha, generator, n_boot)
    tost, difference = _sized(tost, xa.size, xb.size), _sized(difference, xa.size, xb.size)
    return _withhold(_verdict(tost, difference, ci, kind, margin, alpha, xa.size, xb.size, "unpaired"),
                     min_episodes)


def _verdict(tost: EquivalenceResult, difference: TestResult, ci: ConfidenceInterval, kind: MarginKind,
             margin: float, alpha: float, n_a: int, n_b: int, design: str) -> Decision:
    """Apply the decision rule of the module docstring and explain it."""
    low, high = _region(kind, margin)
    region = f"({_fmt(low)}, {_fmt(high)})"
    tost_ci = f"{1 - 2 * alpha:.0%} CI [{_fmt(tost.ci.low)}, {_fmt(tost.ci.high)}]"
    full_ci = f"{1 - alpha:.0%} CI [{_fmt(ci.low)}, {_fmt(ci.high)}]"
    beyond = ci.low > high or ci.high < low
    if tost.equivalent:
        verdict = Verdict.EQUIVALENT
        why = (f"TOST passes: the {tost_ci} of {QUANTITY[kind]} lies inside the margin region {region} "
               f"(p={_fmt(tost.pvalue)} < {alpha:g})")
    elif difference.rejects(alpha) and beyond:
        verdict = Verdict.DIFFERENT
        why = (f"{difference.name} rejects equality (p={_fmt(difference.pvalue)}) and the {full_ci} of "
               f"{QUANTITY[kind]} lies entirely outside the margin region {region}")
    else:
        verdict = Verdict.INCONCLUSIVE
        if difference.rejects(alpha):
            diff_part = (f"{difference.name} finds a difference (p={_fmt(difference.pvalue)}) but the {full_ci} "
                         f"overlaps the margin region {region}, so it is not shown to exceed the margin")
        else:
            diff_part = (f"{difference.name} does not reject equality (p={_fmt(difference.pvalue)}); "
                         "that alone is not evidence of equivalence")
        why = (f"TOST does not pass: the {tost_ci} of {QUANTITY[kind]} is not inside {region} "
               f"(p={_fmt(tost.pvalue)}); {diff_part}")
    notes = "; ".join(n for n in (tost.note, difference.note) if n)
    if notes:
        why += f" [{notes}]"
    if design == "paired":
        why = f"paired on {n_a} shared seeds (tests on the per-seed differences B - A): {why}"
    return Decision(verdict, kind, float(margin), low, high, QUANTITY[kind], tost.estimate, tost, difference, ci,
                    alpha, why, n_a, n_b, design=design)


def _unit_sd(a: FloatArray, b: FloatArray, kind: MarginKind, pairs: PairedSample | None = None) -> float:
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
    xa, xb = _sample(a, "A"), _sample(b, "B")
    kind = decision.kind
    center = 0.5 if kind is MarginKind.PROB else 0.0
    delta = decision.estimate - center
    used_pairs = pairs if decision.design == "paired" else None
    sd = _unit_sd(xa, xb, kind, used_pairs)
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
        assumption = f"the true difference equals the observed {_fmt(delta)} and {sd_words}"
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


def _identical_decision(pairs: PairedSample, kind: MarginKind, margin: float, alpha: float) -> Decision:
    """Every shared seed gave the same return: report the fact, no test."""
    low, high = _region(kind, margin)
    value = 0.5 if kind is MarginKind.PROB else 0.0
    rows = IdenticalRows(pairs.n, pairs.only_a, pairs.only_b)
    why = (f"{rows.summary()}: A and B produced the same return on every shared seed, the strongest evidence "
           "there is that they behave alike; this is a fact about these episodes, not a statistical inference, so "
           "no test is needed (or meaningful)")
    ci = ConfidenceInterval(value, value, value, 1.0 - alpha, "exact (identical rows)", QUANTITY[kind])
    return Decision(Verdict.IDENTICAL, kind, float(margin), low, high, QUANTITY[kind], value, None, None, ci, alpha,
                    why, pairs.n, pairs.n, design="paired")


def _describe(x: FloatArray) -> dict[str, float | int]:
    return {"n": int(x.size), "mean": float(x.mean()), "sd": float(x.std(ddof=1)), "median": float(np.median(x)),
            "min": float(x.min()), "max": float(x.max())}


@dataclass(frozen=True)
class Comparison:
    """Everything ``evaltk compare`` reports: the decision, diagnostics and a recommendation.

    Attributes:
        decision: verdict and primary tests.
        tests: diagnostic two-sample tests by name (B vs A), each with its own p-value.
        holm: Holm-Bonferroni adjusted p-values of the diagnostic difference tests, by name.
        bootstrap_ci: BCa bootstrap ``1 - alpha`` CI of ``mean(B) - mean(A)``.
        recommendation: episodes needed when inconclusive.
        describe_a: summary statistics of A.
        describe_b: summary statistics of B.
        seed: the seed the generator for permutation and bootstrap steps was made from.
        a: the reference scores.
        b: the candidate scores.
        identical: set when every shared seed gives the same return in A and B (verdict ``identical``).
        pairing: how the rows matched by seed (``None`` without seeds).
        information: set when the minimum-information rule withheld the verdict.

    """

    decision: Decision
    tests: dict[str, TestResult]
    holm: dict[str, float]
    bootstrap_ci: ConfidenceInterval
    recommendation: Recommendation | None
    describe_a: dict[str, float | int]
    describe_b: dict[str, float | int]
    seed: int
    a: FloatArray = field(repr=False)
    b: FloatArray = field(repr=False)
    identical: IdenticalRows | None = None
    pairing: Pairing | None = None
    information: InformationCheck | None = None

    @property
    def verdict(self) -> Verdict:
        """Shortcut for ``decision.verdict``."""
        return self.decision.verdict

    def summary(self) -> str:
        """One line: verdict and the reason."""
        line = f"{self.verdict.value}: {self.decision.explanation}"
        if self.information is not None:
            line += f"; {self.information.reason}"
        elif self.recommendation is not None:
            line += f"; {self.recommendation.summary()}"
        return line

    def to_dict(self) -> dict[str, Any]:
        """Return the JSON object ``evaltk compare --json`` prints (``verdict``, ``margin``, ``ci``, ``tests``...)."""
        d = self.decision
        tests: dict[str, Any] = {}
        for name, res in self.tests.items():
            entry = res.to_dict()
            entry["p_holm"] = self.holm.get(name)
            tests[name] = entry
        if d.tost is not None:
            tests["tost"] = d.tost.to_dict()
        return {
            "verdict": d.verdict.value,
            "margin": d.margin,
            "margin_kind": d.kind.value,
            "margin_region": [d.low, d.high],
            "quantity": d.quantity,
            "estimate": d.estimate,
            "alpha": d.alpha,
            "n_a": d.n_a,
            "n_b": d.n_b,
            "ci": [d.ci.low, d.ci.high],
            "ci_level": d.ci.level,
            "ci_method": d.ci.method,
            "ci_tost": [d.tost.ci.low, d.tost.ci.high] if d.tost is not None else [d.ci.low, d.ci.high],
            "ci_tost_level": 1.0 - 2.0 * d.alpha,
            "primary_difference_test": d.difference.name if d.difference is not None else None,
            "tests": tests,
            "bootstrap_ci_mean_difference": self.bootstrap_ci.to_dict(),
            "recommendation": None if self.recommendation is None else self.recommendation.to_dict(),
            "explanation": d.explanation,
            "constant_samples": d.constant,
            "design": d.design,
            "identical": None if self.identical is None else self.identical.to_dict(),
            "pairing": None if self.pairing is None else self.pairing.to_dict(),
            "information": None if self.information is None else self.information.to_dict(),
            "a": self.describe_a,
            "b": self.describe_b,
            "seed": self.seed,
        }


def compare(
    a: Any,
    b: Any,
    margin: float,
    kind: MarginKind | str,
    *,
    alpha: float = 0.05,
    seed: int = 0,
    n_resamples: int = 9999,
    seeds_a: Any = None,
    seeds_b: Any = None,
    paired: str = "auto",
    min_episodes: int = MIN_EPISODES,
) -> Comparison:
    """Full comparison of reference scores ``a`` with candidate scores ``b`` (``float[n]``, n >= 2 each).

    ``seed`` makes the one ``numpy.random.Generator`` used for the bootstrap-t part of the verdict,
    the permutation test, the KS permutation p-value (with ties) and the BCa bootstrap CI, so a
    rerun gives identical numbers. ``seeds_a``/``seeds_b`` (the episode seeds, in the same order
    as ``a``/``b``) enable pairing: ``paired="auto"`` pairs when at least 2 seeds are shared,
    ``"yes"`` requires it, ``"no"`` never pairs (identical rows are still reported).
    """
    rng = np.random.default_rng(seed)
    kind_ = _kind(kind)
    pairs, pairing = _pairing(a, b, seeds_a, seeds_b, paired, kind_)
    if pairs is not None and pairs.n >= 2 and pairs.identical:
        decision = _identical_decision(pairs, kind_, margin, alpha)
        if pairing is not None:
            pairing = dataclasses.replace(pairing, used=False,
                                          note="every shared seed gives the same return: reported as identical")
    else:
        use = pairs if pairing is not None and pairing.used else None
        decision = decide(a, b, margin, kind_, alpha=alpha, rng=rng, min_episodes=min_episodes, pairs=use)
    xa, xb = _sample(a, "A"), _sample(b, "B")
    tests = {name: _sized(res, xa.size, xb.size) for name, res in {
        "welch_t": welch_t(xb, xa),
        "mann_whitney_u": mann_whitney_u(xb, xa),
        "brunner_munzel": brunner_munzel(xb, xa),
        "ks": ks_test(xb, xa, rng=rng, n_resamples=n_resamples),
        "permutation": permutation_test(xb, xa, rng=rng, n_resamples=n_resamples),
    }.items()}
    if decision.design == "paired" and decision.difference is not None:
        tests["paired_t"] = decision.difference
    adjusted, _ = holm_bonferroni([t.pvalue for t in tests.values()], alpha=alpha)
    holm = dict(zip(tests, adjusted, strict=True))
    boot = bootstrap_diff_ci(xb, xa, rng=rng, method="bca", n_resamples=n_resamples, level=1.0 - alpha)
    boot = ConfidenceInterval(boot.estimate, boot.low, boot.high, boot.level, boot.method, "mean(B) - mean(A)")
    rec = recommend(xa, xb, decision, pairs)
    identical = (IdenticalRows(pairs.n, pairs.only_a, pairs.only_b)
                 if pairs is not None and decision.verdict is Verdict.IDENTICAL else None)
    return Comparison(decision, tests, holm, boot, rec, _describe(xa), _describe(xb), seed, xa, xb, identical,
                      pairing, information_check(decision, rec, min_episodes))


def _kind(kind: MarginKind | str) -> MarginKind:
    try:
        return MarginKind(kind)
    except ValueError:
        raise CompareError(f"margin kind must be one of {[k.value for k in MarginKind]}, got {kind!r}") from None


def _pairing(a: Any, b: Any, seeds_a: Any, seeds_b: Any, paired: str,
             kind: MarginKind) -> tuple[PairedSample | None, Pairing | None]:
    """Match rows by seed and decide whether the verdict uses the paired tests."""
    if paired not in ("auto", "yes", "no"):
        raise CompareError(f"paired must be 'auto', 'yes' or 'no', got {paired!r}")
    if seeds_a is None or seeds_b is None:
        if paired == "yes":
            raise CompareError("a paired comparison needs the episode seeds of both sides (a 'seed' column); "
                               "evaluate both sides with evaltk evaluate, or compare unpaired")
        return None, None
    xa, xb = _sample(a, "A"), _sample(b, "B")
    try:
        pairs = pair_by_seed(xa, xb, seeds_a, seeds_b)
    except StatsInputError as exc:
        raise CompareError(str(exc)) from exc
    if pairs.n < 2:
        if paired == "yes":
            raise CompareError(f"A and B share {pairs.n} episode seeds, a paired comparison needs at least 2: "
                               "evaluate both with the same --seed")
        return pairs, Pairing(pairs.n, pairs.only_a, pairs.only_b, False, None, "fewer than 2 shared seeds")
    if paired == "no":
        note, used = "pairing turned off (--unpaired)", False
    elif kind not in PAIRED_KINDS:
        note, used = f"no paired test for a {kind.value} margin: the tables were compared unpaired", False
    else:
        note, used = f"tests on the per-seed differences over {pairs.n} shared seeds", True
    return pairs, Pairing(pairs.n, pairs.only_a, pairs.only_b, used, pairs.correlation(), note)
