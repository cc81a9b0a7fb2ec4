"""Group-sequential comparison with three outcomes: equivalent, different, or inconclusive when the budget is spent.

The quantity ``theta`` (``B - A`` in the margin's units) is compared with the margin region
``(low, high)`` at each look. At each margin point (``high``, and ``low`` mirrored) there are two
one-sided tests: the TOST half "theta < high" at the nominal level ``1 - Phi(u_k)`` and "theta >
high" at ``1 - Phi(d_k)``, with the boundaries of :func:`evaltk.stats.boundaries.inner_outer_bounds`
(Lan-DeMets alpha-spending, O'Brien-Fleming shape by default), solved for the rule below. A look
stops with

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
  withholds "different" at a look whose pooled sample kurtosis exceeds :data:`SD_KURTOSIS_LIMIT`:
  the delta-method SE of the standardized difference needs a finite fourth moment, and for
  heavy-tailed scores (t3) it is too small exactly in the samples that drew no extreme episode;
* ``inconclusive`` - only at the last look, when neither has happened: the budget is spent.

There is no futility stop: an interim look that decides nothing continues, so "inconclusive" always
means "the budget ran out". Boundaries at look ``k`` depend on the fractions ``t_1..t_k`` only.
Each look also reports its repeated confidence intervals (:func:`repeated_ci`), dual to its
decisions; the one at ``d_k`` covers theta at every look at once with probability >= 1 - alpha.

Statistics per look (``x`` = candidate B, ``y`` = reference A), vectorised over a leading axis so
that the calibration benchmark runs thousands of sequences at once:

* ``absolute``, unpaired: Welch t (as statsmodels ``ttost_ind(usevar="unequal")``);
* ``absolute``, paired: t on the per-seed differences (statsmodels ``ttost_paired``);
* ``sd``, unpaired: the larger of the noncentral-t and delta-method p-values, as
  :func:`evaltk.stats.equivalence.tost_standardized`;
* ``sd``, paired: the delta-method t of :func:`evaltk.stats.paired.tost_paired_standardized`.
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass
from enum import Enum
from typing import Any

import numpy as np
from scipy import optimize, stats

from evaltk.stats.boundaries import (
    Spending,
    check_fractions,
    crossing_probability,
    inner_outer_bounds,
    parse_spending,
)
from evaltk.stats.checks import ArrayLike, FloatArray, StatsInputError, check_alpha

SEQUENTIAL_KINDS = ("absolute", "sd")


class LookDecision(Enum):
    """What a look decided (``continue`` at interim looks that decide nothing)."""

    CONTINUE = "continue"
    EQUIVALENT = "equivalent"
    DIFFERENT = "different"
    INCONCLUSIVE = "inconclusive"


@dataclass(frozen=True)
class SequentialDesign:
    """Boundaries of the three-outcome sequential comparison at given information fractions.

    Attributes:
        fractions: information fractions of the looks, increasing, the last one 1 for a full budget.
        alpha: level of each TOST half (and of "different", two-sided).
        spending: alpha-spending shape of both boundaries.
        equivalence_z: ``u_k``, each TOST half's inner boundaries (Z scale, level ``alpha``).
        difference_z: ``d_k``, the outer boundaries at each margin point (level ``alpha / 2``).

    """

    fractions: tuple[float, ...]
    alpha: float
    spending: Spending
    equivalence_z: tuple[float, ...]
    difference_z: tuple[float, ...]

    @classmethod
    def build(cls, fractions: ArrayLike, *, alpha: float = 0.05,
              spending: Spending | str = Spending.OBRIEN_FLEMING) -> SequentialDesign:
        """Compute the boundaries for looks at ``fractions`` (see the module docstring)."""
        check_alpha(alpha)
        if alpha >= 0.5:
            raise StatsInputError(f"alpha must be below 0.5 for a sequential comparison, got {alpha!r}")
        t = check_fractions(fractions)
        shape = parse_spending(spending)
        inner, outer = inner_outer_bounds(t, alpha, alpha / 2.0, shape)
        return cls(tuple(float(v) for v in t), float(alpha), shape, tuple(float(v) for v in inner),
                   tuple(float(v) for v in outer))

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

    def power_at(self, drift: float) -> float:
        """Probability that one TOST half crosses its inner boundary when its statistic has drift ``drift``.

        ``drift`` is the half's mean Z at the full budget (``E[Z_k] = drift sqrt(t_k)``); the paths
        that stop at the outer boundary first do not count.
        """
        up, _ = crossing_probability(self.fractions, self.equivalence_z, lower=[-d for d in self.difference_z],
                                     drift=drift)
        return up

    def to_dict(self) -> dict[str, Any]:
        """Plain dict for JSON output."""
        d = asdict(self)
        d["spending"] = self.spending.value
        d["nominal_alpha"] = [self.nominal_alpha(k) for k in range(self.looks)]
        d["nominal_alpha_beyond"] = [self.nominal_alpha_beyond(k) for k in range(self.looks)]
        return d


def design_max_episodes(margin_sd: float, *, looks: int = 5, alpha: float = 0.05, beta: float = 0.2,
                        spending: Spending | str = Spending.OBRIEN_FLEMING, rho: float = 0.0) -> int:
    """Episodes per side (equal looks) so that a true difference of 0 is called equivalent with power ``1 - beta``.

    Normal approximation: at a true difference of 0 each TOST half's statistic has drift
    ``margin / se_K`` at the last look, ``se_K = sd sqrt(2 (1 - rho) / N)`` (``rho`` the per-seed
    correlation of a paired design, 0 unpaired). The two halves fail on opposite tails, so the power
    is ``1 - 2 (1 - p)`` for a per-half power ``p``; the drift with ``p = 1 - beta / 2`` gives ``N``.
    """
    if not (math.isfinite(margin_sd) and margin_sd > 0):
        raise StatsInputError(f"margin_sd must be a positive number, got {margin_sd!r}")
    if not -1.0 < rho < 1.0:
        raise StatsInputError(f"rho must be in (-1, 1), got {rho!r}")
    if not 0.0 < beta < 1.0:
        raise StatsInputError(f"beta must be in (0, 1), got {beta!r}; 0.2 is the usual choice (80% power)")
    design = SequentialDesign.build(np.arange(1, looks + 1) / looks, alpha=alpha, spending=spending)
    drift = float(optimize.brentq(lambda th: design.power_at(th) - (1.0 - beta / 2.0), 0.0, 20.0, xtol=1e-8))
    return max(2, math.ceil(2.0 * (1.0 - rho) * (drift / margin_sd) ** 2))


@dataclass(frozen=True)
class LookStats:
    """Per-look statistics, each ``float64[S]`` for ``S`` sequences (``S = 1`` for one comparison).

    Attributes:
        estimate: the quantity's estimate.
        se: its standard error (0 when the data have no variability).
        p_lower: p-value of the test of "quantity <= low".
        p_upper: p-value of "quantity >= high".
        p_above: p-value of "quantity <= high" (small when the quantity exceeds the margin).
        p_below: p-value of "quantity >= low".
        heavy_tails: ``sd`` margins only (else ``None``): the pooled sample kurtosis exceeds
            :data:`SD_KURTOSIS_LIMIT`, so the delta-method SE of the standardized difference
            cannot be trusted to show "different" (see :func:`decide_look`).

    """

    estimate: FloatArray
    se: FloatArray
    p_lower: FloatArray
    p_upper: FloatArray
    p_above: FloatArray
    p_below: FloatArray
    heavy_tails: np.ndarray | None = None


SD_KURTOSIS_LIMIT = 5.0
"""Largest pooled sample kurtosis at which an ``sd`` margin may say "different" (normal scores: 3)."""


def pooled_kurtosis(x: FloatArray, y: FloatArray) -> FloatArray:
    """Sample kurtosis ``m4 / m2^2`` of both sides' deviations from their own means, per row (``float64[S]``)."""
    c = np.concatenate([x - x.mean(axis=1, keepdims=True), y - y.mean(axis=1, keepdims=True)], axis=1)
    m2 = np.mean(c**2, axis=1)
    with np.errstate(all="ignore"):
        out: FloatArray = np.where(m2 > 0, np.mean(c**4, axis=1) / np.where(m2 > 0, m2, 1.0) ** 2, 0.0)
    return out


