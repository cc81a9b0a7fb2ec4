"""Bootstrap confidence intervals (percentile and BCa) with an explicit generator.

Thin wrappers around ``scipy.stats.bootstrap`` (which implements both methods, resampling each
sample independently for two-sample statistics). The same generator state gives the same interval.
``statistic`` must be vectorised: ``statistic(values, axis=-1)`` reduces along ``axis``
(``np.mean``, ``np.median`` and :func:`evaltk.stats.aggregate.iqm` do).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
from scipy import stats

from evaltk.stats.checks import ArrayLike, FloatArray, StatsInputError, as_sample, check_generator, check_level
from evaltk.stats.results import ConfidenceInterval

Statistic = Callable[..., Any]
METHODS = {"percentile": "percentile", "bca": "BCa"}


def _check(method: str, n_resamples: int) -> str:
    if method not in METHODS:
        raise StatsInputError(f"bootstrap method must be one of {sorted(METHODS)}, got {method!r}")
    if n_resamples < 100:
        raise StatsInputError(f"n_resamples must be >= 100, got {n_resamples!r}; 9999 is a good default")
    return METHODS[method]


def _run(data: tuple[FloatArray, ...], func: Statistic, estimate: float, *, rng: np.random.Generator, method: str,
         n_resamples: int, level: float, quantity: str) -> ConfidenceInterval:
    scipy_method = _check(method, n_resamples)
    check_level(level)
    check_generator(rng)
    if all(np.all(d == d[0]) for d in data):
        return ConfidenceInterval(estimate, estimate, estimate, level, f"bootstrap-{method} (constant data)", quantity)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", category=stats.DegenerateDataWarning)
        res = stats.bootstrap(data, func, n_resamples=n_resamples, method=scipy_method, confidence_level=level,
                              vectorized=True, rng=rng)
    low, high = float(res.confidence_interval.low), float(res.confidence_interval.high)
    if np.isnan(low) or np.isnan(high):
        low, high = float(np.min(res.bootstrap_distribution)), float(np.max(res.bootstrap_distribution))
        return ConfidenceInterval(estimate, low, high, level, f"bootstrap-{method} (degenerate: range)", quantity)
    return ConfidenceInterval(estimate, low, high, level, f"bootstrap-{method}", quantity)


def bootstrap_ci(
    x: ArrayLike,
    statistic: Statistic = np.mean,
    *,
    rng: np.random.Generator,
    method: str = "bca",
    n_resamples: int = 9999,
    level: float = 0.95,
) -> ConfidenceInterval:
    """Bootstrap CI for ``statistic(x)``; ``x: float[n]``, ``method`` ``"percentile"`` or ``"bca"``."""
    xs = as_sample(x, "x")

    def func(a: FloatArray, axis: int = -1) -> Any:
        return statistic(a, axis=axis)

    return _run((xs,), func, float(statistic(xs, axis=-1)), rng=rng, method=method, n_resamples=n_resamples,
                level=level, quantity="statistic(x)")


def bootstrap_diff_ci(
    x: ArrayLike,
    y: ArrayLike,
    statistic: Statistic = np.mean,
    *,
    rng: np.random.Generator,
    method: str = "bca",
    n_resamples: int = 9999,
    level: float = 0.95,
) -> ConfidenceInterval:
    """Bootstrap CI for ``statistic(x) - statistic(y)``, resampling ``x`` and ``y`` independently."""
    xs, ys = as_sample(x, "x"), as_sample(y, "y")

    def func(a: FloatArray, b: FloatArray, axis: int = -1) -> Any:
        return statistic(a, axis=axis) - statistic(b, axis=axis)

    estimate = float(statistic(xs, axis=-1) - statistic(ys, axis=-1))
    return _run((xs, ys), func, estimate, rng=rng, method=method, n_resamples=n_resamples, level=level,
                quantity="statistic(x) - statistic(y)")

