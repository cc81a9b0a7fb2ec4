"""Group-sequential boundaries: Lan-DeMets alpha-spending and the classical Pocock / O'Brien-Fleming constants.

A group-sequential test looks at the data ``K`` times, at information fractions
``0 < t_1 < ... < t_K <= 1``. Its standardized statistics ``Z_1..Z_K`` behave as a Brownian motion
observed at those times: ``Cov(Z_i, Z_j) = sqrt(t_i / t_j)`` for ``i <= j``. A boundary ``b_k`` is
chosen so that the probability of crossing at look ``k`` (and not before) equals the share of the
level spent there, ``f(t_k) - f(t_{k-1})`` for a spending function ``f`` with ``f(1) = alpha``:

* ``obrien-fleming`` (Lan-DeMets 1983): ``f(t) = 2 - 2 Phi(Phi^-1(1 - alpha/2) / sqrt(t))``, little
  level early, nearly all of it at the end;
* ``pocock`` (Lan-DeMets 1983): ``f(t) = alpha ln(1 + (e - 1) t)``, spread evenly;
* ``linear``: ``f(t) = alpha t`` (the power family with exponent 1, Hwang-Shih-DeCani with gamma 0).

The crossing probabilities are computed exactly (to grid error, about 1e-6) by the numerical
recursion of Armitage, McPherson and Rowe (1969) in the form of Jennison and Turnbull (2000,
ch. 19): the sub-density of the score ``S_k = Z_k sqrt(t_k)`` on the continuation region is carried
from look to look by integrating against the normal transition density (Simpson's rule on a grid),
and each ``b_k`` is found by root finding. No Monte Carlo is involved, so the boundaries repeat
exactly.

:func:`classical_constant` gives the classical equally spaced designs (Pocock 1977: one constant
``c`` at every look; O'Brien-Fleming 1979: ``c sqrt(K / k)``), the numbers in the published
tables (e.g. two-sided alpha = 0.05, K = 5: Pocock 2.413, O'Brien-Fleming 2.040).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from enum import Enum

import numpy as np
import numpy.typing as npt
from scipy import optimize, stats

from evaltk.stats.validate import ArrayLike, StatsInputError

FloatArray = npt.NDArray[np.float64]
GRID_POINTS = 481
"""Simpson grid points per look (odd); boundaries agree with a 4x finer grid to about 1e-5."""
TAIL_SD = 9.0
"""The grid covers the mean +- this many SDs of the score where a side is unbounded."""


class Spending(Enum):
    """Shape of the Lan-DeMets alpha-spending function."""

    OBRIEN_FLEMING = "obrien-fleming"
    POCOCK = "pocock"
    LINEAR = "linear"


def parse_spending(value: Spending | str) -> Spending:
    """Return ``value`` as a :class:`Spending`, or raise naming the choices."""
    try:
        return Spending(value)
    except ValueError:
        raise StatsInputError(f"spending must be one of {[s.value for s in Spending]}, got {value!r}") from None


def spent(t: float, alpha: float, shape: Spending | str) -> float:
    """Cumulative level spent by information fraction ``t`` in ``[0, 1]`` (``alpha`` at ``t >= 1``)."""
    shape = parse_spending(shape)
    if t <= 0.0:
        return 0.0
    if t >= 1.0:
        return float(alpha)
    if shape is Spending.OBRIEN_FLEMING:
        return float(2.0 - 2.0 * stats.norm.cdf(stats.norm.ppf(1.0 - alpha / 2.0) / math.sqrt(t)))
    if shape is Spending.LINEAR:
        return float(alpha * t)
    return float(alpha * math.log(1.0 + (math.e - 1.0) * t))


def check_fractions(fractions: ArrayLike) -> FloatArray:
    """Return the information fractions as an array after checking ``0 < t_1 < ... < t_K <= 1``."""
    t = np.asarray(fractions, dtype=np.float64)
    if t.ndim != 1 or t.size == 0:
        raise StatsInputError(f"information fractions must be a non-empty 1-D sequence, got {fractions!r}")
    if not (np.all(np.isfinite(t)) and t[0] > 0.0 and t[-1] <= 1.0 + 1e-12 and np.all(np.diff(t) > 0.0)):
        raise StatsInputError(f"information fractions must increase within (0, 1], got {t.tolist()}")
    return np.minimum(t, 1.0)


def _simpson(lo: float, hi: float) -> tuple[FloatArray, FloatArray]:
    x = np.linspace(lo, hi, GRID_POINTS)
    w = np.ones(GRID_POINTS)
    w[1:-1:2], w[2:-1:2] = 4.0, 2.0
    return x, w * (x[1] - x[0]) / 3.0


class _Recursion:
    """Sub-density of the score on the continuation region, carried from look to look (drift ``theta``)."""

    def __init__(self, theta: float) -> None:
        self.theta = theta
        self.t_prev = 0.0
        self.x: FloatArray = np.zeros(1)
        self.w: FloatArray = np.ones(1)
        self.f: FloatArray = np.ones(1)  # a point mass at S_0 = 0

    def _moments(self, t: float) -> tuple[FloatArray, float]:
        dt = t - self.t_prev
        return self.x + self.theta * dt, math.sqrt(dt)

    def exit_upper(self, t: float, z: float) -> float:
        """P(continue so far and Z_k >= z at fraction ``t``)."""
        mean, sd = self._moments(t)
        return float(np.sum(self.w * self.f * stats.norm.sf((z * math.sqrt(t) - mean) / sd)))

    def exit_lower(self, t: float, z: float) -> float:
        """P(continue so far and Z_k <= z at fraction ``t``)."""
        mean, sd = self._moments(t)
        return float(np.sum(self.w * self.f * stats.norm.cdf((z * math.sqrt(t) - mean) / sd)))

    def advance(self, t: float, z_low: float, z_high: float) -> None:
        """Move to fraction ``t`` keeping only paths with ``z_low < Z_k < z_high`` (either may be infinite)."""
        mean_t, sd_t = self.theta * t, math.sqrt(t)
        lo = max(z_low * sd_t, mean_t - TAIL_SD * sd_t) if math.isfinite(z_low) else mean_t - TAIL_SD * sd_t
        hi = min(z_high * sd_t, mean_t + TAIL_SD * sd_t) if math.isfinite(z_high) else mean_t + TAIL_SD * sd_t
        mean, sd = self._moments(t)
        if hi <= lo:
            x, w, f = np.zeros(1), np.zeros(1), np.zeros(1)
        else:
            x, w = _simpson(lo, hi)
            f = (self.w * self.f) @ stats.norm.pdf((x[None, :] - mean[:, None]) / sd) / sd
        self.x, self.w, self.f, self.t_prev = x, w, f, t


def _solve(func: Callable[[float], float], target: float) -> float:
    """Find ``z`` in [-10, 40] with ``func(z) = target`` for a function decreasing in ``z``."""
    if target <= 0.0 or func(40.0) >= target:
        return 40.0
    return float(optimize.brentq(lambda z: func(z) - target, -10.0, 40.0, xtol=1e-10))


def one_sided_bounds(fractions: ArrayLike, alpha: float, shape: Spending | str) -> FloatArray:
    """Upper boundaries ``b_k`` (Z scale) of a one-sided test of level ``alpha`` with alpha-spending.

    ``P(Z_k >= b_k for some k) = spent(t_K)`` under the null (drift 0); the last look spends
    everything left when ``t_K = 1``. Looks are evaluated as they come: the boundary at look
    ``k`` depends on ``t_1..t_k`` only, so unplanned look times are allowed.
    """
    return _spending_bounds(fractions, alpha, shape, two_sided=False)


def two_sided_bounds(fractions: ArrayLike, alpha: float, shape: Spending | str) -> FloatArray:
    """Symmetric boundaries ``+-b_k`` of a two-sided test of total level ``alpha`` with alpha-spending."""
    return _spending_bounds(fractions, alpha, shape, two_sided=True)


def _spending_bounds(fractions: ArrayLike, alpha: float, shape: Spending | str, *, two_sided: bool) -> FloatArray:
    """Boundaries ``b_k`` whose null exit probability at look ``k`` is what ``shape`` spends there.

    One-sided: exit above ``b_k``; two-sided: exit above ``b_k`` or below ``-b_k``.
    """
    t = check_fractions(fractions)
    rec = _Recursion(0.0)
    out = np.empty(t.size)
    previous = 0.0
    for k, tk in enumerate(t):
        target = spent(float(tk), alpha, shape) - previous

        def exit_prob(z: float, tk: float = float(tk)) -> float:
            return rec.exit_upper(tk, z) + (rec.exit_lower(tk, -z) if two_sided else 0.0)

        out[k] = _solve(exit_prob, target)
        previous += exit_prob(float(out[k]))
        rec.advance(float(tk), -float(out[k]) if two_sided else -math.inf, float(out[k]))
    return out


def inner_outer_bounds(fractions: ArrayLike, alpha_inner: float, alpha_outer: float,
                       shape: Spending | str) -> tuple[FloatArray, FloatArray]:
    """Boundaries of a test of one point with early stopping on either side, each side with its own level.

    The continuation region at look ``k`` is ``-outer_k < Z_k < inner_k``. Under the null (drift 0)
    the exits above ``inner_k`` spend ``alpha_inner`` and the exits below ``-outer_k`` spend
    ``alpha_outer``, each by the alpha-spending ``shape``. A path that leaves on one side is never
    counted on the other (the exits at one look are disjoint, and the recursion carries only paths
    still inside), so the two levels hold jointly: ``P(exit above) = spent(t_K, alpha_inner)`` and
    ``P(exit below) = spent(t_K, alpha_outer)``. With one look at ``t = 1`` the boundaries are
    ``z_{1 - alpha_inner}`` and ``z_{1 - alpha_outer}``, the fixed-sample tests.
    Returns ``(inner, outer)``, both positive.
    """
    t = check_fractions(fractions)
    if not (0.0 < alpha_inner < 0.5 and 0.0 < alpha_outer < 0.5):
        raise StatsInputError(f"levels must be in (0, 0.5), got {alpha_inner!r} and {alpha_outer!r}")
    shape_ = parse_spending(shape)
    rec = _Recursion(0.0)
    inner, outer = np.empty(t.size), np.empty(t.size)
    spent_in = spent_out = 0.0
    for k, tk in enumerate(t):
        tk_ = float(tk)

        def above(z: float, tk_: float = tk_) -> float:
            return rec.exit_upper(tk_, z)

        def below(z: float, tk_: float = tk_) -> float:
            return rec.exit_lower(tk_, -z)

        inner[k] = _solve(above, spent(tk_, alpha_inner, shape_) - spent_in)
        outer[k] = _solve(below, spent(tk_, alpha_outer, shape_) - spent_out)
        spent_in += above(float(inner[k]))
        spent_out += below(float(outer[k]))
        rec.advance(tk_, -float(outer[k]), float(inner[k]))
    return inner, outer


def _efficacy_futility(t: FloatArray, alpha: float, beta: float, shape: Spending, futility_shape: Spending,
                       drift: float, binding: bool) -> tuple[FloatArray, FloatArray]:
    """Upper and lower boundaries for a given drift under the alternative (see :func:`efficacy_futility_bounds`)."""
    null, alt = _Recursion(0.0), _Recursion(drift)
    upper, lower = np.empty(t.size), np.empty(t.size)
    spent_a = spent_b = 0.0
    for k, tk in enumerate(t):
        tk_ = float(tk)
        target = spent(tk_, alpha, shape) - spent_a

        def above(z: float, tk_: float = tk_) -> float:
            return null.exit_upper(tk_, z)

        def below(z: float, tk_: float = tk_) -> float:
            return -alt.exit_lower(tk_, z)  # decreasing in z, as _solve needs

        upper[k] = -10.0 if above(-10.0) < target else _solve(above, target)
        target_b = spent(tk_, beta, futility_shape) - spent_b
        if -below(40.0) <= target_b:
            lower[k] = 40.0
        elif -below(-10.0) >= target_b:
            lower[k] = -10.0
        else:
            lower[k] = float(optimize.brentq(lambda z, tb=target_b: -below(z) - tb, -10.0, 40.0, xtol=1e-10))
        low = min(float(lower[k]), float(upper[k]))
        spent_a += null.exit_upper(tk_, float(upper[k]))
        spent_b += alt.exit_lower(tk_, low)
        null.advance(tk_, low if binding else -math.inf, float(upper[k]))
        alt.advance(tk_, low, float(upper[k]))
    return upper, lower


def efficacy_futility_bounds(fractions: ArrayLike, alpha: float, beta: float, shape: Spending | str,
                             futility_shape: Spending | str, *,
                             binding: bool = True) -> tuple[FloatArray, FloatArray, float]:
    """One-sided test with early stopping for either hypothesis (Jennison and Turnbull 2000, sec. 4.2 and 7.3).

    Rejects H0 (drift 0) at look ``k`` when ``Z_k >= upper_k`` and accepts it when ``Z_k <= lower_k``;
    ``upper`` spends ``alpha`` under H0 by ``shape``, ``lower`` spends ``beta`` under the alternative
    by ``futility_shape``, and the alternative's drift ``theta`` (``E[Z_k] = theta sqrt(t_k)``) is the
    one at which the two meet at the last look, so the test decides there. ``binding``: the upper
    boundaries count on stopping at ``lower`` (smaller ``upper``; the level holds only if futility
    stops are obeyed); otherwise the upper boundaries are those of :func:`one_sided_bounds`.
    Returns ``(upper, lower, theta)``; ``lower_k <= upper_k``. The fixed design (one look) has
    ``theta = z_{1-alpha} + z_{1-beta}``; max information is ``(theta / effect)^2``.
    """
    t = check_fractions(fractions)
    shape_, fshape = parse_spending(shape), parse_spending(futility_shape)
    if not (0.0 < alpha < 0.5 and 0.0 < beta < 0.5):
        raise StatsInputError(f"alpha and beta must be in (0, 0.5), got {alpha!r} and {beta!r}")

    def gap(theta: float) -> float:
        upper, lower = _efficacy_futility(t, alpha, beta, shape_, fshape, theta, binding)
        return float(upper[-1] - lower[-1])

    theta = float(optimize.brentq(gap, 0.5, 8.0, xtol=1e-7))
    upper, lower = _efficacy_futility(t, alpha, beta, shape_, fshape, theta, binding)
    return upper, np.minimum(lower, upper), theta


def crossing_probability(fractions: ArrayLike, upper: ArrayLike, *, lower: ArrayLike | None = None,
                         drift: float = 0.0) -> tuple[float, float]:
    """Return ``(P(exit above), P(exit below))`` for continuation regions ``lower_k < Z_k < upper_k``.

    ``drift`` is the mean of the score per unit information fraction (``theta`` with
    ``E[Z_k] = theta sqrt(t_k)``). ``lower`` defaults to no lower boundary.
    """
    t = check_fractions(fractions)
    up = np.asarray(upper, dtype=np.float64)
    lo = np.full(t.size, -math.inf) if lower is None else np.asarray(lower, dtype=np.float64)
    if up.shape != t.shape or lo.shape != t.shape:
        raise StatsInputError("boundaries must have one value per look")
    rec = _Recursion(drift)
    p_up = p_lo = 0.0
    for k, tk in enumerate(t):
        p_up += rec.exit_upper(float(tk), float(up[k]))
        if math.isfinite(lo[k]):
            p_lo += rec.exit_lower(float(tk), float(lo[k]))
        rec.advance(float(tk), float(lo[k]), float(up[k]))
    return p_up, p_lo


def classical_constant(looks: int, alpha: float, design: str) -> float:
    """Return the constant ``c`` of the classical equally spaced two-sided design of total level ``alpha``.

    ``design="pocock"``: boundaries ``c`` at every look; ``"obrien-fleming"``: ``c sqrt(K / k)``
    (so the last boundary is ``c``).
    """
    if looks < 1:
        raise StatsInputError(f"looks must be >= 1, got {looks!r}")
    if design not in ("pocock", "obrien-fleming"):
        raise StatsInputError(f"design must be 'pocock' or 'obrien-fleming', got {design!r}")
    t = np.arange(1, looks + 1) / looks
    shape = np.ones(looks) if design == "pocock" else np.sqrt(looks / np.arange(1, looks + 1))

    def level(c: float) -> float:
        up, lo = crossing_probability(t, c * shape, lower=-c * shape)
        return up + lo

    return float(optimize.brentq(lambda c: level(c) - alpha, 0.5, 10.0, xtol=1e-10))
