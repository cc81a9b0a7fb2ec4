"""Group-sequential TOST (evaltk.stats.sequential): per-look statistics, decisions, a small Monte-Carlo check."""

from __future__ import annotations

import numpy as np
import pytest
from statsmodels.stats.weightstats import ttost_ind, ttost_paired

from evaltk.stats.equivalence import tost_standardized
from evaltk.stats.sequential import (
    Outcome,
    SequentialDesign,
    design_max_episodes,
    information_fraction,
    look_stats,
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
    # each side's drift theta = 3.2235 for K = 5 (OBF alpha 0.05, Pocock beta 0.1 per side, binding):
    # N = 2 (theta / 0.5)^2 = 83.1 -> 84 per side (the fixed-N TOST needs 70)
    design = SequentialDesign.build([0.2, 0.4, 0.6, 0.8, 1.0])
    assert design.drift == pytest.approx(3.2235, abs=1e-3)
    assert design.futility_z[-1] == pytest.approx(design.equivalence_z[-1], abs=1e-5)
    assert design.equivalence_z[-1] < 1.6449  # binding futility lowers the last efficacy boundary
    n = design_max_episodes(0.5, looks=5)
    assert n == 84
    assert design_max_episodes(0.5, looks=5, rho=0.75) == pytest.approx(n / 4, abs=1)
    assert information_fraction(50, 50, 100, 100, paired=False) == pytest.approx(0.5)
    assert information_fraction(100, 25, 100, 100, paired=False) == pytest.approx(0.4)


def test_sequence_stops_at_first_decision_and_names_it() -> None:
    rng = np.random.default_rng(1)
    a, b = rng.normal(0, 1, 100), rng.normal(0, 1, 100)
    design = SequentialDesign.build([0.2, 0.4, 0.6, 0.8, 1.0])
    looks = run_sequence(design, [(a[:n], b[:n]) for n in (20, 40, 60, 80, 100)], "sd", 0.5, paired=False)
    assert looks[-1].outcome is not Outcome.CONTINUE
    assert all(look.outcome is Outcome.CONTINUE for look in looks[:-1])
    far = run_sequence(design, [(a[:n], b[:n] + 2.0) for n in (20, 40, 60, 80, 100)], "sd", 0.5, paired=False)
    assert far[0].outcome is Outcome.DIFFERENT  # 2 SD beyond equality: shown beyond the 0.5 SD margin at once
    mid = run_sequence(design, [(a[:n], b[:n] + 1.0) for n in (20, 40, 60, 80, 100)], "sd", 0.5, paired=False)
    assert len(mid) <= 2
    assert mid[-1].outcome in (Outcome.FUTILE, Outcome.DIFFERENT)


def test_monte_carlo_type_one_error_and_power_small() -> None:
    n_max, sims = 95, 600
    sizes = [19, 38, 57, 76, 95]
    design = SequentialDesign.build([s / n_max for s in sizes])
    rng = np.random.default_rng(2026)
    a = rng.normal(size=(sims, n_max))
    at_margin = simulate(design, a, rng.normal(size=(sims, n_max)) + 0.5, sizes, "absolute", 0.5, paired=False)
    se = (0.05 * 0.95 / sims) ** 0.5
    assert at_margin.rate(Outcome.EQUIVALENT) <= 0.05 + 2 * se
    assert at_margin.episodes.mean() < 60  # futility stops early at the margin
    at_zero = simulate(design, a, rng.normal(size=(sims, n_max)), sizes, "absolute", 0.5, paired=False)
    assert at_zero.rate(Outcome.EQUIVALENT) > 0.7
    assert at_zero.rate(Outcome.DIFFERENT) == 0.0


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


def test_futility_stops_when_the_weaker_side_is_at_or_below_its_boundary() -> None:
    design = SequentialDesign.build([0.25, 0.5, 0.75, 1.0])
    rng = np.random.default_rng(3)
    a, b = rng.normal(size=100), rng.normal(size=100) + 0.6  # beyond the 0.5 margin: equivalence hopeless
    looks = run_sequence(design, [(a[:n], b[:n]) for n in (25, 50, 75, 100)], "absolute", 0.5, paired=False)
    stop = looks[-1]
    assert stop.outcome is Outcome.FUTILE  # at look 1: estimate 0.78, the weaker side's Z = -0.83 <= -0.20
    assert stop.z0 <= stop.futility_z
    assert stop.p_tost >= design.futility_alpha(stop.k - 1)
    kept = run_sequence(design, [(a[:n], b[:n] - 0.6) for n in (25, 50, 75, 100)], "absolute", 0.5, paired=False)
    for look in kept[:-1]:
        assert look.z0 > look.futility_z  # continued: the weaker side stayed above its futility boundary


def test_monte_carlo_ten_looks_level_and_power() -> None:
    # the benchmarked design: 10 looks, budget planned for beta 0.16 (94 per side at d = 0.5)
    n_max = design_max_episodes(0.5, looks=10, beta=0.16)
    assert n_max == 94
    sizes = [round(n_max * k / 10) for k in range(2, 11)]  # the first look (9) is below 10 episodes
    design = SequentialDesign.build([s / n_max for s in sizes], beta=0.16)
    sims = 2000
    rng = np.random.default_rng(2027)
    at_margin = simulate(design, rng.normal(size=(sims, n_max)), rng.normal(size=(sims, n_max)) + 0.5, sizes,
                         "absolute", 0.5, paired=False)
    assert at_margin.rate(Outcome.EQUIVALENT) <= 0.05 + 3 * (0.05 * 0.95 / sims) ** 0.5
    assert at_margin.episodes.mean() < 45  # benchmark at 10,000 sequences: 40.3
    at_zero = simulate(design, rng.normal(size=(sims, n_max)), rng.normal(size=(sims, n_max)), sizes, "absolute", 0.5,
                       paired=False)
    assert at_zero.rate(Outcome.EQUIVALENT) > 0.8  # benchmark: 0.842; the fixed-N TOST with 70: 0.80
    assert at_zero.episodes.mean() < 68
