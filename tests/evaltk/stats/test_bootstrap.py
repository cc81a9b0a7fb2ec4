"""Bootstrap CIs: agreement with scipy, exact repeatability under a fixed generator."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from evaltk.stats import StatsInputError, bootstrap_ci, bootstrap_diff_ci


@pytest.fixture
def data() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(21)
    return rng.lognormal(0.0, 1.0, 40), rng.lognormal(0.2, 1.0, 30)


@pytest.mark.parametrize("method", ["percentile", "bca"])
def test_repeats_exactly_with_same_seed(data: tuple[np.ndarray, np.ndarray], method: str) -> None:
    x, y = data
    first = bootstrap_diff_ci(x, y, rng=np.random.default_rng(99), method=method, n_resamples=2000)
    second = bootstrap_diff_ci(x, y, rng=np.random.default_rng(99), method=method, n_resamples=2000)
    assert first == second
    other = bootstrap_diff_ci(x, y, rng=np.random.default_rng(100), method=method, n_resamples=2000)
    assert (other.low, other.high) != (first.low, first.high)


@pytest.mark.parametrize(("method", "scipy_method"), [("percentile", "percentile"), ("bca", "BCa")])
def test_matches_scipy_bootstrap(data: tuple[np.ndarray, np.ndarray], method: str, scipy_method: str) -> None:
    x, _ = data
    ours = bootstrap_ci(x, np.median, rng=np.random.default_rng(5), method=method, n_resamples=1000, level=0.9)
    ref = stats.bootstrap((x,), np.median, rng=np.random.default_rng(5), method=scipy_method, n_resamples=1000,
                          confidence_level=0.9, vectorized=True)
    assert (ours.low, ours.high) == (float(ref.confidence_interval.low), float(ref.confidence_interval.high))
    assert ours.estimate == float(np.median(x))


def test_percentile_interval_is_quantiles_of_resampled_means() -> None:
    x = np.array([1.0, 2.0, 4.0, 8.0, 16.0])
    ci = bootstrap_ci(x, rng=np.random.default_rng(1), method="percentile", n_resamples=5000, level=0.8)
    rng = np.random.default_rng(1)
    means = x[rng.integers(0, x.size, size=(5000, x.size))].mean(axis=1)
    lo, hi = np.percentile(means, [10, 90])
    # scipy draws the same way; allow for its interpolation rule.
    assert ci.low == pytest.approx(lo, abs=0.3)
    assert ci.high == pytest.approx(hi, abs=0.3)
    assert ci.low < x.mean() < ci.high


def test_constant_data_collapse_without_warnings() -> None:
    ci = bootstrap_diff_ci([2.0, 2.0, 2.0], [1.0, 1.0], rng=np.random.default_rng(0))
    assert (ci.low, ci.estimate, ci.high) == (1.0, 1.0, 1.0)


def test_rejects_bad_arguments() -> None:
    with pytest.raises(StatsInputError, match="method"):
        bootstrap_ci([1.0, 2.0], rng=np.random.default_rng(0), method="basic")
    with pytest.raises(StatsInputError, match="Generator"):
        bootstrap_ci([1.0, 2.0], rng=None)  # type: ignore[arg-type]
