"""TOST equivalence tests: H0 "quantity <= low or quantity >= high" against H1 "low < quantity < high".

Four quantities, all comparing a candidate sample ``x`` with a reference sample ``y``:

* :func:`tost_welch` - ``mean(x) - mean(y)`` in score units (statsmodels ``ttost_ind(usevar="unequal")``).
* :func:`tost_relative` - ``(mean(x) - mean(y)) / |mean(y)|``; the reference mean's own uncertainty is
  included by testing the linear contrasts ``mean(x) - (1 + b sign(mean(y))) mean(y)`` (Welch t, Fieller CI).
* :func:`tost_standardized` - ``(mean(x) - mean(y)) / pooled SD`` (Cohen's d); the exact noncentral-t test
  for normal data combined with a distribution-free delta-method test, so the SD's own uncertainty is
  included for normal and for skewed scores.
* :func:`tost_prob_superior` - ``P(X > Y) + 0.5 P(X = Y)`` (statsmodels ``rank_compare_2indep(x, y)
  .tost_prob_superior``), rank-based, for skewed or discrete scores.

Each returns an :class:`~evaltk.stats.results.EquivalenceResult` whose ``ci`` is the ``1 - 2 alpha``
interval dual to the test: equivalent at ``alpha`` exactly when the interval lies inside (low, high).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable

import numpy as np
from scipy import optimize, stats
from statsmodels.stats.weightstats import ttost_ind

from evaltk.stats import bootstrap_t
from evaltk.stats.checks import ArrayLike, StatsInputError, as_sample, check_alpha, check_level
from evaltk.stats.rank import prob_superior
from evaltk.stats.results import ConfidenceInterval, EquivalenceResult
from evaltk.stats.tests_two_sample import welch_ci


def _check_bounds(low: float, high: float) -> tuple[float, float]:
    if not (math.isfinite(low) and math.isfinite(high) and low < high):
        raise StatsInputError(f"equivalence bounds must be finite with low < high, got ({low!r}, {high!r})")
    return float(low), float(high)


def _constant_pvalues(estimate: float, low: float, high: float) -> tuple[float, float]:
    """One-sided p-values for an exactly known quantity (no sampling variability)."""
    return (0.0 if estimate > low else 1.0), (0.0 if estimate < high else 1.0)


def _moments(xs: np.ndarray, ys: np.ndarray, rng: np.random.Generator | None, n_resamples: int,
             moments: bootstrap_t.BootstrapMoments | None) -> bootstrap_t.BootstrapMoments | None:
    """Return the resamples to use: ``moments`` if given, else drawn from ``rng``, else none."""
    if xs.var() == 0.0 and ys.var() == 0.0:
        return None
    if moments is not None:
        if (moments.n_x, moments.n_y) != (xs.size, ys.size) or moments.mean_x != xs.mean():
            raise StatsInputError("moments were drawn from other samples; draw them from these x and y")
        return moments
    if rng is None:
        return None
    return bootstrap_t.BootstrapMoments.draw(xs, ys, rng=rng, n_resamples=n_resamples)


def mean_difference_ci(
    x: ArrayLike, y: ArrayLike, *, level: float = 0.95, rng: np.random.Generator | None = None,
    n_resamples: int = 1999, moments: bootstrap_t.BootstrapMoments | None = None,
) -> ConfidenceInterval:
    """CI for ``mean(x) - mean(y)``: Welch's, or with ``rng`` the union of Welch's and the bootstrap-t one.

    The union is the interval dual to the intersection-union test of :func:`tost_welch`.
    ``moments`` (pre-drawn resamples of ``x`` and ``y``) can replace ``rng`` so that a TOST and
    an interval share one bootstrap.
    """
    xs, ys = as_sample(x, "x"), as_sample(y, "y")
    check_level(level)
    ci = welch_ci(xs, ys, level=level)
    moments = _moments(xs, ys, rng, n_resamples, moments)
    if moments is None:
        return ci
    low, high = bootstrap_t.difference_interval(moments, (1.0 - level) / 2.0)
    return ConfidenceInterval(ci.estimate, min(ci.low, low), max(ci.high, high), level,
                              "welch-t U bootstrap-t", ci.quantity)


def tost_welch(
    x: ArrayLike, y: ArrayLike, low: float, high: float, *, alpha: float = 0.05,
    rng: np.random.Generator | None = None, n_resamples: int = 1999,
    moments: bootstrap_t.BootstrapMoments | None = None,
) -> EquivalenceResult:
    """Welch TOST on ``mean(x) - mean(y)`` (``statsmodels.stats.weightstats.ttost_ind(usevar="unequal")``).

    With ``rng``, each one-sided p-value is the larger of Welch's and the bootstrap-t one
    (:mod:`evaltk.stats.bootstrap_t`), which keeps the level for skewed scores and unequal sample
    sizes; without it the result is exactly statsmodels'.

    Args:
        x: candidate sample, ``float[n_x]``, n_x >= 2.
        y: reference sample, ``float[n_y]``, n_y >= 2.
        low: lower equivalence bound in score units.
        high: upper equivalence bound in score units.
        alpha: level of each one-sided test.
        rng: generator for the bootstrap-t part; ``None`` (and no ``moments``) for the plain Welch TOST.
        n_resamples: bootstrap resamples.
        moments: pre-drawn resamples (:class:`~evaltk.stats.bootstrap_t.BootstrapMoments`) instead of ``rng``.

    Two constant samples make the difference exactly known: the p-values are then 0 or 1.

    """
    xs, ys = as_sample(x, "x"), as_sample(y, "y")
    low, high = _check_bounds(low, high)
    check_alpha(alpha)
    estimate = float(xs.mean() - ys.mean())
    ci = welch_ci(xs, ys, level=1.0 - 2.0 * alpha)
    method = "statsmodels ttost_ind(usevar='unequal')"
    if xs.var() == 0.0 and ys.var() == 0.0:
        p_lower, p_upper = _constant_pvalues(estimate, low, high)
        note = "both samples are constant: the difference is known exactly"
    else:
        _, lower_res, upper_res = ttost_ind(xs, ys, low, high, usevar="unequal")
        p_lower, p_upper, note = float(lower_res[1]), float(upper_res[1]), ""
        moments = _moments(xs, ys, rng, n_resamples, moments)
        if moments is not None:
            t_star, se = moments.t_star(1.0), moments.se(1.0)
            p_lower = max(p_lower, bootstrap_t.pvalue(t_star, (estimate - low) / se, "greater"))
            p_upper = max(p_upper, bootstrap_t.pvalue(t_star, (estimate - high) / se, "less"))
            b_low, b_high = bootstrap_t.difference_interval(moments, alpha)
            ci = ConfidenceInterval(estimate, min(ci.low, b_low), max(ci.high, b_high), ci.level,
                                    "welch-t U bootstrap-t", ci.quantity)
            method = f"max(Welch TOST (statsmodels ttost_ind), bootstrap-t with {moments.boot_mean_x.size} resamples)"
    return EquivalenceResult("tost_welch", estimate, low, high, max(p_lower, p_upper), p_lower, p_upper, ci,
                             xs.size, ys.size, alpha, method, note)


def tost_prob_superior(
    x: ArrayLike, y: ArrayLike, low: float, high: float, *, alpha: float = 0.05
) -> EquivalenceResult:
    """Rank-based TOST on ``p = P(X > Y) + 0.5 P(X = Y)`` (statsmodels ``tost_prob_superior``).

    Bounds are on the probability scale, e.g. ``(0.4, 0.6)``. When the Brunner-Munzel variance
    is zero (all tied or no overlap) the null variance stands in, see :mod:`evaltk.stats.rank`.
    """
    xs, ys = as_sample(x, "x"), as_sample(y, "y")
    low, high = _check_bounds(low, high)
    check_alpha(alpha)
    ps = prob_superior(xs, ys)
    dist = stats.t(ps.df)
    p_lower = float(dist.sf((ps.estimate - low) / ps.se))
    p_upper = float(dist.cdf((ps.estimate - high) / ps.se))
    half = float(dist.ppf(1.0 - alpha)) * ps.se
    method = ("statsmodels rank_compare_2indep().tost_prob_superior" if not ps.degenerate
              else "Brunner-Munzel t with null-variance stand-in")
    ci = ConfidenceInterval(ps.estimate, ps.estimate - half, ps.estimate + half, 1.0 - 2.0 * alpha,
                            "brunner-munzel-t", "P(x > y) + 0.5 P(x = y)")
    return EquivalenceResult("tost_prob_superior", ps.estimate, low, high, max(p_lower, p_upper), p_lower, p_upper,
                             ci, xs.size, ys.size, alpha, method, ps.note)


def standardized_difference(x: ArrayLike, y: ArrayLike) -> tuple[float, float, float]:
    """Return ``(d, t, df)``: Cohen's d ``(mean(x) - mean(y)) / pooled SD``, Student's t and ``n_x + n_y - 2``."""
    xs, ys = as_sample(x, "x"), as_sample(y, "y")
    df = float(xs.size + ys.size - 2)
    pooled_var = ((xs.size - 1) * xs.var(ddof=1) + (ys.size - 1) * ys.var(ddof=1)) / df
    diff = float(xs.mean() - ys.mean())
    if pooled_var == 0.0:
        d = 0.0 if diff == 0.0 else math.copysign(math.inf, diff)
        return d, d, df
    d = diff / math.sqrt(pooled_var)
    return d, d * math.sqrt(xs.size * ys.size / (xs.size + ys.size)), df


def _invert_monotone(func: Callable[[float], float], target: float, start: float) -> float:
    """Solve ``func(v) = target`` for a function decreasing in ``v``, bracketing outward from ``start``."""
    step = 1.0 + abs(start)
    lo, hi = start - step, start + step
    while func(lo) < target:
        lo -= step
        step *= 2.0
    step = 1.0 + abs(start)
    while func(hi) > target:
        hi += step
        step *= 2.0
    return float(optimize.brentq(lambda v: func(v) - target, lo, hi, xtol=1e-12))


def nct_cdf(t: float, df: float, ncp: float) -> float:
    """``P(T <= t)`` for a noncentral t, robust to scipy returning NaN far in the tails.

    Tries ``scipy.stats.nct.cdf``, then the reflection ``nct.sf(-t, df, -ncp)``, then the
    Abramowitz-Stegun 26.7.10 normal approximation.
    """
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        value = float(stats.nct.cdf(t, df, ncp))
        if not math.isfinite(value):
            value = float(stats.nct.sf(-t, df, -ncp))
    if not math.isfinite(value):
        value = float(stats.norm.cdf((t * (1.0 - 1.0 / (4.0 * df)) - ncp) / math.sqrt(1.0 + t * t / (2.0 * df))))
    return min(1.0, max(0.0, value))


def _standardized_se(xs: np.ndarray, ys: np.ndarray, d: float) -> float:
    """Distribution-free (delta-method) standard error of Cohen's d, from influence values.

    ``d = (mean(x) - mean(y)) / s`` with ``s^2`` the pooled variance; each observation's influence
    combines its effect on its group mean and on the pooled variance, so skewness (mean-variance
    covariance) and kurtosis (variance of the variance) of the scores enter.
    """
    df = xs.size + ys.size - 2
    pooled_var = ((xs.size - 1) * xs.var(ddof=1) + (ys.size - 1) * ys.var(ddof=1)) / df
    total = 0.0
    for values, sign in ((xs, 1.0), (ys, -1.0)):
        weight = (values.size - 1) / df
        centred = values - values.mean()
        influence = (sign * centred / math.sqrt(pooled_var)
                     - d * weight * (centred**2 - values.var(ddof=1)) / (2.0 * pooled_var))
        total += float(np.mean(influence**2)) / values.size
    return math.sqrt(total)


def _standardized_parts(xs: np.ndarray, ys: np.ndarray) -> tuple[float, float, float, float, float]:
    """``(d, t, df, scale, se_free)`` for two samples with a nonzero pooled SD."""
    d, t_obs, df = standardized_difference(xs, ys)
    scale = math.sqrt(xs.size * ys.size / (xs.size + ys.size))
    return d, t_obs, df, scale, _standardized_se(xs, ys, d)


def standardized_ci(x: ArrayLike, y: ArrayLike, *, level: float = 0.95) -> ConfidenceInterval:
    """CI for the standardized difference ``delta / sigma`` (Cohen's d), robust to non-normal scores.

    The union of two intervals: the exact one for normal data (inverting the noncentral t) and a
    distribution-free one (``d +- t_{df} * se`` with the delta-method SE, which accounts for
    skewness and kurtosis). Either alone can be too narrow (the first for skewed or heavy-tailed
    scores, the second for small normal samples); the union is valid when either is. With a
    zero pooled SD it collapses to the point estimate.
    """
    xs, ys = as_sample(x, "x"), as_sample(y, "y")
    check_level(level)
    quantity = "(mean(x) - mean(y)) / pooled SD"
    d, t_obs, df = standardized_difference(xs, ys)
    if not math.isfinite(t_obs) or (xs.var() == 0.0 and ys.var() == 0.0):
        return ConfidenceInterval(d, d, d, level, "noncentral-t (zero variance)", quantity)
    _, _, _, scale, se_free = _standardized_parts(xs, ys)
    tail = (1.0 - level) / 2.0
    ncp_high = _invert_monotone(lambda ncp: nct_cdf(t_obs, df, ncp), tail, t_obs)
    ncp_low = _invert_monotone(lambda ncp: nct_cdf(t_obs, df, ncp), 1.0 - tail, t_obs)
    half = float(stats.t.ppf(1.0 - tail, df)) * se_free
    return ConfidenceInterval(d, min(ncp_low / scale, d - half), max(ncp_high / scale, d + half), level,
                              "noncentral-t U delta-method", quantity)


def tost_standardized(
    x: ArrayLike, y: ArrayLike, low: float, high: float, *, alpha: float = 0.05
) -> EquivalenceResult:
    """TOST on the standardized difference ``(mean(x) - mean(y)) / sigma`` with bounds in SD units.

    Each one-sided p-value is the larger of two (an intersection-union test, valid when either is):

    * the exact test for normal data with equal variances: Student's pooled t follows a
      noncentral t with ``df = n_x + n_y - 2`` and noncentrality ``b sqrt(n_x n_y / (n_x + n_y))``
      under "delta/sigma = b" (scipy has the distribution, not the test), which accounts for the
      SD being estimated;
    * a distribution-free test ``(d - b) / se`` against ``t_{df}``, with the delta-method SE of
      :func:`_standardized_se`; for skewed, heavy-tailed scores (lognormal) the sample SD is
      so noisy that the normal-theory test alone declares false equivalence too often.

    The ``ci`` is the matching union interval (:func:`standardized_ci`). With a zero pooled SD
    the quantity is undefined unless the means are equal too; then both samples are the same
    constant and the p-values are 0.
    """
    xs, ys = as_sample(x, "x"), as_sample(y, "y")
    low, high = _check_bounds(low, high)
    check_alpha(alpha)
    d, t_obs, df = standardized_difference(xs, ys)
    ci = standardized_ci(xs, ys, level=1.0 - 2.0 * alpha)
    note = ""
    if not math.isfinite(t_obs) or (xs.var() == 0.0 and ys.var() == 0.0):
        p_lower, p_upper = _constant_pvalues(d, low, high)
        note = "zero pooled SD: both samples constant" + (", and equal" if d == 0.0 else ", and different")
    else:
        _, _, _, scale, se_free = _standardized_parts(xs, ys)
        dist = stats.t(df)
        p_lower = max(1.0 - nct_cdf(t_obs, df, low * scale), float(dist.sf((d - low) / se_free)))
        p_upper = max(nct_cdf(t_obs, df, high * scale), float(dist.cdf((d - high) / se_free)))
    return EquivalenceResult("tost_standardized", d, low, high, max(p_lower, p_upper), p_lower, p_upper, ci,
                             xs.size, ys.size, alpha, "max(noncentral t, delta-method t), pooled SD", note)


def _contrast_parts(xs: np.ndarray, ys: np.ndarray) -> tuple[float, float, float, float, float]:
    """Means, squared standard errors and the reference sign for the relative-difference contrasts."""
    mx, my = float(xs.mean()), float(ys.mean())
    if my == 0.0:
        raise StatsInputError(
            "a relative margin needs a nonzero reference mean, but mean of the reference sample is 0; "
            "use an absolute or SD margin instead"
        )
    return mx, my, float(xs.var(ddof=1) / xs.size), float(ys.var(ddof=1) / ys.size), math.copysign(1.0, my)


def _satterthwaite(vx: float, vy_scaled: float, n_x: int, n_y: int) -> float:
    denom = vx**2 / (n_x - 1) + vy_scaled**2 / (n_y - 1)
    return float((vx + vy_scaled) ** 2 / denom) if denom > 0 else float(n_x + n_y - 2)


def relative_ci(
    x: ArrayLike, y: ArrayLike, *, level: float = 0.95, rng: np.random.Generator | None = None,
    n_resamples: int = 1999, moments: bootstrap_t.BootstrapMoments | None = None,
) -> ConfidenceInterval:
    """Fieller CI for ``(mean(x) - mean(y)) / |mean(y)|`` (Welch variances, df at the estimate).

    Unbounded (``-inf``, ``inf``) when ``mean(y)`` is not clearly away from zero. With ``rng`` it
    is widened to include the bootstrap-t interval (the dual of :func:`tost_relative` with ``rng``).
    """
    xs, ys = as_sample(x, "x"), as_sample(y, "y")
    check_level(level)
    _contrast_parts(xs, ys)
    return _relative_ci(xs, ys, level, _moments(xs, ys, rng, n_resamples, moments))


def _relative_ci(
    xs: np.ndarray, ys: np.ndarray, level: float, moments: bootstrap_t.BootstrapMoments | None
) -> ConfidenceInterval:
    """Fieller interval, widened by the bootstrap-t interval from ``moments`` when given."""
    mx, my, vx, vy, sign = _contrast_parts(xs, ys)
    rho_hat = mx / my
    estimate = sign * (rho_hat - 1.0)
    quantity = "(mean(x) - mean(y)) / |mean(y)|"
    if vx == 0.0 and vy == 0.0:
        return ConfidenceInterval(estimate, estimate, estimate, level, "fieller (zero variance)", quantity)
    df = _satterthwaite(vx, rho_hat**2 * vy, xs.size, ys.size)
    t = float(stats.t.ppf(1.0 - (1.0 - level) / 2.0, df))
    a = my**2 - t**2 * vy
    b = -2.0 * mx * my
    c = mx**2 - t**2 * vx
    disc = b * b - 4.0 * a * c
    if a <= 0.0 or disc < 0.0:
        return ConfidenceInterval(estimate, -math.inf, math.inf, level, "fieller (unbounded)", quantity)
    r1 = (-b - math.sqrt(disc)) / (2.0 * a)
    r2 = (-b + math.sqrt(disc)) / (2.0 * a)
    lo, hi = (r1 - 1.0, r2 - 1.0) if sign > 0 else (1.0 - r2, 1.0 - r1)
    if moments is None:
        return ConfidenceInterval(estimate, lo, hi, level, "fieller", quantity)
    b_lo, b_hi = bootstrap_t.relative_interval(moments, (1.0 - level) / 2.0, estimate, (hi - lo) / 4.0)
    return ConfidenceInterval(estimate, min(lo, b_lo), max(hi, b_hi), level, "fieller U bootstrap-t", quantity)


def tost_relative(
    x: ArrayLike, y: ArrayLike, low: float, high: float, *, alpha: float = 0.05,
    rng: np.random.Generator | None = None, n_resamples: int = 1999,
    moments: bootstrap_t.BootstrapMoments | None = None,
) -> EquivalenceResult:
    """TOST on the relative difference ``(mean(x) - mean(y)) / |mean(y)|``, ``y`` being the reference.

    H0 "relative difference >= b" is the linear hypothesis ``mean(x) - (1 + b s) mean(y) >= 0``
    with ``s = sign(mean(y))``, tested with a Welch t whose degrees of freedom are taken at the
    estimate (so the test and :func:`relative_ci` are exactly dual). Unlike a fixed margin
    ``b |mean(y)|``, this accounts for the error in the reference mean. With ``rng`` each p-value
    is the larger of this and the bootstrap-t test of the same contrast (robust to skewed scores).
    """
    xs, ys = as_sample(x, "x"), as_sample(y, "y")
    low, high = _check_bounds(low, high)
    check_alpha(alpha)
    mx, my, vx, vy, sign = _contrast_parts(xs, ys)
    constant = vx == 0.0 and vy == 0.0
    moments = _moments(xs, ys, rng, n_resamples, moments)
    ci = _relative_ci(xs, ys, 1.0 - 2.0 * alpha, moments)
    note = ""
    method = "Welch t on linear contrasts (Fieller dual)"
    if constant:
        p_lower, p_upper = _constant_pvalues(ci.estimate, low, high)
        note = "both samples are constant: the difference is known exactly"
    else:
        rho_hat = mx / my
        df = _satterthwaite(vx, rho_hat**2 * vy, xs.size, ys.size)

        def contrast_t(bound: float) -> float:
            rho = 1.0 + bound * sign
            # Scaled by max(1, |rho|) so that a huge margin (1e308) cannot overflow rho**2.
            scale = max(1.0, abs(rho))
            r = rho / scale
            return (mx / scale - r * my) / math.sqrt(vx / scale / scale + r * r * vy)

        # mean(x) - (1 + b s) mean(y) = |mean(y)| (quantity - b) for either sign of the reference mean.
        p_lower = float(stats.t.sf(contrast_t(low), df))
        p_upper = float(stats.t.cdf(contrast_t(high), df))
        if moments is not None:
            p_lower = max(p_lower, bootstrap_t.relative_tests(moments, low)[1])
            p_upper = max(p_upper, bootstrap_t.relative_tests(moments, high)[0])
            method = f"max(Welch t on linear contrasts, bootstrap-t with {moments.boot_mean_x.size} resamples)"
    return EquivalenceResult("tost_relative", ci.estimate, low, high, max(p_lower, p_upper), p_lower, p_upper, ci,
                             xs.size, ys.size, alpha, method, note)
