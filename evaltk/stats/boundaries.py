"""Group-sequential boundaries of the three-outcome comparison: Lan-DeMets alpha-spending by numerical recursion.

A group-sequential test looks at the data ``K`` times, at information fractions
``0 < t_1 < ... < t_K <= 1``. Its standardized statistics ``Z_1..Z_K`` behave as a Brownian motion
observed at those times: ``Cov(Z_i, Z_j) = sqrt(t_i / t_j)`` for ``i <= j``. A boundary ``b_k`` is
chosen so that the probability of crossing at look ``k`` (and not before) equals the share of the
level spent there, ``f(t_k) - f(t_{k-1})`` for a spending function ``f`` with ``f(1) = alpha``:

* ``obrien-fleming`` (Lan-DeMets 1983): ``f(t) = 2 - 2 Phi(Phi^-1(1 - alpha/2) / sqrt(t))``, little
  level early, nearly all of it at the end;
* ``pocock`` (Lan-DeMets 1983): ``f(t) = alpha ln(1 + (e - 1) t)``, spread evenly;
* ``linear``: ``f(t) = alpha t`` (the power family with exponent 1, Hwang-Shih-DeCani with gamma 0);
* ``delayed-equivalence`` (the default of the sequential verdict): two shapes, one per boundary of
  the three-outcome rule. The "different" boundary spends on the power family
  ``f(t) = alpha t^DIFFERENCE_EXPONENT``; the equivalence boundary spends nothing before
  ``EQUIVALENCE_START`` of the budget and ``alpha ((t - s) / (1 - s))^EQUIVALENCE_EXPONENT`` after
  it (``s`` the start). Equivalence needs the whole region of ``2 M`` SEs to hold a two-sided
  interval; at the budget planned for 90 % power the margin ``M`` is about 3.5 SEs at the full
  budget and ``3.5 sqrt(t)`` at fraction ``t``, below the first boundaries (2-2.5) until about a
  third of the budget, so level spent there would be lost.

The crossing probabilities are computed exactly (to grid error, about 1e-6) by the numerical
recursion of Armitage, McPherson and Rowe (1969) in the form of Jennison and Turnbull (2000,
ch. 19): the sub-density of the score ``S_k = Z_k sqrt(t_k)`` on the continuation region is carried
from look to look by integrating against the normal transition density (Simpson's rule on a grid),
and each ``b_k`` is found by root finding. No Monte Carlo is involved, so the boundaries repeat
exactly.

:func:`inner_outer_bounds` gives the boundaries of the rule :mod:`evaltk.stats.group_sequential` runs
and :func:`procedure_rates` that rule's own error rates; :func:`crossing_probability` is the
recursion for a single continuation interval (the tests check it against the published Pocock /
O'Brien-Fleming constants and ``scipy.stats.multivariate_normal``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum

import numpy as np
import numpy.typing as npt
from scipy import optimize, stats

from evaltk.stats.checks import ArrayLike, StatsInputError

FloatArray = npt.NDArray[np.float64]
GRID_POINTS = 481
"""Simpson grid points per look (odd); boundaries agree with a 4x finer grid to about 1e-5."""
SQRT_2PI = math.sqrt(2.0 * math.pi)
TAIL_SD = 9.0
"""The grid covers the mean +- this many SDs of the score where a side is unbounded."""
NEVER_Z = 40.0
"""The boundary of a look that may not stop (nothing spent there): ``1 - Phi(40)`` is 0 in double precision."""


EQUIVALENCE_START = 1.0 / 3.0
"""``delayed-equivalence``: fraction of the budget before which the equivalence boundary spends nothing."""
EQUIVALENCE_EXPONENT = 0.4
"""``delayed-equivalence``: exponent of the equivalence boundary's power-family spending after the start."""
DIFFERENCE_EXPONENT = 2.0
"""``delayed-equivalence``: exponent of the "different" boundary's power-family spending."""


FUTILITY_START = 0.5
"""``delayed-equivalence``: first fraction of the budget at which an interim look may stop for futility."""
FUTILITY_Z = 0.5
"""``delayed-equivalence``: an interim look stops for futility when the estimate lies within this many SEs of a
margin point (non-binding: the boundaries are solved as if it never stopped)."""


