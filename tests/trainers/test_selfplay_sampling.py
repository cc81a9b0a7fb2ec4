"""Opponent sampling (trainers.appo.selfplay.opponents): the declared distributions, and draws that follow them."""

from __future__ import annotations

import numpy as np
import pytest

from trainers.appo.selfplay.opponents import PRIORITY_FLOOR, Candidate, probabilities, sample

CANDIDATES = [Candidate("m0", 0), Candidate("m1", 1), Candidate("m0-s0", None, "/ckpt/a"),
              Candidate("m1-s0", None, "/ckpt/b")]


def test_latest_draws_only_current_members() -> None:
    assert probabilities("latest", CANDIDATES, {}).tolist() == [0.5, 0.5, 0.0, 0.0]


def test_uniform_is_uniform_over_members_and_snapshots() -> None:
    assert probabilities("uniform", CANDIDATES, {"m1": 1.0}).tolist() == [0.25] * 4


def test_prioritised_prefers_opponents_the_learner_loses_to() -> None:
    scores = {"m0": 0.5, "m1": 1.0, "m0-s0": 0.0}  # m1-s0 never met: treated as 0.5
    p = probabilities("prioritised", CANDIDATES, scores)
    raw = np.array([0.25, 0.0, 1.0, 0.25]) + PRIORITY_FLOOR
    assert p == pytest.approx(raw / raw.sum())
    assert p[2] > p[0] > p[1] > 0  # the opponent it lost to first, an even one next, the one it beat last
    assert p[0] == pytest.approx(p[3])  # never met counts as even


def test_draws_follow_the_probabilities() -> None:
    rng = np.random.default_rng(123)
    scores = {"m0": 0.5, "m1": 1.0, "m0-s0": 0.0}
    p = probabilities("prioritised", CANDIDATES, scores)
    n = 4000
    counts = np.zeros(len(CANDIDATES))
    keys = [c.key for c in CANDIDATES]
    for _ in range(n):
        counts[keys.index(sample("prioritised", CANDIDATES, scores, rng).key)] += 1
    # every frequency within 4 binomial standard deviations of its probability
    assert np.all(np.abs(counts / n - p) <= 4 * np.sqrt(p * (1 - p) / n) + 1e-12)
    again = [sample("prioritised", CANDIDATES, scores, np.random.default_rng(5)).key for _ in range(3)]
    assert len(set(again)) == 1  # the same generator state gives the same draw


def test_bad_strategies_are_refused() -> None:
    with pytest.raises(ValueError, match="unknown opponent sampling"):
        probabilities("best", CANDIDATES, {})
    with pytest.raises(ValueError, match="no candidate"):
        probabilities("latest", CANDIDATES[2:], {})
    with pytest.raises(ValueError, match="no opponent"):
        probabilities("uniform", [], {})