def _t_tests(est: FloatArray, se: FloatArray, df: FloatArray, low: float, high: float) -> LookStats:
    zero = se == 0.0
    safe = np.where(zero, 1.0, se)
    with np.errstate(all="ignore"):
        p_lower = np.where(zero, np.where(est > low, 0.0, 1.0), stats.t.sf((est - low) / safe, df))
        p_upper = np.where(zero, np.where(est < high, 0.0, 1.0), stats.t.cdf((est - high) / safe, df))
        p_above = np.where(zero, np.where(est > high, 0.0, 1.0), stats.t.sf((est - high) / safe, df))
        p_below = np.where(zero, np.where(est < low, 0.0, 1.0), stats.t.cdf((est - low) / safe, df))
    return LookStats(est, se, p_lower, p_upper, p_above, p_below)


def _nct_cdf(t: FloatArray, df: FloatArray, ncp: FloatArray) -> FloatArray:
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        value = np.asarray(stats.nct.cdf(t, df, ncp), dtype=np.float64)
    approx = stats.norm.cdf((t * (1.0 - 1.0 / (4.0 * df)) - ncp) / np.sqrt(1.0 + t * t / (2.0 * df)))
    out: FloatArray = np.clip(np.where(np.isfinite(value), value, approx), 0.0, 1.0)
    return out


