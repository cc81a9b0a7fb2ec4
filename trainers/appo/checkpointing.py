"""Checkpoints of an APPO run: an evaltk policy checkpoint plus the training state needed to resume.

Layout under ``<run>/checkpoints/``:

- ``ckpt_<train_step:09d>_<env_frames>/``: evaltk checkpoint (``policy.json`` + ``policy.safetensors``),
  loadable with ``evaltk.policies.load_policy``;
- ``ckpt_<...>.train/``: ``train_state.safetensors`` (Adam moments and steps, torch RNG states) and
  ``train_state.json`` (counters, param groups, numpy RNG state);
- ``latest.json``: names the newest complete pair. It is replaced atomically after both directories exist,
  so a crash mid-save leaves the previous checkpoint in force. Nothing is ever pickled.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from evaltk import checkpoint as evaltk_checkpoint
from evaltk.envs.doom import DoomScenario, action_spec, env_spec, obs_spec
from evaltk.errors import CheckpointError
from trainers.appo.config import AppoConfig
from trainers.appo.model import MODEL_CLASS
from trainers.appo.network import ActorCritic, model_kwargs
from trainers.common.state_io import latest_policy_path as latest_policy_path  # re-exported
from trainers.common.state_io import load_checkpoint_state, save_checkpoint


@dataclass(frozen=True)
class TrainState:
    """Everything besides the weights that ``--resume`` restores (``extra``: the learner's other tensors)."""

    train_step: int
    env_frames: int
    train_seconds: float
    resumes: int
    optimizer: dict[str, Any]
    torch_rng: torch.Tensor
    sampler_rng: torch.Tensor
    extra: dict[str, torch.Tensor] = field(default_factory=dict)


def policy_spec(cfg: AppoConfig, scenario: DoomScenario, model: ActorCritic, env_frames: int, train_step: int
                ) -> evaltk_checkpoint.CheckpointSpec:
    """Return the evaltk ``policy.json`` contents for this model and scenario."""
    return evaltk_checkpoint.CheckpointSpec(
        model_class=MODEL_CLASS,
        model_kwargs=model_kwargs(model),
        obs_spec=obs_spec(scenario),
        action_spec=action_spec(scenario),
        env=env_spec(scenario).to_json(),
        provenance=evaltk_checkpoint.default_provenance(
            trainer="trainers.appo", env_frames=env_frames, train_step=train_step, seed=cfg.seed,
            config=cfg.to_dict()),
    )


def save(run_dir: Path, cfg: AppoConfig, scenario: DoomScenario, model: ActorCritic, state: TrainState) -> Path:
    """Write a checkpoint pair, point ``latest.json`` at it, prune old ones; returns the policy checkpoint path."""
    name = f"ckpt_{state.train_step:09d}_{state.env_frames}"
    meta = {"train_step": state.train_step, "env_frames": state.env_frames, "train_seconds": state.train_seconds,
            "resumes": state.resumes}
    return save_checkpoint(run_dir, name, policy_spec(cfg, scenario, model, state.env_frames, state.train_step),
                           model.state_dict(), state.optimizer,
                           {"rng.torch": state.torch_rng, "rng.sampler": state.sampler_rng,
                            **{f"extra.{k}": v for k, v in state.extra.items()}}, meta,
                           keep=cfg.keep_checkpoints)


def load_latest(run_dir: Path) -> tuple[evaltk_checkpoint.Checkpoint, TrainState]:
    """Load the newest checkpoint pair of ``run_dir``; :class:`CheckpointError` if there is none."""
    policy, tensors, meta, optimizer = load_checkpoint_state(run_dir)
    try:
        state = TrainState(
            train_step=int(meta["train_step"]), env_frames=int(meta["env_frames"]),
            train_seconds=float(meta["train_seconds"]), resumes=int(meta["resumes"]), optimizer=optimizer,
            torch_rng=tensors["rng.torch"], sampler_rng=tensors["rng.sampler"],
            extra={k.removeprefix("extra."): v for k, v in tensors.items() if k.startswith("extra.")})
    except (KeyError, TypeError, ValueError) as exc:
        raise CheckpointError(f"--resume: the training state of {run_dir} lacks or mangles a field ({exc}); "
                              "start a new run in another --out") from None
    return policy, state
