"""Power and sample size of TOST equivalence tests, in closed form and by simulation.

Closed form (equal ``n`` per side): the estimate of the difference has standard error
``se = sd * sqrt(2 / n)`` and each one-sided test rejects at ``t_{1-alpha, 2n-2}``, so

    power(n) = max(0, T((margin - delta)/se - t) + T((margin + delta)/se - t) - 1)

with ``T`` the t CDF (the shifted-t approximation; the normal version gives the textbook
``n = 2 (z_{1-alpha} + z_{1-beta/2})^2 / d^2`` at ``delta = 0``). ``sd`` is the per-observation SD
*assumed equal on both sides*; for other quantities (e.g. ``P(X > Y)``) pass the square root of
the mean of the two per-observation variance components. Simulation draws normal samples with an
explicit generator and runs a vectorised Welch TOST (the same test as
:func:`evaltk.stats.equivalence.tost_welch`).
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats

from evaltk.stats.checks import StatsInputError, check_alpha, check_generator
from evaltk.stats.results import PowerResult

MAX_N = 10_000_000


def _check(margin: float, sd: float, n: int | None = None) -> None:
    if not (math.isfinite(margin) and margin > 0):
        raise StatsInputError(f"margin must be a positive number, got {margin!r}")
    if not (math.isfinite(sd) and sd > 0):
        raise StatsInputError(f"sd must be a positive number, got {sd!r}; estimate it from pilot episodes")
    if n is not None and n < 2:
        raise StatsInputError(f"n_per_side must be >= 2, got {n!r}")


def _power(n: int, margin: float, delta: float, sd: float, alpha: float) -> float:
    se = sd * math.sqrt(2.0 / n)
    df = 2 * n - 2
    t = float(stats.t.ppf(1.0 - alpha, df))
    dist = stats.t(df)
    value = float(dist.cdf((margin - delta) / se - t) + dist.cdf((margin + delta) / se - t) - 1.0)
    return max(0.0, value)


def tost_power(
    n_per_side: int, margin: float, *, true_difference: float = 0.0, sd: float = 1.0, alpha: float = 0.05
) -> PowerResult:
    """Closed-form power of the TOST with bounds ``(-margin, margin)`` at ``n_per_side`` per side."""
    _check(margin, sd, n_per_side)
    check_alpha(alpha)
    power = _power(int(n_per_side), margin, true_difference, sd, alpha)
    return PowerResult(power, int(n_per_side), margin, true_difference, sd, alpha, "closed-form")


def tost_sample_size(
    margin: float, *, true_difference: float = 0.0, sd: float = 1.0, alpha: float = 0.05, power: float = 0.8
) -> PowerResult:
    """Smallest ``n`` per side whose closed-form TOST power reaches ``power``.

    Raises:
        StatsInputError: ``|true_difference| >= margin`` (no ``n`` makes equivalence likely), or
            the answer exceeds ten million per side.

    """
    _check(margin, sd)
    check_alpha(alpha)
    if not 0.0 < power < 1.0:
        raise StatsInputError(f"power must be in (0, 1), got {power!r}; the usual target is 0.8")
    if abs(true_difference) >= margin:
        raise StatsInputError(
            f"true difference {true_difference!r} is not inside the margin {margin!r}: "
            "no sample size makes equivalence likely; widen the margin or plan for a smaller difference"
        )
    z_a = stats.norm.ppf(1.0 - alpha)
    z_b = stats.norm.ppf(1.0 - (1.0 - power) / 2.0) if true_difference == 0.0 else stats.norm.ppf(power)
    guess = 2.0 * (sd * (z_a + z_b) / (margin - abs(true_difference))) ** 2
    n = max(2, math.floor(guess) - 1)
    if n > MAX_N:
        raise StatsInputError(f"more than {MAX_N} episodes per side would be needed; widen the margin")
    while n > 2 and _power(n - 1, margin, true_difference, sd, alpha) >= power:
        n -= 1
    while _power(n, margin, true_difference, sd, alpha) < power:
        n += 1
        if n > MAX_N:
            raise StatsInputError(f"more than {MAX_N} episodes per side would be needed; widen the margin")
    return PowerResult(_power(n, margin, true_difference, sd, alpha), n, margin, true_difference, sd, alpha,
                       "closed-form")


def beyond_margin_sample_size(
    margin: float, true_difference: float, *, sd: float = 1.0, alpha: float = 0.05, power: float = 0.8
) -> PowerResult:
    """Smallest ``n`` per side giving ``power`` that a two-sided ``1 - alpha`` CI lies beyond the margin.

    This is the planning counterpart of the "different" verdict when the true difference exceeds
    the margin: one one-sided test at ``alpha / 2`` of H0 ``|difference| <= margin`` (shifted-t
    approximation, equal SD per side).
    """
    _check(margin, sd)
    check_alpha(alpha)
    gap = abs(true_difference) - margin
    if gap <= 0:
        raise StatsInputError(f"true difference {true_difference!r} is not beyond the margin {margin!r}")

    def pw(n: int) -> float:
        se = sd * math.sqrt(2.0 / n)
        df = 2 * n - 2
        return float(stats.t.cdf(gap / se - stats.t.ppf(1.0 - alpha / 2.0, df), df))

    z = stats.norm.ppf(1.0 - alpha / 2.0) + stats.norm.ppf(power)
    n = max(2, math.floor(2.0 * (sd * z / gap) ** 2) - 1)
    while n > 2 and pw(n - 1) >= power:
        n -= 1
    while pw(n) < power:
        n += 1
        if n > MAX_N:
            raise StatsInputError(f"more than {MAX_N} episodes per side would be needed")
    return PowerResult(pw(n), n, margin, true_difference, sd, alpha, "closed-form")


def welch_tost_rejects(x: np.ndarray, y: np.ndarray, low: float, high: float, alpha: float) -> np.ndarray:
    """Vectorised Welch TOST: ``x: float[S, n_x]``, ``y: float[S, n_y]`` -> ``bool[S]`` (equivalent at alpha).

    Same decision as ``statsmodels ttost_ind(x[i], y[i], low, high, usevar="unequal")`` row by row.
    """
    n_x, n_y = x.shape[1], y.shape[1]
    vx = x.var(axis=1, ddof=1) / n_x
    vy = y.var(axis=1, ddof=1) / n_y
    se = np.sqrt(vx + vy)
    df = (vx + vy) ** 2 / (vx**2 / (n_x - 1) + vy**2 / (n_y - 1))
    diff = x.mean(axis=1) - y.mean(axis=1)
    p_lower = stats.t.sf((diff - low) / se, df)
    p_upper = stats.t.cdf((diff - high) / se, df)
    out: np.ndarray = np.maximum(p_lower, p_upper) < alpha
    return out


def simulate_tost_power(
    n_per_side: int,
    margin: float,
    *,
    rng: np.random.Generator,
    true_difference: float = 0.0,
    sd: float = 1.0,
    alpha: float = 0.05,
    n_sims: int = 2000,
) -> PowerResult:
    """Monte-Carlo power of the Welch TOST on normal data (``n_sims`` pairs drawn from ``rng``)."""
    _check(margin, sd, n_per_side)
    check_alpha(alpha)
    check_generator(rng)
    if n_sims < 1:
        raise StatsInputError(f"n_sims must be >= 1, got {n_sims!r}")
    hits = 0
    done = 0
    chunk = max(1, 2_000_000 // (2 * n_per_side))
    while done < n_sims:
        s = min(chunk, n_sims - done)
        x = rng.normal(true_difference, sd, size=(s, n_per_side))
        y = rng.normal(0.0, sd, size=(s, n_per_side))
        hits += int(np.count_nonzero(welch_tost_rejects(x, y, -margin, margin, alpha)))
        done += s
    return PowerResult(hits / n_sims, int(n_per_side), margin, true_difference, sd, alpha, "simulation", n_sims)