def _sd_unpaired(x: FloatArray, y: FloatArray, low: float, high: float) -> LookStats:
    nx, ny = x.shape[1], y.shape[1]
    df = float(nx + ny - 2)
    vx, vy = x.var(axis=1, ddof=1), y.var(axis=1, ddof=1)
    pooled = ((nx - 1) * vx + (ny - 1) * vy) / df
    diff = x.mean(axis=1) - y.mean(axis=1)
    zero = pooled == 0.0
    s = np.sqrt(np.where(zero, 1.0, pooled))
    with np.errstate(invalid="ignore"):  # sign(0) * inf in rows that np.where discards
        d = np.where(zero, np.where(diff == 0.0, 0.0, np.sign(diff) * np.inf), diff / s)
    scale = math.sqrt(nx * ny / (nx + ny))
    total = np.zeros_like(d)
    dd = np.where(np.isfinite(d), d, 0.0)
    for values, sign, n in ((x, 1.0, nx), (y, -1.0, ny)):
        centred = values - values.mean(axis=1, keepdims=True)
        infl = (sign * centred / s[:, None]
                - dd[:, None] * ((n - 1) / df) * (centred**2 - values.var(axis=1, ddof=1)[:, None])
                / (2.0 * s[:, None] ** 2))
        total += np.mean(infl**2, axis=1) / n
    se = np.where(zero, 0.0, np.sqrt(total))
    base = _t_tests(d, se, np.full_like(d, df), low, high)
    if bool(zero.all()):
        return base
    t_obs = np.where(zero, 0.0, dd * scale)
    dfa = np.full_like(d, df)

    def merge(p_t: FloatArray, p_nct: FloatArray) -> FloatArray:
        out: FloatArray = np.where(zero, p_t, np.maximum(p_t, p_nct))
        return out

    return LookStats(d, se,
                     merge(base.p_lower, 1.0 - _nct_cdf(t_obs, dfa, np.full_like(d, low * scale))),
                     merge(base.p_upper, _nct_cdf(t_obs, dfa, np.full_like(d, high * scale))),
                     merge(base.p_above, 1.0 - _nct_cdf(t_obs, dfa, np.full_like(d, high * scale))),
                     merge(base.p_below, _nct_cdf(t_obs, dfa, np.full_like(d, low * scale))))


