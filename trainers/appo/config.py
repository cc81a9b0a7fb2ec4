"""APPO configuration: one typed frozen dataclass whose fields (type, default, one-line doc) become the CLI."""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from evaltk.errors import EvaltkError


class ConfigError(EvaltkError):
    """An APPO option is out of range or inconsistent with another option."""


def _doc(text: str, **kw: Any) -> Any:
    return field(metadata={"doc": text}, **kw)


@dataclass(frozen=True)
class AppoConfig:
    """Every knob of an APPO run. Derived values are properties (marked derived), never stored."""

    scenario: str = _doc("Doom scenario name (evaltk.envs.doom.SCENARIOS)", default="basic")
    out: str = _doc("run folder (config.json, metrics.jsonl, events, checkpoints/)", default="runs/appo_doom")
    seed: int = _doc("seed of the weights, action sampling and env seeds", default=0)
    max_seconds: float = _doc("stop after this many seconds of training wall time (0 = no limit)", default=0.0)
    env_frames: int = _doc("stop after this many env frames (steps x frameskip; 0 = no limit)", default=0)
    serial: bool = _doc("run every component in this process (debugging; same code paths)", default=False)
    resume: bool = _doc("continue the run in --out from its latest checkpoint", default=False)
    sampler_only: bool = _doc("benchmark: uniform random actions, no forward pass, no learning", default=False)

    num_workers: int = _doc("rollout worker processes", default=2)
    envs_per_worker: int = _doc("envs stepped by each worker", default=8)
    worker_splits: int = _doc("groups of envs per worker stepped alternately (double buffering)", default=2)
    rollout: int = _doc("agent steps per trajectory (also the GRU unroll length)", default=32)
    batch_size: int = _doc("samples (agent steps) per SGD step", default=512)
    max_policy_lag: int = _doc("samples older than this many SGD steps are masked out", default=25)
    resolution: str = _doc("render resolution (vizdoom.ScreenResolution name); '' = scenario's", default="")
    obs_height: int = _doc("observation height after resize (0 = scenario's)", default=0)
    obs_width: int = _doc("observation width after resize (0 = scenario's)", default=0)
    frameskip: int = _doc("tics per agent step (0 = scenario's)", default=0)

    advantage: Literal["vtrace", "gae"] = _doc("advantage estimator", default="vtrace")
    gamma: float = _doc("discount", default=0.99)
    gae_lambda: float = _doc("lambda of GAE (and of V-trace's c traces)", default=1.0)
    vtrace_rho: float = _doc("V-trace rho-bar (importance weight clip)", default=1.0)
    vtrace_c: float = _doc("V-trace c-bar (trace cutting)", default=1.0)
    ppo_clip: float = _doc("PPO ratio clip (ratio in [1/(1+c), 1+c])", default=0.1)
    value_coef: float = _doc("value loss coefficient", default=0.5)
    entropy_coef: float = _doc("entropy bonus coefficient", default=0.003)
    learning_rate: float = _doc("Adam learning rate", default=3e-4)
    adam_eps: float = _doc("Adam epsilon", default=1e-6)
    max_grad_norm: float = _doc("gradient norm clip", default=4.0)
    normalize_obs: bool = _doc("running mean/std observation normalisation (saved with the weights)", default=True)

    hidden_size: int = _doc("encoder output features", default=512)
    rnn_size: int = _doc("GRU hidden size", default=512)
    nonlinearity: str = _doc("activation of the encoder: elu (Sample Factory's Doom default) or relu", default="elu")

    learner_threads: int = _doc("torch intra-op threads of the learner", default=1)
    inference_threads: int = _doc("torch intra-op threads of the inference thread", default=1)
    save_every_s: float = _doc("seconds between checkpoints", default=60.0)
    keep_checkpoints: int = _doc("newest checkpoints kept", default=2)
    log_every_s: float = _doc("seconds between console/metrics lines", default=5.0)
    worker_timeout_s: float = _doc("a worker silent this long is declared hung and restarted", default=30.0)
    queue_timeout_s: float = _doc("longest a component waits on one queue before re-checking health", default=1.0)
    max_restarts: int = _doc("give up after this many worker restarts", default=10)
    stats_window: int = _doc("episodes in the running mean episode reward", default=100)

    # -- derived (computed from the fields above, never set directly) -------------------------------------
    @property
    def num_envs(self) -> int:
        """Derived: total envs."""
        return self.num_workers * self.envs_per_worker

    @property
    def envs_per_split(self) -> int:
        """Derived: envs per double-buffering group."""
        return self.envs_per_worker // self.worker_splits

    @property
    def batch_trajectories(self) -> int:
        """Derived: trajectories per SGD step."""
        return self.batch_size // self.rollout

    @property
    def slots_per_env(self) -> int:
        """Derived: trajectory slots per env, enough that the learner can always fill a batch."""
        return max(2, math.ceil(self.batch_trajectories / self.num_envs) + 1)

    def validate(self) -> None:
        """Raise :class:`ConfigError` naming the first bad value and how to fix it."""
        positive = ("num_workers", "envs_per_worker", "worker_splits", "rollout", "batch_size", "hidden_size",
                    "rnn_size", "learner_threads", "inference_threads", "keep_checkpoints")
        for name in positive:
            if getattr(self, name) < 1:
                raise ConfigError(f"--{name.replace('_', '-')} must be >= 1, got {getattr(self, name)}")
        if self.envs_per_worker % self.worker_splits:
            raise ConfigError(f"--envs-per-worker {self.envs_per_worker} must be a multiple of --worker-splits "
                              f"{self.worker_splits}; use an even number of envs or --worker-splits 1")
        if self.batch_size % self.rollout:
            raise ConfigError(f"--batch-size {self.batch_size} must be a multiple of --rollout {self.rollout}")
        if self.nonlinearity not in ("elu", "relu"):
            raise ConfigError(f"--nonlinearity must be 'elu' or 'relu', got {self.nonlinearity!r}")
        if self.advantage not in ("vtrace", "gae"):
            raise ConfigError(f"--advantage must be 'vtrace' or 'gae', got {self.advantage!r}")
        if not 0.0 < self.gamma <= 1.0:
            raise ConfigError(f"--gamma must be in (0, 1], got {self.gamma}")
        if self.max_seconds < 0 or self.env_frames < 0:
            raise ConfigError("--max-seconds and --env-frames must be >= 0 (0 means no limit)")

    def to_dict(self) -> dict[str, Any]:
        """All fields as a JSON-ready dict."""
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> AppoConfig:
        """Build from a dict (e.g. a run's ``config.json``); unknown keys raise :class:`ConfigError`."""
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - names)
        if unknown:
            raise ConfigError(f"unknown APPO option(s) {unknown}; valid options: {sorted(names)}")
        return cls(**data)


