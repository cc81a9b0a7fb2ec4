"""PBT decisions and mutations (trainers.appo.selfplay.pbt): invariants checked with Hypothesis."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from evaltk.envs.doom import DUEL_SHAPING
from trainers.appo.selfplay import pbt

SPACE = pbt.search_space(3e-4, 0.003, DUEL_SHAPING)

objectives_st = st.dictionaries(st.integers(0, 11), st.one_of(st.none(), st.floats(0.0, 1.0)), min_size=1, max_size=12)


def test_search_space_declares_every_mutable_value() -> None:
    names = [h.name for h in SPACE]
    assert names[:2] == ["learning_rate", "entropy_coef"]
    assert {f"reward.{k}" for k in DUEL_SHAPING} == set(names[2:])
    lr = SPACE[0]
    assert (lr.low, lr.default, lr.high) == pytest.approx((3e-5, 3e-4, 3e-3))
    with pytest.raises(ValueError, match="low <= default <= high"):
        pbt.HyperRange("x", 5.0, 1.0, 2.0)


@given(seed=st.integers(0, 2**32 - 1), rate=st.floats(0.0, 1.0), lo=st.floats(1.0, 2.0), extra=st.floats(0.0, 1.0))
def test_mutation_stays_in_the_declared_ranges(seed: int, rate: float, lo: float, extra: float) -> None:
    rng = np.random.default_rng(seed)
    start = {h.name: float(rng.uniform(h.low, h.high)) for h in SPACE} | {"other": 7.0}
    out = pbt.mutate(start, SPACE, rng, mutation_rate=rate, perturb_min=lo, perturb_max=lo + extra)
    assert out["other"] == 7.0  # names outside the space are never touched
    for h in SPACE:
        assert h.low <= out[h.name] <= h.high
        ratio = out[h.name] / start[h.name]
        clipped = out[h.name] in (h.low, h.high)
        # unchanged, or changed by a factor in [lo, lo + extra] either way (unless clipped to the range)
        assert clipped or ratio == 1.0 or lo - 1e-9 <= max(ratio, 1 / ratio) <= lo + extra + 1e-9


def test_mutation_rate_zero_keeps_and_one_changes_everything() -> None:
    rng = np.random.default_rng(0)
    base = pbt.defaults(SPACE)
    assert pbt.mutate(base, SPACE, rng, mutation_rate=0.0, perturb_min=1.2, perturb_max=1.5) == base
    changed = pbt.mutate(base, SPACE, rng, mutation_rate=1.0, perturb_min=1.2, perturb_max=1.5)
    assert all(changed[k] != base[k] for k in base)


def test_mutation_repeats_under_a_fixed_generator() -> None:
    base = pbt.defaults(SPACE)
    a = pbt.mutate(base, SPACE, np.random.default_rng(42), mutation_rate=0.5, perturb_min=1.1, perturb_max=1.5)
    b = pbt.mutate(base, SPACE, np.random.default_rng(42), mutation_rate=0.5, perturb_min=1.1, perturb_max=1.5)
    assert a == b


@given(objectives=objectives_st, fraction=st.floats(0.01, 0.5), gap=st.floats(-1.0, 0.5), seed=st.integers(0, 99))
def test_bottom_members_copy_from_the_top_only(objectives: dict[int, float | None], fraction: float, gap: float,
                                               seed: int) -> None:
    bottom, top = pbt.bottom_top(objectives, fraction)
    assert not set(bottom) & set(top)
    assert len(bottom) == len(top)
    scored = {m: v for m, v in objectives.items() if v is not None}
    if bottom:
        assert max(scored[m] for m in bottom) <= min(scored[m] for m in top)
    for member in objectives:
        donor = pbt.choose_donor(member, objectives, np.random.default_rng(seed), fraction=fraction, gap=gap)
        if donor is None:
            continue
        assert member in bottom  # only the bottom fraction is replaced
        assert donor in top
        assert donor != member
        mine, theirs = objectives[member], objectives[donor]
        assert mine is not None
        assert theirs is not None
        assert theirs - mine > gap


def test_unranked_members_are_never_replaced_nor_donors() -> None:
    objectives: dict[int, float | None] = {0: None, 1: 0.9, 2: 0.1, 3: 0.5}
    bottom, top = pbt.bottom_top(objectives, 0.3)
    assert (bottom, top) == ([2], [1])
    assert pbt.choose_donor(0, objectives, np.random.default_rng(0), fraction=0.3, gap=0.0) is None
    assert pbt.choose_donor(2, objectives, np.random.default_rng(0), fraction=0.3, gap=0.0) == 1
    assert pbt.choose_donor(2, objectives, np.random.default_rng(0), fraction=0.3, gap=0.8) is None  # gap too small
    assert pbt.bottom_top({0: 0.5, 1: None}, 0.5) == ([], [])  # one ranked member: nobody to copy


def test_objectives_and_scores() -> None:
    assert [pbt.match_score(a, b) for a, b in ((3, 1), (2, 2), (-1, 0))] == [1.0, 0.5, 0.0]
    recent = [(1.0, 3), (0.5, 0), (0.0, -3)]
    assert pbt.objective(recent, "win_rate", 2) == pytest.approx(0.5)
    assert pbt.objective(recent, "frags", 2) == pytest.approx(0.0)
    assert pbt.objective(recent[:1], "win_rate", 2) is None


def test_pairwise_scores_of_a_duel_are_the_duel_score_and_a_mirror_scores_nothing() -> None:
    assert pbt.pairwise_scores(0, [("m0", 2), ("m1-s0000000_0", -1)]) == {"m1-s0000000_0": 1.0}
    assert pbt.pairwise_scores(1, [("m0", 2), ("m1-s0000000_0", -1)]) == {"m0": 0.0}
    assert pbt.pairwise_scores(0, [("m0", 2), ("m0", -1)]) == {}


@given(st.lists(st.tuples(st.sampled_from(["m0", "m1", "m1-s0", "bot:Rambo", "bot:McClane"]),
                          st.integers(-20, 20)), min_size=2, max_size=12), st.data())
def test_pairwise_scores_cover_every_other_key_by_frags(field: list[tuple[str, int]], data: st.DataObject) -> None:
    own = data.draw(st.integers(0, len(field) - 1))
    scores = pbt.pairwise_scores(own, field)
    key, frags = field[own]
    assert set(scores) == {k for j, (k, _) in enumerate(field) if j != own and k != key}
    for other, score in scores.items():
        last = [f for k, f in field if k == other][-1]  # a key met twice keeps its last slot's score
        assert score == pbt.match_score(frags, last)
        assert score in (0.0, 0.5, 1.0)
