"""IQM, optimality gap, probability of improvement and the stratified bootstrap."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from evaltk.stats import (
    StatsInputError,
    iqm,
    optimality_gap,
    probability_of_improvement,
    stratified_bootstrap,
)


def test_iqm_hand_computed() -> None:
    # 8 values: drop the lowest 2 and highest 2, mean of the middle four.
    scores = np.array([[1.0, 100.0], [2.0, 3.0], [4.0, 5.0], [-50.0, 6.0]])
    assert float(iqm(scores)) == pytest.approx((2 + 3 + 4 + 5) / 4)
    assert float(iqm(scores)) == pytest.approx(stats.trim_mean(scores, 0.25, axis=None))


def test_optimality_gap_hand_computed() -> None:
    scores = np.array([[0.5, 1.5], [1.0, 0.0]])
    # clipped at 1: [0.5, 1, 1, 0] -> mean 0.625 -> gap 0.375
    assert float(optimality_gap(scores)) == pytest.approx(0.375)
    assert float(optimality_gap(scores, gamma=2.0)) == pytest.approx(2.0 - 0.75)


def test_probability_of_improvement_matches_mann_whitney() -> None:
    rng = np.random.default_rng(3)
    x = rng.integers(0, 5, size=(6, 4)).astype(float)
    y = rng.integers(0, 5, size=(5, 4)).astype(float)
    per_task = [stats.mannwhitneyu(x[:, t], y[:, t]).statistic / (6 * 5) for t in range(4)]
    assert float(probability_of_improvement(x, y)) == pytest.approx(np.mean(per_task))
    assert float(probability_of_improvement(x, x)) == pytest.approx(0.5)


def test_stratified_bootstrap_repeats_exactly() -> None:
    rng = np.random.default_rng(8)
    x, y = rng.normal(1.0, 0.2, (5, 7)), rng.normal(0.9, 0.2, (4, 7))
    for func, mats in ((iqm, (x,)), (optimality_gap, (x,)), (probability_of_improvement, (x, y))):
        a = stratified_bootstrap(func, *mats, rng=np.random.default_rng(1), reps=500)
        b = stratified_bootstrap(func, *mats, rng=np.random.default_rng(1), reps=500)
        assert a == b
        assert a.ci.low <= a.ci.estimate <= a.ci.high


def test_bootstrap_is_stratified_by_task() -> None:
    # One run per task: resampling runs within a task can only return that run, so the interval
    # collapses. An unstratified bootstrap (resampling cells) would not.
    x = np.array([[0.0, 1.0, 2.0, 3.0, 10.0]])
    est = stratified_bootstrap(iqm, x, rng=np.random.default_rng(0), reps=200)
    assert est.ci.low == est.ci.high == est.ci.estimate
    # Each task's resampled column only contains that task's values.
    z = np.array([[0.0, 100.0], [1.0, 101.0], [2.0, 102.0]])
    seen: list[np.ndarray] = []

    def record(m: np.ndarray) -> np.ndarray:
        seen.append(m)
        return np.asarray(m.mean(axis=(-2, -1)))

    stratified_bootstrap(record, z, rng=np.random.default_rng(0), reps=100)
    resampled = seen[-1]
    assert np.all(resampled[..., 0] <= 2.0)
    assert np.all(resampled[..., 1] >= 100.0)


def test_bad_matrices_rejected() -> None:
    with pytest.raises(StatsInputError, match="same number of tasks"):
        stratified_bootstrap(probability_of_improvement, np.ones((3, 2)), np.ones((3, 3)),
                             rng=np.random.default_rng(0))
    with pytest.raises(StatsInputError, match="NaN"):
        stratified_bootstrap(iqm, [[1.0, np.nan]], rng=np.random.default_rng(0))