def add_arguments(parser: argparse.ArgumentParser, *, skip: tuple[str, ...] = ()) -> None:
    """Add one ``--field-name`` option per :class:`AppoConfig` field (help = the field's doc)."""
    for f in dataclasses.fields(AppoConfig):
        if f.name in skip:
            continue
        flag = "--" + f.name.replace("_", "-")
        doc = f.metadata.get("doc", "")
        default = f.default
        if isinstance(default, bool):
            parser.add_argument(flag, action=argparse.BooleanOptionalAction, default=None,
                                help=f"{doc} (default {default})")
        elif f.name == "advantage":
            parser.add_argument(flag, choices=["vtrace", "gae"], default=None, help=f"{doc} (default {default})")
        else:
            parser.add_argument(flag, type=type(default), default=None, help=f"{doc} (default {default})")


def config_from_args(args: argparse.Namespace, **overrides: Any) -> AppoConfig:
    """Build a validated config from parsed args: defaults, then a resumed run's config.json, then flags."""
    values: dict[str, Any] = {}
    flags = {f.name: getattr(args, f.name) for f in dataclasses.fields(AppoConfig)
             if getattr(args, f.name, None) is not None}
    flags.update({k: v for k, v in overrides.items() if v is not None})
    if flags.get("resume"):
        saved = Path(flags.get("out", AppoConfig.out)) / "config.json"
        if saved.is_file():
            values.update(json.loads(saved.read_text(encoding="utf-8"))["config"])
    values.update(flags)
    config = AppoConfig.from_dict(values)
    config.validate()
    return config
