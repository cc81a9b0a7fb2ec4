"""Paired designs (evaltk.stats.paired): agreement with statsmodels/scipy, hand-computed cases, pairing by seed."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.weightstats import ttost_paired

from evaltk.stats.checks import StatsInputError
from evaltk.stats.paired import (
    pair_by_seed,
    paired_t,
    standardized_paired_parts,
    tost_paired,
    tost_paired_standardized,
)


def _correlated(seed: int, n: int, rho: float, shift: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    z = rng.normal(size=n)
    return 10 + 2 * z, 10 + shift + 2 * (rho * z + math.sqrt(1 - rho**2) * rng.normal(size=n))


def test_tost_paired_matches_statsmodels() -> None:
    a, b = _correlated(0, 40, 0.8, 0.2)
    res = tost_paired(b, a, -1.0, 1.0)
    p, lower, upper = ttost_paired(b, a, -1.0, 1.0)
    assert res.pvalue == pytest.approx(float(p), rel=1e-12)
    assert res.p_lower == pytest.approx(float(lower[1]), rel=1e-12)
    assert res.p_upper == pytest.approx(float(upper[1]), rel=1e-12)
    assert res.estimate == pytest.approx(float(np.mean(b - a)))


def test_paired_t_matches_scipy_and_a_hand_case() -> None:
    a, b = _correlated(1, 25, 0.6)
    ref = stats.ttest_rel(b, a)
    res = paired_t(b, a)
    assert res.pvalue == pytest.approx(float(ref.pvalue), rel=1e-12)
    # Hand-computed: differences [1, 2, 3] -> mean 2, sd 1, t = 2 / (1 / sqrt 3) = 3.4641
    hand = paired_t([2.0, 4.0, 6.0], [1.0, 2.0, 3.0])
    assert hand.statistic == pytest.approx(2.0 * math.sqrt(3.0))


def test_constant_differences_are_exact() -> None:
    res = tost_paired([1.5, 2.5, 3.5], [1.0, 2.0, 3.0], -1.0, 1.0)
    assert res.p_lower == 0.0
    assert res.p_upper == 0.0
    assert "known exactly" in res.note


def test_standardized_paired_uses_the_score_sd() -> None:
    a, b = _correlated(2, 200, 0.9, 0.4)
    d, se, df = standardized_paired_parts(b, a)
    pooled = math.sqrt((a.var(ddof=1) + b.var(ddof=1)) / 2)
    assert d == pytest.approx(float(np.mean(b - a)) / pooled)
    assert df == 199
    assert 0 < se < 0.1  # paired: far below the unpaired SE sqrt(2/200) = 0.1
    res = tost_paired_standardized(b, a, -0.5, 0.5)
    assert res.p_lower < res.p_upper


def test_pair_by_seed_matches_in_a_order() -> None:
    pairs = pair_by_seed([1.0, 2.0, 3.0, 4.0], [30.0, 10.0, 99.0], [7, 5, 3, 1], [3, 7, 8])
    assert pairs.seeds.tolist() == [7, 3]
    assert pairs.a.tolist() == [1.0, 3.0]
    assert pairs.b.tolist() == [10.0, 30.0]
    assert (pairs.only_a, pairs.only_b) == (2, 1)
    assert not pairs.identical
    same = pair_by_seed([1.0, 2.0], [2.0, 1.0], [5, 6], [6, 5])
    assert same.identical


def test_pair_by_seed_rejects_repeated_seeds() -> None:
    with pytest.raises(StatsInputError, match="repeat"):
        pair_by_seed([1.0, 2.0], [1.0, 2.0], [5, 5], [5, 6])
