"""Group-sequential boundaries (evaltk.stats.boundaries) against published values and exact properties."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from evaltk.stats.boundaries import (
    classical_constant,
    crossing_probability,
    efficacy_futility_bounds,
    inner_outer_bounds,
    one_sided_bounds,
    spent,
    two_sided_bounds,
)
from evaltk.stats.validate import StatsInputError

# Jennison & Turnbull (2000), Tables 2.1 and 2.3: two-sided alpha = 0.05, equally spaced looks.
POCOCK = {2: 2.178, 3: 2.289, 4: 2.361, 5: 2.413}
OBRIEN_FLEMING = {2: 1.977, 3: 2.004, 4: 2.024, 5: 2.040}


@pytest.mark.parametrize("looks", [2, 3, 4, 5])
def test_classical_constants_match_published_tables(looks: int) -> None:
    assert classical_constant(looks, 0.05, "pocock") == pytest.approx(POCOCK[looks], abs=6e-4)
    assert classical_constant(looks, 0.05, "obrien-fleming") == pytest.approx(OBRIEN_FLEMING[looks], abs=6e-4)


def test_one_look_is_the_fixed_sample_test() -> None:
    assert one_sided_bounds([1.0], 0.05, "pocock")[0] == pytest.approx(stats.norm.isf(0.05), abs=1e-7)
    assert two_sided_bounds([1.0], 0.05, "obrien-fleming")[0] == pytest.approx(stats.norm.isf(0.025), abs=1e-7)


def test_first_boundary_spends_exactly_the_spending_function() -> None:
    # At the first look the crossing probability is a plain normal tail, so b_1 is known in closed form.
    t = np.array([0.2, 0.4, 0.6, 0.8, 1.0])
    b = two_sided_bounds(t, 0.05, "obrien-fleming")
    assert b[0] == pytest.approx(stats.norm.isf(0.025) / math.sqrt(0.2), abs=1e-6)  # 4.383
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


def test_efficacy_futility_single_look_is_the_fixed_design() -> None:
    upper, lower, theta = efficacy_futility_bounds([1.0], 0.05, 0.1, "obrien-fleming", "linear")
    assert upper[0] == pytest.approx(stats.norm.ppf(0.95), abs=1e-6)
    assert lower[0] == pytest.approx(upper[0], abs=1e-5)
    assert theta == pytest.approx(stats.norm.ppf(0.95) + stats.norm.ppf(0.9), abs=1e-5)


@pytest.mark.parametrize("binding", [True, False])
def test_efficacy_futility_spends_alpha_under_null_and_beta_under_alternative(binding: bool) -> None:
    t = np.arange(1, 6) / 5
    upper, lower, theta = efficacy_futility_bounds(t, 0.05, 0.1, "obrien-fleming", "linear", binding=binding)
    assert np.all(lower <= upper)
    assert lower[-1] == pytest.approx(upper[-1], abs=1e-5)  # the last look decides
    level, _ = crossing_probability(t, upper, lower=lower if binding else None)
    assert level == pytest.approx(0.05, abs=1e-5)
    power, miss = crossing_probability(t, upper, lower=lower, drift=theta)
    assert miss == pytest.approx(0.1, abs=1e-5)
    assert power == pytest.approx(0.9, abs=1e-4)
    if binding:
        assert np.all(upper[1:] <= one_sided_bounds(t, 0.05, "obrien-fleming")[1:] + 1e-9)
        assert theta > stats.norm.ppf(0.95) + stats.norm.ppf(0.9)  # inflation over the fixed design
    else:
        assert upper == pytest.approx(one_sided_bounds(t, 0.05, "obrien-fleming"), abs=1e-6)


def test_efficacy_futility_rejects_bad_levels() -> None:
    with pytest.raises(StatsInputError, match="alpha and beta"):
        efficacy_futility_bounds([0.5, 1.0], 0.05, 0.7, "pocock", "pocock")


def test_inner_outer_bounds_spend_each_level_jointly() -> None:
    t = np.arange(1, 11) / 10
    inner, outer = inner_outer_bounds(t, 0.05, 0.025, "obrien-fleming")
    up, down = crossing_probability(t, inner, lower=-outer)
    assert up == pytest.approx(0.05, abs=1e-6)
    assert down == pytest.approx(0.025, abs=1e-6)
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
