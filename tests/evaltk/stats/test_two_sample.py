"""Two-sample tests: agreement with scipy, hand-computed cases, degenerate data, ties."""

from __future__ import annotations

import itertools
import math
import warnings

import numpy as np
import pytest
from scipy import stats

from evaltk.stats import StatsInputError
from evaltk.stats import tests_two_sample as two_sample


def test_welch_matches_scipy(samples: tuple[np.ndarray, np.ndarray]) -> None:
    x, y = samples
    ref = stats.ttest_ind(x, y, equal_var=False)
    res = two_sample.welch_t(x, y)
    assert res.statistic == pytest.approx(float(ref.statistic), rel=1e-12)
    assert res.pvalue == pytest.approx(float(ref.pvalue), rel=1e-12)
    assert res.estimate == pytest.approx(x.mean() - y.mean())
    ci = two_sample.welch_ci(x, y, level=0.9)
    ref_ci = ref.confidence_interval(0.9)
    assert (ci.low, ci.high) == pytest.approx((ref_ci.low, ref_ci.high), rel=1e-12)


def test_welch_hand_computed() -> None:
    # x = [1, 2, 3], y = [4, 5, 6]: diff -3, each variance 1, se = sqrt(1/3 + 1/3), df = 4.
    res = two_sample.welch_t([1, 2, 3], [4, 5, 6])
    t = -3.0 / math.sqrt(2.0 / 3.0)
    assert res.statistic == pytest.approx(t)
    assert res.pvalue == pytest.approx(2 * stats.t.sf(abs(t), 4))


def test_mann_whitney_matches_scipy_and_hand(samples: tuple[np.ndarray, np.ndarray]) -> None:
    x, y = samples
    ref = stats.mannwhitneyu(x, y, method="auto")
    res = two_sample.mann_whitney_u(x, y)
    assert (res.statistic, res.pvalue) == (float(ref.statistic), float(ref.pvalue))
    # Hand: x = [1, 3], y = [2, 2]: pairs (1<2, 1<2, 3>2, 3>2) -> U = 2, P(X>Y) = 0.5.
    small = two_sample.mann_whitney_u([1, 3], [2, 2])
    assert small.statistic == 2.0
    assert small.estimate == 0.5
    # Ties are counted half: x = [1, 2], y = [2, 3]: (1<2, 1<3, 2=2, 2<3) -> U = 0.5.
    assert two_sample.mann_whitney_u([1, 2], [2, 3]).statistic == 0.5


def test_brunner_munzel_matches_scipy(samples: tuple[np.ndarray, np.ndarray]) -> None:
    x, y = samples
    ref = stats.brunnermunzel(x, y)
    res = two_sample.brunner_munzel(x, y)
    assert res.statistic == pytest.approx(float(ref.statistic), rel=1e-12)
    assert res.pvalue == pytest.approx(float(ref.pvalue), rel=1e-12)
    pairs = np.sign(x[:, None] - y[None, :])
    assert res.estimate == pytest.approx(0.5 + 0.5 * pairs.mean())


def test_ks_without_ties_matches_scipy(samples: tuple[np.ndarray, np.ndarray]) -> None:
    x, y = samples
    ref = stats.ks_2samp(x, y)
    res = two_sample.ks_test(x, y, rng=np.random.default_rng(0))
    assert (res.statistic, res.pvalue) == (float(ref.statistic), float(ref.pvalue))
    assert res.note == ""


def _exact_ks_pvalue(x: list[float], y: list[float]) -> float:
    pooled = np.array(x + y, dtype=float)
    observed = stats.ks_2samp(x, y).statistic
    count = total = 0
    for idx in itertools.combinations(range(pooled.size), len(x)):
        mask = np.zeros(pooled.size, dtype=bool)
        mask[list(idx)] = True
        count += int(stats.ks_2samp(pooled[mask], pooled[~mask]).statistic >= observed - 1e-12)
        total += 1
    return count / total


def test_ks_with_ties_uses_permutation_pvalue() -> None:
    x = [0.0, 1.0, 1.0, 2.0, 3.0, 3.0, 3.0]
    y = [0.0, 0.0, 1.0, 1.0, 1.0, 2.0]
    res = two_sample.ks_test(x, y, rng=np.random.default_rng(3), n_resamples=20000)
    assert res.statistic == float(stats.ks_2samp(x, y).statistic)
    assert "permutation" in res.note
    exact = _exact_ks_pvalue(x, y)
    # Monte-Carlo p-value with 20,000 resamples: standard error below 0.0036.
    assert res.pvalue == pytest.approx(exact, abs=0.015)
    no_rng = two_sample.ks_test(x, y)
    assert "conservative" in no_rng.note


def test_permutation_matches_scipy_with_same_generator(samples: tuple[np.ndarray, np.ndarray]) -> None:
    x, y = samples
    res = two_sample.permutation_test(x, y, rng=np.random.default_rng(11), n_resamples=999)
    ref = stats.permutation_test((x, y), lambda a, b, axis: a.mean(axis) - b.mean(axis), vectorized=True,
                                 n_resamples=999, rng=np.random.default_rng(11))
    assert res.pvalue == float(ref.pvalue)
    again = two_sample.permutation_test(x, y, rng=np.random.default_rng(11), n_resamples=999)
    assert again == res


def test_permutation_exact_small_case() -> None:
    # x = [3, 4], y = [0, 1]: of the 6 splits only the observed one and its mirror are as extreme.
    res = two_sample.permutation_test([3, 4], [0, 1], rng=np.random.default_rng(0))
    assert res.pvalue == pytest.approx(2 / 6)


def test_degenerate_samples_give_nan_not_warnings() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = two_sample.welch_t([2.0, 2.0, 2.0], [2.0, 2.0])
        assert math.isnan(res.pvalue)
        assert "constant" in res.note
        assert not res.rejects(0.05)
        mw = two_sample.mann_whitney_u([1.0, 1.0], [1.0, 1.0, 1.0])
        assert mw.pvalue == 1.0
        bm = two_sample.brunner_munzel([0.0, 0.0, 0.0], [5.0, 5.0, 5.0])
        assert "do not overlap" in bm.note
        assert 0.0 < bm.pvalue < 1.0


def test_brunner_munzel_separation_is_not_automatically_significant() -> None:
    # 3 vs 3 without overlap: the exact permutation p-value is 2/20 = 0.1; a zero variance
    # estimate would claim p = 0.
    bm = two_sample.brunner_munzel([0.0, 1.0, 2.0], [5.0, 6.0, 7.0])
    assert bm.pvalue > 0.05
    big = two_sample.brunner_munzel(np.arange(50.0), np.arange(100.0, 150.0))
    assert big.pvalue < 1e-6


@pytest.mark.parametrize("bad", [[1.0], [], [1.0, float("nan")], [[1.0, 2.0]]])
def test_bad_input_is_rejected_with_a_named_error(bad: list[float]) -> None:
    with pytest.raises(StatsInputError, match=r"sample x"):
        two_sample.welch_t(bad, [1.0, 2.0, 3.0])


def test_permutation_requires_a_generator() -> None:
    with pytest.raises(StatsInputError, match=r"numpy\.random\.Generator"):
        two_sample.permutation_test([1, 2], [3, 4], rng=42)  # type: ignore[arg-type]
