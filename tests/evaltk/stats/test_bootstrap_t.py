"""Bootstrap-t tests and intervals (the robust half of the absolute and relative TOSTs)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from evaltk.stats import bootstrap_t
from evaltk.stats.equivalence import mean_difference_ci, relative_ci, tost_relative, tost_welch
from evaltk.stats.tests_two_sample import welch_ci


def test_pvalue_and_critical_values_hand_computed() -> None:
    t_star = np.arange(1.0, 20.0)  # 19 values: 1..19
    # "less": (1 + #{T* <= 2.5}) / 20 = 3/20
    assert bootstrap_t.pvalue(t_star, 2.5, "less") == pytest.approx(3 / 20)
    assert bootstrap_t.pvalue(t_star, 18.0, "greater") == pytest.approx(3 / 20)
    # tail 0.1: reject "less" iff 1 + #{T* <= t} < 2, i.e. t < 1 = the smallest value.
    assert bootstrap_t.critical_values(t_star, 0.1) == (1.0, 19.0)
    assert bootstrap_t.critical_values(t_star, 0.01) == (-np.inf, np.inf)


def test_moments_repeat_under_a_fixed_generator() -> None:
    rng = np.random.default_rng(0)
    x, y = rng.lognormal(0, 1, 40), rng.lognormal(0, 1, 25)
    m1 = bootstrap_t.BootstrapMoments.draw(x, y, rng=np.random.default_rng(3), n_resamples=500)
    m2 = bootstrap_t.BootstrapMoments.draw(x, y, rng=np.random.default_rng(3), n_resamples=500)
    assert np.array_equal(m1.t_star(1.0), m2.t_star(1.0))
    assert tost_welch(x, y, -1, 1, rng=np.random.default_rng(3)) == tost_welch(x, y, -1, 1,
                                                                               rng=np.random.default_rng(3))


def test_bootstrap_t_close_to_welch_for_large_normal_samples() -> None:
    rng = np.random.default_rng(1)
    x, y = rng.normal(0.2, 1.0, 2000), rng.normal(0.0, 1.0, 2000)
    welch = welch_ci(x, y, level=0.9)
    both = mean_difference_ci(x, y, level=0.9, rng=np.random.default_rng(2))
    width = welch.high - welch.low
    assert both.low <= welch.low
    assert both.high >= welch.high
    assert both.high - both.low == pytest.approx(width, rel=0.06)


def test_robust_tost_is_never_less_conservative_than_statsmodels() -> None:
    rng = np.random.default_rng(4)
    x, y = rng.lognormal(0, 1, 50), rng.lognormal(0, 1, 300)
    plain = tost_welch(x, y, -1.0, 1.0)
    robust = tost_welch(x, y, -1.0, 1.0, rng=np.random.default_rng(0))
    assert robust.p_lower >= plain.p_lower
    assert robust.p_upper >= plain.p_upper


@given(seed=st.integers(0, 10_000), half=st.floats(0.05, 0.5), relative=st.booleans())
def test_robust_tost_is_dual_to_its_interval(seed: int, half: float, relative: bool) -> None:
    rng = np.random.default_rng(seed)
    x, y = rng.gamma(2.0, 2.0, 40) + 5.0, rng.gamma(2.0, 2.0, 30) + 5.0
    if relative:
        res = tost_relative(x, y, -half / 3, half / 3, rng=np.random.default_rng(seed), n_resamples=400)
    else:
        res = tost_welch(x, y, -half * 4, half * 4, rng=np.random.default_rng(seed), n_resamples=400)
    gap = min(abs(res.ci.low - res.low), abs(res.high - res.ci.high))
    if gap > 1e-6:
        assert res.equivalent == (res.low < res.ci.low and res.ci.high < res.high)


def test_relative_interval_brackets_fieller() -> None:
    rng = np.random.default_rng(5)
    x, y = rng.normal(12.0, 2.0, 300), rng.normal(10.0, 2.0, 300)
    fieller = relative_ci(x, y, level=0.95)
    both = relative_ci(x, y, level=0.95, rng=np.random.default_rng(0))
    assert both.low <= fieller.low
    assert both.high >= fieller.high
    assert both.low > 0.1  # 20 % higher mean: clearly beyond a 10 % margin
