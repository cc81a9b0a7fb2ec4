"""The transfer verdict (evaltk.verdict): must-show cases, decision-rule invariants, degenerate data."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evaltk.errors import EvaltkError
from evaltk.verdict import CompareError, Verdict, decide
from tests.evaltk.samples import compare_arrays

KINDS_AND_MARGINS = [("absolute", 1.0), ("relative", 0.1), ("sd", 0.5), ("prob", 0.1)]


def _pair(seed: int, n: int, shift_sd: float) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.normal(10.0, 2.0, n), rng.normal(10.0 + 2.0 * shift_sd, 2.0, n)


def test_identical_distributions_n300_half_sd_margin_is_equivalent() -> None:
    a, b = _pair(0, 300, 0.0)
    result = compare_arrays(a, b, 0.5, "sd", bootstrap_seed=1, resamples=999)
    assert result.verdict is Verdict.EQUIVALENT
    assert result.recommendation is None
    d = result.to_dict()
    assert d["n_a"] == d["n_b"] == 300
    assert d["margin"] == 0.5
    assert -0.5 < d["ci_tost"][0] < d["ci_tost"][1] < 0.5


def test_one_sd_shift_is_different() -> None:
    a, b = _pair(1, 300, 1.0)
    for kind, margin in KINDS_AND_MARGINS:
        assert decide(a, b, margin, kind).verdict is Verdict.DIFFERENT, kind


def test_n6_is_inconclusive_with_episode_recommendation() -> None:
    a, b = _pair(2, 6, 0.0)
    result = compare_arrays(a, b, 0.5, "sd", bootstrap_seed=0, resamples=999)
    assert result.verdict is Verdict.INCONCLUSIVE
    rec = result.recommendation
    assert rec is not None
    assert rec.target == "equivalence"
    assert rec.episodes_per_side == rec.equivalence_if_no_difference
    assert 60 <= rec.episodes_per_side <= 80  # 17.1 / 0.5^2 ~ 69 per side (t version ~70)
    assert rec.more_a == rec.episodes_per_side - 6
    assert "episodes per side" in result.summary()


def test_not_significantly_different_is_never_called_equivalent() -> None:
    # Small samples: the difference test does not reject, but that is not equivalence.
    for seed in range(20):
        a, b = _pair(seed, 8, 0.0)
        decision = decide(a, b, 0.25, "sd")
        assert decision.difference is not None
        if not decision.difference.rejects(0.05):
            assert decision.verdict is Verdict.INCONCLUSIVE


@settings(max_examples=40)
@given(
    seed=st.integers(0, 100_000),
    n=st.integers(2, 60),
    shift=st.floats(-2.0, 2.0),
    km=st.sampled_from(KINDS_AND_MARGINS),
    discrete=st.booleans(),
)
def test_verdict_follows_the_rule(seed: int, n: int, shift: float, km: tuple[str, float], discrete: bool) -> None:
    kind, margin = km
    rng = np.random.default_rng(seed)
    a = rng.normal(10.0, 2.0, n)
    b = rng.normal(10.0 + shift, 2.0, n + 3)
    if discrete:
        a, b = np.round(a / 2.0), np.round(b / 2.0) + 0.0
        a += 1.0  # keep the reference mean away from 0 for relative margins
        b += 1.0
    d = decide(a, b, margin, kind)
    if d.too_little_information:
        assert d.verdict is Verdict.INCONCLUSIVE
        assert min(d.n_a, d.n_b) < 10
        return
    if d.constant:
        return
    assert d.tost is not None
    assert d.difference is not None
    if d.verdict is Verdict.EQUIVALENT:
        assert d.tost.pvalue < 0.05
        assert d.low <= d.tost.ci.low
        assert d.tost.ci.high <= d.high
    elif d.verdict is Verdict.DIFFERENT:
        assert d.difference.pvalue < 0.05
        assert d.ci.low > d.high or d.ci.high < d.low
    else:
        assert not d.tost.pvalue < 0.05
        assert not (d.difference.pvalue < 0.05 and (d.ci.low > d.high or d.ci.high < d.low))


def test_skewed_scores_prob_margin() -> None:
    rng = np.random.default_rng(4)
    a, b = rng.lognormal(0, 1.2, 400), rng.lognormal(0, 1.2, 400)
    assert decide(a, b, 0.1, "prob").verdict is Verdict.EQUIVALENT
    c = rng.lognormal(1.0, 1.2, 400)  # P(C > A) ~ 0.72
    assert decide(a, c, 0.1, "prob").verdict is Verdict.DIFFERENT


def test_discrete_scores_with_many_ties() -> None:
    rng = np.random.default_rng(9)
    a = rng.choice([0.0, 1.0, 2.0, 21.0], p=[0.4, 0.3, 0.2, 0.1], size=500)
    b = rng.choice([0.0, 1.0, 2.0, 21.0], p=[0.4, 0.3, 0.2, 0.1], size=500)
    for kind, margin in (("absolute", 1.0), ("prob", 0.1)):
        assert decide(a, b, margin, kind).verdict is Verdict.EQUIVALENT
    result = compare_arrays(a, b, 1.0, "absolute", bootstrap_seed=3, resamples=499)
    assert "permutation" in result.tests["ks"].note


@pytest.mark.parametrize(("kind", "margin"), KINDS_AND_MARGINS)
def test_all_identical_returns_on_both_sides(kind: str, margin: float) -> None:
    result = compare_arrays([21.0] * 10, [21.0] * 12, margin, kind, bootstrap_seed=0, resamples=199)
    assert result.verdict is Verdict.EQUIVALENT
    assert result.decision.constant
    assert "no variability" in result.decision.explanation
    payload = result.to_dict()
    assert payload["ci"] == [payload["estimate"], payload["estimate"]]
    assert all(not (isinstance(v, float) and math.isnan(v)) for v in payload["ci"])


def test_constant_but_different_sides() -> None:
    assert decide([0.0] * 10, [3.0] * 10, 1.0, "absolute").verdict is Verdict.DIFFERENT
    assert decide([10.0] * 10, [10.5] * 10, 1.0, "absolute").verdict is Verdict.EQUIVALENT
    assert decide([0.0] * 10, [3.0] * 10, 0.1, "prob").verdict is Verdict.DIFFERENT
    # Below the minimum-information rule's 10 episodes per side the same data get no verdict.
    assert decide([0.0] * 5, [3.0] * 5, 1.0, "absolute").verdict is Verdict.INCONCLUSIVE


def test_no_overlap_small_samples_prob_stays_inconclusive() -> None:
    decision = decide([0.0, 1.0, 2.0], [5.0, 6.0, 7.0], 0.1, "prob")
    assert decision.verdict is Verdict.INCONCLUSIVE
    assert "do not overlap" in decision.explanation


@pytest.mark.parametrize("values", [[1.0], []])
def test_fewer_than_two_episodes_is_a_clear_error(values: list[float]) -> None:
    with pytest.raises(CompareError, match="at least 2 episodes per side"):
        decide(values, [1.0, 2.0, 3.0], 1.0, "absolute")


def test_bad_margins_are_clear_errors() -> None:
    with pytest.raises(CompareError, match="positive"):
        decide([1.0, 2.0], [1.0, 2.0], 0.0, "absolute")
    with pytest.raises(CompareError, match=r"below 0\.5"):
        decide([1.0, 2.0], [1.0, 2.0], 0.5, "prob")
    with pytest.raises(EvaltkError, match="nonzero"):
        decide([-1.0, 1.0], [1.0, 2.0], 0.1, "relative")
    with pytest.raises(CompareError, match="margin kind must be one of"):
        decide([1.0, 2.0], [1.0, 2.0], 1.0, "percent")


@pytest.mark.parametrize(("margin", "kind", "match"), [
    (-1.0, "absolute", "--margin must be a positive number, got -1.0"),
    (math.nan, "sd", "--margin must be a positive number, got nan"),
    (0.6, "prob", r"a prob margin must be below 0\.5, got 0\.6"),
    (1.0, "percent", "margin kind must be one of"),
])
def test_compare_and_validate_check_a_margin_by_one_rule(margin: float, kind: str, match: str) -> None:
    from evaltk.verdict import VerdictRule, check_margin

    with pytest.raises(CompareError, match=match):
        check_margin(margin, kind)
    with pytest.raises(CompareError, match=match):
        compare_arrays([1.0, 2.0, 3.0], [1.0, 2.0, 4.0], margin, kind)
    with pytest.raises(CompareError, match=match):  # what evaltk validate and evaluate --until-verdict are given
        VerdictRule(margin=margin, kind=kind)  # type: ignore[arg-type]


def test_compare_repeats_exactly_with_same_seed() -> None:
    a, b = _pair(5, 40, 0.2)
    first = compare_arrays(a, b, 0.5, "sd", bootstrap_seed=7, resamples=499)
    second = compare_arrays(a, b, 0.5, "sd", bootstrap_seed=7, resamples=499)
    assert first.to_dict() == second.to_dict()
    other = compare_arrays(a, b, 0.5, "sd", bootstrap_seed=8, resamples=499)
    assert other.tests["permutation"].pvalue != first.tests["permutation"].pvalue or (
        other.bootstrap_ci != first.bootstrap_ci)


def test_significant_but_within_margin_is_inconclusive_not_different() -> None:
    # True shift 0.3 SD with a 0.5 SD margin: the difference is real but not beyond the margin.
    a, b = _pair(6, 150, 0.3)
    decision = decide(a, b, 0.5, "sd")
    assert decision.difference is not None
    assert decision.difference.rejects(0.05)
    assert decision.verdict is not Verdict.DIFFERENT
