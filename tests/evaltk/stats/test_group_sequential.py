"""Group-sequential TOST (evaltk.stats.group_sequential): per-look statistics, decisions, a small Monte-Carlo check."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from evaltk.stats.boundaries import NEVER_Z
from evaltk.stats.group_sequential import (
    MIN_DECISION_EPISODES,
    LookDecision,
    SequentialDesign,
    design_max_episodes,
    first_deciding_look,
    information_fraction,
    look_once,
    near_margin,
    repeated_ci,
    run_sequence,
    simulate,
)
from evaltk.stats.look_statistics import SD_KURTOSIS_LIMIT, look_stats, pooled_kurtosis


def test_design_max_episodes_and_fractions() -> None:
    # one look is the fixed-N rule: TOST halves at z_0.95, "beyond the margin" at z_0.975
    fixed = SequentialDesign.build([1.0])
    assert fixed.equivalence_z[0] == pytest.approx(stats.norm.isf(0.05), abs=1e-6)
    assert fixed.difference_z[0] == pytest.approx(stats.norm.isf(0.025), abs=1e-6)
    assert fixed.futility_z == (0.0,)
    # hand-computed fixed-N sizes: power 1 - beta at a true 0 needs each half at 1 - beta / 2, so
    # N = 2 (z_0.95 + z_{1 - beta/2})^2 / 0.5^2: 86.6 -> 87 per side for 90 % (the default), 68.5 -> 69 for 80 %
    for beta in (0.1, 0.2):
        expected = math.ceil(2 * (stats.norm.isf(0.05) + stats.norm.isf(beta / 2)) ** 2 / 0.25)
        assert design_max_episodes(0.5, looks=1, beta=beta) == expected
    n = design_max_episodes(0.5, looks=5)
    assert 87 < n <= 110  # the sequential design costs a few per cent of the fixed size in budget
    design = SequentialDesign.build([0.2, 0.4, 0.6, 0.8, 1.0])
    drift = 0.5 / math.sqrt(2.0 / n)
    assert design.outcomes_at(drift, drift).equivalent == pytest.approx(0.9, abs=0.01)
    assert design_max_episodes(0.5, looks=5, rho=0.75) == pytest.approx(n / 4, abs=1)
    assert information_fraction(50, 50, 100, 100, paired=False) == pytest.approx(0.5)
    assert information_fraction(100, 25, 100, 100, paired=False) == pytest.approx(0.4)


def test_default_design_has_no_equivalence_stop_before_a_third_and_a_futility_stop_from_half() -> None:
    design = SequentialDesign.build(np.arange(1, 11) / 10)
    assert design.spending.value == "delayed-equivalence"
    assert design.equivalence_z[:3] == (NEVER_Z,) * 3  # t = 0.1, 0.2, 0.3 <= 1/3
    assert [design.nominal_alpha(k) for k in range(3)] == [0.0] * 3
    assert all(z < 3.0 for z in design.equivalence_z[3:])
    assert design.futility_z == (0.0,) * 4 + (0.5,) * 5 + (0.0,)
    assert design.futility_level(4) == pytest.approx(stats.norm.sf(0.5))
    assert design.futility_level(9) == 1.0  # the last look ends anyway
    classic = SequentialDesign.build(np.arange(1, 11) / 10, spending="obrien-fleming")
    assert classic.futility_z == (0.0,) * 10
    assert all(classic.futility_level(k) == 1.0 for k in range(10))


def test_looks_below_the_minimum_decide_nothing() -> None:
    assert MIN_DECISION_EPISODES == 20
    assert first_deciding_look([10, 19, 20, 30]) == 2
    assert first_deciding_look([10, 15]) == 1  # the last look always decides
    design = SequentialDesign.build([0.25, 0.5, 1.0], first_look=first_deciding_look([10, 20, 40]))
    assert design.difference_z[0] == NEVER_Z
    late = SequentialDesign.build([0.25, 0.5, 0.75, 1.0], first_look=first_deciding_look([10, 15, 30, 40]))
    assert late.futility_z == (0.0, 0.0, 0.5, 0.0)  # no futility stop at a look that decides nothing
    assert design.equivalence_z[0] == NEVER_Z
    # the level of look 1 goes to look 2: its boundary is the one of a first look at t = 0.5
    assert design.difference_z[1] == pytest.approx(stats.norm.isf(0.025 * 0.5**2), abs=1e-6)
    rng = np.random.default_rng(4)
    a = rng.normal(0.0, 1.0, 40)
    look = look_once(design, 0, a[:10], a[:10] + 5.0, "absolute", 0.5, paired=False)
    assert look.outcome is LookDecision.CONTINUE  # five SDs apart, but a look of 10 decides nothing
    assert look_once(design, 1, a[:20], a[:20] + 5.0, "absolute", 0.5, paired=False).outcome is LookDecision.DIFFERENT


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


def test_inconclusive_only_when_the_budget_is_spent_without_a_futility_stop() -> None:
    design = SequentialDesign.build([0.25, 0.5, 0.75, 1.0], spending="obrien-fleming")
    rng = np.random.default_rng(3)
    sims = 400
    a = rng.normal(size=(sims, 100))
    for shift in (0.0, 0.3, 0.5, 0.7, 1.0):
        res = simulate(design, a, rng.normal(size=(sims, 100)) + shift, [25, 50, 75, 100], "absolute", 0.5,
                       paired=False)
        inconclusive = res.outcome == list(LookDecision).index(LookDecision.INCONCLUSIVE)
        assert np.all(res.episodes[inconclusive] == 100)
        assert not np.any(res.outcome == list(LookDecision).index(LookDecision.CONTINUE))
        assert not np.any(res.outcome == list(LookDecision).index(LookDecision.FUTILITY))
    looks = list(run_sequence(design, [(a[0, :n], a[1, :n] + 0.5) for n in (25, 50, 75, 100)], "absolute", 0.5,
                              paired=False))
    on_margin = [LookDecision.CONTINUE] * 3 + [LookDecision.INCONCLUSIVE]
    assert [look.outcome for look in looks] == on_margin


def test_futility_stops_only_near_a_margin_point_and_is_non_binding() -> None:
    """An early "inconclusive" needs the estimate within 0.5 SE of a margin point; ignoring it keeps every decision."""
    sizes = [25, 50, 75, 100]
    design = SequentialDesign.build([s / 100 for s in sizes])
    assert design.futility_z == (0.0, 0.5, 0.5, 0.0)
    ignored = dataclasses.replace(design, futility_z=())
    rng = np.random.default_rng(8)
    sims = 600
    a = rng.normal(size=(sims, 100))
    for shift in (0.0, 0.5, 1.0):
        b = rng.normal(size=(sims, 100)) + shift
        res = simulate(design, a, b, sizes, "absolute", 0.5, paired=False)
        full = simulate(ignored, a, b, sizes, "absolute", 0.5, paired=False)
        futile = res.outcome == list(LookDecision).index(LookDecision.FUTILITY)
        assert np.all(np.isin(res.episodes[futile], [50, 75]))  # interim looks from half the budget on
        decided = np.isin(res.outcome, [list(LookDecision).index(o) for o in (LookDecision.EQUIVALENT,
                                                                               LookDecision.DIFFERENT)])
        assert np.array_equal(res.outcome[decided], full.outcome[decided])  # a stop never creates a decision
        for row in np.flatnonzero(futile)[:20]:
            n = int(res.episodes[row])
            st = look_stats(a[row : row + 1, :n], b[row : row + 1, :n], -0.5, 0.5, "absolute", paired=False)
            t_near = min(abs(st.estimate[0] - 0.5), abs(st.estimate[0] + 0.5)) / st.se[0]
            assert near_margin(st)[0] > stats.norm.sf(0.5)
            assert t_near < 0.52  # within 0.5 SE of a margin point (t quantiles, df ~ 100)
        if shift == 0.5:
            assert futile.mean() > 0.3  # on the margin most sequences stop early
            assert res.episodes.mean() < 0.8 * full.episodes.mean()


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
    """The benchmarked design, a small calibration: 10 looks, budget for 90 % power at a true 0 (d = 0.5)."""
    n_max = design_max_episodes(0.5, looks=10)
    assert 100 <= n_max <= 112
    sizes = [round(n_max * k / 10) for k in range(1, 11)]
    design = SequentialDesign.build([s / n_max for s in sizes], first_look=first_deciding_look(sizes))
    sims = 2000
    se = (0.05 * 0.95 / sims) ** 0.5
    rng = np.random.default_rng(2027)
    at_margin = simulate(design, rng.normal(size=(sims, n_max)), rng.normal(size=(sims, n_max)) + 0.5, sizes,
                         "absolute", 0.5, paired=False)
    assert at_margin.rate(LookDecision.EQUIVALENT) <= 0.05 + 3 * se
    assert at_margin.rate(LookDecision.DIFFERENT) <= 0.025 + 3 * (0.025 * 0.975 / sims) ** 0.5
    at_zero = simulate(design, rng.normal(size=(sims, n_max)), rng.normal(size=(sims, n_max)), sizes, "absolute", 0.5,
                       paired=False)
    assert at_zero.rate(LookDecision.EQUIVALENT) > 0.87
    assert at_zero.episodes.mean() < 0.8 * 87  # the fixed-N TOST needs 87 per side for 90 %
    far = simulate(design, rng.normal(size=(sims, n_max)), rng.normal(size=(sims, n_max)) + 1.0, sizes, "absolute",
                   0.5, paired=False)
    assert far.rate(LookDecision.DIFFERENT) > 0.9
    assert far.episodes.mean() < 0.7 * 97  # the fixed-N "beyond the margin" test needs 97 for 93.5 %


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
            if design.equivalence_z[k] <= design.difference_z[k]:  # the equivalence boundary is the inner one
                assert elo >= lo
                assert ehi <= hi
            else:  # no equivalence stop this early: no equivalence interval either
                assert (elo, ehi) == (-math.inf, math.inf)
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
