"""Statistics of one look of the sequential comparison (:mod:`evaltk.stats.group_sequential`).

Per look (``x`` = candidate B, ``y`` = reference A), vectorised over a leading axis so that the
calibration benchmark runs thousands of sequences at once:

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
from dataclasses import dataclass

import numpy as np
from scipy import stats

from evaltk.stats.checks import FloatArray, StatsInputError

SEQUENTIAL_KINDS = ("absolute", "sd")
"""Margin kinds the sequential comparison supports."""


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
