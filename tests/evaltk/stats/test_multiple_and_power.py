"""Holm-Bonferroni and TOST power / sample size."""

from __future__ import annotations

import gc
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.weightstats import ttost_ind

from evaltk.stats import (
    StatsInputError,
    beyond_margin_sample_size,
    holm_bonferroni,
    simulate_tost_power,
    tost_power,
    tost_sample_size,
)
from evaltk.stats.power import welch_tost_rejects


def test_holm_hand_computed() -> None:
    adjusted, rejected = holm_bonferroni([0.01, 0.04, 0.03], alpha=0.05)
    # sorted 0.01*3 = 0.03; 0.03*2 = 0.06; max(0.04*1, 0.06) = 0.06
    assert adjusted == pytest.approx([0.03, 0.06, 0.06])
    assert rejected == [True, False, False]


# Each multipletests call runs gc.collect(), which walks every object of the test process (0.6 s each
# late in a full run). gc.freeze() moves the objects that exist now out of the collector's reach for
# the call, so the collection is quick; the results do not depend on it.
@settings(max_examples=15)
@given(st.lists(st.floats(0.0, 1.0), min_size=1, max_size=12))
def test_holm_matches_statsmodels(pvalues: list[float]) -> None:
    adjusted, rejected = holm_bonferroni(pvalues)
    gc.freeze()
    try:
        ref_rej, ref_adj, _, _ = multipletests(pvalues, alpha=0.05, method="holm")
    finally:
        gc.unfreeze()
    assert adjusted == pytest.approx(list(ref_adj))
    assert rejected == list(ref_rej)


def test_holm_skips_undefined_pvalues() -> None:
    adjusted, rejected = holm_bonferroni([0.01, math.nan, 0.02])
    assert adjusted[0] == pytest.approx(0.02)
    assert math.isnan(adjusted[1])
    assert not rejected[1]


def test_sample_size_matches_textbook_normal_approximation() -> None:
    # n = 2 (z_{0.95} + z_{0.9})^2 / d^2 = 17.13 / 0.25 = 68.5 -> 69 with the normal; the t version needs 70.
    res = tost_sample_size(0.5)
    assert res.n_per_side in (69, 70)
    assert res.power >= 0.8
    assert tost_power(res.n_per_side - 1, 0.5).power < 0.8
    assert tost_sample_size(1.0).n_per_side in (18, 19, 20)


def test_sample_size_grows_with_true_difference() -> None:
    assert tost_sample_size(0.5, true_difference=0.2).n_per_side > tost_sample_size(0.5).n_per_side
    with pytest.raises(StatsInputError, match="not inside the margin"):
        tost_sample_size(0.5, true_difference=0.5)


@given(n=st.integers(2, 400), margin=st.floats(0.05, 2.0))
def test_power_is_monotone_in_n(n: int, margin: float) -> None:
    assert tost_power(n + 1, margin).power >= tost_power(n, margin).power - 1e-12


def test_simulation_agrees_with_closed_form() -> None:
    closed = tost_power(40, 0.6, true_difference=0.1).power
    sim = simulate_tost_power(40, 0.6, true_difference=0.1, rng=np.random.default_rng(4), n_sims=4000)
    assert sim.power == pytest.approx(closed, abs=4 * math.sqrt(closed * (1 - closed) / 4000) + 0.01)
    again = simulate_tost_power(40, 0.6, true_difference=0.1, rng=np.random.default_rng(4), n_sims=4000)
    assert again == sim


def test_vectorised_welch_tost_matches_statsmodels() -> None:
    rng = np.random.default_rng(2)
    x, y = rng.normal(0.1, 1.0, (30, 25)), rng.normal(0.0, 1.3, (30, 20))
    fast = welch_tost_rejects(x, y, -0.6, 0.6, 0.05)
    slow = [float(ttost_ind(x[i], y[i], -0.6, 0.6, usevar="unequal")[0]) < 0.05 for i in range(30)]
    assert list(fast) == slow


def test_beyond_margin_sample_size() -> None:
    res = beyond_margin_sample_size(0.5, 1.0)
    # gap 0.5 SD, one-sided at alpha/2 with 80% power: 2 (1.96 + 0.84)^2 / 0.25 = 62.8 -> 63-64.
    assert 62 <= res.n_per_side <= 65
    with pytest.raises(StatsInputError):
        beyond_margin_sample_size(0.5, 0.4)