class Spending(Enum):
    """Shape of the Lan-DeMets alpha-spending functions (module docstring)."""

    DELAYED_EQUIVALENCE = "delayed-equivalence"
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
    """Cumulative level spent by information fraction ``t`` in ``[0, 1]`` (``alpha`` at ``t >= 1``).

    The shape of a one-sided boundary, and of the "different" boundary of the three-outcome rule.
    """
    shape = parse_spending(shape)
    if t <= 0.0:
        return 0.0
    if t >= 1.0:
        return float(alpha)
    if shape is Spending.DELAYED_EQUIVALENCE:
        return float(alpha * t**DIFFERENCE_EXPONENT)
    if shape is Spending.OBRIEN_FLEMING:
        return float(2.0 - 2.0 * stats.norm.cdf(stats.norm.ppf(1.0 - alpha / 2.0) / math.sqrt(t)))
    if shape is Spending.LINEAR:
        return float(alpha * t)
    return float(alpha * math.log(1.0 + (math.e - 1.0) * t))


def spent_equivalence(t: float, alpha: float, shape: Spending | str) -> float:
    """Cumulative level the equivalence boundary of the three-outcome rule spends by fraction ``t``.

    ``delayed-equivalence``: 0 up to :data:`EQUIVALENCE_START`, then the power family on the rest
    of the budget; every other shape spends as :func:`spent`.
    """
    shape = parse_spending(shape)
    if shape is not Spending.DELAYED_EQUIVALENCE or t >= 1.0:
        return spent(t, alpha, shape)
    if t <= EQUIVALENCE_START:
        return 0.0
    return float(alpha * ((t - EQUIVALENCE_START) / (1.0 - EQUIVALENCE_START)) ** EQUIVALENCE_EXPONENT)


def futility_bounds(fractions: ArrayLike, shape: Spending | str) -> FloatArray:
    """Per look, the half-width (in SEs) around each margin point inside which the look stops for futility (0: never).

    ``delayed-equivalence``: :data:`FUTILITY_Z` at the interim looks from :data:`FUTILITY_START` of the
    budget on; the last look and every other shape: 0. The stop is non-binding: no boundary counts on
    it, so ignoring it (going on) keeps both levels.
    """
    t = check_fractions(fractions)
    if parse_spending(shape) is not Spending.DELAYED_EQUIVALENCE:
        return np.zeros(t.size)
    out: FloatArray = np.where((t >= FUTILITY_START) & (t < 1.0), FUTILITY_Z, 0.0)
    out[-1] = 0.0
    return out


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
        self.advance_regions(t, [(z_low, z_high)])

    def advance_regions(self, t: float, regions: list[tuple[float, float]]) -> None:
        """Move to fraction ``t`` keeping only paths with ``Z_k`` inside one of ``regions`` (disjoint intervals)."""
        mean_t, sd_t = self.theta * t, math.sqrt(t)
        xs, ws = [], []
        for z_low, z_high in regions:
            lo = max(z_low * sd_t, mean_t - TAIL_SD * sd_t) if math.isfinite(z_low) else mean_t - TAIL_SD * sd_t
            hi = min(z_high * sd_t, mean_t + TAIL_SD * sd_t) if math.isfinite(z_high) else mean_t + TAIL_SD * sd_t
            if hi > lo:
                x, w = _simpson(lo, hi)
                xs.append(x)
                ws.append(w)
        mean, sd = self._moments(t)
        if not xs:
            x, w, f = np.zeros(1), np.zeros(1), np.zeros(1)
        else:
            x, w = np.concatenate(xs), np.concatenate(ws)
            u = (x[None, :] - mean[:, None]) / sd
            f = (self.w * self.f) @ np.exp(-0.5 * u * u) / (sd * SQRT_2PI)
        self.x, self.w, self.f, self.t_prev = x, w, f, t


def _solve(func: Callable[[float], float], target: float) -> float:
    """Find ``z`` in [-10, 40] with ``func(z) = target`` for a function decreasing in ``z``."""
    if target <= 0.0 or func(NEVER_Z) >= target:
        return NEVER_Z
    return float(optimize.brentq(lambda z: func(z) - target, -10.0, NEVER_Z, xtol=1e-10))


