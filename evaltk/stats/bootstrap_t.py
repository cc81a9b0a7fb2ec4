"""Studentized (bootstrap-t) tests and intervals for contrasts ``mean(x) - rho * mean(y)``.

One-sided t tests on skewed scores are off by order ``1/sqrt(n)``, and the errors do not cancel
when the two samples differ in size (e.g. lognormal returns, 50 vs 300 episodes: a Welch TOST
at the margin declares equivalence about 13 % of the time instead of 5 %). The bootstrap-t
replaces the t quantiles with those of ``T* = (c* - c) / se*`` over resamples of each sample,
which is second-order accurate. evaltk combines it with the parametric test as an
intersection-union test (the larger p-value), so the result keeps its level whenever either
method does; :mod:`evaltk.stats.equivalence` uses it for absolute and relative margins.

p-values are ``(1 + #{T* at least as extreme}) / (1 + B)``; the interval limits are the exact
duals of those tests (a bound is outside the ``1 - 2 tail`` interval iff its one-sided test
rejects at ``tail``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from evaltk.stats.checks import FloatArray, StatsInputError, check_generator


@dataclass(frozen=True)
class BootstrapMoments:
    """Means and variances of ``B`` independent resamples of ``x`` and ``y`` (``float64[B]`` each)."""

    n_x: int
    n_y: int
    mean_x: float
    mean_y: float
    var_x: float
    var_y: float
    boot_mean_x: FloatArray = field(repr=False)
    boot_mean_y: FloatArray = field(repr=False)
    boot_var_x: FloatArray = field(repr=False)
    boot_var_y: FloatArray = field(repr=False)

    @classmethod
    def draw(cls, xs: FloatArray, ys: FloatArray, *, rng: np.random.Generator,
             n_resamples: int = 1999) -> BootstrapMoments:
        """Resample ``xs`` and ``ys`` (float64, n >= 2 each) ``n_resamples`` times with ``rng``."""
        check_generator(rng)
        if n_resamples < 100:
            raise StatsInputError(f"n_resamples must be >= 100, got {n_resamples!r}; 1999 is a good default")
        chunk = max(1, 2_000_000 // max(xs.size, ys.size))
        mx, my, vx, vy = [], [], [], []
        done = 0
        while done < n_resamples:
            k = min(chunk, n_resamples - done)
            xb = xs[rng.integers(0, xs.size, size=(k, xs.size))]
            yb = ys[rng.integers(0, ys.size, size=(k, ys.size))]
            mx.append(xb.mean(axis=1))
            my.append(yb.mean(axis=1))
            vx.append(xb.var(axis=1, ddof=1))
            vy.append(yb.var(axis=1, ddof=1))
            done += k
        return cls(xs.size, ys.size, float(xs.mean()), float(ys.mean()), float(xs.var(ddof=1)),
                   float(ys.var(ddof=1)), np.concatenate(mx), np.concatenate(my), np.concatenate(vx),
                   np.concatenate(vy))

    def se(self, rho: float) -> float:
        """Return the standard error of ``mean(x) - rho * mean(y)`` in the original samples."""
        return math.sqrt(self.var_x / self.n_x + rho**2 * self.var_y / self.n_y)

    def t_star(self, rho: float) -> FloatArray:
        """Sorted ``T*`` of the contrast with coefficient ``rho`` (resamples with ``se* = 0`` dropped)."""
        se = np.sqrt(self.boot_var_x / self.n_x + rho**2 * self.boot_var_y / self.n_y)
        c = (self.boot_mean_x - self.mean_x) - rho * (self.boot_mean_y - self.mean_y)
        ok = se > 0
        out: FloatArray = np.sort(c[ok] / se[ok])
        return out


def pvalue(t_star: FloatArray, t_obs: float, alternative: str) -> float:
    """One-sided bootstrap-t p-value; ``"less"``: ``(1 + #{T* <= t_obs}) / (1 + B)``, ``"greater"`` mirrored."""
    if t_star.size == 0 or math.isnan(t_obs):
        return 1.0
    if alternative == "less":
        count = int(np.searchsorted(t_star, t_obs, side="right"))
    elif alternative == "greater":
        count = int(t_star.size - np.searchsorted(t_star, t_obs, side="left"))
    else:
        raise StatsInputError(f"alternative must be 'less' or 'greater', got {alternative!r}")
    return (1.0 + count) / (1.0 + t_star.size)


def critical_values(t_star: FloatArray, tail: float) -> tuple[float, float]:
    """``(q_lo, q_hi)``: a "less" test rejects at ``tail`` iff ``t < q_lo``; a "greater" one iff ``t > q_hi``."""
    j = math.ceil(tail * (t_star.size + 1) - 1.0 - 1e-9)
    if j < 1 or t_star.size == 0:
        return -math.inf, math.inf
    return float(t_star[j - 1]), float(t_star[t_star.size - j])


def difference_interval(m: BootstrapMoments, tail: float) -> tuple[float, float]:
    """Bootstrap-t interval for ``mean(x) - mean(y)`` with ``tail`` in each tail."""
    q_lo, q_hi = critical_values(m.t_star(1.0), tail)
    d, se = m.mean_x - m.mean_y, m.se(1.0)
    return d - q_hi * se, d - q_lo * se


def _boundary(rejects: Callable[[float], bool], start: float, step: float, direction: float) -> float:
    """Smallest move from ``start`` in ``direction`` after which ``rejects`` holds (bisection); inf if never."""
    lo, hi = start, start + direction * step
    for _ in range(60):
        if rejects(hi):
            break
        lo, hi = hi, hi + (hi - start)
    else:
        return direction * math.inf
    for _ in range(100):
        mid = 0.5 * (lo + hi)
        if rejects(mid):
            hi = mid
        else:
            lo = mid
        if abs(hi - lo) <= 1e-7 * step:
            break
    return hi


def relative_tests(m: BootstrapMoments, bound: float) -> tuple[float, float]:
    """Bootstrap-t p-values ``(p_less, p_greater)`` for H0 "relative difference >= bound" / "<= bound".

    The relative difference is ``(mean(x) - mean(y)) / |mean(y)|``; at ``bound`` the contrast
    ``mean(x) - (1 + bound * sign(mean(y))) mean(y)`` is 0 and grows with the quantity.
    """
    rho = 1.0 + bound * math.copysign(1.0, m.mean_y)
    t_obs = (m.mean_x - rho * m.mean_y) / m.se(rho) if m.se(rho) > 0 else math.nan
    t_star = m.t_star(rho)
    return pvalue(t_star, t_obs, "less"), pvalue(t_star, t_obs, "greater")


def relative_interval(m: BootstrapMoments, tail: float, estimate: float, scale: float) -> tuple[float, float]:
    """Bootstrap-t interval for the relative difference by inverting :func:`relative_tests`.

    ``scale`` is a rough width (e.g. the relative standard error) used to bracket the limits.
    """
    step = max(scale, 1e-6)
    high = _boundary(lambda b: relative_tests(m, b)[0] < tail, estimate, step, 1.0)
    low = _boundary(lambda b: relative_tests(m, b)[1] < tail, estimate, step, -1.0)
    return low, high
