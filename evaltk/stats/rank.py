"""The rank-based effect ``P(X > Y) + 0.5 P(X = Y)`` with its Brunner-Munzel standard error.

This is the quantity behind the Brunner-Munzel test, the rank-based TOST and rliable's
probability of improvement. The estimate and variance come from statsmodels'
``rank_compare_2indep`` (Brunner-Munzel asymptotics with a Satterthwaite t approximation).

Degenerate data: when the estimated variance is zero (all values tied, or every ``x`` above every
``y``) the asymptotic formula gives a standard error of 0, which would make any test reject or
any equivalence pass regardless of the sample size. evaltk then uses the variance the estimate
has when both samples come from one continuous distribution, ``(n_x + n_y + 1) / (12 n_x n_y)``,
with ``n_x + n_y - 2`` degrees of freedom; small samples then stay inconclusive and large
samples still decide. ``degenerate`` and ``note`` record that this happened.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np
from scipy import stats
from statsmodels.stats.nonparametric import rank_compare_2indep

from evaltk.stats.checks import FloatArray, check_level
from evaltk.stats.results import ConfidenceInterval


@dataclass(frozen=True)
class ProbSuperior:
    """``P(X > Y) + 0.5 P(X = Y)`` with its standard error.

    Attributes:
        estimate: the estimate (the Mann-Whitney ``U / (n_x n_y)``).
        se: its standard error.
        df: degrees of freedom of the t approximation.
        var_x: per-observation variance component of ``x`` (``var1`` in statsmodels), 0 if degenerate.
        var_y: per-observation variance component of ``y``.
        n_x: size of ``x``.
        n_y: size of ``y``.
        degenerate: True when the null-variance stand-in was used.
        note: explanation when ``degenerate``.

    """

    estimate: float
    se: float
    df: float
    var_x: float
    var_y: float
    n_x: int
    n_y: int
    degenerate: bool
    note: str = ""


def null_variance(n_x: int, n_y: int) -> float:
    """Variance of ``U / (n_x n_y)`` under equal continuous distributions: ``(n_x+n_y+1)/(12 n_x n_y)``."""
    return (n_x + n_y + 1) / (12.0 * n_x * n_y)


def prob_superior(xs: FloatArray, ys: FloatArray) -> ProbSuperior:
    """Estimate ``P(X > Y) + 0.5 P(X = Y)`` and its standard error from samples ``xs``, ``ys`` (float64, n >= 2)."""
    diff = np.sign(xs[:, None] - ys[None, :])
    estimate = float(0.5 + 0.5 * diff.mean())
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        res = rank_compare_2indep(xs, ys)
    var_prob = float(res.var_prob)
    if math.isfinite(var_prob) and var_prob > 0.0 and math.isfinite(float(res.df)):
        return ProbSuperior(float(res.prob1), math.sqrt(var_prob), float(res.df), float(res.var1), float(res.var2),
                            xs.size, ys.size, False)
    if np.all(diff == 0):
        why = "all values tied"
    elif np.all(diff > 0) or np.all(diff < 0):
        why = "the samples do not overlap"
    else:
        why = "zero rank variance"
    note = (f"{why}: Brunner-Munzel variance is 0, so the null variance (n_x+n_y+1)/(12 n_x n_y) "
            "is used instead")
    return ProbSuperior(estimate, math.sqrt(null_variance(xs.size, ys.size)), float(xs.size + ys.size - 2),
                        0.0, 0.0, xs.size, ys.size, True, note)


def prob_superior_ci(xs: FloatArray, ys: FloatArray, *, level: float = 0.95) -> ConfidenceInterval:
    """Brunner-Munzel t CI of ``P(X > Y) + 0.5 P(X = Y)``: ``estimate +- t_{df, (1 + level) / 2} se``."""
    check_level(level)
    ps = prob_superior(xs, ys)
    half = float(stats.t.ppf(0.5 + level / 2.0, ps.df)) * ps.se
    return ConfidenceInterval(ps.estimate, ps.estimate - half, ps.estimate + half, level, "brunner-munzel-t",
                              "P(x > y) + 0.5 P(x = y)")