def one_sided_bounds(fractions: ArrayLike, alpha: float, shape: Spending | str, *, first_look: int = 0) -> FloatArray:
    """Upper boundaries ``b_k`` (Z scale) of a one-sided test of level ``alpha`` with alpha-spending.

    ``P(Z_k >= b_k for some k) = spent(t_K)`` under the null (drift 0), with no other stopping; the
    last look spends everything left when ``t_K = 1``. Looks are evaluated as they come: the
    boundary at look ``k`` depends on ``t_1..t_k`` only, so unplanned look times are allowed. The
    looks before ``first_look`` (0-based) may not stop: their boundary is :data:`NEVER_Z` and the
    level the spending function allots them is spent at the first look that may.
    """
    t = check_fractions(fractions)
    rec = _Recursion(0.0)
    out = np.empty(t.size)
    previous = 0.0
    for k, tk in enumerate(t):
        def exit_prob(z: float, tk: float = float(tk)) -> float:
            return rec.exit_upper(tk, z)

        target = spent(float(tk), alpha, shape) - previous
        out[k] = NEVER_Z if k < min(first_look, t.size - 1) else _solve(exit_prob, target)
        previous += exit_prob(float(out[k]))
        rec.advance(float(tk), -math.inf, float(out[k]))
    return out


def inner_outer_bounds(fractions: ArrayLike, alpha_inner: float, alpha_outer: float,
                       shape: Spending | str, *, first_look: int = 0) -> tuple[FloatArray, FloatArray]:
    """Boundaries of the three-outcome sequential comparison (:mod:`evaltk.stats.group_sequential`), per margin point.

    ``Z_k`` is one TOST half's statistic (large when the quantity lies inside the margin point).
    The procedure stops with "different" when ``Z_k <= -outer_k`` and with "equivalent" only when
    *both* halves reach ``inner_k`` at the same look, so a half that crossed ``inner_k`` alone goes
    on and may still cross ``-outer_k`` later. The boundaries hold for that rule:

    * ``outer`` is the one-sided ``alpha_outer`` boundary with no other stopping
      (:func:`one_sided_bounds`): a path can cross ``-outer_k`` after having crossed ``inner_j``
      (the other half not), so no exit at ``inner`` is counted on; under the null
      ``P(Z_k <= -outer_k for some k) = alpha_outer`` exactly, whatever the equivalence stops do;
    * ``inner`` spends ``alpha_inner`` for the paths still inside ``(-outer_k, inner_k)``: the
      procedure says "equivalent" at look ``k`` only for a path that has never crossed
      ``-outer_j`` (it would have stopped "different") and is past ``inner_k`` now, so its first
      exit in that region is at ``inner``; hence ``P(equivalent) <= alpha_inner``.

    The looks before ``first_look`` may not stop (both boundaries :data:`NEVER_Z`; their level is
    spent at the first look that may). :func:`procedure_outcomes` computes the rule's own error
    rates for a given margin. With one look at ``t = 1`` the boundaries are ``z_{1 - alpha_inner}``
    and ``z_{1 - alpha_outer}``, the fixed-sample tests. Returns ``(inner, outer)``, both positive.
    """
    t = check_fractions(fractions)
    if not (0.0 < alpha_inner < 0.5 and 0.0 < alpha_outer < 0.5):
        raise StatsInputError(f"levels must be in (0, 0.5), got {alpha_inner!r} and {alpha_outer!r}")
    shape_ = parse_spending(shape)
    outer = one_sided_bounds(t, alpha_outer, shape_, first_look=first_look)
    rec = _Recursion(0.0)
    inner = np.empty(t.size)
    spent_in = 0.0
    for k, tk in enumerate(t):
        tk_ = float(tk)

        def above(z: float, tk_: float = tk_) -> float:
            return rec.exit_upper(tk_, z)

        target = spent_equivalence(tk_, alpha_inner, shape_) - spent_in
        inner[k] = NEVER_Z if k < min(first_look, t.size - 1) else _solve(above, target)
        spent_in += above(float(inner[k]))
        rec.advance(tk_, -float(outer[k]), float(inner[k]))
    return inner, outer


