"""A2C+V-trace configuration: one typed frozen dataclass whose fields (type, default, one-line doc) become the CLI."""

from __future__ import annotations

import argparse
import dataclasses
import math
from dataclasses import dataclass
from typing import Any

from evaltk.errors import EvaltkError
from trainers.common import config_cli
from trainers.common.config_cli import doc_field, from_dict


class ConfigError(EvaltkError):
    """An A2C option is out of range, inconsistent with another option, or names an unknown game."""


BACKENDS = ("cpu", "cuda")
OPTIMIZERS = ("rmsprop", "adam")


@dataclass(frozen=True)
class A2cConfig:
    """Every knob of an A2C+V-trace run. Derived values are properties (marked derived), never stored."""

    game: str = doc_field("Atari game as in ALE/<Game>-v5, e.g. Breakout, Pong, SpaceInvaders", default="Breakout")
    out: str = doc_field("run folder (config.json, metrics.jsonl, tb/, checkpoints/)", default="runs/a2c")
    seed: int = doc_field("seed of the weights, action sampling and env seeds", default=0)
    backend: str = doc_field("gpu_env backend: cpu or cuda (every tensor lives on its device)", default="cpu")
    max_seconds: float = doc_field("stop after this many seconds of training wall time (0 = no limit)", default=0.0)
    max_frames: int = doc_field("stop after this many frames (agent steps x frame_skip, all envs; 0 = no limit)",
                           default=0)
    resume: bool = doc_field("continue the run in --out from its latest checkpoint", default=False)

    num_envs: int = doc_field("emulators stepped as one batch", default=32)
    rollout: int = doc_field("agent steps per env between updates (CuLE: 5-20)", default=5)
    num_minibatches: int = doc_field("updates per rollout, each on its own group of envs; group g is g updates stale "
                                "(CuLE's minibatch lag, corrected by V-trace); 1 = plain on-policy A2C", default=2)
    repeat_action_probability: float = doc_field("sticky-action probability (ALE v5: 0.25)", default=0.25)
    noop_max: int = doc_field("random no-ops at episode start (AtariPreprocessing)", default=30)
    frame_skip: int = doc_field("emulator frames per agent step, max-pooled over the last two", default=4)
    stack_size: int = doc_field("frames stacked per observation", default=4)
    life_loss_cut: bool = doc_field("training signal only: a lost life ends the discounted return (no env reset; "
                               "evaluation uses plain v5 episodes)", default=True)
    clip_rewards: bool = doc_field("train on sign(reward); episode returns are logged unclipped", default=True)

    gamma: float = doc_field("discount", default=0.99)
    vtrace_rho: float = doc_field("V-trace rho-bar (importance weight clip)", default=1.0)
    vtrace_c: float = doc_field("V-trace c-bar (trace cutting)", default=1.0)
    value_coef: float = doc_field("value loss coefficient", default=0.5)
    entropy_coef: float = doc_field("entropy bonus coefficient", default=0.01)
    optimizer: str = doc_field("rmsprop or adam", default="rmsprop")
    learning_rate: float = doc_field("optimizer learning rate", default=7e-4)
    rmsprop_alpha: float = doc_field("RMSprop smoothing constant", default=0.99)
    optimizer_eps: float = doc_field("optimizer epsilon", default=1e-5)
    max_grad_norm: float = doc_field("gradient norm clip", default=0.5)

    torch_threads: int = doc_field("torch intra-op threads (CPU)", default=1)
    env_threads: int = doc_field("emulator threads of the cpu backend (0 = its default)", default=1)
    save_every_s: float = doc_field("seconds between checkpoints", default=120.0)
    keep_checkpoints: int = doc_field("newest checkpoints kept", default=2)
    log_every_s: float = doc_field("seconds between console/metrics lines", default=10.0)
    stats_window: int = doc_field("episodes in the running mean episode return", default=100)

    # -- derived (computed from the fields above, never set directly) -------------------------------------
    @property
    def env_id(self) -> str:
        """Derived: the gymnasium id, ``ALE/<game>-v5``."""
        return f"ALE/{self.game}-v5"

    @property
    def envs_per_minibatch(self) -> int:
        """Derived: envs in each update's group."""
        return self.num_envs // self.num_minibatches

    @property
    def frames_per_rollout(self) -> int:
        """Derived: frames emulated per rollout (all envs)."""
        return self.num_envs * self.rollout * self.frame_skip

    def validate(self) -> None:
        """Raise :class:`ConfigError` naming the first bad value and how to fix it."""
        positive = ("num_envs", "rollout", "num_minibatches", "frame_skip", "stack_size", "torch_threads",
                    "keep_checkpoints", "stats_window")
        for name in positive:
            if getattr(self, name) < 1:
                raise ConfigError(f"--{name.replace('_', '-')} must be >= 1, got {getattr(self, name)}")
        if self.num_envs % self.num_minibatches:
            raise ConfigError(f"--num-envs {self.num_envs} must be a multiple of --num-minibatches "
                              f"{self.num_minibatches}: each update takes an equal group of envs")
        if self.backend not in BACKENDS:
            raise ConfigError(f"--backend must be one of {', '.join(BACKENDS)}, got {self.backend!r}")
        if self.optimizer not in OPTIMIZERS:
            raise ConfigError(f"--optimizer must be one of {', '.join(OPTIMIZERS)}, got {self.optimizer!r}")
        if not 0.0 < self.gamma <= 1.0:
            raise ConfigError(f"--gamma must be in (0, 1], got {self.gamma}")
        if not 0.0 <= self.repeat_action_probability <= 1.0:
            raise ConfigError(f"--repeat-action-probability must be in [0, 1], got {self.repeat_action_probability}")
        finite_nonneg = ("max_seconds", "value_coef", "entropy_coef", "env_threads", "noop_max")
        for name in finite_nonneg:
            value = float(getattr(self, name))
            if not (math.isfinite(value) and value >= 0):
                raise ConfigError(f"--{name.replace('_', '-')} must be a finite number >= 0, got {value}")
        if self.max_frames < 0:
            raise ConfigError(f"--max-frames must be >= 0 (0 means no limit), got {self.max_frames}")
        finite_pos = ("learning_rate", "optimizer_eps", "max_grad_norm", "vtrace_rho", "vtrace_c",
                      "save_every_s", "log_every_s")
        for name in finite_pos:
            value = float(getattr(self, name))
            if not (math.isfinite(value) and value > 0):
                raise ConfigError(f"--{name.replace('_', '-')} must be a finite number > 0, got {value}")
        if not 0.0 <= self.rmsprop_alpha < 1.0:
            raise ConfigError(f"--rmsprop-alpha must be in [0, 1), got {self.rmsprop_alpha}")
        check_game(self.game)

    def to_dict(self) -> dict[str, Any]:
        """All fields as a JSON-ready dict."""
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> A2cConfig:
        """Build from a dict (e.g. a run's ``config.json``); unknown keys raise :class:`ConfigError`."""
        return from_dict(cls, data, ConfigError, "A2C")


def check_game(game: str) -> None:
    """Raise :class:`ConfigError` unless ``ALE/<game>-v5`` is a registered ale-py id (close matches suggested)."""
    from evaltk.envs.atari import check_env_id
    from evaltk.errors import SpecError

    if not game or not game.replace("_", "").isalnum():
        raise ConfigError(f"--game {game!r} is not a game name: use the CamelCase name of ALE/<Game>-v5, "
                          "e.g. Breakout or SpaceInvaders")
    try:
        check_env_id(f"ALE/{game}-v5")
    except SpecError as exc:
        raise ConfigError(f"--game {game!r}: {exc}") from None


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add one ``--field-name`` option per :class:`A2cConfig` field (help = the field's doc)."""
    config_cli.add_arguments(parser, A2cConfig, choices={"backend": BACKENDS, "optimizer": OPTIMIZERS})


def config_from_args(args: argparse.Namespace) -> A2cConfig:
    """Build a validated config: defaults, then a resumed run's ``config.json``, then the given flags."""
    config = A2cConfig.from_dict(config_cli.resolve_values(A2cConfig, args, ConfigError))
    config.validate()
    return config
