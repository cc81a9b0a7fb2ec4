"""Group-sequential boundaries (evaltk.stats.boundaries) against published values and exact properties."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import optimize, stats

from evaltk.stats.boundaries import (
    DIFFERENCE_EXPONENT,
    EQUIVALENCE_EXPONENT,
    EQUIVALENCE_START,
    NEVER_Z,
    crossing_probability,
    futility_bounds,
    inner_outer_bounds,
    one_sided_bounds,
    procedure_outcomes,
    procedure_rates,
    spent,
    spent_equivalence,
)
from evaltk.stats.checks import StatsInputError


def classical_constant(looks: int, alpha: float, design: str) -> float:
    """Return the classical two-sided constant c by the recursion (Pocock: c; OBF: c sqrt(K / k))."""
    t = np.arange(1, looks + 1) / looks
    shape = np.ones(looks) if design == "pocock" else np.sqrt(looks / np.arange(1, looks + 1))

    def level(c: float) -> float:
        up, lo = crossing_probability(t, c * shape, lower=-c * shape)
        return up + lo

    return float(optimize.brentq(lambda c: level(c) - alpha, 0.5, 10.0, xtol=1e-10))

# Jennison & Turnbull (2000), Tables 2.1 and 2.3: two-sided alpha = 0.05, equally spaced looks.
POCOCK = {2: 2.178, 3: 2.289, 4: 2.361, 5: 2.413}
OBRIEN_FLEMING = {2: 1.977, 3: 2.004, 4: 2.024, 5: 2.040}


@pytest.mark.parametrize("looks", [2, 3, 4, 5])
def test_classical_constants_match_published_tables(looks: int) -> None:
    assert classical_constant(looks, 0.05, "pocock") == pytest.approx(POCOCK[looks], abs=6e-4)
    assert classical_constant(looks, 0.05, "obrien-fleming") == pytest.approx(OBRIEN_FLEMING[looks], abs=6e-4)


def test_one_look_is_the_fixed_sample_test() -> None:
    assert one_sided_bounds([1.0], 0.05, "pocock")[0] == pytest.approx(stats.norm.isf(0.05), abs=1e-7)
    assert one_sided_bounds([1.0], 0.025, "obrien-fleming")[0] == pytest.approx(stats.norm.isf(0.025), abs=1e-7)


def test_first_boundary_spends_exactly_the_spending_function() -> None:
    # At the first look the crossing probability is a plain normal tail, so b_1 is known in closed form.
    t = np.array([0.2, 0.4, 0.6, 0.8, 1.0])
    b = one_sided_bounds(t, 0.025, "obrien-fleming")
    assert b[0] == pytest.approx(stats.norm.isf(spent(0.2, 0.025, "obrien-fleming")), abs=1e-6)  # 4.877
    expected = 2 * stats.norm.sf(stats.norm.isf(0.025) / math.sqrt(0.2))
    assert spent(0.2, 0.05, "obrien-fleming") == pytest.approx(expected)
    assert spent(0.2, 0.05, "pocock") == pytest.approx(0.05 * math.log(1 + (math.e - 1) * 0.2))


@pytest.mark.parametrize("shape", ["obrien-fleming", "pocock"])
def test_total_crossing_probability_is_alpha(shape: str) -> None:
    t = [0.15, 0.4, 0.7, 1.0]  # unequal looks
    b = one_sided_bounds(t, 0.05, shape)
    up, _ = crossing_probability(t, b)
    assert up == pytest.approx(0.05, abs=2e-6)
    assert np.all(np.isfinite(b))


def test_two_look_crossing_agrees_with_scipy_multivariate_normal() -> None:
    t = np.array([0.5, 1.0])
    b = one_sided_bounds(t, 0.05, "pocock")
    corr = math.sqrt(t[0] / t[1])
    cdf = stats.multivariate_normal(mean=[0, 0], cov=[[1, corr], [corr, 1]]).cdf(b)
    assert 1.0 - cdf == pytest.approx(0.05, abs=1e-4)
    # Under a drift the recursion's power also matches: Z_k ~ N(theta sqrt(t_k), 1).
    theta = 2.5
    mvn = stats.multivariate_normal(mean=theta * np.sqrt(t), cov=[[1, corr], [corr, 1]])
    up, _ = crossing_probability(t, b, drift=theta)
    assert up == pytest.approx(1.0 - mvn.cdf(b), abs=1e-4)


def test_boundaries_repeat_exactly() -> None:
    t = [0.2, 0.5, 1.0]
    assert np.array_equal(one_sided_bounds(t, 0.05, "pocock"), one_sided_bounds(t, 0.05, "pocock"))


@pytest.mark.parametrize("bad", [[], [0.5, 0.4], [0.0, 1.0], [0.5, 1.5]])
def test_bad_fractions_are_rejected(bad: list[float]) -> None:
    with pytest.raises(StatsInputError, match="fractions"):
        one_sided_bounds(bad, 0.05, "pocock")


def test_unknown_spending_named() -> None:
    with pytest.raises(StatsInputError, match="spending must be one of"):
        spent(0.5, 0.05, "haybittle")


def test_linear_spending_is_proportional() -> None:
    assert spent(0.3, 0.05, "linear") == pytest.approx(0.015)
    assert spent(1.0, 0.05, "linear") == 0.05


def test_inner_outer_bounds_spend_each_level_for_the_rule_that_runs() -> None:
    t = np.arange(1, 11) / 10
    inner, outer = inner_outer_bounds(t, 0.05, 0.025, "obrien-fleming")
    # outer: the whole alpha/2 with no other stopping (an inner crossing of one half does not stop the rule)
    _, down_alone = crossing_probability(t, np.full(t.size, np.inf), lower=-outer)
    assert down_alone == pytest.approx(0.025, abs=1e-6)
    assert outer == pytest.approx(one_sided_bounds(t, 0.025, "obrien-fleming"), abs=1e-12)
    # inner: alpha on the paths still inside (-outer, inner)
    up, _ = crossing_probability(t, inner, lower=-outer)
    assert up == pytest.approx(0.05, abs=1e-6)
    assert np.all(np.diff(inner) < 0)
    assert np.all(np.diff(outer) < 0)
    one_in, one_out = inner_outer_bounds([1.0], 0.05, 0.025, "pocock")
    assert one_in[0] == pytest.approx(stats.norm.isf(0.05), abs=1e-7)
    assert one_out[0] == pytest.approx(stats.norm.isf(0.025), abs=1e-7)


def test_inner_outer_two_looks_agree_with_scipy_multivariate_normal() -> None:
    t = np.array([0.5, 1.0])
    inner, outer = inner_outer_bounds(t, 0.05, 0.025, "pocock")
    corr = math.sqrt(t[0] / t[1])
    mvn = stats.multivariate_normal(mean=[0, 0], cov=[[1, corr], [corr, 1]])
    first_up = stats.norm.sf(inner[0])
    assert first_up == pytest.approx(0.05 * math.log(1 + (math.e - 1) * 0.5), abs=1e-7)  # Pocock spending at 0.5
    # P(-outer_1 < Z_1 < inner_1, Z_2 >= inner_2) by inclusion-exclusion on the bivariate normal CDF
    def box(lo1: float, hi1: float, hi2: float) -> float:
        return float(mvn.cdf([hi1, hi2]) - mvn.cdf([lo1, hi2]))

    second_up = box(-outer[0], inner[0], math.inf) - box(-outer[0], inner[0], inner[1])
    assert first_up + second_up == pytest.approx(0.05, abs=1e-4)
    # the outer boundary alone: P(Z_1 <= -outer_1 or Z_2 <= -outer_2) = 1 - P(Z_1 < outer_1, Z_2 < outer_2)
    assert 1.0 - float(mvn.cdf(outer)) == pytest.approx(0.025, abs=1e-4)


@pytest.mark.parametrize("margin_se", [1.5, 2.9, 5.0])
def test_the_rule_that_runs_holds_both_levels(margin_se: float) -> None:
    """procedure_rates: "equivalent" needs both halves, "different" either; on the margin <= alpha and ~ alpha/2."""
    t = np.array([14, 22, 29, 36, 43, 50, 58, 65, 72]) / 72
    inner, outer = inner_outer_bounds(t, 0.05, 0.025, "obrien-fleming")
    eq, diff = procedure_rates(t, inner, outer, margin_se, 0.0)  # true quantity on the upper margin point
    assert eq <= 0.05 + 1e-6
    assert 0.0249 <= diff <= 0.025 + 1e-4  # the lower point adds Phi(-d - 2 margin_se sqrt(t)) at most
    eq_mid, diff_mid = procedure_rates(t, inner, outer, margin_se, margin_se)  # at the centre
    assert diff_mid <= 2 * 0.025 * stats.norm.sf(margin_se) + 1e-9
    assert eq_mid >= eq


def test_procedure_rates_agree_with_a_direct_simulation_of_the_rule() -> None:
    """The recursion over the rule's two-interval continuation region against 200,000 simulated Brownian paths."""
    t = np.array([0.25, 0.5, 0.75, 1.0])
    inner, outer = inner_outer_bounds(t, 0.05, 0.025, "pocock")
    margin_se = 1.8
    rng = np.random.default_rng(3)
    steps = rng.standard_normal((200_000, t.size)) * np.sqrt(np.diff(t, prepend=0.0))
    z = np.cumsum(steps, axis=1) / np.sqrt(t)  # upper half's Z at drift 0 (true quantity on the margin point)
    lower_half = 2 * margin_se * np.sqrt(t) - z
    eq = (z >= inner) & (lower_half >= inner)
    diff = (z <= -outer) | (lower_half <= -outer)
    stop = eq | diff
    first = np.where(stop.any(axis=1), stop.argmax(axis=1), -1)
    rows = np.flatnonzero(first >= 0)
    sim_eq = float(np.mean(eq[rows, first[rows]])) * rows.size / z.shape[0]
    sim_diff = float(np.mean(diff[rows, first[rows]])) * rows.size / z.shape[0]
    p_eq, p_diff = procedure_rates(t, inner, outer, margin_se, 0.0)
    assert sim_eq == pytest.approx(p_eq, abs=4 * math.sqrt(p_eq / 200_000) + 1e-4)
    assert sim_diff == pytest.approx(p_diff, abs=4 * math.sqrt(p_diff / 200_000) + 1e-4)