@dataclass(frozen=True)
class ProcedureOutcomes:
    """Outcome probabilities of the three-outcome rule and its expected information (:func:`procedure_outcomes`).

    Attributes:
        equivalent: P(the rule says "equivalent").
        different: P("different").
        futility: P(an interim look stops "inconclusive" for futility).
        expected_fraction: expected information fraction at the stop (the last look's fraction
            when the budget runs out); times the budget, the expected episodes.

    """

    equivalent: float
    different: float
    futility: float
    expected_fraction: float


def _without(regions: list[tuple[float, float]], holes: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """Return ``regions`` (disjoint intervals) with the open intervals ``holes`` taken out."""
    out = regions
    for h_lo, h_hi in holes:
        cut: list[tuple[float, float]] = []
        for lo, hi in out:
            if h_hi <= lo or h_lo >= hi:
                cut.append((lo, hi))
                continue
            cut += [(lo, h_lo)] if lo < h_lo else []
            cut += [(h_hi, hi)] if h_hi < hi else []
        out = cut
    return out


def procedure_outcomes(fractions: ArrayLike, inner: ArrayLike, outer: ArrayLike, margin_se: float, drift: float,
                       futility: ArrayLike | None = None) -> ProcedureOutcomes:
    """Outcome probabilities of the three-outcome rule itself, known variance, by the recursion.

    ``Z_k`` is the upper TOST half, ``(high - estimate) / se_k``; the lower half is
    ``2 margin_se sqrt(t_k) - Z_k`` where ``margin_se`` is the half-width of the margin region in
    standard errors at the full budget (``(high - low) / (2 se_K)``). ``drift`` is the upper half's
    mean per unit information (``E[Z_k] = drift sqrt(t_k)``): 0 for a true quantity on the upper
    margin point, ``margin_se`` at the centre. A look stops "equivalent" when both halves are at
    least ``inner_k`` and "different" when either is at most ``-outer_k``; else, at an interim look
    with ``futility_k > 0``, it stops for futility when either half lies within ``futility_k`` of 0
    (the estimate within that many SEs of a margin point); otherwise it continues.
    """
    t = check_fractions(fractions)
    u, d = np.asarray(inner, np.float64), np.asarray(outer, np.float64)
    c = np.zeros(t.size) if futility is None else np.asarray(futility, np.float64)
    rec = _Recursion(drift)
    p_eq = p_diff = p_fut = expected = 0.0
    alive, t_prev = 1.0, 0.0
    for k, tk in enumerate(t):
        tk_, top = float(tk), 2.0 * margin_se * math.sqrt(float(tk))
        expected += (tk_ - t_prev) * alive
        t_prev = tk_
        lo_eq, hi_eq = float(u[k]), top - float(u[k])
        step_eq = rec.exit_upper(tk_, lo_eq) - rec.exit_upper(tk_, hi_eq) if hi_eq > lo_eq else 0.0
        step_diff = rec.exit_lower(tk_, -float(d[k])) + rec.exit_upper(tk_, top + float(d[k]))
        regions = ([(-float(d[k]), lo_eq), (hi_eq, top + float(d[k]))] if hi_eq > lo_eq
                   else [(-float(d[k]), top + float(d[k]))])
        if c[k] > 0.0 and k < t.size - 1:
            regions = _without(regions, [(-float(c[k]), float(c[k])), (top - float(c[k]), top + float(c[k]))])
        rec.advance_regions(tk_, regions)
        p_eq, p_diff = p_eq + step_eq, p_diff + step_diff
        left = float(np.sum(rec.w * rec.f))
        p_fut += max(0.0, alive - step_eq - step_diff - left) if c[k] > 0.0 and k < t.size - 1 else 0.0
        alive = left
    return ProcedureOutcomes(p_eq, p_diff, p_fut, expected)


def procedure_rates(fractions: ArrayLike, inner: ArrayLike, outer: ArrayLike, margin_se: float,
                    drift: float, futility: ArrayLike | None = None) -> tuple[float, float]:
    """``(P(equivalent), P(different))`` of the three-outcome rule itself (:func:`procedure_outcomes`)."""
    out = procedure_outcomes(fractions, inner, outer, margin_se, drift, futility)
    return out.equivalent, out.different


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
