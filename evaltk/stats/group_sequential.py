"""Group-sequential comparison with three outcomes: equivalent, different, or inconclusive.

The quantity ``theta`` (``B - A`` in the margin's units) is compared with the margin region
``(low, high)`` at each look. At each margin point (``high``, and ``low`` mirrored) there are two
one-sided tests: the TOST half "theta < high" at the nominal level ``1 - Phi(u_k)`` and "theta >
high" at ``1 - Phi(d_k)``, with the boundaries of :func:`evaltk.stats.boundaries.inner_outer_bounds`
(Lan-DeMets alpha-spending, ``delayed-equivalence`` by default: no equivalence stop before a third
of the budget, "different" on a power family), solved for the rule below. The interim looks with
fewer than :data:`MIN_DECISION_EPISODES` per side decide nothing (``first_look``). A look stops with

* ``equivalent`` - both TOST halves reject at the same look. P(equivalent) <= alpha whenever theta
  lies on or outside the margin: the rule says "equivalent" only on a path that has not crossed
  the outer boundary before, and ``u_k`` spends alpha on exactly those paths;
* ``different`` - either margin point is crossed outwards (the p-value of "theta <= high", or of
  "theta >= low", is below ``1 - Phi(d_k)``). ``d_k`` spends alpha / 2 with no other stopping, so
  a TOST half that crossed ``u_k`` alone (which does not stop the rule) is accounted for:
  P(different) <= alpha / 2 whenever theta lies inside or on the margin, up to the chance of
  crossing the *other* margin point, which matters only when the whole region is about one SE
  wide (:func:`evaltk.stats.boundaries.procedure_rates` computes both rates). With one look the
  boundaries are ``z_{1-alpha}`` and ``z_{1-alpha/2}``, the fixed-N rule. An ``sd`` margin
  withholds "different" at a look whose pooled sample kurtosis exceeds
  :data:`evaltk.stats.look_statistics.SD_KURTOSIS_LIMIT`: the delta-method SE of the
  standardized difference needs a finite fourth moment, and for heavy-tailed scores (t3) it is too
  small exactly in the samples that drew no extreme episode;
* ``futility`` (verdict "inconclusive") - the ``delayed-equivalence`` design only, at an interim
  look from half the budget on that decided nothing: the estimate lies within
  :data:`evaltk.stats.boundaries.FUTILITY_Z` SEs of a margin point (both one-sided p-values there
  above ``Phi(-FUTILITY_Z)``), where neither verdict is likely within the budget. The stop is
  non-binding: the boundaries are solved as if the rule always went on, so both levels hold whether
  or not it stops (stopping can only lower the rates of "equivalent" and "different");
* ``inconclusive`` - at the last look, when nothing else has happened: the budget is spent.

Boundaries at look ``k`` depend on the fractions ``t_1..t_k`` only.
Each look also reports its repeated confidence intervals (:func:`repeated_ci`), dual to its
decisions; the one at ``d_k`` covers theta at every look at once with probability >= 1 - alpha.

The statistics of each look are those of :mod:`evaltk.stats.look_statistics`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass
from enum import Enum
from typing import Any

import numpy as np
from scipy import optimize, stats

from evaltk.stats.boundaries import (
    ProcedureOutcomes,
    Spending,
    check_fractions,
    futility_bounds,
    inner_outer_bounds,
    parse_spending,
    procedure_outcomes,
)
from evaltk.stats.checks import ArrayLike, FloatArray, StatsInputError, check_alpha
from evaltk.stats.look_statistics import LookStats, look_stats


class LookDecision(Enum):
    """What a look decided (``continue`` at interim looks that decide nothing)."""

    CONTINUE = "continue"
    EQUIVALENT = "equivalent"
    DIFFERENT = "different"
    INCONCLUSIVE = "inconclusive"
    FUTILITY = "futility"
    """An interim look stopped (non-binding) near a margin point; the verdict is "inconclusive"."""


@dataclass(frozen=True)
class SequentialDesign:
    """Boundaries of the three-outcome sequential comparison at given information fractions.

    Attributes:
        fractions: information fractions of the looks, increasing, the last one 1 for a full budget.
        alpha: level of each TOST half (and of "different", two-sided).
        spending: alpha-spending shape of both boundaries.
        equivalence_z: ``u_k``, each TOST half's inner boundaries (Z scale, level ``alpha``).
        difference_z: ``d_k``, the outer boundaries at each margin point (level ``alpha / 2``).
        futility_z: per look, the half-width (SEs) around each margin point of the non-binding
            futility stop (0: none at that look; empty: none at all).

    """

    fractions: tuple[float, ...]
    alpha: float
    spending: Spending
    equivalence_z: tuple[float, ...]
    difference_z: tuple[float, ...]
    futility_z: tuple[float, ...] = ()

    @classmethod
    def build(cls, fractions: ArrayLike, *, alpha: float = 0.05,
              spending: Spending | str = Spending.DELAYED_EQUIVALENCE, first_look: int = 0) -> SequentialDesign:
        """Compute the boundaries for looks at ``fractions`` (see the module docstring).

        The looks before ``first_look`` (0-based; :func:`first_deciding_look`) decide nothing: their
        boundaries are never crossed, they make no futility stop, and the level they would spend goes
        to the first look that decides.
        """
        check_alpha(alpha)
        if alpha >= 0.5:
            raise StatsInputError(f"alpha must be below 0.5 for a sequential comparison, got {alpha!r}")
        t = check_fractions(fractions)
        shape = parse_spending(spending)
        inner, outer = inner_outer_bounds(t, alpha, alpha / 2.0, shape, first_look=first_look)
        futility = futility_bounds(t, shape)
        futility[:first_look] = 0.0
        return cls(tuple(float(v) for v in t), float(alpha), shape, tuple(float(v) for v in inner),
                   tuple(float(v) for v in outer), tuple(float(v) for v in futility))

    @property
    def looks(self) -> int:
        """Number of looks."""
        return len(self.fractions)

    def nominal_alpha(self, k: int) -> float:
        """One-sided p-value threshold of each TOST half at look ``k`` (0-based)."""
        return float(stats.norm.sf(self.equivalence_z[k]))

    def nominal_alpha_beyond(self, k: int) -> float:
        """One-sided p-value threshold of "beyond the margin" at look ``k`` (0-based)."""
        return float(stats.norm.sf(self.difference_z[k]))

    def futility_level(self, k: int) -> float:
        """Look ``k`` (0-based) stops for futility when both one-sided p-values at a margin point exceed this.

        ``Phi(-futility_z[k])``; 1.0 (never) at a look without a futility stop.
        """
        c = self.futility_z[k] if self.futility_z else 0.0
        return float(stats.norm.sf(c)) if c > 0.0 else 1.0

    def outcomes_at(self, margin_se: float, drift: float) -> ProcedureOutcomes:
        """Outcome probabilities and expected fraction of the rule, futility stops included (normal approximation).

        ``margin_se``: half-width of the margin region in standard errors at the full budget;
        ``drift``: the upper TOST half's mean Z at the full budget (``margin_se`` at a true 0, 0 on
        the margin point, ``-margin_se`` at twice the margin). See
        :func:`evaltk.stats.boundaries.procedure_outcomes`.
        """
        return procedure_outcomes(self.fractions, self.equivalence_z, self.difference_z, margin_se, drift,
                                  self.futility_z or None)

    def to_dict(self) -> dict[str, Any]:
        """Plain dict for JSON output."""
        d = asdict(self)
        d["spending"] = self.spending.value
        d["nominal_alpha"] = [self.nominal_alpha(k) for k in range(self.looks)]
        d["nominal_alpha_beyond"] = [self.nominal_alpha_beyond(k) for k in range(self.looks)]
        d["futility_level"] = [self.futility_level(k) for k in range(self.looks)]
        return d


MIN_DECISION_EPISODES = 20
"""Fewest episodes per side (pairs) at which an interim look may decide: below, the studentized statistics'
tails are far from the normal ones the boundaries assume (for skewed or heavy-tailed scores)."""


def first_deciding_look(sizes: Sequence[int]) -> int:
    """Index of the first look with at least :data:`MIN_DECISION_EPISODES` per side (the last look always decides).

    ``sizes``: each look's episodes per side (the smaller side's, or pairs).
    """
    for k, n in enumerate(sizes):
        if n >= MIN_DECISION_EPISODES:
            return k
    return max(len(sizes) - 1, 0)


def design_max_episodes(margin_sd: float, *, looks: int = 10, alpha: float = 0.05, beta: float = 0.1,
                        spending: Spending | str = Spending.DELAYED_EQUIVALENCE, rho: float = 0.0) -> int:
    """Episodes per side (equal looks) so that a true difference of 0 is called equivalent with power ``1 - beta``.

    Normal approximation: at a true difference of 0 each TOST half's statistic has drift
    ``M = margin / se_K`` at the last look, ``se_K = sd sqrt(2 (1 - rho) / N)`` (``rho`` the
    per-seed correlation of a paired design, 0 unpaired). ``M`` is solved so that the rule itself
    (both halves at the same look, "different" first where it comes first, futility stops included;
    :meth:`SequentialDesign.outcomes_at`) says "equivalent" with probability
    ``1 - beta``; ``N = 2 (1 - rho) (M / margin_sd)^2``. With one look this is the fixed-N TOST size
    ``2 (z_{1-alpha} + z_{1-beta/2})^2 / margin_sd^2``.
    """
    if not (math.isfinite(margin_sd) and margin_sd > 0):
        raise StatsInputError(f"margin_sd must be a positive number, got {margin_sd!r}")
    if not -1.0 < rho < 1.0:
        raise StatsInputError(f"rho must be in (-1, 1), got {rho!r}")
    if not 0.0 < beta < 1.0:
        raise StatsInputError(f"beta must be in (0, 1), got {beta!r}; 0.1 is the default (90% power)")
    design = SequentialDesign.build(np.arange(1, looks + 1) / looks, alpha=alpha, spending=spending)
    fixed = float(stats.norm.isf(alpha) + stats.norm.isf(beta / 2.0))  # the one-look drift
    drift = float(optimize.brentq(lambda m: design.outcomes_at(m, m).equivalent - (1.0 - beta), 0.5 * fixed,
                                  2.0 * fixed, xtol=1e-6))
    return max(2, math.ceil(2.0 * (1.0 - rho) * (drift / margin_sd) ** 2))


def near_margin(st: LookStats) -> FloatArray:
    """Per sequence, the larger over both margin points of the smaller of the two one-sided p-values there.

    Large (up to 0.5 and above) when the estimate sits on a margin point: the futility stop's statistic.
    """
    out: FloatArray = np.maximum(np.minimum(st.p_upper, st.p_above), np.minimum(st.p_lower, st.p_below))
    return out


def decide_look(design: SequentialDesign, k: int, st: LookStats) -> np.ndarray:
    """Decision codes (index into ``list(LookDecision)``) of look ``k`` (0-based) for each sequence."""
    equivalent = np.maximum(st.p_lower, st.p_upper) < design.nominal_alpha(k)
    different = np.minimum(st.p_above, st.p_below) < design.nominal_alpha_beyond(k)
    if st.heavy_tails is not None:
        different &= ~st.heavy_tails
    undecided = LookDecision.INCONCLUSIVE if k == design.looks - 1 else LookDecision.CONTINUE
    codes = np.full(st.estimate.shape, list(LookDecision).index(undecided))
    level = design.futility_level(k)
    if level < 1.0:
        codes[near_margin(st) > level] = list(LookDecision).index(LookDecision.FUTILITY)
    codes[different] = list(LookDecision).index(LookDecision.DIFFERENT)
    codes[equivalent] = list(LookDecision).index(LookDecision.EQUIVALENT)
    return codes


@dataclass(frozen=True)
class Look:
    """One look of a sequential comparison.

    Attributes:
        k: look number (1-based).
        n_a: episodes of A used (pairs, for a paired design).
        n_b: episodes of B used.
        fraction: information fraction.
        estimate: estimate of the quantity.
        se: its standard error.
        p_tost: ``max(p_lower, p_upper)``, the TOST p-value.
        nominal_alpha: the threshold for "equivalent" at this look (``1 - Phi(u_k)``).
        p_beyond: ``min(p_above, p_below)``, the p-value of "inside or on the margin".
        nominal_alpha_beyond: the threshold for "different" (``1 - Phi(d_k)``).
        outcome: what this look decided.
        ci_equivalence: the repeated confidence interval at level ``1 - 2 nominal_alpha`` (``u_k``):
            "equivalent" needs it inside the margin region.
        ci_difference: the repeated confidence interval at level ``1 - 2 nominal_alpha_beyond``
            (``d_k``): "different" needs it wholly beyond a margin point. Over all looks it covers
            the true quantity with probability at least ``1 - alpha``.
        heavy_tails: an ``sd`` margin's "different" was not allowed at this look (pooled sample
            kurtosis above :data:`evaltk.stats.look_statistics.SD_KURTOSIS_LIMIT`).
        p_near: the futility statistic (:func:`near_margin`): large when the estimate sits on a
            margin point.
        futility_level: the look stops for futility when ``p_near`` exceeds this (1: no futility
            stop at this look).

    """

    k: int
    n_a: int
    n_b: int
    fraction: float
    estimate: float
    se: float
    p_tost: float
    nominal_alpha: float
    p_beyond: float
    nominal_alpha_beyond: float
    outcome: LookDecision
    ci_equivalence: tuple[float, float] = (math.nan, math.nan)
    ci_difference: tuple[float, float] = (math.nan, math.nan)
    heavy_tails: bool = False
    p_near: float = math.nan
    futility_level: float = 1.0

    def summary(self) -> str:
        """One line for people."""
        lo, hi = self.ci_difference
        tost = (f"needs < {self.nominal_alpha:.3g}" if self.nominal_alpha > 0.0
                else "no equivalence stop this early")
        near = (f", near-margin p={self.p_near:.3g} (futility stop if > {self.futility_level:.3g})"
                if self.futility_level < 1.0 else "")
        return (f"look {self.k}: n_a={self.n_a} n_b={self.n_b} (t={self.fraction:.2f}) estimate={self.estimate:.4g} "
                f"se={self.se:.3g} TOST p={self.p_tost:.3g} ({tost}), beyond-margin "
                f"p={self.p_beyond:.3g} (needs < {self.nominal_alpha_beyond:.3g}){near}, repeated CI "
                f"[{lo:.4g}, {hi:.4g}] (level {1 - 2 * self.nominal_alpha_beyond:.4g} at this look) -> "
                f"{self.outcome.value}")

    def to_dict(self) -> dict[str, Any]:
        """Plain dict for JSON output."""
        d = asdict(self)
        d["outcome"] = self.outcome.value
        return d


def look_once(design: SequentialDesign, k: int, a_k: FloatArray, b_k: FloatArray, kind: str, margin: float, *,
              paired: bool) -> Look:
    """Make look ``k`` (0-based) on the cumulative samples ``a_k`` (reference) and ``b_k`` (``float64[n]``)."""
    st = look_stats(a_k[None, :], b_k[None, :], -margin, margin, kind, paired=paired)
    outcome = list(LookDecision)[int(decide_look(design, k, st)[0])]
    heavy = bool(st.heavy_tails[0]) if st.heavy_tails is not None else False
    return Look(k + 1, int(a_k.size), int(b_k.size), design.fractions[k], float(st.estimate[0]), float(st.se[0]),
                float(max(st.p_lower[0], st.p_upper[0])), design.nominal_alpha(k),
                float(min(st.p_above[0], st.p_below[0])), design.nominal_alpha_beyond(k), outcome,
                repeated_ci(a_k, b_k, kind, design.nominal_alpha(k), paired=paired),
                repeated_ci(a_k, b_k, kind, design.nominal_alpha_beyond(k), paired=paired), heavy,
                float(near_margin(st)[0]), design.futility_level(k))


def repeated_ci(a_k: FloatArray, b_k: FloatArray, kind: str, nominal: float, *,
                paired: bool) -> tuple[float, float]:
    """Return the margin points ``m`` that neither one-sided test of the look rejects at ``nominal``: ``[low, high]``.

    ``low`` solves p("quantity <= m") = ``nominal`` and ``high`` solves p("quantity >= m") = ``nominal``,
    with the look's own tests (so the interval is dual to the decision: "equivalent" at look
    ``k`` iff the interval at ``1 - Phi(u_k)`` lies inside the region, "different" iff the one at
    ``1 - Phi(d_k)`` lies beyond a margin point). Infinite ends where the tests never reach ``nominal``.
    """
    st = look_stats(a_k[None, :], b_k[None, :], 0.0, 0.0, kind, paired=paired)
    est, se = float(st.estimate[0]), float(st.se[0])
    if not (math.isfinite(est) and se > 0.0):
        return est, est

    def p_le(m: float) -> float:
        return float(look_stats(a_k[None, :], b_k[None, :], m, m, kind, paired=paired).p_above[0]) - nominal

    def p_ge(m: float) -> float:
        return float(look_stats(a_k[None, :], b_k[None, :], m, m, kind, paired=paired).p_below[0]) - nominal

    lo_m, hi_m = est - 60.0 * se, est + 60.0 * se
    low = float(optimize.brentq(p_le, lo_m, est, xtol=1e-10 * (1 + abs(est)))) if p_le(lo_m) < 0 < p_le(est) \
        else -math.inf
    high = float(optimize.brentq(p_ge, est, hi_m, xtol=1e-10 * (1 + abs(est)))) if p_ge(hi_m) < 0 < p_ge(est) \
        else math.inf
    return low, high


def run_sequence(design: SequentialDesign, looks: Iterable[tuple[FloatArray, FloatArray]], kind: str,
                 margin: float, *, paired: bool) -> Iterator[Look]:
    """Make the looks in order and stop after the first that decides.

    ``looks`` yields the cumulative samples ``(a_k, b_k)`` (``float64[n]``) one look at a time and is
    consumed lazily, so a caller may produce each look's episodes only when the previous look
    continued (``evaltk evaluate --until-verdict``). It must yield ``design.looks`` looks unless one
    decides first.
    """
    made = 0
    for k, (a_k, b_k) in enumerate(looks):
        if k >= design.looks:
            raise StatsInputError(f"the design has {design.looks} looks but more were given")
        look = look_once(design, k, a_k, b_k, kind, margin, paired=paired)
        made += 1
        yield look
        if look.outcome is not LookDecision.CONTINUE:
            return
    raise StatsInputError(f"the design has {design.looks} looks but only {made} were given")


def information_fraction(n_a: int, n_b: int, max_a: int, max_b: int, *, paired: bool) -> float:
    """Information at ``(n_a, n_b)`` relative to ``(max_a, max_b)``: ``n / N`` paired, harmonic sizes unpaired."""
    if paired:
        return min(n_b, n_a) / min(max_a, max_b)
    return (1.0 / max_a + 1.0 / max_b) / (1.0 / n_a + 1.0 / n_b)


@dataclass(frozen=True)
class SimulatedOutcomes:
    """Outcomes of many sequences run through one design (see :func:`simulate`).

    Attributes:
        outcome: outcome code per sequence (index into ``list(LookDecision)``), ``int[S]``.
        episodes: episodes used per side per sequence, ``int[S]`` (B's count; pairs when paired).

    """

    outcome: np.ndarray
    episodes: np.ndarray

    def rate(self, outcome: LookDecision) -> float:
        """Fraction of sequences that ended with ``outcome``."""
        return float(np.mean(self.outcome == list(LookDecision).index(outcome)))


def simulate(design: SequentialDesign, a: FloatArray, b: FloatArray, sizes: Sequence[int], kind: str, margin: float,
             *, paired: bool) -> SimulatedOutcomes:
    """Run ``S`` sequences (rows of ``a`` and ``b``, ``float64[S, N]``) with looks after ``sizes`` episodes per side."""
    if len(sizes) != design.looks:
        raise StatsInputError(f"the design has {design.looks} looks but {len(sizes)} sizes were given")
    n_seq = a.shape[0]
    cont = list(LookDecision).index(LookDecision.CONTINUE)
    outcome = np.full(n_seq, cont)
    used = np.zeros(n_seq, np.int64)
    for k, n in enumerate(sizes):
        live = np.flatnonzero(outcome == cont)
        if live.size == 0:
            break
        st = look_stats(a[live, :n], b[live, :n], -margin, margin, kind, paired=paired)
        outcome[live] = decide_look(design, k, st)
        used[live] = n
    return SimulatedOutcomes(outcome, used)