def _sd_paired(x: FloatArray, y: FloatArray, low: float, high: float) -> LookStats:
    n = x.shape[1]
    vx, vy = x.var(axis=1, ddof=1), y.var(axis=1, ddof=1)
    pooled = (vx + vy) / 2.0
    diff = x - y
    md = diff.mean(axis=1)
    zero = pooled == 0.0
    s = np.sqrt(np.where(zero, 1.0, pooled))
    with np.errstate(invalid="ignore"):  # sign(0) * inf in rows that np.where discards
        d = np.where(zero, np.where(md == 0.0, 0.0, np.sign(md) * np.inf), md / s)
    dd = np.where(np.isfinite(d), d, 0.0)
    dev = ((x - x.mean(axis=1, keepdims=True)) ** 2 - vx[:, None] + (y - y.mean(axis=1, keepdims=True)) ** 2
           - vy[:, None]) / 2.0
    infl = (diff - md[:, None]) / s[:, None] - dd[:, None] * dev / (2.0 * s[:, None] ** 2)
    se = np.where(zero, 0.0, np.sqrt(np.mean(infl**2, axis=1) / n))
    return _t_tests(d, se, np.full_like(d, n - 1.0), low, high)


def look_stats(a: FloatArray, b: FloatArray, low: float, high: float, kind: str, *, paired: bool) -> LookStats:
    """Statistics of one look for reference ``a`` and candidate ``b``, each ``float64[S, n]`` (``n >= 2``).

    Paired: row ``j`` of ``a`` and of ``b`` hold the same seeds in the same order.
    """
    if kind not in SEQUENTIAL_KINDS:
        raise StatsInputError(f"sequential tests support margin kinds {list(SEQUENTIAL_KINDS)}, got {kind!r}; "
                              "use --margin-kind absolute or sd")
    x, y = np.atleast_2d(np.asarray(b, np.float64)), np.atleast_2d(np.asarray(a, np.float64))
    if x.shape[1] < 2 or y.shape[1] < 2:
        raise StatsInputError("each look needs at least 2 episodes per side")
    if paired and x.shape != y.shape:
        raise StatsInputError(f"paired looks need equal shapes, got {y.shape} and {x.shape}")
    if kind == "sd":
        st = _sd_paired(x, y, low, high) if paired else _sd_unpaired(x, y, low, high)
        return dataclasses.replace(st, heavy_tails=pooled_kurtosis(x, y) > SD_KURTOSIS_LIMIT)
    if paired:
        diff = x - y
        n = diff.shape[1]
        return _t_tests(diff.mean(axis=1), diff.std(axis=1, ddof=1) / math.sqrt(n), np.full(diff.shape[0], n - 1.0),
                        low, high)
    nx, ny = x.shape[1], y.shape[1]
    qx, qy = x.var(axis=1, ddof=1) / nx, y.var(axis=1, ddof=1) / ny
    se = np.sqrt(qx + qy)
    with np.errstate(all="ignore"):
        df = np.where(se > 0, (qx + qy) ** 2 / (qx**2 / (nx - 1) + qy**2 / (ny - 1)), nx + ny - 2.0)
    return _t_tests(x.mean(axis=1) - y.mean(axis=1), se, df, low, high)


def decide_look(design: SequentialDesign, k: int, st: LookStats) -> np.ndarray:
    """Decision codes (index into ``list(LookDecision)``) of look ``k`` (0-based) for each sequence."""
    equivalent = np.maximum(st.p_lower, st.p_upper) < design.nominal_alpha(k)
    different = np.minimum(st.p_above, st.p_below) < design.nominal_alpha_beyond(k)
    if st.heavy_tails is not None:
        different &= ~st.heavy_tails
    undecided = LookDecision.INCONCLUSIVE if k == design.looks - 1 else LookDecision.CONTINUE
    codes = np.full(st.estimate.shape, list(LookDecision).index(undecided))
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
            kurtosis above :data:`SD_KURTOSIS_LIMIT`).

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

    def summary(self) -> str:
        """One line for people."""
        lo, hi = self.ci_difference
        return (f"look {self.k}: n_a={self.n_a} n_b={self.n_b} (t={self.fraction:.2f}) estimate={self.estimate:.4g} "
                f"se={self.se:.3g} TOST p={self.p_tost:.3g} (needs < {self.nominal_alpha:.3g}), beyond-margin "
                f"p={self.p_beyond:.3g} (needs < {self.nominal_alpha_beyond:.3g}), repeated CI [{lo:.4g}, {hi:.4g}] "
                f"(level {1 - 2 * self.nominal_alpha_beyond:.4g} at this look) -> {self.outcome.value}")

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
                repeated_ci(a_k, b_k, kind, design.nominal_alpha_beyond(k), paired=paired), heavy)


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
