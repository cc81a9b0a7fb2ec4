"""Opponent sampling as data: who fills the other slot of a learning member's duel.

Candidates are the current members (their latest weights; if the opponent is a member its experience
is trained on too) and every frozen snapshot (inference only). The strategies:

- ``latest``: uniform over the current members (the learner itself included: a mirror match);
- ``uniform``: uniform over current members and snapshots;
- ``prioritised``: over the same set, weight ``(1 - s)^2 + floor`` where ``s`` is the learner's mean
  score against that candidate so far (0.5 when they never met): opponents it loses to are drawn more
  (AlphaStar's prioritised fictitious self-play with the "hard" weighting).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

PRIORITY_FLOOR = 0.05
"""Keeps every candidate's probability above zero in ``prioritised`` sampling."""


@dataclass(frozen=True)
class Candidate:
    """An opponent: ``key`` names it in score tables; ``member`` is set for current members (they learn)."""

    key: str
    member: int | None
    checkpoint: str | None = None  # snapshot directory (None for a current member: its weights are saved per match)


def probabilities(strategy: str, candidates: Sequence[Candidate], scores: Mapping[str, float]) -> np.ndarray:
    """Return the sampling probabilities ``float[len(candidates)]`` (sum 1) of ``strategy``.

    ``scores[key]`` is the learner's mean score against that candidate (missing = never met).
    """
    if not candidates:
        raise ValueError("no opponent candidates")
    if strategy == "latest":
        weights = np.array([1.0 if c.member is not None else 0.0 for c in candidates])
    elif strategy == "uniform":
        weights = np.ones(len(candidates))
    elif strategy == "prioritised":
        weights = np.array([(1.0 - scores.get(c.key, 0.5)) ** 2 + PRIORITY_FLOOR for c in candidates])
    else:
        raise ValueError(f"unknown opponent sampling {strategy!r}: use latest, uniform or prioritised")
    if weights.sum() <= 0:
        raise ValueError(f"opponent sampling {strategy!r} has no candidate with positive weight")
    return np.asarray(weights / weights.sum())


def sample(strategy: str, candidates: Sequence[Candidate], scores: Mapping[str, float],
           rng: np.random.Generator) -> Candidate:
    """Draw one opponent with :func:`probabilities`."""
    p = probabilities(strategy, candidates, scores)
    return candidates[int(rng.choice(len(candidates), p=p))]
