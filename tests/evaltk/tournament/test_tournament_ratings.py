"""Pure statistics of evaltk.tournament.ratings: hand-computed cases, scipy/statsmodels agreement, calibration."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import optimize, stats
from statsmodels.stats.proportion import proportion_confint

from evaltk.tournament import ratings


@pytest.mark.parametrize(("k", "n"), [(0, 20), (3, 20), (10, 20), (20, 20), (1, 1), (17, 93)])
def test_wilson_matches_statsmodels(k: int, n: int) -> None:
    lo, hi = ratings.wilson_interval(k, n)
    ref_lo, ref_hi = proportion_confint(k, n, alpha=0.05, method="wilson")
    assert lo == pytest.approx(ref_lo, abs=1e-12)
    assert hi == pytest.approx(ref_hi, abs=1e-12)


def test_wilson_rejects_bad_counts() -> None:
    with pytest.raises(ValueError, match="successes"):
        ratings.wilson_interval(5, 3)
    assert ratings.wilson_interval(0, 0) == (0.0, 1.0)


def test_elo_estimate_hand_computed() -> None:
    # W=6, D=2, L=2: score 0.7; per-game variance = (6*.09 + 2*.04 + 2*.49)/10 = 0.16.
    est = ratings.elo_estimate([2, 2, 6])
    assert est.score == pytest.approx(0.7)
    assert est.elo == pytest.approx(-400 * math.log10(1 / 0.7 - 1))
    se = math.sqrt(0.16 / 10)
    z = stats.norm.ppf(0.975)
    assert est.ci_low == pytest.approx(-400 * math.log10(1 / (0.7 - z * se) - 1))
    assert est.ci_high == pytest.approx(-400 * math.log10(1 / (0.7 + z * se) - 1))
    assert est.los == pytest.approx(stats.norm.cdf(4 / math.sqrt(8)))
    assert est.n == 10


@given(st.floats(min_value=-1500, max_value=1500))
def test_score_elo_roundtrip(elo: float) -> None:
    assert ratings.elo_from_score(ratings.score_from_elo(elo)) == pytest.approx(elo, abs=1e-6)


def test_constrained_mle_matches_scipy_kl_minimisation() -> None:
    p = np.array([0.2, 0.3, 0.5])
    a = np.array(ratings.TRINOMIAL_SCORES)
    s = 0.55
    q = ratings._constrained_mle(p, a, s)

    def kl(x: np.ndarray) -> float:
        return float(-np.sum(p * np.log(x)))

    cons = [{"type": "eq", "fun": lambda x: x.sum() - 1}, {"type": "eq", "fun": lambda x: x @ a - s}]
    ref = optimize.minimize(kl, np.full(3, 1 / 3), constraints=cons, bounds=[(1e-9, 1)] * 3, method="SLSQP",
                            options={"ftol": 1e-14, "maxiter": 500})
    assert q @ a == pytest.approx(s, abs=1e-12)
    np.testing.assert_allclose(q, ref.x, atol=1e-6)


def test_llr_zero_for_equal_hypotheses_and_signs() -> None:
    assert ratings.llr([3, 4, 5], 20.0, 20.0) == pytest.approx(0.0, abs=1e-12)
    assert ratings.llr([1, 2, 30], 0.0, 50.0) > 0
    assert ratings.llr([30, 2, 1], 0.0, 50.0) < 0
    assert ratings.llr([0, 0, 0], 0.0, 50.0) == 0.0


def test_llr_close_to_normal_approximation_for_small_elo_gaps() -> None:
    counts = [400, 300, 460]
    exact = ratings.llr(counts, 0.0, 10.0)
    approx = ratings.llr_normal_approx(counts, 0.0, 10.0)
    assert exact == pytest.approx(approx, rel=0.02)
    penta = [30, 120, 200, 140, 40]
    assert ratings.llr(penta, -5.0, 5.0, ratings.PENTANOMIAL_SCORES) == pytest.approx(
        ratings.llr_normal_approx(penta, -5.0, 5.0, ratings.PENTANOMIAL_SCORES), rel=0.02)


def test_sprt_bounds_and_decisions() -> None:
    res = ratings.sprt([0, 0, 0], elo0=0, elo1=50)
    assert res.lower == pytest.approx(math.log(0.05 / 0.95))
    assert res.upper == pytest.approx(math.log(0.95 / 0.05))
    assert res.decision == "continue"
    assert ratings.sprt([0, 2, 40], elo0=0, elo1=50).decision == "H1"
    assert ratings.sprt([40, 2, 0], elo0=0, elo1=50).decision == "H0"
    assert ratings.sprt([0, 0, 0, 0, 20], elo0=0, elo1=50).model == "pentanomial"
    with pytest.raises(ValueError, match="elo0 < elo1"):
        ratings.sprt([1, 1, 1], elo0=5, elo1=5)
    with pytest.raises(ValueError, match="counts"):
        ratings.sprt([1, 1], elo0=0, elo1=5)


def test_sprt_false_positive_rate_near_alpha() -> None:
    """Under H0 (true Elo = elo0) the test should accept H1 at most about alpha of the time."""
    rng = np.random.default_rng(1234)
    elo0, elo1, alpha = 0.0, 100.0, 0.05
    p_draw = 0.2
    p_win = (ratings.score_from_elo(elo0) - p_draw / 2)
    probs = [1 - p_win - p_draw, p_draw, p_win]
    accepted_h1 = 0
    runs = 200
    for _ in range(runs):
        counts = np.zeros(3)
        for _batch in range(200):
            counts += rng.multinomial(5, probs)
            decision = ratings.sprt(counts.tolist(), elo0=elo0, elo1=elo1, alpha=alpha, beta=alpha).decision
            if decision != "continue":
                accepted_h1 += decision == "H1"
                break
    assert accepted_h1 / runs <= 0.10


def test_pentanomial_counts() -> None:
    assert ratings.pentanomial([0, 0.5, 1, 1, 2, 1.5]) == [1, 1, 2, 1, 1]
    with pytest.raises(ValueError, match="pair score"):
        ratings.pentanomial([0.3])


def test_bradley_terry_two_players_is_the_logit() -> None:
    comps = np.array([[0, 1, 1.0]] * 7 + [[0, 1, 0.0]] * 3)
    r = ratings.bradley_terry(comps, 2, prior_sd=None)
    assert r[0] - r[1] == pytest.approx(ratings.ELO_PER_NATURAL * math.log(7 / 3), rel=1e-5)
    assert r.sum() == pytest.approx(0.0, abs=1e-9)


def test_bradley_terry_matches_statsmodels_logit() -> None:
    import statsmodels.api as sm

    rng = np.random.default_rng(7)
    true = np.array([0.0, 0.7, -0.4, 1.2])
    rows = []
    for _ in range(600):
        i, j = rng.choice(4, 2, replace=False)
        rows.append([i, j, float(rng.random() < 1 / (1 + math.exp(-(true[i] - true[j]))))])
    comps = np.array(rows)
    r = ratings.bradley_terry(comps, 4, prior_sd=None) / ratings.ELO_PER_NATURAL
    design = np.zeros((len(rows), 3))  # player 0 is the reference (rating 0)
    for k, (i, j, _) in enumerate(rows):
        if int(i) > 0:
            design[k, int(i) - 1] += 1
        if int(j) > 0:
            design[k, int(j) - 1] -= 1
    fit = sm.Logit(comps[:, 2], design).fit(disp=0)
    np.testing.assert_allclose(r[1:] - r[0], fit.params, atol=1e-4)


def test_bradley_terry_bootstrap_repeatable_and_covers_estimate() -> None:
    groups = [np.array([[0, 1, 1.0], [0, 2, 0.5], [1, 2, 0.0]]), np.array([[0, 1, 0.0], [0, 2, 1.0], [1, 2, 1.0]]),
              np.array([[0, 1, 1.0], [0, 2, 1.0], [1, 2, 0.5]])] * 4
    a = ratings.bradley_terry_bootstrap(groups, 3, np.random.default_rng(5), num_resamples=50)
    b = ratings.bradley_terry_bootstrap(groups, 3, np.random.default_rng(5), num_resamples=50)
    for x, y in zip(a, b, strict=True):
        np.testing.assert_array_equal(x, y)
    r, lo, hi = a
    assert np.all(lo <= r + 1e-9)
    assert np.all(r <= hi + 1e-9)
    assert r[0] == max(r)


counts3 = st.tuples(*[st.integers(min_value=0, max_value=60)] * 3)


@given(counts3)
def test_wilson_contains_the_rate(counts: tuple[int, int, int]) -> None:
    k, n = counts[0], sum(counts)
    lo, hi = ratings.wilson_interval(k, n)
    assert 0.0 <= lo <= hi <= 1.0
    if n:
        assert lo - 1e-12 <= k / n <= hi + 1e-12


@given(counts3, st.floats(min_value=-200, max_value=200), st.floats(min_value=1, max_value=200))
def test_llr_is_antisymmetric_in_the_hypotheses(counts: tuple[int, int, int], elo0: float, gap: float) -> None:
    elo1 = elo0 + gap
    assert ratings.llr(counts, elo0, elo1) == pytest.approx(-ratings.llr(counts, elo1, elo0), abs=1e-7)


@given(counts3)
def test_elo_interval_brackets_the_estimate(counts: tuple[int, int, int]) -> None:
    est = ratings.elo_estimate(counts)
    assert est.ci_low <= est.elo <= est.ci_high
    assert 0.0 <= est.los <= 1.0
