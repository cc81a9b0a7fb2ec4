"""The state of a population run, kept in ``<run>/population.json`` (written atomically after every change).

``population.json`` holds: ``format``; the APPO and self-play configs; the members (hyperparameters,
counters, lineage, frozen snapshots, recent matches, scores against each opponent); ``events`` (every PBT
exploit/explore); ``objective_history`` (the objectives at every PBT check); ``cluster_events``
(``--executor ray``: where each member's actor started, lost its node and resumed); match counters; the
run's numpy generator state. With the members' checkpoints it is all a resumed run needs.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evaltk.atomic import write_json_atomic
from evaltk.errors import EvaltkError

FORMAT = "evaltk.selfplay.population/1"
FILENAME = "population.json"


class PopulationError(EvaltkError):
    """``population.json`` is missing a field, has another format, or contradicts the command line."""


@dataclass
class MatchTally:
    """A member's results as a learner: matches counted by their score, frags and deaths summed."""

    matches: int = 0
    wins: int = 0
    draws: int = 0
    losses: int = 0
    frags: int = 0
    deaths: int = 0

    def add(self, score: float, frags: int, deaths: int) -> None:
        """Count one match: a win at score 1, a draw at 0.5, a loss at 0 (a deathmatch's mean may be none of them)."""
        self.matches += 1
        self.wins += score == 1.0
        self.draws += score == 0.5
        self.losses += score == 0.0
        self.frags += frags
        self.deaths += deaths


TALLY_KEYS = tuple(f.name for f in dataclasses.fields(MatchTally))
"""The tally's counters, which ``population.json`` keeps among a member's own keys."""


@dataclass
class Member:
    """One learning policy of the population.

    ``recent``: ``[score, frags]`` of its last matches as a learner (the PBT window); ``vs``: opponent key ->
    ``[score sum, matches]``; ``lineage``: one entry per exploit (donor, frames, hyperparameters before/after);
    ``init_from``: the ``--init-from`` checkpoint its first weights were loaded from ('' = random initialisation);
    ``tally``: its match counters (in ``population.json``, keys of the member itself: :meth:`to_dict`).
    """

    id: int
    hyperparams: dict[str, float]
    init_from: str = ""
    train_step: int = 0
    env_frames: int = 0
    generation: int = 0
    parent: int | None = None
    lineage: list[dict[str, Any]] = field(default_factory=list)
    snapshots: list[dict[str, Any]] = field(default_factory=list)
    recent: list[list[float]] = field(default_factory=list)
    vs: dict[str, list[float]] = field(default_factory=dict)
    tally: MatchTally = field(default_factory=MatchTally)
    last_pbt_frames: int = 0
    last_snapshot_frames: int = 0

    @property
    def name(self) -> str:
        """Directory and display name: ``m<id>``."""
        return f"m{self.id}"

    def record(self, frags: int, deaths: int, opponents: dict[str, float], window: int) -> None:
        """Count one finished match of this member as a learner.

        ``opponents`` (not empty): its pairwise score (1 win, 0.5 draw, 0 loss) against each other player's key,
        what prioritised sampling reads. Its match score is their mean: the duel's one result, a deathmatch's
        average over the field.
        """
        score = sum(opponents.values()) / len(opponents)
        self.tally.add(score, frags, deaths)
        self.recent = [*self.recent, [score, float(frags)]][-window:]
        for opponent, pairwise in opponents.items():
            total, n = self.vs.get(opponent, [0.0, 0.0])
            self.vs[opponent] = [total + pairwise, n + 1]

    def scores(self) -> dict[str, float]:
        """Mean score against each opponent met."""
        return {k: total / n for k, (total, n) in self.vs.items() if n > 0}

    def to_dict(self) -> dict[str, Any]:
        """Return the member's JSON object: its fields in order, the tally's counters in the tally's place."""
        out: dict[str, Any] = {}
        for key, value in dataclasses.asdict(self).items():
            out.update(value if key == "tally" else {key: value})
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Member:
        """Parse :meth:`to_dict`'s object (``TypeError`` on an unknown or missing field)."""
        tally = MatchTally(**{k: v for k, v in data.items() if k in TALLY_KEYS})
        return cls(**{k: v for k, v in data.items() if k not in TALLY_KEYS}, tally=tally)


@dataclass
class PopulationState:
    """Everything in ``population.json`` (see the module docstring)."""

    scenario: str
    appo: dict[str, Any]
    selfplay: dict[str, Any]
    members: list[Member]
    events: list[dict[str, Any]] = field(default_factory=list)
    objective_history: list[dict[str, Any]] = field(default_factory=list)
    cluster_events: list[dict[str, Any]] = field(default_factory=list)
    total_frames: int = 0
    train_seconds: float = 0.0
    matches_played: int = 0
    matches_voided: int = 0
    next_match: int = 0
    resumes: int = 0
    rng_state: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """Return the JSON document."""
        return {"format": FORMAT, **dataclasses.asdict(self), "members": [m.to_dict() for m in self.members]}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> PopulationState:
        """Parse the JSON document; :class:`PopulationError` on another format or a bad field."""
        if data.get("format") != FORMAT:
            raise PopulationError(f"population.json has format {data.get('format')!r}, expected {FORMAT!r}: "
                                  "it was not written by this trainer; use another --out")
        try:
            body = {k: v for k, v in data.items() if k != "format"}
            body["members"] = [Member.from_dict(m) for m in body["members"]]
            return cls(**body)
        except (KeyError, TypeError) as exc:
            raise PopulationError(f"population.json lacks or mangles a field ({exc}); use another --out") from None


def write(run_dir: Path, state: PopulationState) -> None:
    """Replace ``<run_dir>/population.json`` atomically."""
    write_json_atomic(run_dir / FILENAME, state.to_dict())


def read(run_dir: Path) -> PopulationState:
    """Read ``<run_dir>/population.json``; :class:`PopulationError` if absent or unreadable."""
    path = run_dir / FILENAME
    if not path.is_file():
        raise PopulationError(f"{path} does not exist: pass the folder of a population run "
                              "(evaltk train doom --scenario duel --self-play --out RUN)")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise PopulationError(f"{path} is not valid JSON ({exc}); use another --out") from None
    return PopulationState.from_dict(data)


def member_dir(run_dir: Path, member: Member) -> Path:
    """Return the run folder of one member (``checkpoints/``, ``metrics.jsonl``, ``tb/``, ``snapshots/``)."""
    return run_dir / "members" / member.name
