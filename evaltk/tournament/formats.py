"""Tournament formats: ``gauntlet``, ``round-robin`` and ``match`` (head to head with SPRT).

A :class:`TournamentConfig` fully determines the match list (:func:`match_list`): match ids, agents per
slot, bots, maps and seeds. Its JSON is written to ``<out>/tournament.json``; re-running with the
same ``--out`` resumes, and a different config there is refused rather than silently mixed. The one
setting that may grow is ``matches``: match ``k``'s id, seed, bots and map depend on ``k`` alone, so the
list of a larger ``matches`` begins with the smaller one's, and a resume with it extends the tournament
(:func:`prepare_out`; the default output directory, named by :meth:`TournamentConfig.digest`, leaves
``matches`` out for the same reason).

Game pairs: in ``round-robin`` and ``match`` the two games of a pair share a seed and swap the
agents' slots (host/joiner, colour, spawn order) — the Doom analogue of playing an opening with
both colours.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from evaltk.atomic import write_json_atomic
from evaltk.errors import TournamentError
from evaltk.registry import did_you_mean
from evaltk.tournament import ratings
from evaltk.tournament.match import SUPPORTED_MAPS, MatchSpec, bot_names

FORMATS = ("gauntlet", "round-robin", "match")


@dataclass(frozen=True)
class SprtConfig:
    """SPRT bounds (logistic Elo) and error rates; ``pairs`` selects the pentanomial model."""

    elo0: float = 0.0
    elo1: float = 50.0
    alpha: float = 0.05
    beta: float = 0.05
    pairs: bool = False


@dataclass(frozen=True)
class TournamentConfig:
    """Everything that defines a tournament's matches (see the module docstring)."""

    format: str
    agents: tuple[str, ...]
    matches: int
    bots: int = 0
    bot_names: tuple[str, ...] = ()
    maps: tuple[str, ...] = ("map01",)
    timelimit_min: float = 4.0
    fraglimit: int = 0
    frameskip: int = 4
    seed: int = 0
    record: bool = False
    sprt: SprtConfig | None = None

    def check(self) -> None:
        """Raise TournamentError naming the first bad setting."""
        if self.format not in FORMATS:
            raise TournamentError(f"unknown format {self.format!r}: use one of {', '.join(FORMATS)}")
        if self.matches < 1:
            raise TournamentError(f"--matches {self.matches} must be at least 1")
        if self.seed < 0:
            raise TournamentError(f"--seed {self.seed} must be >= 0 (it seeds the engines and numpy generators)")
        if self.bots < 0 or self.bots > 15:
            raise TournamentError(f"--bots {self.bots} must be in 0..15")
        need_agents = {"gauntlet": 1, "match": 2}.get(self.format)
        if need_agents is not None and len(self.agents) != need_agents:
            raise TournamentError(f"{self.format} takes {need_agents} agent(s), got {len(self.agents)}")
        if self.format != "gauntlet" and len(set(self.agents)) != len(self.agents):
            raise TournamentError(f"agents {list(self.agents)} repeat: give each agent once (copy a checkpoint "
                                  "directory to play it against itself)")
        if self.format == "round-robin" and len(self.agents) < 2:
            raise TournamentError("round-robin needs at least 2 agents: pass --agents A B [C ...]")
        if self.format == "gauntlet" and self.bots < 1:
            raise TournamentError("a gauntlet plays against bots: pass --bots 1 or more")
        if self.format != "gauntlet" and self.sprt is not None and self.sprt.pairs and self.matches % 2:
            raise TournamentError(f"--matches {self.matches} must be even with --pairs (2 games per pair)")
        for m in self.maps:
            if m not in SUPPORTED_MAPS:
                raise TournamentError(f"map {m!r} is not supported: use one of {', '.join(SUPPORTED_MAPS)}")
        known = bot_names()
        for b in self.bot_names:
            if b not in known:
                raise TournamentError(f"unknown bot {b!r}: {did_you_mean(b, known)}use one of {', '.join(known)}")
        if self.bot_names and len(self.bot_names) < self.bots:
            raise TournamentError(f"--bot-names lists {len(self.bot_names)} bots but --bots is {self.bots}")
        if self.sprt is not None:
            try:
                ratings.sprt([0, 0, 0], elo0=self.sprt.elo0, elo1=self.sprt.elo1, alpha=self.sprt.alpha,
                             beta=self.sprt.beta)
            except ValueError as exc:
                raise TournamentError(f"bad SPRT settings: {exc}") from exc

    def to_json(self) -> dict[str, Any]:
        """Return the JSON-able dict of this config."""
        return asdict(self)

    def digest(self) -> str:
        """Short hash of the config but ``matches``: names the default output directory (a larger one extends it)."""
        identity = {k: v for k, v in self.to_json().items() if k != "matches"}
        return hashlib.sha1(json.dumps(identity, sort_keys=True).encode()).hexdigest()[:10]


