"""Self-play/PBT options: one typed frozen dataclass whose fields become the CLI.

APPO's own options (learning rate, batch, model) stay in :class:`trainers.appo.config.AppoConfig` and are
shared by every member as its starting point.
"""

from __future__ import annotations

import argparse
import dataclasses
from dataclasses import dataclass
from typing import Any, Literal

from evaltk.errors import EvaltkError
from trainers.common import config_cli
from trainers.common.config_cli import doc_field, from_dict

OPPONENT_SAMPLING = ("latest", "uniform", "prioritised")
PBT_OBJECTIVES = ("win_rate", "frags")
EXECUTORS = ("local", "ray")


class SelfPlayConfigError(EvaltkError):
    """A self-play or PBT option is out of range."""


@dataclass(frozen=True)
class SelfPlayConfig:
    """Every knob of a self-play population run (besides the APPO ones)."""

    self_play: bool = doc_field("train a population by self-play in multiplayer duels (needs --scenario duel)",
                                default=False)
    population: int = doc_field("members of the population, each with its own learner and hyperparameters",
                                default=1)
    opponent_sampling: Literal["latest", "uniform", "prioritised"] = doc_field(
        "opponent of a learning member: latest (a current member), uniform (over members and frozen snapshots) "
        "or prioritised (snapshots/members it loses to more often are drawn more)", default="prioritised")
    snapshot_every_frames: int = doc_field("member env frames between frozen snapshots of that member",
                                           default=6_000)
    max_snapshots: int = doc_field("frozen snapshots kept per member (the first is always kept)", default=6)
    pbt_period: int = doc_field("member env frames between PBT checks of that member (0 = no PBT)",
                                default=6_000)
    pbt_objective: Literal["win_rate", "frags"] = doc_field(
        "PBT ranking: mean match score (win 1, draw 0.5) or mean frags, over the recent matches", default="win_rate")
    pbt_window: int = doc_field("recent matches of a member that its objective averages", default=20)
    pbt_min_matches: int = doc_field("matches a member needs in the window before PBT ranks it", default=2)
    pbt_replace_fraction: float = doc_field("bottom (and top) fraction of the population in PBT", default=0.3)
    pbt_replace_gap: float = doc_field("a donor's objective must exceed the member's by more than this "
                                       "(negative: replace even on ties)", default=0.05)
    pbt_mutation_rate: float = doc_field("probability that each hyperparameter is perturbed after a copy",
                                         default=0.5)
    pbt_perturb_min: float = doc_field("smallest perturbation factor (x or / by a factor in [min, max])",
                                       default=1.1)
    pbt_perturb_max: float = doc_field("largest perturbation factor", default=1.5)
    agents_per_match: int = doc_field("programmatic players per training match: the learner and agents-per-match - 1 "
                                      "opponents drawn by --opponent-sampling (duel: 2; deathmatch: 2..8, with the "
                                      "scenario's bots)", default=2)
    match_minutes: float = doc_field("game minutes per training match", default=1.0)
    map: str = doc_field("cig.wad map of the training matches (map01 or map02)", default="map01")
    concurrency: int = doc_field("training matches played at once (each: 2 player processes + 2 engines)",
                                 default=2)
    persistent_players: bool = doc_field("keep player processes alive across matches (no Python/torch start per "
                                         "match); --no-persistent-players starts two fresh ones per match",
                                         default=True)
    match_timeout_s: float = doc_field("wall seconds before a training match is voided and its processes killed",
                                       default=180.0)
    epochs: int = doc_field("SGD passes over each batch", default=1)
    executor: Literal["local", "ray"] = doc_field(
        "where the members run: local (this process: a learner per member, match threads) or ray (each member a "
        "Ray actor with its learner and players; weights through Ray's object store; docs/selfplay.md)",
        default="local")
    ray_address: str = doc_field("Ray cluster head HOST:PORT for --executor ray (default: RAY_ADDRESS, or a local "
                                 "cluster already running, else a new one-node cluster)", default="")
    ray_member_cpus: float = doc_field("CPUs each member's actor reserves on its node under --executor ray",
                                       default=1.0)

    def check(self) -> None:
        """Raise :class:`SelfPlayConfigError` naming the first bad value and how to fix it."""
        for name in ("population", "max_snapshots", "pbt_window", "pbt_min_matches", "concurrency", "epochs"):
            if getattr(self, name) < 1:
                raise SelfPlayConfigError(f"{config_cli.flag(name)} must be >= 1, got {getattr(self, name)}")
        if self.snapshot_every_frames < 1 or self.pbt_period < 0:
            raise SelfPlayConfigError("--snapshot-every-frames must be >= 1 and --pbt-period >= 0 (0 = no PBT)")
        if self.opponent_sampling not in OPPONENT_SAMPLING:
            raise SelfPlayConfigError(f"--opponent-sampling must be one of {OPPONENT_SAMPLING}, got "
                                      f"{self.opponent_sampling!r}")
        if self.pbt_objective not in PBT_OBJECTIVES:
            raise SelfPlayConfigError(f"--pbt-objective must be one of {PBT_OBJECTIVES}, got {self.pbt_objective!r}")
        if not 0.0 < self.pbt_replace_fraction <= 0.5:
            raise SelfPlayConfigError(f"--pbt-replace-fraction must be in (0, 0.5], got {self.pbt_replace_fraction}")
        if not 0.0 <= self.pbt_mutation_rate <= 1.0:
            raise SelfPlayConfigError(f"--pbt-mutation-rate must be in [0, 1], got {self.pbt_mutation_rate}")
        if not 1.0 <= self.pbt_perturb_min <= self.pbt_perturb_max:
            raise SelfPlayConfigError(f"need 1 <= --pbt-perturb-min ({self.pbt_perturb_min}) <= --pbt-perturb-max "
                                      f"({self.pbt_perturb_max})")
        if not 0.0 < self.match_minutes <= 10.0:
            raise SelfPlayConfigError(f"--match-minutes must be in (0, 10], got {self.match_minutes}")
        if not 2 <= self.agents_per_match <= 8:
            raise SelfPlayConfigError(f"--agents-per-match must be in [2, 8], got {self.agents_per_match}")
        if self.executor not in EXECUTORS:
            raise SelfPlayConfigError(f"--executor must be one of {EXECUTORS}, got {self.executor!r}")
        if self.ray_address and self.executor != "ray":
            raise SelfPlayConfigError(f"--ray-address {self.ray_address} needs --executor ray")
        if not 0.0 < self.ray_member_cpus <= 1024:
            raise SelfPlayConfigError(f"--ray-member-cpus must be in (0, 1024], got {self.ray_member_cpus}")
        if self.map not in ("map01", "map02"):
            raise SelfPlayConfigError(f"--map must be map01 or map02 (cig.wad), got {self.map!r}")

    def to_dict(self) -> dict[str, Any]:
        """All fields as a JSON-ready dict."""
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SelfPlayConfig:
        """Build from a dict (``population.json``'s ``selfplay``); unknown keys raise."""
        return from_dict(cls, data, SelfPlayConfigError, "self-play")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add one ``--field-name`` option per :class:`SelfPlayConfig` field."""
    config_cli.add_arguments(parser, SelfPlayConfig, choices={"opponent_sampling": OPPONENT_SAMPLING,
                                                              "pbt_objective": PBT_OBJECTIVES,
                                                              "executor": EXECUTORS})


def config_from_args(args: argparse.Namespace) -> SelfPlayConfig:
    """Build a checked config from parsed args (defaults, then the flags given)."""
    config = SelfPlayConfig.from_dict(config_cli.resolve_values(SelfPlayConfig, args, SelfPlayConfigError))
    config.check()
    return config
