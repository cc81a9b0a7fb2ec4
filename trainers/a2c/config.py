"""A2C+V-trace configuration: one typed frozen dataclass whose fields (type, default, one-line doc) become the CLI."""

from __future__ import annotations

import argparse
from dataclasses import dataclass

from evaltk.errors import EvaltkError
from trainers.common import config_cli
from trainers.common.config_cli import TrainerConfig, doc_field, trainer_default


class ConfigError(EvaltkError):
    """An A2C option is out of range, inconsistent with another option, or names an unknown game."""


BACKENDS = ("cpu", "cuda")
OPTIMIZERS = ("rmsprop", "adam")


@dataclass(frozen=True, kw_only=True)
class A2cConfig(TrainerConfig, error=ConfigError, label="A2C"):
    """A2C+V-trace's knobs besides the shared ones; derived values are properties (marked derived), never stored."""

    game: str = doc_field("Atari game as in ALE/<Game>-v5, e.g. Breakout, Pong, SpaceInvaders", default="Breakout")
    out: str = trainer_default("out", "runs/a2c")
    backend: str = doc_field("gpu_env backend: cpu or cuda (every tensor lives on its device)", default="cpu")
    max_frames: int = doc_field("stop after this many frames (agent steps x frame_skip, all envs; 0 = no limit)",
                                default=0)

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

    entropy_coef: float = trainer_default("entropy_coef", 0.01)
    optimizer: str = doc_field("rmsprop or adam", default="rmsprop")
    learning_rate: float = trainer_default("learning_rate", 7e-4)
    rmsprop_alpha: float = doc_field("RMSprop smoothing constant", default=0.99)
    optimizer_eps: float = doc_field("optimizer epsilon", default=1e-5)
    max_grad_norm: float = trainer_default("max_grad_norm", 0.5)

    torch_threads: int = doc_field("torch intra-op threads (CPU)", default=1)
    env_threads: int = doc_field("emulator threads of the cpu backend (0 = its default)", default=1)
    save_every_s: float = trainer_default("save_every_s", 120.0)
    log_every_s: float = trainer_default("log_every_s", 10.0)

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

    def check(self) -> None:
        """Raise :class:`ConfigError` naming the first bad value and how to fix it."""
        super().check()
        self.check_at_least(1, "num_envs", "rollout", "num_minibatches", "frame_skip", "stack_size", "torch_threads")
        self.check_at_least(0, "env_threads", "noop_max", "max_frames")
        if self.num_envs % self.num_minibatches:
            raise ConfigError(f"--num-envs {self.num_envs} must be a multiple of --num-minibatches "
                              f"{self.num_minibatches}: each update takes an equal group of envs")
        self.check_choice("backend", BACKENDS)
        self.check_choice("optimizer", OPTIMIZERS)
        if not 0.0 <= self.repeat_action_probability <= 1.0:
            raise ConfigError(f"--repeat-action-probability must be in [0, 1], got {self.repeat_action_probability}")
        self.check_finite("optimizer_eps", positive=True)
        if not 0.0 <= self.rmsprop_alpha < 1.0:
            raise ConfigError(f"--rmsprop-alpha must be in [0, 1), got {self.rmsprop_alpha}")
        check_game(self.game)

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
    """Build a checked config: defaults, then a resumed run's ``config.json``, then the given flags."""
    return A2cConfig.from_args(args)