def test_delayed_equivalence_spending_by_hand() -> None:
    shape = "delayed-equivalence"
    assert (EQUIVALENCE_START, EQUIVALENCE_EXPONENT, DIFFERENCE_EXPONENT) == (1 / 3, 0.4, 2.0)
    assert spent(0.5, 0.025, shape) == pytest.approx(0.025 * 0.25)  # "different": the power family t^2
    assert spent(0.0, 0.025, shape) == 0.0
    assert spent(1.0, 0.025, shape) == 0.025
    assert spent_equivalence(0.3, 0.05, shape) == 0.0  # nothing before a third of the budget
    assert spent_equivalence(1 / 3, 0.05, shape) == 0.0
    assert spent_equivalence(2 / 3, 0.05, shape) == pytest.approx(0.05 * 0.5**0.4)  # half-way through the rest
    assert spent_equivalence(1.0, 0.05, shape) == 0.05
    for classic in ("obrien-fleming", "pocock", "linear"):  # one shape for both boundaries
        assert spent_equivalence(0.3, 0.05, classic) == spent(0.3, 0.05, classic)


def test_delayed_equivalence_bounds_spend_each_level() -> None:
    t = np.arange(1, 11) / 10
    inner, outer = inner_outer_bounds(t, 0.05, 0.025, "delayed-equivalence")
    assert np.all(inner[:3] == NEVER_Z)
    assert outer[0] == pytest.approx(stats.norm.isf(0.025 * 0.01), abs=1e-6)  # first look: a plain normal tail
    _, down = crossing_probability(t, np.full(t.size, np.inf), lower=-outer)
    assert down == pytest.approx(0.025, abs=1e-6)
    up, _ = crossing_probability(t, inner, lower=-outer)
    assert up == pytest.approx(0.05, abs=1e-6)
    # the first look that spends on equivalence (t = 0.4) spends f(0.4) on the paths still inside
    up_04, _ = crossing_probability(t[:4], inner[:4], lower=-outer[:4])
    assert up_04 == pytest.approx(spent_equivalence(0.4, 0.05, "delayed-equivalence"), abs=1e-7)
    one_in, one_out = inner_outer_bounds([1.0], 0.05, 0.025, "delayed-equivalence")  # one look: the fixed-N tests
    assert one_in[0] == pytest.approx(stats.norm.isf(0.05), abs=1e-7)
    assert one_out[0] == pytest.approx(stats.norm.isf(0.025), abs=1e-7)