def _bots_for(config: TournamentConfig, index: int) -> tuple[str, ...]:
    if config.bots == 0:
        return ()
    if config.bot_names:
        return config.bot_names[: config.bots]
    rng = np.random.default_rng([config.seed, index])
    names = bot_names()
    return tuple(names[k] for k in rng.choice(len(names), size=config.bots, replace=False))


def match_list(config: TournamentConfig) -> list[MatchSpec]:
    """Return every match of ``config`` in play order (for ``match`` with SPRT: the maximum number)."""
    config.check()
    specs: list[MatchSpec] = []
    if config.format == "gauntlet":
        for k in range(config.matches):
            specs.append(MatchSpec(match_id=f"g{k:05d}", agents=config.agents, bots=_bots_for(config, k),
                                   map=config.maps[k % len(config.maps)], seed=config.seed * 100003 + k,
                                   timelimit_min=config.timelimit_min, fraglimit=config.fraglimit,
                                   frameskip=config.frameskip, record=config.record))
        return specs
    pairs = list(itertools.combinations(range(len(config.agents)), 2))
    for k in range(config.matches):
        for p, (a, b) in enumerate(pairs):
            pair_index = k // 2
            order = (a, b) if k % 2 == 0 else (b, a)
            specs.append(MatchSpec(match_id=f"p{p:02d}-{k:05d}", agents=tuple(config.agents[x] for x in order),
                                   bots=_bots_for(config, pair_index * len(pairs) + p),
                                   map=config.maps[pair_index % len(config.maps)],
                                   seed=config.seed * 100003 + pair_index * len(pairs) + p, pair=pair_index,
                                   timelimit_min=config.timelimit_min, fraglimit=config.fraglimit,
                                   frameskip=config.frameskip, record=config.record))
    return specs


def prepare_out(config: TournamentConfig, out: Path) -> int | None:
    """Create ``out`` and its ``tournament.json``, or check that an existing one matches ``config``.

    Only ``matches`` may differ, and only upwards: the manifest is rewritten with the larger count (the
    tournament goes on) and the count it held is returned; otherwise None. Any other difference, or fewer
    matches, raises :class:`TournamentError` naming it.
    """
    out.mkdir(parents=True, exist_ok=True)
    manifest = out / "tournament.json"
    wanted = json.loads(json.dumps(config.to_json()))
    if not manifest.exists():
        write_json_atomic(manifest, wanted)
        return None
    have = json.loads(manifest.read_text())
    diff = sorted(k for k in set(have) | set(wanted) if have.get(k) != wanted.get(k))
    if diff and diff != ["matches"]:
        raise TournamentError(f"{out} holds a tournament with other settings ({', '.join(diff)} differ): "
                              "pass the same settings to resume it (a larger --matches extends it), or another --out")
    if not diff:
        return None
    held = int(have["matches"])
    if config.matches < held:
        raise TournamentError(f"{out} holds a tournament of --matches {held}; --matches {config.matches} is fewer: "
                              f"pass --matches {held} to resume it, a larger one to extend it, or another --out")
    write_json_atomic(manifest, wanted)
    return held


def score(row: dict[str, Any], first: str, second: str) -> float:
    """Per-game score (1, ½, 0) of participant ``first`` against ``second`` by frags in a played row."""
    frags = {p["name"]: int(p["frags"]) for p in row["participants"]}
    a, b = frags[first], frags[second]
    return 1.0 if a > b else 0.5 if a == b else 0.0


def gauntlet_outcome(row: dict[str, Any]) -> float:
    """Score of the agent in slot 0 against the best bot: win (1) when strictly more frags, draw (½) on a tie."""
    parts = row["participants"]
    agent = next(p for p in parts if p["kind"] == "agent")
    best_bot = max(int(p["frags"]) for p in parts if p["kind"] == "bot")
    return 1.0 if agent["frags"] > best_bot else 0.5 if agent["frags"] == best_bot else 0.0


def agent_slots(row: dict[str, Any]) -> dict[str, str]:
    """Participant name per agent ref in a row (``A0``/``A1``...; bots map ``bot:<Name>`` to their name)."""
    return {p["agent"]: p["name"] for p in row["participants"]}
