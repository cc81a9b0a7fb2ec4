"""Two-sample tests of "no difference" between score samples ``x`` and ``y``.

All functions take two 1-D samples of per-episode scores (``float64[n_x]``, ``float64[n_y]``) and
return a :class:`~evaltk.stats.results.TestResult`. They wrap scipy where scipy has the test and
keep scipy's orientation (``x`` first), so results agree with scipy exactly. Degenerate data
(a sample without variability) gives ``nan`` with an explanatory ``note``, never an exception.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
from scipy import stats

from evaltk.stats.checks import ArrayLike, FloatArray, as_sample, check_alternative, check_generator, check_level
from evaltk.stats.rank import prob_superior
from evaltk.stats.results import ConfidenceInterval, TestResult


def welch_t(x: ArrayLike, y: ArrayLike, *, alternative: str = "two-sided") -> TestResult:
    """Welch's unequal-variance t-test of equal means (``scipy.stats.ttest_ind(equal_var=False)``).

    ``estimate`` is ``mean(x) - mean(y)``. When both samples are constant the statistic and
    p-value are undefined (``nan``) and ``note`` says so.
    """
    xs, ys = as_sample(x, "x"), as_sample(y, "y")
    check_alternative(alternative)
    estimate = float(xs.mean() - ys.mean())
    note = ""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        res = stats.ttest_ind(xs, ys, equal_var=False, alternative=alternative)
    statistic, pvalue = float(res.statistic), float(res.pvalue)
    if xs.var() == 0.0 and ys.var() == 0.0:
        statistic, pvalue = math.nan, math.nan
        note = "both samples are constant: the t statistic is undefined"
    return TestResult("welch_t", statistic, pvalue, xs.size, ys.size, alternative, estimate,
                      "scipy.stats.ttest_ind(equal_var=False)", note)


def welch_ci(x: ArrayLike, y: ArrayLike, *, level: float = 0.95) -> ConfidenceInterval:
    """Welch t confidence interval for ``mean(x) - mean(y)`` (scipy's ``confidence_interval``).

    With two constant samples the interval collapses to the observed difference.
    """
    xs, ys = as_sample(x, "x"), as_sample(y, "y")
    check_level(level)
    estimate = float(xs.mean() - ys.mean())
    if xs.var() == 0.0 and ys.var() == 0.0:
        return ConfidenceInterval(estimate, estimate, estimate, level, "welch-t (zero variance)", "mean(x) - mean(y)")
    res = stats.ttest_ind(xs, ys, equal_var=False)
    ci = res.confidence_interval(confidence_level=level)
    return ConfidenceInterval(estimate, float(ci.low), float(ci.high), level, "welch-t", "mean(x) - mean(y)")


def mann_whitney_u(x: ArrayLike, y: ArrayLike, *, alternative: str = "two-sided") -> TestResult:
    """Mann-Whitney U test (``scipy.stats.mannwhitneyu(method="auto")``).

    ``statistic`` is U of ``x``; ``estimate`` is ``U / (n_x n_y) = P(X > Y) + 0.5 P(X = Y)``
    (rliable's probability of improvement). scipy's "auto" uses the exact null only for small
    samples without ties and otherwise the tie-corrected normal approximation.
    """
    xs, ys = as_sample(x, "x", min_n=1), as_sample(y, "y", min_n=1)
    check_alternative(alternative)
    pooled = np.concatenate([xs, ys])
    note = ""
    if np.all(pooled == pooled[0]):
        u = 0.5 * xs.size * ys.size
        return TestResult("mann_whitney_u", u, 1.0, xs.size, ys.size, alternative, 0.5,
                          "scipy.stats.mannwhitneyu(method='auto')", "all values tied: no evidence of a difference")
    res = stats.mannwhitneyu(xs, ys, alternative=alternative, method="auto")
    if np.unique(pooled).size < pooled.size:
        note = "ties present: tie-corrected normal approximation"
    u = float(res.statistic)
    return TestResult("mann_whitney_u", u, float(res.pvalue), xs.size, ys.size, alternative,
                      u / (xs.size * ys.size), "scipy.stats.mannwhitneyu(method='auto')", note)


def brunner_munzel(x: ArrayLike, y: ArrayLike, *, alternative: str = "two-sided") -> TestResult:
    """Brunner-Munzel test of ``P(X > Y) + 0.5 P(X = Y) = 0.5`` (``scipy.stats.brunnermunzel``).

    Unlike Mann-Whitney it does not assume equal spreads. ``estimate`` is ``P(X > Y) + 0.5 P(X = Y)``
    and ``statistic`` is scipy's (positive when ``x`` tends to be *smaller*). When the rank
    variance estimate is zero (complete separation or all values tied) scipy's statistic is
    undefined; then the null variance of the estimate is used instead (see
    :func:`evaltk.stats.rank.prob_superior`) and ``note`` says so.
    """
    xs, ys = as_sample(x, "x"), as_sample(y, "y")
    check_alternative(alternative)
    ps = prob_superior(xs, ys)
    if not ps.degenerate:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = stats.brunnermunzel(xs, ys, alternative=alternative)
        return TestResult("brunner_munzel", float(res.statistic), float(res.pvalue), xs.size, ys.size, alternative,
                          ps.estimate, "scipy.stats.brunnermunzel", "")
    t = (0.5 - ps.estimate) / ps.se
    dist = stats.t(ps.df)
    if alternative == "two-sided":
        pvalue = float(2.0 * dist.sf(abs(t)))
    elif alternative == "greater":  # scipy's orientation: "greater" means x tends to be smaller
        pvalue = float(dist.sf(t))
    else:
        pvalue = float(dist.cdf(t))
    return TestResult("brunner_munzel", float(t), min(pvalue, 1.0), xs.size, ys.size, alternative, ps.estimate,
                      "rank variance floor (scipy.stats.brunnermunzel undefined)", ps.note)


def _has_ties(xs: FloatArray, ys: FloatArray) -> bool:
    pooled = np.concatenate([xs, ys])
    return bool(np.unique(pooled).size < pooled.size)


def _ks_statistics(pooled_sorted_labels: np.ndarray, block_ends: np.ndarray, n_x: int, n_y: int) -> np.ndarray:
    """KS statistics for label arrays ``bool[R, N]`` (True = from x) over sorted pooled values."""
    cx = np.cumsum(pooled_sorted_labels, axis=-1)[..., block_ends] / n_x
    cy = np.cumsum(~pooled_sorted_labels, axis=-1)[..., block_ends] / n_y
    out: np.ndarray = np.max(np.abs(cx - cy), axis=-1)
    return out


def ks_test(
    x: ArrayLike,
    y: ArrayLike,
    *,
    rng: np.random.Generator | None = None,
    n_resamples: int = 9999,
) -> TestResult:
    """Two-sample Kolmogorov-Smirnov test of equal distributions (two-sided).

    The statistic is always ``scipy.stats.ks_2samp``'s. Without ties the p-value is scipy's
    (``method="auto"``). With ties (discrete scores) scipy's p-value assumes continuity and is
    conservative, so when ``rng`` is given the p-value comes from ``n_resamples`` random
    permutations of the group labels, ``(1 + #{D* >= D}) / (1 + n_resamples)``, which is valid
    with ties.
    """
    xs, ys = as_sample(x, "x", min_n=1), as_sample(y, "y", min_n=1)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = stats.ks_2samp(xs, ys, method="auto")
    statistic = float(res.statistic)
    if not _has_ties(xs, ys):
        fallback = any("asymp" in str(w.message) for w in caught)
        return TestResult("ks", statistic, float(res.pvalue), xs.size, ys.size, "two-sided", statistic,
                          "scipy.stats.ks_2samp(method='auto')",
                          "scipy's exact p-value failed; asymptotic p-value" if fallback else "")
    if rng is None:
        return TestResult("ks", statistic, float(res.pvalue), xs.size, ys.size, "two-sided", statistic,
                          "scipy.stats.ks_2samp(method='auto')",
                          "ties present and no rng given: p-value assumes continuity (conservative)")
    check_generator(rng)
    pooled = np.concatenate([xs, ys])
    order = np.argsort(pooled, kind="stable")
    values = pooled[order]
    block_ends = np.flatnonzero(np.append(values[1:] != values[:-1], True))
    labels = np.zeros(pooled.size, dtype=bool)
    labels[: xs.size] = True
    observed = _ks_statistics(labels[order], block_ends, xs.size, ys.size)
    exceed = 0
    done = 0
    while done < n_resamples:
        batch = min(2000, n_resamples - done)
        perm = rng.permuted(np.broadcast_to(labels, (batch, labels.size)), axis=1)
        d = _ks_statistics(perm, block_ends, xs.size, ys.size)
        exceed += int(np.count_nonzero(d >= observed - 1e-12))
        done += batch
    pvalue = (1.0 + exceed) / (1.0 + n_resamples)
    return TestResult("ks", statistic, pvalue, xs.size, ys.size, "two-sided", statistic,
                      f"scipy.stats.ks_2samp statistic; permutation p-value ({n_resamples} resamples)",
                      "ties present: permutation p-value")


def permutation_test(
    x: ArrayLike,
    y: ArrayLike,
    *,
    rng: np.random.Generator,
    n_resamples: int = 9999,
    alternative: str = "two-sided",
) -> TestResult:
    """Permutation test of equal means, statistic ``mean(x) - mean(y)``.

    Wraps ``scipy.stats.permutation_test(permutation_type="independent", vectorized=True)``
    with the given generator (exact enumeration when there are fewer distinct partitions than
    ``n_resamples``). Valid with ties and skewed data; the same generator state gives the same
    p-value.
    """
    xs, ys = as_sample(x, "x", min_n=1), as_sample(y, "y", min_n=1)
    check_alternative(alternative)
    check_generator(rng)

    def mean_diff(a: FloatArray, b: FloatArray, axis: int) -> FloatArray:
        out: FloatArray = np.mean(a, axis=axis) - np.mean(b, axis=axis)
        return out

    res = stats.permutation_test((xs, ys), mean_diff, permutation_type="independent", vectorized=True,
                                 n_resamples=n_resamples, alternative=alternative, rng=rng)
    return TestResult("permutation", float(res.statistic), float(res.pvalue), xs.size, ys.size, alternative,
                      float(res.statistic), f"scipy.stats.permutation_test (mean difference, {n_resamples} resamples)")
