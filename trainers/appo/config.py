"""APPO configuration: typed frozen dataclasses whose fields (type, default, one-line doc) become the CLI.

:class:`AppoConfig` is the training run's; :class:`DemoSettings` (``--record-demos``) and :class:`BcSettings`
(``--bc``) are the recording's and the cloning's, kept here so that building the command line imports neither
ViZDoom nor torch.
"""

from __future__ import annotations

import argparse
import json
import math
from dataclasses import dataclass
from typing import Any, Literal

from evaltk.errors import EvaltkError
from trainers.common import config_cli
from trainers.common.config_cli import TrainerConfig, doc_field, trainer_default

#: ``--advantage`` values.
ADVANTAGES = ("vtrace", "gae")
#: ``--nonlinearity`` values.
NONLINEARITIES = ("elu", "relu")
#: ``--encoder-precision`` values (see :func:`trainers.appo.network.encoder_dtype`).
ENCODER_PRECISIONS = ("auto", "bf16", "fp32")


class ConfigError(EvaltkError):
    """An APPO option is out of range or inconsistent with another option."""


@dataclass(frozen=True, kw_only=True)
class AppoConfig(TrainerConfig, error=ConfigError, label="APPO"):
    """APPO's own knobs (with :class:`TrainerConfig`'s); derived values are properties, never stored."""

    scenario: str = doc_field("Doom scenario name (evaltk.envs.doom.SCENARIOS)", default="basic")
    out: str = trainer_default("out", "runs/appo_doom")
    env_frames: int = doc_field("stop after this many env frames (steps x frameskip; 0 = no limit)", default=0)
    serial: bool = doc_field("run every component in this process (debugging; same code paths)", default=False)
    sampler_only: bool = doc_field("benchmark: uniform random actions, no forward pass, no learning", default=False)

    num_workers: int = doc_field("rollout worker processes", default=2)
    envs_per_worker: int = doc_field("envs stepped by each worker", default=8)
    worker_splits: int = doc_field("groups of envs per worker stepped alternately (double buffering)", default=2)
    rollout: int = doc_field("agent steps per trajectory (also the GRU unroll length)", default=32)
    batch_size: int = doc_field("samples (agent steps) per SGD step", default=512)
    max_policy_lag: int = doc_field("samples older than this many SGD steps are masked out", default=25)
    resolution: str = doc_field("render resolution (vizdoom.ScreenResolution name); '' = scenario's", default="")
    obs_height: int = doc_field("observation height after resize (0 = scenario's)", default=0)
    obs_width: int = doc_field("observation width after resize (0 = scenario's)", default=0)
    frameskip: int = doc_field("tics per agent step (0 = scenario's)", default=0)

    advantage: Literal["vtrace", "gae"] = doc_field("advantage estimator", default="vtrace")
    gae_lambda: float = doc_field("lambda of GAE (and of V-trace's c traces)", default=1.0)
    ppo_clip: float = doc_field("PPO ratio clip (ratio in [1/(1+c), 1+c])", default=0.1)
    entropy_coef: float = trainer_default("entropy_coef", 0.003)
    learning_rate: float = trainer_default("learning_rate", 3e-4)
    adam_eps: float = doc_field("Adam epsilon", default=1e-6)
    max_grad_norm: float = trainer_default("max_grad_norm", 4.0)
    normalize_obs: bool = doc_field("running mean/std observation normalisation (saved with the weights)", default=True)

    hidden_size: int = doc_field("encoder output features", default=512)
    rnn_size: int = doc_field("GRU hidden size", default=512)
    nonlinearity: str = doc_field("activation of the encoder: elu (Sample Factory's Doom default) or relu",
                                  default="elu")

    encoder_precision: Literal["auto", "bf16", "fp32"] = doc_field(
        "arithmetic of the encoder (convolutions and FC) in training, in the learner and in inference: bf16 keeps "
        "fp32 weights, gradients and optimizer state, and fp32 for the GRU, the heads and the losses; auto = bf16 "
        "where the CPU has bf16 instructions (AVX512-BF16 or AMX), fp32 elsewhere. Evaluation is fp32",
        default="auto")
    learner_threads: int = doc_field("torch intra-op threads of the learner", default=1)
    inference_threads: int = doc_field("torch intra-op threads of the inference thread", default=1)
    inference_wait_ms: float = doc_field(
        "after the first request for actions, wait up to this long for more before a forward pass (until half "
        "the worker splits have asked): fewer, larger passes cost less CPU per sample", default=3.0)
    packed_inference: bool = doc_field(
        "inference's forward pass on oneDNN with the weights packed once per policy version "
        "(trainers/appo/packed.py; same model and fp32 arithmetic); off: the model's own layers", default=True)
    save_every_s: float = trainer_default("save_every_s", 60.0)
    log_every_s: float = trainer_default("log_every_s", 5.0)
    worker_timeout_s: float = doc_field("a worker silent this long is declared hung and restarted", default=30.0)
    worker_start_timeout_s: float = doc_field(
        "a worker that has not begun stepping (its imports and engines started) this long after its start is "
        "declared hung and restarted", default=120.0)
    queue_timeout_s: float = doc_field("longest a component waits on one queue before re-checking health", default=1.0)
    max_restarts: int = doc_field("give up after this many worker restarts", default=10)

    init_from: str = doc_field(
        "an evaltk checkpoint of the same model (e.g. a behaviour-cloned OUT/policy, or hf://ORG/REPO[@REV]) whose "
        "weights and observation statistics start a new run ('' = random initialisation; ignored when resuming)",
        default="")
    reward_shaping: str = doc_field(
        "JSON object of shaping coefficients replacing the scenario's: game variable -> reward per unit increase, "
        "'VAR:neg' -> per unit decrease, e.g. '{\"FRAGCOUNT\": 1, \"DEATHCOUNT\": -0.75}' ('' = the scenario's)",
        default="")
    bc_demos: str = doc_field("demonstrations folder for the behaviour-cloning auxiliary loss ('' = none)", default="")
    bc_coef: float = doc_field("initial coefficient of the behaviour-cloning auxiliary loss", default=0.0)
    bc_decay_steps: int = doc_field(
        "SGD steps over which the auxiliary coefficient falls linearly to 0 (0 = it stays at --bc-coef)", default=0)
    bc_streams: int = doc_field(
        "demonstration streams per batch of cloning (--bc) and of the auxiliary loss, each --rollout steps long",
        default=16)
    dagger_teacher: str = doc_field(
        "DAgger: an evaltk checkpoint of a privileged teacher (its scenario marks players, e.g. "
        "suites/checkpoints/appo_duel) that relabels every step of the student's own rollouts from the marked "
        "observation of the same frame; the student (--scenario, which must not mark players) learns the teacher's "
        "action probabilities and value and, with an auxiliary head, where the other players are ('' = APPO)",
        default="")
    dagger_beta: float = doc_field(
        "DAgger: probability that a step executes the teacher's sampled action instead of the student's", default=0.0)
    dagger_beta_steps: int = doc_field(
        "DAgger: SGD steps over which --dagger-beta falls linearly to 0 (0 = it stays)", default=0)
    dagger_epochs: int = doc_field("DAgger: SGD steps the learner takes on each batch", default=1)
    dagger_value_coef: float = doc_field("DAgger: weight of the squared error to the teacher's value", default=0.5)
    dagger_players_coef: float = doc_field(
        "DAgger: weight of the auxiliary players-position head's binary cross-entropy (labels buffer, training only)",
        default=1.0)

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

    def check(self) -> None:
        """Raise :class:`ConfigError` naming the first bad value and how to fix it."""
        super().check()
        self.check_at_least(1, "num_workers", "envs_per_worker", "worker_splits", "rollout", "batch_size",
                            "hidden_size", "rnn_size", "learner_threads", "inference_threads")
        if self.envs_per_worker % self.worker_splits:
            raise ConfigError(f"--envs-per-worker {self.envs_per_worker} must be a multiple of --worker-splits "
                              f"{self.worker_splits}; use an even number of envs or --worker-splits 1")
        if self.batch_size % self.rollout:
            raise ConfigError(f"--batch-size {self.batch_size} must be a multiple of --rollout {self.rollout}")
        self.check_choice("nonlinearity", NONLINEARITIES)
        self.check_choice("advantage", ADVANTAGES)
        self.check_choice("encoder_precision", ENCODER_PRECISIONS)
        self.check_finite("worker_timeout_s", "worker_start_timeout_s", positive=True)
        self.check_finite("inference_wait_ms", positive=False)
        if self.bc_coef < 0 or self.bc_decay_steps < 0 or self.bc_streams < 1:
            raise ConfigError("--bc-coef and --bc-decay-steps must be >= 0 and --bc-streams >= 1")
        if not 0.0 <= self.dagger_beta <= 1.0 or self.dagger_beta_steps < 0 or self.dagger_epochs < 1:
            raise ConfigError(f"--dagger-beta {self.dagger_beta} must be in [0, 1], --dagger-beta-steps >= 0 and "
                              f"--dagger-epochs >= 1 (got {self.dagger_epochs})")
        if self.dagger_value_coef < 0 or self.dagger_players_coef < 0:
            raise ConfigError("--dagger-value-coef and --dagger-players-coef must be >= 0")
        if self.dagger_teacher and self.bc_coef > 0:
            raise ConfigError("--dagger-teacher trains on the teacher's labels only; drop --bc-coef")
        if self.bc_coef > 0 and not self.bc_demos:
            raise ConfigError(f"--bc-coef {self.bc_coef} needs --bc-demos DIR (a folder written by --record-demos)")
        shaping_from_json(self.reward_shaping)
        self.check_at_least(0, "env_frames")


