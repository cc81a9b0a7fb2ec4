"""Population-based training as Sample Factory does it, as pure functions over plain data.

Every ``pbt_period`` env frames of a member, the member is ranked by its objective among the members
that have enough recent matches. If it is in the bottom fraction and a member of the top fraction beats
it by more than ``gap``, it *exploits* that donor (copies weights and hyperparameters) and then
*explores*: each hyperparameter is, with probability ``mutation_rate``, multiplied or divided by a factor
drawn uniformly from ``[perturb_min, perturb_max]`` and clipped to its declared range. The caller does the
copy; these functions decide and mutate, with an explicit ``numpy.random.Generator``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class HyperRange:
    """A mutable hyperparameter: its name, default and the closed range it is kept in (log-scale perturbed)."""

    name: str
    default: float
    low: float
    high: float

    def __post_init__(self) -> None:
        if not 0.0 < self.low <= self.default <= self.high:
            raise ValueError(f"hyperparameter {self.name}: need 0 < low <= default <= high, got "
                             f"{self.low}, {self.default}, {self.high}")


def search_space(learning_rate: float, entropy_coef: float, shaping: Mapping[str, float]
                 ) -> tuple[HyperRange, ...]:
    """Return the declared ranges: learning rate and entropy bonus around the APPO config, and every shaping weight.

    Shaping weights are named ``reward.<VAR>`` (``reward.DEATHCOUNT`` is stored as a positive magnitude:
    its sign is the scenario's). Ranges: learning rate x/÷ 10, entropy x/÷ 10, shaping x/÷ 4.
    """
    space = [HyperRange("learning_rate", learning_rate, learning_rate / 10, learning_rate * 10),
             HyperRange("entropy_coef", entropy_coef, entropy_coef / 10, entropy_coef * 10)]
    for key, weight in shaping.items():
        magnitude = abs(weight)
        if magnitude > 0:
            space.append(HyperRange(f"reward.{key}", magnitude, magnitude / 4, magnitude * 4))
    return tuple(space)


def defaults(space: tuple[HyperRange, ...]) -> dict[str, float]:
    """Every hyperparameter at its default."""
    return {h.name: h.default for h in space}


def mutate(values: Mapping[str, float], space: tuple[HyperRange, ...], rng: np.random.Generator, *,
           mutation_rate: float, perturb_min: float, perturb_max: float) -> dict[str, float]:
    """Return a copy of ``values`` with each hyperparameter perturbed with probability ``mutation_rate``.

    A perturbed value is multiplied or divided (equally likely) by a factor uniform in
    ``[perturb_min, perturb_max]``, then clipped to its range. Names outside ``space`` are kept as they are.
    """
    out = dict(values)
    for h in space:
        if h.name not in out or rng.random() >= mutation_rate:
            continue
        factor = float(rng.uniform(perturb_min, perturb_max))
        value = out[h.name] * factor if rng.random() < 0.5 else out[h.name] / factor
        out[h.name] = float(min(max(value, h.low), h.high))
    return out


def ranked(objectives: Mapping[int, float | None]) -> list[int]:
    """Members with an objective, best first (ties broken by member id, lower first)."""
    scored = [(m, v) for m, v in objectives.items() if v is not None and math.isfinite(v)]
    return [m for m, _ in sorted(scored, key=lambda mv: (-mv[1], mv[0]))]


def bottom_top(objectives: Mapping[int, float | None], fraction: float) -> tuple[list[int], list[int]]:
    """Return the bottom and top ``max(1, floor(fraction * n))`` of the ``n`` ranked members (disjoint; n >= 2)."""
    order = ranked(objectives)
    if len(order) < 2:
        return [], []
    k = max(1, min(len(order) // 2, int(fraction * len(order))))
    return order[-k:], order[:k]


def choose_donor(member: int, objectives: Mapping[int, float | None], rng: np.random.Generator, *,
                 fraction: float, gap: float) -> int | None:
    """Return the donor ``member`` should copy, or None.

    It copies only if it is in the bottom fraction; the donor is drawn uniformly from the top fraction
    among those whose objective exceeds the member's by more than ``gap``.
    """
    bottom, top = bottom_top(objectives, fraction)
    if member not in bottom:
        return None
    mine = objectives[member]
    assert mine is not None  # ranked members have an objective
    better = [t for t in top if (objectives[t] or 0.0) - mine > gap]
    if not better:
        return None
    return int(better[int(rng.integers(len(better)))])


def match_score(own_frags: int, other_frags: int) -> float:
    """Return a duel's score for one side: 1 win, 0.5 draw, 0 loss (by frags)."""
    return 1.0 if own_frags > other_frags else 0.5 if own_frags == other_frags else 0.0


def pairwise_scores(own: int, field: Sequence[tuple[str, int]]) -> dict[str, float]:
    """Scores of player ``own`` against every other player of ``field`` (``(key, frags)`` of each, bots too).

    Players with ``own``'s key (its member's other slots) are left out: a mirror match scores nothing.
    A player met twice (two slots of one snapshot) keeps the last score.
    """
    key, frags = field[own]
    return {k: match_score(frags, f) for j, (k, f) in enumerate(field) if j != own and k != key}


def objective(recent: list[tuple[float, int]], kind: str, min_matches: int) -> float | None:
    """Mean score (``win_rate``) or mean frags (``frags``) of ``recent`` ``(score, frags)``; None if too few."""
    if len(recent) < min_matches:
        return None
    if kind == "win_rate":
        return float(np.mean([s for s, _ in recent]))
    return float(np.mean([f for _, f in recent]))


def check(member: int, recents: Mapping[int, Sequence[Sequence[float]]], rng: np.random.Generator, *, kind: str,
          min_matches: int, fraction: float, gap: float, total_frames: int, seconds: float
          ) -> tuple[dict[str, Any], int | None]:
    """One PBT check of ``member``: every member's objective from its recent ``(score, frags)`` and the donor.

    Returns the ``objective_history`` entry of this check and :func:`choose_donor`'s answer (None: no copy).
    """
    objectives = {i: objective([(s, int(f)) for s, f in r], kind, min_matches) for i, r in recents.items()}
    entry = {"total_frames": total_frames, "member": member, "seconds": seconds,
             "objectives": {str(k): v for k, v in objectives.items()}}
    return entry, choose_donor(member, objectives, rng, fraction=fraction, gap=gap)
