"""Group-sequential TOST (evaltk.stats.group_sequential): per-look statistics, decisions, a small Monte-Carlo check."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats
from statsmodels.stats.weightstats import ttost_ind, ttost_paired

from evaltk.stats.equivalence import tost_standardized
from evaltk.stats.group_sequential import (
    SD_KURTOSIS_LIMIT,
    LookDecision,
    SequentialDesign,
    design_max_episodes,
    information_fraction,
    look_once,
    look_stats,
    pooled_kurtosis,
    repeated_ci,
    run_sequence,
    simulate,
)


def test_look_stats_match_statsmodels_and_fixed_tests() -> None:
    rng = np.random.default_rng(0)
    a, b = rng.normal(0, 1, 30), rng.normal(0.2, 1.5, 40)
    st = look_stats(a[None], b[None], -0.5, 0.5, "absolute", paired=False)
    _, lower, upper = ttost_ind(b, a, -0.5, 0.5, usevar="unequal")
    assert st.p_lower[0] == pytest.approx(float(lower[1]), rel=1e-10)
    assert st.p_upper[0] == pytest.approx(float(upper[1]), rel=1e-10)
    sd = look_stats(a[None], b[None], -0.5, 0.5, "sd", paired=False)
    ref = tost_standardized(b, a, -0.5, 0.5)
    assert sd.p_lower[0] == pytest.approx(ref.p_lower, rel=1e-6)
    assert sd.p_upper[0] == pytest.approx(ref.p_upper, rel=1e-6)
    pa = look_stats(a[None], b[None, :30], -0.5, 0.5, "absolute", paired=True)
    _, lower, upper = ttost_paired(b[:30], a, -0.5, 0.5)
    assert pa.p_lower[0] == pytest.approx(float(lower[1]), rel=1e-10)


def test_design_max_episodes_and_fractions() -> None:
    # one look is the fixed-N rule: TOST halves at z_0.95, "beyond the margin" at z_0.975
    fixed = SequentialDesign.build([1.0])
    assert fixed.equivalence_z[0] == pytest.approx(stats.norm.isf(0.05), abs=1e-6)
    assert fixed.difference_z[0] == pytest.approx(stats.norm.isf(0.025), abs=1e-6)
    # hand-computed fixed-N size: 80 % TOST power at a true 0 needs each half at 0.9, so
    # N = 2 (z_0.95 + z_0.9)^2 / 0.5^2 = 68.5 -> 69 per side
    assert design_max_episodes(0.5, looks=1) == math.ceil(2 * (stats.norm.isf(0.05) + stats.norm.isf(0.1)) ** 2 / 0.25)
    n = design_max_episodes(0.5, looks=5)
    assert 69 < n <= 75  # O'Brien-Fleming costs a few per cent of the fixed size
    design = SequentialDesign.build([0.2, 0.4, 0.6, 0.8, 1.0])
    drift = 0.5 / math.sqrt(2.0 / n)
    assert design.power_at(drift) == pytest.approx(0.9, abs=0.01)
    assert design_max_episodes(0.5, looks=5, rho=0.75) == pytest.approx(n / 4, abs=1)
    assert information_fraction(50, 50, 100, 100, paired=False) == pytest.approx(0.5)
    assert information_fraction(100, 25, 100, 100, paired=False) == pytest.approx(0.4)


def test_sequence_stops_at_first_decision_and_names_it() -> None:
    rng = np.random.default_rng(1)
    a, b = rng.normal(0, 1, 100), rng.normal(0, 1, 100)
    design = SequentialDesign.build([0.2, 0.4, 0.6, 0.8, 1.0])
    looks = list(run_sequence(design, [(a[:n], b[:n]) for n in (20, 40, 60, 80, 100)], "sd", 0.5,
                              paired=False))
    assert looks[-1].outcome is not LookDecision.CONTINUE
    assert all(look.outcome is LookDecision.CONTINUE for look in looks[:-1])
    far = list(run_sequence(design, [(a[:n], b[:n] + 2.0) for n in (20, 40, 60, 80, 100)], "sd", 0.5,
                              paired=False))
    assert far[0].outcome is LookDecision.DIFFERENT  # 2 SD beyond equality: shown beyond the 0.5 SD margin at once
    mid = list(run_sequence(design, [(a[:n], b[:n] + 1.0) for n in (20, 40, 60, 80, 100)], "sd", 0.5,
                              paired=False))
    assert mid[-1].outcome is LookDecision.DIFFERENT  # 1 SD: shown beyond the 0.5 SD margin before the budget ends
    assert len(mid) < 5


def test_monte_carlo_type_one_error_and_power_small() -> None:
    n_max, sims = 95, 600
    sizes = [19, 38, 57, 76, 95]
    design = SequentialDesign.build([s / n_max for s in sizes])
    rng = np.random.default_rng(2026)
    a = rng.normal(size=(sims, n_max))
    at_margin = simulate(design, a, rng.normal(size=(sims, n_max)) + 0.5, sizes, "absolute", 0.5, paired=False)
    se = (0.05 * 0.95 / sims) ** 0.5
    assert at_margin.rate(LookDecision.EQUIVALENT) <= 0.05 + 2 * se
    assert at_margin.rate(LookDecision.DIFFERENT) <= 0.025 + 2 * se
    at_zero = simulate(design, a, rng.normal(size=(sims, n_max)), sizes, "absolute", 0.5, paired=False)
    assert at_zero.rate(LookDecision.EQUIVALENT) > 0.8
    assert at_zero.rate(LookDecision.DIFFERENT) == 0.0
    beyond = simulate(design, a, rng.normal(size=(sims, n_max)) + 1.0, sizes, "absolute", 0.5, paired=False)
    assert beyond.rate(LookDecision.DIFFERENT) > 0.9
    assert beyond.episodes.mean() < 0.8 * n_max


def test_inconclusive_only_when_the_budget_is_spent() -> None:
    design = SequentialDesign.build([0.25, 0.5, 0.75, 1.0])
    rng = np.random.default_rng(3)
    sims = 400
    a = rng.normal(size=(sims, 100))
    for shift in (0.0, 0.3, 0.5, 0.7, 1.0):
        res = simulate(design, a, rng.normal(size=(sims, 100)) + shift, [25, 50, 75, 100], "absolute", 0.5,
                       paired=False)
        inconclusive = res.outcome == list(LookDecision).index(LookDecision.INCONCLUSIVE)
        assert np.all(res.episodes[inconclusive] == 100)
        assert not np.any(res.outcome == list(LookDecision).index(LookDecision.CONTINUE))
    looks = list(run_sequence(design, [(a[0, :n], a[1, :n] + 0.5) for n in (25, 50, 75, 100)], "absolute", 0.5,
                              paired=False))
    on_margin = [LookDecision.CONTINUE] * 3 + [LookDecision.INCONCLUSIVE]
    assert [look.outcome for look in looks] == on_margin


def test_sequential_decisions_match_hand_computed_welch_p_values() -> None:
    design = SequentialDesign.build([0.5, 1.0])
    a = np.array([0.1, -0.4, 0.3, 0.0, 0.2, -0.1, 0.5, -0.3, 0.4, -0.2])
    b = a + 3.0
    look = next(iter(run_sequence(design, [(a, b), (a, b)], "absolute", 1.0, paired=False)))
    # Welch: estimate 3, se = sqrt(2 var / 10), the "beyond" p-value is P(t_df > (3 - 1) / se)
    se = math.sqrt(2.0 * a.var(ddof=1) / 10.0)
    assert look.se == pytest.approx(se, rel=1e-12)
    assert look.p_beyond == pytest.approx(stats.t.sf(2.0 / se, 18.0), rel=1e-9)
    assert look.nominal_alpha_beyond == pytest.approx(stats.norm.sf(design.difference_z[0]), rel=1e-12)
    assert look.outcome is LookDecision.DIFFERENT


def test_simulation_repeats_under_a_fixed_generator() -> None:
    design = SequentialDesign.build([0.5, 1.0])

    def once() -> tuple[np.ndarray, np.ndarray]:
        rng = np.random.default_rng(7)
        a, b = rng.normal(size=(50, 40)), rng.normal(size=(50, 40))
        res = simulate(design, a, b, [20, 40], "sd", 0.5, paired=True)
        return res.outcome, res.episodes

    first, second = once(), once()
    assert np.array_equal(first[0], second[0])
    assert np.array_equal(first[1], second[1])


def test_monte_carlo_ten_looks_level_and_power() -> None:
    # the benchmarked design: 10 looks, budget planned for 80 % power at a true 0 (72 per side at d = 0.5)
    n_max = design_max_episodes(0.5, looks=10)
    assert n_max == 72
    sizes = [round(n_max * k / 10) for k in range(2, 11)]  # the first look (7) is below 10 episodes
    design = SequentialDesign.build([s / n_max for s in sizes])
    sims = 2000
    se = (0.05 * 0.95 / sims) ** 0.5
    rng = np.random.default_rng(2027)
    at_margin = simulate(design, rng.normal(size=(sims, n_max)), rng.normal(size=(sims, n_max)) + 0.5, sizes,
                         "absolute", 0.5, paired=False)
    assert at_margin.rate(LookDecision.EQUIVALENT) <= 0.05 + 3 * se
    assert at_margin.rate(LookDecision.DIFFERENT) <= 0.025 + 3 * se
    at_zero = simulate(design, rng.normal(size=(sims, n_max)), rng.normal(size=(sims, n_max)), sizes, "absolute", 0.5,
                       paired=False)
    assert at_zero.rate(LookDecision.EQUIVALENT) > 0.77
    assert at_zero.episodes.mean() < 69  # the fixed-N TOST needs 69 per side for 80 %


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), shift=st.floats(-3.0, 3.0), offset=st.floats(-50.0, 50.0),
       kind=st.sampled_from(["absolute", "sd"]))
def test_outcomes_are_symmetric_in_a_and_b_and_invariant_to_a_common_offset(seed: int, shift: float, offset: float,
                                                                            kind: str) -> None:
    rng = np.random.default_rng(seed)
    a, b = rng.normal(0.0, 1.0, (8, 40)), rng.normal(shift, 1.0, (8, 40))
    design = SequentialDesign.build([0.5, 1.0])
    forward = simulate(design, a, b, [20, 40], kind, 0.5, paired=False)
    swapped = simulate(design, b, a, [20, 40], kind, 0.5, paired=False)
    moved = simulate(design, a + offset, b + offset, [20, 40], kind, 0.5, paired=False)
    assert np.array_equal(forward.outcome, swapped.outcome)  # the region is symmetric: B - A and A - B decide alike
    assert np.array_equal(forward.episodes, swapped.episodes)
    assert np.array_equal(forward.outcome, moved.outcome)


@pytest.mark.parametrize(("kind", "paired"), [("absolute", False), ("absolute", True), ("sd", False), ("sd", True)])
def test_repeated_ci_is_dual_to_each_look_decision(kind: str, paired: bool) -> None:
    """'different' iff the d_k interval lies beyond a margin point; 'equivalent' iff the u_k interval lies inside."""
    rng = np.random.default_rng(11)
    design = SequentialDesign.build([0.25, 0.5, 0.75, 1.0])
    for shift in (0.0, 0.3, 0.6, 1.2):
        a, b = rng.normal(0, 1, 80), rng.normal(shift, 1, 80)
        for k, n in enumerate((20, 40, 60, 80)):
            look = look_once(design, k, a[:n], b[:n], kind, 0.5, paired=paired)
            lo, hi = look.ci_difference
            if not look.heavy_tails:
                assert (look.outcome is LookDecision.DIFFERENT) == (lo > 0.5 or hi < -0.5)
            elo, ehi = look.ci_equivalence
            assert (look.outcome is LookDecision.EQUIVALENT) == (elo > -0.5 and ehi < 0.5)
            assert elo >= lo  # the equivalence boundary is the inner one
            assert ehi <= hi
    # absolute, unpaired: the interval is estimate -+ t quantile x Welch SE
    a, b = rng.normal(0, 1, 30), rng.normal(0.2, 1.5, 40)
    st_ = look_stats(a[None], b[None], 0.0, 0.0, "absolute", paired=False)
    qx, qy = b.var(ddof=1) / 40, a.var(ddof=1) / 30
    df = (qx + qy) ** 2 / (qx**2 / 39 + qy**2 / 29)
    half = stats.t.isf(0.01, df) * st_.se[0]
    assert repeated_ci(a, b, "absolute", 0.01, paired=False) == pytest.approx((st_.estimate[0] - half,
                                                                               st_.estimate[0] + half), abs=1e-8)


def test_sd_margin_does_not_say_different_on_heavy_tails() -> None:
    """Pooled sample kurtosis above the limit: the sd margin's 'different' is withheld, the absolute one is not."""
    rng = np.random.default_rng(5)
    a = rng.standard_t(2.2, 300)
    b = rng.standard_t(2.2, 300) + 3.0
    assert pooled_kurtosis(a[None], b[None])[0] > SD_KURTOSIS_LIMIT
    design = SequentialDesign.build([1.0])
    look = look_once(design, 0, a, b, "sd", 0.5, paired=False)
    assert look.heavy_tails
    assert look.ci_difference[0] > 0.5  # the interval alone would say "different"
    assert look.outcome is LookDecision.INCONCLUSIVE
    assert look_once(design, 0, a, b, "absolute", 0.5, paired=False).outcome is LookDecision.DIFFERENT
    normal = look_once(design, 0, rng.normal(0, 1, 300), rng.normal(1.5, 1, 300), "sd", 0.5, paired=False)
    assert not normal.heavy_tails
    assert normal.outcome is LookDecision.DIFFERENT
