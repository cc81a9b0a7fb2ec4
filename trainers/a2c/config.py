"""A2C+V-trace configuration: one typed frozen dataclass whose fields (type, default, one-line doc) become the CLI."""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evaltk.errors import EvaltkError


class ConfigError(EvaltkError):
    """An A2C option is out of range, inconsistent with another option, or names an unknown game."""


def _doc(text: str, **kw: Any) -> Any:
    return field(metadata={"doc": text}, **kw)


BACKENDS = ("cpu", "cuda")
OPTIMIZERS = ("rmsprop", "adam")


@dataclass(frozen=True)
class A2cConfig:
    """Every knob of an A2C+V-trace run. Derived values are properties (marked derived), never stored."""

    game: str = _doc("Atari game as in ALE/<Game>-v5, e.g. Breakout, Pong, SpaceInvaders", default="Breakout")
    out: str = _doc("run folder (config.json, metrics.jsonl, tb/, checkpoints/)", default="runs/a2c")
    seed: int = _doc("seed of the weights, action sampling and env seeds", default=0)
    backend: str = _doc("gpu_env backend: cpu or cuda (every tensor lives on its device)", default="cpu")
    max_seconds: float = _doc("stop after this many seconds of training wall time (0 = no limit)", default=0.0)
    max_frames: int = _doc("stop after this many frames (agent steps x frame_skip, all envs; 0 = no limit)",
                           default=0)
    resume: bool = _doc("continue the run in --out from its latest checkpoint", default=False)

    num_envs: int = _doc("emulators stepped as one batch", default=32)
    rollout: int = _doc("agent steps per env between updates (CuLE: 5-20)", default=5)
    num_minibatches: int = _doc("updates per rollout, each on its own group of envs; group g is g updates stale "
                                "(CuLE's minibatch lag, corrected by V-trace); 1 = plain on-policy A2C", default=2)
    repeat_action_probability: float = _doc("sticky-action probability (ALE v5: 0.25)", default=0.25)
    noop_max: int = _doc("random no-ops at episode start (AtariPreprocessing)", default=30)
    frame_skip: int = _doc("emulator frames per agent step, max-pooled over the last two", default=4)
    stack_size: int = _doc("frames stacked per observation", default=4)
    life_loss_cut: bool = _doc("training signal only: a lost life ends the discounted return (no env reset; "
                               "evaluation uses plain v5 episodes)", default=True)
    clip_rewards: bool = _doc("train on sign(reward); episode returns are logged unclipped", default=True)

    gamma: float = _doc("discount", default=0.99)
    vtrace_rho: float = _doc("V-trace rho-bar (importance weight clip)", default=1.0)
    vtrace_c: float = _doc("V-trace c-bar (trace cutting)", default=1.0)
    value_coef: float = _doc("value loss coefficient", default=0.5)
    entropy_coef: float = _doc("entropy bonus coefficient", default=0.01)
    optimizer: str = _doc("rmsprop or adam", default="rmsprop")
    learning_rate: float = _doc("optimizer learning rate", default=7e-4)
    rmsprop_alpha: float = _doc("RMSprop smoothing constant", default=0.99)
    optimizer_eps: float = _doc("optimizer epsilon", default=1e-5)
    max_grad_norm: float = _doc("gradient norm clip", default=0.5)

    torch_threads: int = _doc("torch intra-op threads (CPU)", default=1)
    env_threads: int = _doc("emulator threads of the cpu backend (0 = its default)", default=1)
    save_every_s: float = _doc("seconds between checkpoints", default=120.0)
    keep_checkpoints: int = _doc("newest checkpoints kept", default=2)
    log_every_s: float = _doc("seconds between console/metrics lines", default=10.0)
    stats_window: int = _doc("episodes in the running mean episode return", default=100)

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
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - names)
        if unknown:
            raise ConfigError(f"unknown A2C option(s) {unknown}; valid options: {sorted(names)}")
        return cls(**data)


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
    for f in dataclasses.fields(A2cConfig):
        flag = "--" + f.name.replace("_", "-")
        doc = f.metadata.get("doc", "")
        default = f.default
        if isinstance(default, bool):
            parser.add_argument(flag, action=argparse.BooleanOptionalAction, default=None,
                                help=f"{doc} (default {default})")
        elif f.name in ("backend", "optimizer"):
            parser.add_argument(flag, choices=BACKENDS if f.name == "backend" else OPTIMIZERS, default=None,
                                help=f"{doc} (default {default})")
        else:
            parser.add_argument(flag, type=type(default), default=None, help=f"{doc} (default {default})")


def config_from_args(args: argparse.Namespace) -> A2cConfig:
    """Build a validated config: defaults, then a resumed run's ``config.json``, then the given flags."""
    values: dict[str, Any] = {}
    flags = {f.name: getattr(args, f.name) for f in dataclasses.fields(A2cConfig)
             if getattr(args, f.name, None) is not None}
    if flags.get("resume"):
        saved = Path(flags.get("out", A2cConfig.out)) / "config.json"
        if saved.is_file():
            try:
                values.update(json.loads(saved.read_text(encoding="utf-8"))["config"])
            except (ValueError, KeyError, TypeError) as exc:
                raise ConfigError(f"--resume: {saved} is unreadable ({exc}): start a new run in another --out"
                                  ) from None
    values.update(flags)
    config = A2cConfig.from_dict(values)
    config.validate()
    return config
