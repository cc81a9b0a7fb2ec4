"""TOST equivalence tests: agreement with statsmodels, duality with their intervals, hand checks."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats
from statsmodels.stats.nonparametric import rank_compare_2indep
from statsmodels.stats.weightstats import ttost_ind

from evaltk.stats import StatsInputError, equivalence


def test_tost_welch_matches_statsmodels(samples: tuple[np.ndarray, np.ndarray]) -> None:
    x, y = samples
    res = equivalence.tost_welch(x, y, -1.0, 1.5)
    p, lower, upper = ttost_ind(x, y, -1.0, 1.5, usevar="unequal")
    assert res.pvalue == pytest.approx(float(p), rel=1e-12)
    assert (res.p_lower, res.p_upper) == pytest.approx((float(lower[1]), float(upper[1])), rel=1e-12)
    assert res.ci.level == pytest.approx(0.9)


def test_tost_prob_superior_matches_statsmodels(samples: tuple[np.ndarray, np.ndarray]) -> None:
    x, y = samples
    res = equivalence.tost_prob_superior(x, y, 0.4, 0.6)
    ref = rank_compare_2indep(x, y)
    tost = ref.tost_prob_superior(0.4, 0.6)
    assert res.pvalue == pytest.approx(float(tost.pvalue), rel=1e-10)
    assert res.estimate == pytest.approx(float(ref.prob1))
    low, high = ref.conf_int(alpha=0.1)
    assert (res.ci.low, res.ci.high) == pytest.approx((float(low), float(high)), rel=1e-10)


def test_tost_standardized_hand_computed() -> None:
    x = np.array([1.0, 2.0, 3.0, 4.0])
    y = np.array([2.0, 3.0, 4.0, 5.0, 6.0])
    # pooled variance: (3 * 5/3 + 4 * 2.5) / 7 = 15/7; d = (2.5 - 4) / sqrt(15/7)
    d = -1.5 / math.sqrt(15.0 / 7.0)
    scale = math.sqrt(4 * 5 / 9)
    res = equivalence.tost_standardized(x, y, -2.0, 2.0)
    assert res.estimate == pytest.approx(d)
    # Each one-sided p-value is at least the exact noncentral-t one (and equals the larger of two tests).
    assert res.p_upper >= stats.nct.cdf(d * scale, 7, 2.0 * scale) - 1e-15
    assert res.p_lower >= stats.nct.sf(d * scale, 7, -2.0 * scale) - 1e-15
    assert res.pvalue == max(res.p_lower, res.p_upper)


def test_standardized_se_matches_normal_theory_for_large_normal_samples() -> None:
    rng = np.random.default_rng(12)
    x, y = rng.normal(0.3, 1.0, 5000), rng.normal(0.0, 1.0, 4000)
    d = equivalence.standardized_difference(x, y)[0]
    textbook = math.sqrt(1 / 5000 + 1 / 4000 + d**2 / (2 * 9000))
    assert equivalence._standardized_se(x, y, d) == pytest.approx(textbook, rel=0.03)


def test_nct_cdf_survives_scipy_nan() -> None:
    # scipy 1.17 returns nan for nct.cdf(-3.996, 1998, 11.18); the reflection gives ~0.
    value = equivalence.nct_cdf(-3.996, 1998.0, 11.18)
    assert 0.0 <= value < 1e-20


def test_standardized_ci_contains_noncentral_t_and_delta_intervals(samples: tuple[np.ndarray, np.ndarray]) -> None:
    x, y = samples
    ci = equivalence.standardized_ci(x, y, level=0.9)
    scale = math.sqrt(x.size * y.size / (x.size + y.size))
    t_obs = ci.estimate * scale
    df = x.size + y.size - 2
    # The union's limits are at least as wide as the exact noncentral-t limits...
    assert stats.nct.cdf(t_obs, df, ci.high * scale) <= 0.05 + 1e-8
    assert stats.nct.cdf(t_obs, df, ci.low * scale) >= 0.95 - 1e-8
    # ... and one of them is attained exactly by one of the two intervals.
    half = stats.t.ppf(0.95, df) * equivalence._standardized_se(x, y, ci.estimate)
    exact_high = stats.nct.cdf(t_obs, df, ci.high * scale) == pytest.approx(0.05, abs=1e-8)
    assert exact_high or ci.high == pytest.approx(ci.estimate + half)


def test_relative_ci_matches_fieller_roots(samples: tuple[np.ndarray, np.ndarray]) -> None:
    x, y = samples
    ci = equivalence.relative_ci(x, y, level=0.95)
    vx, vy = x.var(ddof=1) / x.size, y.var(ddof=1) / y.size
    rho_hat = x.mean() / y.mean()
    df = (vx + rho_hat**2 * vy) ** 2 / (vx**2 / (x.size - 1) + (rho_hat**2 * vy) ** 2 / (y.size - 1))
    t = stats.t.ppf(0.975, df)
    for bound in (ci.low, ci.high):
        rho = 1.0 + bound
        assert (x.mean() - rho * y.mean()) ** 2 == pytest.approx(t**2 * (vx + rho**2 * vy), rel=1e-9)


def test_relative_is_symmetric_under_sign_flip(samples: tuple[np.ndarray, np.ndarray]) -> None:
    x, y = samples
    pos = equivalence.tost_relative(x, y, -0.1, 0.2)
    neg = equivalence.tost_relative(-x, -y, -0.2, 0.1)
    assert neg.estimate == pytest.approx(-pos.estimate)
    assert (neg.p_lower, neg.p_upper) == pytest.approx((pos.p_upper, pos.p_lower))


def test_relative_margin_of_any_size_gives_p_values(samples: tuple[np.ndarray, np.ndarray]) -> None:
    """A margin as wide as 1e308 (the CLI fuzzer's) is far beyond any difference: equivalent, no overflow."""
    x, y = samples
    huge = equivalence.tost_relative(x, y, -1e308, 1e308)
    assert 0.0 <= huge.p_lower <= 1.0
    assert 0.0 <= huge.p_upper <= 1.0
    assert huge.pvalue <= equivalence.tost_relative(x, y, -100.0, 100.0).pvalue


def test_relative_needs_nonzero_reference_mean() -> None:
    with pytest.raises(StatsInputError, match="nonzero reference mean"):
        equivalence.tost_relative([1.0, 2.0], [-1.0, 1.0], -0.1, 0.1)


@given(
    seed=st.integers(0, 10_000),
    half=st.floats(0.05, 1.5),
    alpha=st.sampled_from([0.01, 0.05, 0.1]),
    kind=st.sampled_from(["welch", "prob", "sd", "relative"]),
)
def test_tost_equivalent_iff_interval_inside_bounds(seed: int, half: float, alpha: float, kind: str) -> None:
    rng = np.random.default_rng(seed)
    x, y = rng.normal(5.2, 1.0, 40), rng.normal(5.0, 1.3, 35)
    if kind == "welch":
        res = equivalence.tost_welch(x, y, -half, half, alpha=alpha)
    elif kind == "prob":
        res = equivalence.tost_prob_superior(x, y, 0.5 - half / 4, 0.5 + half / 4, alpha=alpha)
    elif kind == "sd":
        res = equivalence.tost_standardized(x, y, -half, half, alpha=alpha)
    else:
        res = equivalence.tost_relative(x, y, -half / 5, half / 5, alpha=alpha)
    inside = res.low < res.ci.low and res.ci.high < res.high
    margin = min(abs(res.ci.low - res.low), abs(res.high - res.ci.high))
    if margin > 1e-7:  # away from the exact boundary the two views must agree
        assert res.equivalent == inside


def test_constant_samples_are_exact() -> None:
    res = equivalence.tost_welch([3.0] * 5, [3.0] * 4, -0.1, 0.1)
    assert res.equivalent
    assert res.pvalue == 0.0
    assert "constant" in res.note
    far = equivalence.tost_welch([3.0] * 5, [5.0] * 4, -0.1, 0.1)
    assert not far.equivalent
    sd = equivalence.tost_standardized([1.0] * 5, [1.0] * 5, -0.5, 0.5)
    assert sd.equivalent
    assert "zero pooled SD" in sd.note


def test_prob_tost_with_all_ties_needs_enough_data() -> None:
    small = equivalence.tost_prob_superior([0.0] * 6, [0.0] * 6, 0.4, 0.6)
    assert not small.equivalent
    assert "tied" in small.note
    large = equivalence.tost_prob_superior([0.0] * 400, [0.0] * 400, 0.4, 0.6)
    assert large.equivalent


def test_bad_bounds_rejected() -> None:
    with pytest.raises(StatsInputError, match="low < high"):
        equivalence.tost_welch([1.0, 2.0], [1.0, 2.0], 1.0, -1.0)
    with pytest.raises(StatsInputError, match="alpha"):
        equivalence.tost_welch([1.0, 2.0], [1.0, 2.0], -1.0, 1.0, alpha=0.7)