def shaping_from_json(text: str) -> dict[str, float] | None:
    """Parse ``--reward-shaping`` (None when empty); :class:`ConfigError` names what is wrong."""
    if not text:
        return None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"--reward-shaping is not JSON ({exc.msg}); write an object such as "
                          "'{\"FRAGCOUNT\": 1, \"DEATHCOUNT\": -0.75}'") from None
    if not isinstance(data, dict) or not all(isinstance(v, (int, float)) for v in data.values()):
        raise ConfigError("--reward-shaping must be a JSON object of numbers, e.g. '{\"FRAGCOUNT\": 1}'")
    return {str(k): float(v) for k, v in data.items()}


def dagger_beta(cfg: AppoConfig, step: int) -> float:
    """Return the probability of executing the teacher's action at SGD step ``step``: ``dagger_beta`` falling to 0."""
    if cfg.dagger_beta_steps == 0:
        return cfg.dagger_beta
    return cfg.dagger_beta * max(0.0, 1.0 - step / cfg.dagger_beta_steps)


def bc_coefficient(cfg: AppoConfig, step: int) -> float:
    """Return the behaviour-cloning auxiliary coefficient at SGD step ``step``: linear from ``bc_coef`` to 0."""
    if cfg.bc_decay_steps == 0:
        return cfg.bc_coef
    return cfg.bc_coef * max(0.0, 1.0 - step / cfg.bc_decay_steps)


