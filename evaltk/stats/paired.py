"""Paired designs: two score tables that share episode seeds, compared seed by seed.

When A and B ran the same seeds (two checkpoints on the same seeds, gpu_env vs Gym with the same
seeds) each shared seed gives a pair ``(a_i, b_i)`` and the difference ``D_i = b_i - a_i`` removes
the per-seed variability both sides share: ``Var(D) = Var(A) + Var(B) - 2 Cov(A, B)``, so with a
per-seed correlation ``rho`` the paired test needs about ``1 - rho`` times the episodes of the
unpaired one.

* :func:`pair_by_seed` matches the rows (each seed at most once per side).
* :func:`tost_paired` - TOST on ``mean(B - A)`` (statsmodels ``ttost_paired(b, a, low, high)``).
* :func:`tost_paired_standardized` - TOST on ``mean(B - A) / pooled SD`` where the pooled SD is the
  SD of the *scores* (``sqrt((s_A^2 + s_B^2) / 2)``, the same scale as the unpaired SD margin), with
  a delta-method standard error that includes the SD's own uncertainty.
* :func:`paired_t` - the paired t test (``scipy.stats.ttest_rel``) and :func:`paired_ci`.
* The secondary tests and interval of a paired design, each on the differences (never on the two samples as if
  they were independent): :func:`wilcoxon_signed_rank` (``scipy.stats.wilcoxon``), :func:`sign_flip_permutation`
  (``scipy.stats.permutation_test`` with ``permutation_type="samples"``) and :func:`paired_bootstrap_ci` (BCa
  bootstrap of the mean difference, resampling pairs).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats
from statsmodels.stats.weightstats import ttost_paired

from evaltk.stats.bootstrap import bootstrap_ci
from evaltk.stats.checks import (
    ArrayLike,
    FloatArray,
    StatsInputError,
    as_sample,
    check_alpha,
    check_generator,
    check_level,
)
from evaltk.stats.results import ConfidenceInterval, EquivalenceResult, TestResult


@dataclass(frozen=True)
class PairedSample:
    """Rows of A and B matched by episode seed, in A's order.

    Attributes:
        a: A's returns on the shared seeds, ``float64[n_shared]``.
        b: B's returns on the same seeds, same order.
        seeds: the shared seeds, ``int64[n_shared]``.
        only_a: rows of A whose seed B lacks.
        only_b: rows of B whose seed A lacks.

    """

    a: FloatArray
    b: FloatArray
    seeds: np.ndarray
    only_a: int
    only_b: int

    @property
    def n(self) -> int:
        """Number of shared seeds."""
        return int(self.seeds.size)

    @property
    def identical(self) -> bool:
        """True when every shared seed gives exactly the same return on both sides (and there is one)."""
        return self.n > 0 and bool(np.array_equal(self.a, self.b))

    def correlation(self) -> float | None:
        """Pearson correlation of the paired returns; ``None`` when undefined (n < 3 or a constant side)."""
        if self.n < 3 or self.a.std() == 0.0 or self.b.std() == 0.0:
            return None
        return float(np.corrcoef(self.a, self.b)[0, 1])


def _seeds(values: ArrayLike, n: int, name: str) -> np.ndarray:
    arr = np.asarray(values)
    if arr.shape != (n,):
        raise StatsInputError(f"seeds of {name} must have one value per episode ({n}), got shape {arr.shape}")
    if not np.all(np.isfinite(arr.astype(np.float64))) or not np.all(arr == np.round(arr)):
        raise StatsInputError(f"seeds of {name} must be integers; pass the 'seed' column of the score table")
    out = arr.astype(np.int64)
    if np.unique(out).size != out.size:
        raise StatsInputError(f"seeds of {name} repeat a seed; pairing needs each seed at most once per side")
    return out


def pair_by_seed(a: ArrayLike, b: ArrayLike, seeds_a: ArrayLike, seeds_b: ArrayLike) -> PairedSample:
    """Match ``a`` and ``b`` (returns) by their episode seeds; the order of A is kept."""
    xa = np.asarray(a, dtype=np.float64)
    xb = np.asarray(b, dtype=np.float64)
    sa, sb = _seeds(seeds_a, xa.size, "A"), _seeds(seeds_b, xb.size, "B")
    where_b = {int(s): i for i, s in enumerate(sb)}
    idx_a = [i for i, s in enumerate(sa) if int(s) in where_b]
    idx_b = [where_b[int(sa[i])] for i in idx_a]
    return PairedSample(xa[idx_a], xb[idx_b], sa[idx_a], xa.size - len(idx_a), xb.size - len(idx_b))


def _check_pairs(x: ArrayLike, y: ArrayLike) -> tuple[FloatArray, FloatArray]:
    xs, ys = as_sample(x, "x"), as_sample(y, "y")
    if xs.size != ys.size:
        raise StatsInputError(f"paired samples need equal sizes, got {xs.size} and {ys.size}")
    return xs, ys


def paired_t(x: ArrayLike, y: ArrayLike) -> TestResult:
    """Paired t test of ``mean(x - y) = 0`` (``scipy.stats.ttest_rel(x, y)``); ``nan`` if ``x - y`` is constant."""
    xs, ys = _check_pairs(x, y)
    diff = xs - ys
    if diff.var() == 0.0:
        p = 1.0 if diff[0] == 0.0 else 0.0
        return TestResult("paired_t", math.nan, p, xs.size, ys.size, "two-sided", float(diff.mean()),
                          "exact (constant differences)", "every pair differs by the same amount")
    res = stats.ttest_rel(xs, ys)
    return TestResult("paired_t", float(res.statistic), float(res.pvalue), xs.size, ys.size, "two-sided",
                      float(diff.mean()), "scipy.stats.ttest_rel")


def paired_ci(x: ArrayLike, y: ArrayLike, *, level: float = 0.95) -> ConfidenceInterval:
    """Student-t CI of ``mean(x - y)`` from the paired differences (exact, zero width, when they are constant)."""
    xs, ys = _check_pairs(x, y)
    check_level(level)
    diff = xs - ys
    est = float(diff.mean())
    if diff.var() == 0.0:
        return ConfidenceInterval(est, est, est, level, "exact (constant differences)", "mean(x - y)")
    half = float(stats.t.ppf(0.5 + level / 2.0, diff.size - 1)) * float(diff.std(ddof=1)) / math.sqrt(diff.size)
    return ConfidenceInterval(est, est - half, est + half, level, "paired-t", "mean(x - y)")


def tost_paired(x: ArrayLike, y: ArrayLike, low: float, high: float, *, alpha: float = 0.05) -> EquivalenceResult:
    """Paired TOST on ``mean(x - y)`` (``statsmodels.stats.weightstats.ttost_paired(x, y, low, high)``).

    Constant differences make the mean difference known exactly: the p-values are then 0 or 1.
    """
    xs, ys = _check_pairs(x, y)
    check_alpha(alpha)
    if not (math.isfinite(low) and math.isfinite(high) and low < high):
        raise StatsInputError(f"equivalence bounds must be finite with low < high, got ({low!r}, {high!r})")
    diff = xs - ys
    est = float(diff.mean())
    ci = paired_ci(xs, ys, level=1.0 - 2.0 * alpha)
    if diff.var() == 0.0:
        p_lower, p_upper = (0.0 if est > low else 1.0), (0.0 if est < high else 1.0)
        note = "every pair differs by the same amount: the mean difference is known exactly"
    else:
        _, lower_res, upper_res = ttost_paired(xs, ys, low, high)
        p_lower, p_upper, note = float(lower_res[1]), float(upper_res[1]), ""
    return EquivalenceResult("tost_paired", est, float(low), float(high), max(p_lower, p_upper), p_lower, p_upper,
                             ci, xs.size, ys.size, alpha, "statsmodels ttost_paired", note)


def standardized_paired_parts(x: FloatArray, y: FloatArray) -> tuple[float, float, float]:
    """Return ``(d, se, df)``: ``mean(x - y) / pooled score SD``, its delta-method SE and ``n - 1``.

    Row ``i``'s influence on ``d`` combines its effect on the mean difference and on the pooled
    variance ``(s_x^2 + s_y^2) / 2``; ``se = sqrt(mean(influence^2) / n)``.
    """
    n = x.size
    vx, vy = float(x.var(ddof=1)), float(y.var(ddof=1))
    pooled = (vx + vy) / 2.0
    diff = x - y
    if pooled == 0.0:
        return (0.0 if diff.mean() == 0.0 else math.copysign(math.inf, float(diff.mean()))), 0.0, float(n - 1)
    s = math.sqrt(pooled)
    d = float(diff.mean()) / s
    dev_var = ((x - x.mean()) ** 2 - vx + (y - y.mean()) ** 2 - vy) / 2.0
    influence = (diff - diff.mean()) / s - d * dev_var / (2.0 * pooled)
    return d, math.sqrt(float(np.mean(influence**2)) / n), float(n - 1)


def standardized_paired_ci(x: ArrayLike, y: ArrayLike, *, level: float = 0.95) -> ConfidenceInterval:
    """Delta-method t CI (``t_{n-1}``) of ``mean(x - y) / sqrt((s_x^2 + s_y^2) / 2)`` for paired samples."""
    xs, ys = _check_pairs(x, y)
    check_level(level)
    d, se, df = standardized_paired_parts(xs, ys)
    half = float(stats.t.ppf(0.5 + level / 2.0, df)) * se if se > 0.0 else 0.0
    return ConfidenceInterval(d, d - half, d + half, level, "paired delta-method t", "mean(x - y) / pooled SD")


def tost_paired_standardized(x: ArrayLike, y: ArrayLike, low: float, high: float, *,
                             alpha: float = 0.05) -> EquivalenceResult:
    """Paired TOST on ``mean(x - y) / sqrt((s_x^2 + s_y^2) / 2)`` with bounds in SD units (delta method, t_{n-1})."""
    xs, ys = _check_pairs(x, y)
    check_alpha(alpha)
    d, se, df = standardized_paired_parts(xs, ys)
    quantity = "mean(x - y) / pooled SD"
    if se == 0.0 or not math.isfinite(d):
        p_lower, p_upper = (0.0 if d > low else 1.0), (0.0 if d < high else 1.0)
        ci = ConfidenceInterval(d, d, d, 1.0 - 2.0 * alpha, "exact (no variability)", quantity)
        note = "no variability in the pairs: the quantity is known exactly"
    else:
        dist = stats.t(df)
        p_lower, p_upper = float(dist.sf((d - low) / se)), float(dist.cdf((d - high) / se))
        half = float(dist.ppf(1.0 - alpha)) * se
        ci = ConfidenceInterval(d, d - half, d + half, 1.0 - 2.0 * alpha, "paired delta-method t", quantity)
        note = ""
    return EquivalenceResult("tost_paired_standardized", d, float(low), float(high), max(p_lower, p_upper), p_lower,
                             p_upper, ci, xs.size, ys.size, alpha, "paired delta-method t, pooled score SD", note)


def wilcoxon_signed_rank(x: ArrayLike, y: ArrayLike) -> TestResult:
    """Wilcoxon signed-rank test of a median difference ``x - y`` of 0 (``scipy.stats.wilcoxon``, Pratt's zeros).

    Every difference 0 gives p = 1 (exact: no pair differs), where scipy's statistic is undefined.
    """
    xs, ys = _check_pairs(x, y)
    diff = xs - ys
    median = float(np.median(diff))
    if not np.any(diff):
        return TestResult("wilcoxon_signed_rank", 0.0, 1.0, xs.size, ys.size, "two-sided", median,
                          "exact (every difference is 0)", "no pair differs")
    res = stats.wilcoxon(xs, ys, zero_method="pratt")
    ties = np.unique(np.abs(diff[diff != 0])).size < np.count_nonzero(diff) or not np.all(diff)
    return TestResult("wilcoxon_signed_rank", float(res.statistic), float(res.pvalue), xs.size, ys.size, "two-sided",
                      median, "scipy.stats.wilcoxon(zero_method='pratt')",
                      "zeros or ties present: normal approximation" if ties else "")


def sign_flip_permutation(x: ArrayLike, y: ArrayLike, *, rng: np.random.Generator,
                          n_resamples: int = 9999) -> TestResult:
    """Paired permutation test of ``mean(x - y) = 0``: the signs of the differences flipped at random.

    ``scipy.stats.permutation_test(permutation_type="samples")`` with the given generator (exact when there are
    fewer sign patterns than ``n_resamples``); the same generator state gives the same p-value.
    """
    xs, ys = _check_pairs(x, y)
    check_generator(rng)

    def mean_diff(a: FloatArray, b: FloatArray, axis: int) -> FloatArray:
        out: FloatArray = np.mean(a - b, axis=axis)
        return out

    res = stats.permutation_test((xs, ys), mean_diff, permutation_type="samples", vectorized=True,
                                 n_resamples=n_resamples, alternative="two-sided", rng=rng)
    pvalue = min(1.0, float(res.pvalue))
    return TestResult("sign_flip_permutation", float(res.statistic), pvalue, xs.size, ys.size, "two-sided",
                      float(res.statistic),
                      f"scipy.stats.permutation_test (paired sign flips, {n_resamples} resamples)")


def paired_bootstrap_ci(x: ArrayLike, y: ArrayLike, *, rng: np.random.Generator, n_resamples: int = 9999,
                        level: float = 0.95) -> ConfidenceInterval:
    """BCa bootstrap CI of ``mean(x - y)``, resampling pairs (the differences); exact and zero width when constant."""
    xs, ys = _check_pairs(x, y)
    ci = bootstrap_ci(xs - ys, np.mean, rng=rng, method="bca", n_resamples=n_resamples, level=level)
    return ConfidenceInterval(ci.estimate, ci.low, ci.high, ci.level, f"paired {ci.method}", "mean(x - y)")
