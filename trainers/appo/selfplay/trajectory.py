"""A learning slot's match experience cut into fixed-length chunks, and chunks stacked into a learner batch.

A match of ``T`` decisions becomes ``ceil(T / rollout)`` chunks of ``rollout`` steps. Steps past the end
of the match are padding: their ``version`` is :data:`PAD_VERSION`, so the learner's policy-lag mask
(:class:`trainers.appo.learner.Learner`) drops them from every loss, as it drops stale samples.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from trainers.appo.learner import Batch, Learner
from trainers.appo.selfplay.population import Member

PAD_VERSION = -(2**40)
"""Version stamped on padding steps: their policy lag exceeds any ``--max-policy-lag``."""


@dataclass(frozen=True)
class Chunk:
    """``rollout`` steps of one slot.

    ``obs uint8[R+1, C, H, W]``, ``actions int64[R, K]``, ``logp``/``rewards float32[R]``, ``dones bool[R]``,
    ``version int64[R]``, ``rnn0 float32[rnn]``.
    """

    obs: np.ndarray
    actions: np.ndarray
    logp: np.ndarray
    rewards: np.ndarray
    dones: np.ndarray
    version: np.ndarray
    rnn0: np.ndarray


def load(path: Path) -> dict[str, np.ndarray]:
    """Read a trajectory file written by :func:`trainers.appo.selfplay.player.play_and_record`."""
    with np.load(path) as data:
        return {k: data[k] for k in ("obs", "actions", "logp", "rewards", "rnn0")}


def to_chunks(traj: dict[str, np.ndarray], rollout: int, version: int) -> list[Chunk]:
    """Cut one match (the last step is terminal) into chunks; ``version`` = the policy version that played it."""
    steps = int(traj["rewards"].shape[0])
    chunks: list[Chunk] = []
    obs_shape = traj["obs"].shape[1:]
    heads = traj["actions"].shape[1]
    for c, start in enumerate(range(0, steps, rollout)):
        n = min(rollout, steps - start)
        obs = np.zeros((rollout + 1, *obs_shape), dtype=np.uint8)
        obs[: n + 1] = traj["obs"][start : start + n + 1]
        actions = np.zeros((rollout, heads), dtype=np.int64)
        actions[:n] = traj["actions"][start : start + n]
        logp = np.zeros(rollout, dtype=np.float32)
        logp[:n] = traj["logp"][start : start + n]
        rewards = np.zeros(rollout, dtype=np.float32)
        rewards[:n] = traj["rewards"][start : start + n]
        dones = np.zeros(rollout, dtype=bool)
        dones[n - 1 :] = start + n == steps  # the match's last decision ends the episode; padding stays "done"
        ver = np.full(rollout, PAD_VERSION, dtype=np.int64)
        ver[:n] = version
        chunks.append(Chunk(obs, actions, logp, rewards, dones, ver, traj["rnn0"][c].astype(np.float32)))
    return chunks


def to_batch(chunks: list[Chunk]) -> Batch:
    """Stack chunks into a time-major :class:`~trainers.appo.learner.Batch` (``N = len(chunks)``)."""
    return Batch(
        obs=torch.from_numpy(np.stack([c.obs for c in chunks], axis=1)),
        actions=torch.from_numpy(np.stack([c.actions for c in chunks], axis=1)),
        behaviour_logp=torch.from_numpy(np.stack([c.logp for c in chunks], axis=1)),
        rewards=torch.from_numpy(np.stack([c.rewards for c in chunks], axis=1)),
        dones=torch.from_numpy(np.stack([c.dones for c in chunks], axis=1)),
        version=torch.from_numpy(np.stack([c.version for c in chunks], axis=1)),
        rnn0=torch.from_numpy(np.stack([c.rnn0 for c in chunks])),
    )


def train_chunks(learner: Learner, chunks: list[Chunk], need: int, epochs: int,
                 member: Member) -> dict[str, float]:
    """Train on every full batch of ``need`` chunks (removed from ``chunks``), ``epochs`` passes each.

    Returns the last step's losses with the policy-lag statistics of the real steps (the padding's lag is
    left out); sets ``member.train_step`` to the learner's version.
    """
    last: dict[str, float] = {}
    while len(chunks) >= need:
        batch = to_batch(chunks[:need])
        del chunks[:need]
        real = batch.version != PAD_VERSION
        for _ in range(epochs):
            lag = (learner.version - batch.version[real]).float()
            last = dict(learner.train(batch))
            last.update({"train/lag_min": float(lag.min()), "train/lag_avg": float(lag.mean()),
                         "train/lag_max": float(lag.max())})
        member.train_step = learner.version
    return last