@dataclass(frozen=True)
class DemoSettings:
    """What :func:`trainers.appo.demos.record` plays: ``episodes`` matches of ``timelimit_min`` game minutes."""

    out: str
    scenario: str = "duel"
    episodes: int = doc_field("episodes DIR should hold", default=10)
    timelimit_min: float = doc_field("game minutes per episode", default=4.0)
    bots: int = doc_field("ViZDoom bots per episode (1: a duel)", default=1)
    map: str = doc_field("cig.wad map of the episodes", default="map01")
    seed: int = 0
    chunk_steps: int = 512
    max_seconds: float = 0.0


#: The command-line flags of the :class:`DemoSettings` fields that have one (``--record-demos`` is ``out``; the
#: scenario, seed and time limit are the APPO config's), in the order ``--help`` lists them.
DEMO_FLAGS = {"episodes": "--demo-episodes", "timelimit_min": "--demo-timelimit", "bots": "--demo-bots",
              "map": "--demo-map"}


@dataclass(frozen=True)
class BcSettings:
    """Behaviour-cloning knobs of :func:`trainers.appo.bc.train`.

    The network, learning rate, seed, time limit and ``out`` are the APPO config's.
    """

    demos: str
    seq_len: int = 32
    streams: int = 16
    class_balance: float = doc_field("class weight exponent: 0 = plain cross-entropy, 1 = inverse frequency",
                                     default=0.5)
    max_class_weight: float = 10.0
    value_coef: float = 0.5
    gamma: float = 0.99
    max_steps: int = doc_field("SGD steps of cloning (0 = until --max-seconds)", default=0)
    log_every: int = 20


#: The command-line flags of the :class:`BcSettings` fields that have one (``--bc`` is ``demos``; ``seq_len`` and
#: ``streams`` are ``--rollout`` and ``--bc-streams``), in the order ``--help`` lists them.
BC_FLAGS = {"max_steps": "--bc-steps", "class_balance": "--bc-class-balance"}


def add_arguments(parser: argparse.ArgumentParser, *, skip: tuple[str, ...] = ()) -> None:
    """Add one ``--field-name`` option per :class:`AppoConfig` field (help = the field's doc)."""
    config_cli.add_arguments(parser, AppoConfig, choices={"advantage": ADVANTAGES,
                                                          "encoder_precision": ENCODER_PRECISIONS}, skip=skip)


def config_from_args(args: argparse.Namespace, **overrides: Any) -> AppoConfig:
    """Build a checked config from parsed args: defaults, then a resumed run's config.json, then flags."""
    return AppoConfig.from_args(args, overrides)