def test_first_look_moves_the_early_level_to_the_first_look_that_may_stop() -> None:
    t = [0.1, 0.2, 0.5, 1.0]
    b = one_sided_bounds(t, 0.025, "pocock", first_look=2)
    assert b[0] == b[1] == NEVER_Z
    assert b[2] == pytest.approx(stats.norm.isf(spent(0.5, 0.025, "pocock")), abs=1e-6)
    up, _ = crossing_probability(t, b)
    assert up == pytest.approx(0.025, abs=1e-6)
    only_last = one_sided_bounds([0.5, 1.0], 0.025, "pocock", first_look=5)  # the last look always may stop
    assert only_last[0] == NEVER_Z
    assert only_last[1] == pytest.approx(stats.norm.isf(0.025), abs=1e-7)


def test_futility_bounds() -> None:
    t = [0.2, 0.4, 0.5, 0.8, 1.0]
    assert futility_bounds(t, "delayed-equivalence").tolist() == [0.0, 0.0, 0.5, 0.5, 0.0]
    assert futility_bounds([0.5, 0.9], "delayed-equivalence").tolist() == [0.5, 0.0]  # the last look never
    assert futility_bounds(t, "obrien-fleming").tolist() == [0.0] * 5


def test_procedure_outcomes_with_futility_against_a_direct_simulation() -> None:
    """Non-binding futility: the rates only fall; the recursion's rates and expected fraction match 200,000 paths."""
    t = np.array([0.25, 0.5, 0.75, 1.0])
    inner, outer = inner_outer_bounds(t, 0.05, 0.025, "delayed-equivalence")
    futility = np.array([0.0, 0.5, 0.5, 0.0])
    rng = np.random.default_rng(9)
    steps = rng.standard_normal((200_000, t.size)) * np.sqrt(np.diff(t, prepend=0.0))
    for margin_se, drift in ((3.5, 3.5), (3.5, 0.0), (3.5, -3.5)):  # a true 0, the margin point, twice the margin
        with_stop = procedure_outcomes(t, inner, outer, margin_se, drift, futility)
        without = procedure_outcomes(t, inner, outer, margin_se, drift)
        assert with_stop.equivalent <= without.equivalent + 1e-9
        assert with_stop.different <= without.different + 1e-9
        assert without.futility == 0.0
        assert (with_stop.equivalent, with_stop.different) == pytest.approx(
            procedure_rates(t, inner, outer, margin_se, drift, futility), abs=1e-12)
        z = (np.cumsum(steps, axis=1) + drift * t) / np.sqrt(t)
        lower_half = 2 * margin_se * np.sqrt(t) - z
        eq = (z >= inner) & (lower_half >= inner)
        diff = (z <= -outer) | (lower_half <= -outer)
        fut = ~eq & ~diff & ((np.abs(z) < futility) | (np.abs(lower_half) < futility))
        stop = eq | diff | fut
        stop[:, -1] = True
        first = stop.argmax(axis=1)
        rows = np.arange(z.shape[0])
        for value, hits in ((with_stop.equivalent, eq), (with_stop.different, diff), (with_stop.futility, fut)):
            sim = float(np.mean(hits[rows, first]))
            assert sim == pytest.approx(value, abs=4 * math.sqrt(max(value, 1e-4) / 200_000) + 2e-4)
        assert float(np.mean(t[first])) == pytest.approx(with_stop.expected_fraction, abs=2e-3)
    one = procedure_outcomes([1.0], [stats.norm.isf(0.05)], [stats.norm.isf(0.025)], 3.0, 3.0)
    assert one.expected_fraction == 1.0
    assert one.equivalent == pytest.approx(1 - 2 * stats.norm.sf(3.0 - stats.norm.isf(0.05)), abs=1e-6)
