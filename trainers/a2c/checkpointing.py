"""Checkpoints of an A2C run: an evaltk policy checkpoint plus the training state ``--resume`` needs.

Layout under ``<run>/checkpoints/``:

- ``ckpt_<updates:09d>_<frames>/``: evaltk checkpoint (``policy.json`` + ``policy.safetensors``). Its env spec
  is ``ALE/<Game>-v5`` with ``frameskip=1`` and the trainer's sticky-action probability, wrapped in
  gymnasium's ``AtariPreprocessing`` (no-ops, frame skip, 84x84 grayscale, ``terminal_on_life_loss`` off)
  and ``FrameStackObservation``: what ``evaltk evaluate`` rebuilds in gymnasium;
- ``ckpt_<...>.train/``: ``train_state.safetensors`` (optimizer moments and steps, torch RNG state) and
  ``train_state.json`` (counters, optimizer param groups);
- ``latest.json``: names the newest complete pair; replaced atomically after both directories exist.

Nothing is ever pickled.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from evaltk import checkpoint as evaltk_checkpoint
from evaltk.envs.spec import EnvSpec
from evaltk.errors import CheckpointError
from trainers.a2c.config import A2cConfig
from trainers.a2c.model import MODEL_CLASS, NatureActorCritic, model_kwargs
from trainers.common.state_io import latest_policy_path as latest_policy_path  # re-exported
from trainers.common.state_io import load_checkpoint_state, save_checkpoint


@dataclass(frozen=True)
class TrainState:
    """Everything besides the weights that ``--resume`` restores."""

    updates: int
    frames: int
    episodes: int
    train_seconds: float
    resumes: int
    optimizer: dict[str, Any]
    sampler_rng: torch.Tensor


def env_spec(cfg: A2cConfig) -> EnvSpec:
    """Return the resolved evaltk env spec of the trainer's environment (gymnasium equivalent of its gpu_env)."""
    from evaltk.envs.atari import atari_env

    return atari_env(
        cfg.env_id, kwargs={"frameskip": 1, "repeat_action_probability": cfg.repeat_action_probability},
        atari_preprocessing={"noop_max": cfg.noop_max, "frame_skip": cfg.frame_skip, "screen_size": 84,
                             "terminal_on_life_loss": False, "grayscale_obs": True},
        frame_stack=cfg.stack_size)


def policy_spec(cfg: A2cConfig, model: NatureActorCritic, frames: int, updates: int
                ) -> evaltk_checkpoint.CheckpointSpec:
    """Return the evaltk ``policy.json`` contents for this model and config."""
    from evaltk.envs import describe

    info = describe(env_spec(cfg))
    return evaltk_checkpoint.CheckpointSpec(
        model_class=MODEL_CLASS, model_kwargs=model_kwargs(model), obs_spec=info.obs_spec,
        action_spec=info.action_spec, env=info.env.to_json(),
        provenance=evaltk_checkpoint.default_provenance(
            trainer="trainers.a2c_vtrace", env_frames=frames, updates=updates, seed=cfg.seed,
            config=cfg.to_dict()))


def save(run_dir: Path, cfg: A2cConfig, model: NatureActorCritic, state: TrainState) -> Path:
    """Write a checkpoint pair, point ``latest.json`` at it, prune old ones; returns the policy checkpoint path."""
    name = f"ckpt_{state.updates:09d}_{state.frames}"
    meta = {"updates": state.updates, "frames": state.frames, "episodes": state.episodes,
            "train_seconds": state.train_seconds, "resumes": state.resumes}
    return save_checkpoint(run_dir, name, policy_spec(cfg, model, state.frames, state.updates), model.state_dict(),
                           state.optimizer, {"rng.sampler": state.sampler_rng}, meta, keep=cfg.keep_checkpoints)


def load_latest(run_dir: Path) -> tuple[evaltk_checkpoint.Checkpoint, TrainState]:
    """Load the newest checkpoint pair of ``run_dir``; :class:`CheckpointError` if there is none."""
    policy, tensors, meta, optimizer = load_checkpoint_state(run_dir)
    try:
        state = TrainState(
            updates=int(meta["updates"]), frames=int(meta["frames"]), episodes=int(meta["episodes"]),
            train_seconds=float(meta["train_seconds"]), resumes=int(meta["resumes"]), optimizer=optimizer,
            sampler_rng=tensors["rng.sampler"])
    except (KeyError, TypeError, ValueError) as exc:
        raise CheckpointError(f"--resume: the training state of {run_dir} lacks or mangles a field ({exc}); "
                              "start a new run in another --out") from None
    return policy, state
