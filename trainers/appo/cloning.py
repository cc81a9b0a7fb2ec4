"""Behaviour cloning's loss and its data: demonstration streams, class weights, and APPO's auxiliary cloning term.

:mod:`trainers.appo.bc` trains a fresh model on these (the cloning stage); :class:`AuxiliaryCloning` is the
optional term the APPO learner adds to its loss (``--bc-demos``, ``--bc-coef``). See :mod:`trainers.appo.bc` for
the loss's definition.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import torch

from evaltk import seeding
from trainers.appo import demos
from trainers.appo.config import AppoConfig
from trainers.appo.gru import gru_sequence
from trainers.appo.network import ActorCritic, encoder_dtype, split_logits


def class_weights(counts: list[np.ndarray], balance: float, max_weight: float) -> list[np.ndarray]:
    """Per head, ``(count / max count) ** -balance`` clipped to ``max_weight`` (unseen classes get ``max_weight``).

    ``balance`` 0 gives all ones; 1 gives inverse frequency. Weights are then scaled so that their mean under
    the data's own class distribution is 1 (the loss keeps its scale).
    """
    out = []
    for c in counts:
        freq = c.astype(np.float64) / max(1.0, float(c.max()))
        w = np.where(freq > 0, np.power(np.maximum(freq, 1e-12), -balance), max_weight)
        w = np.minimum(w, max_weight)
        total = float(c.sum())
        if total > 0:
            w = w / float((w * c).sum() / total)
        out.append(w.astype(np.float32))
    return out


def action_counts(folder: Path, nvec: list[int]) -> list[np.ndarray]:
    """Count each head's choices over every chunk in ``folder`` (reads only the ``actions`` arrays)."""
    counts = [np.zeros(n, dtype=np.int64) for n in nvec]
    for episode in demos.episode_chunks(folder):
        for path in episode:
            with np.load(path, allow_pickle=False) as data:
                actions = data["actions"]
            for i, n in enumerate(nvec):
                counts[i] += np.bincount(actions[:, i], minlength=n)[:n]
    return counts


def _returns(paths: list[Path], gamma: float) -> np.ndarray:
    rewards = []
    for path in paths:
        with np.load(path, allow_pickle=False) as data:
            rewards.append(data["rewards"])
    r = np.concatenate(rewards).astype(np.float64)
    out = np.zeros_like(r)
    acc = 0.0
    for t in range(r.size - 1, -1, -1):
        acc = r[t] + gamma * acc
        out[t] = acc
    return out.astype(np.float32)


class DemoStreams:
    """``streams`` cursors over shuffled episodes; :meth:`next` returns the next ``seq_len`` steps of each.

    Returns time-major tensors: ``obs uint8[T, B, C, H, W]``, ``actions int64[T, B, K]``, ``resets bool[T, B]``
    (an episode starts at that step) and ``returns float32[T, B]``.
    """

    def __init__(self, folder: Path, streams: int, seq_len: int, gamma: float, rng: np.random.Generator) -> None:
        self.episodes = demos.episode_chunks(folder)
        self.streams, self.seq_len, self.gamma, self.rng = streams, seq_len, gamma, rng
        self.queue: list[int] = []
        self.cursors: list[dict[str, Any]] = [self._start() for _ in range(streams)]
        self.epochs = 0

    def _start(self) -> dict[str, Any]:
        if not self.queue:
            self.queue = [int(i) for i in self.rng.permutation(len(self.episodes))]
            self.epochs = getattr(self, "epochs", -1) + 1
        paths = self.episodes[self.queue.pop()]
        return {"paths": paths, "returns": _returns(paths, self.gamma), "chunk": -1, "data": None, "pos": 0,
                "step": 0}

    def _take(self, b: int, n: int) -> list[dict[str, np.ndarray]]:
        pieces: list[dict[str, np.ndarray]] = []
        while n > 0:
            cur = self.cursors[b]
            if cur["data"] is None or cur["pos"] >= len(cur["data"]["obs"]):
                cur["chunk"] += 1
                if cur["chunk"] >= len(cur["paths"]):
                    self.cursors[b] = self._start()
                    continue
                cur["data"], cur["pos"] = demos.load_chunk(cur["paths"][cur["chunk"]]), 0
            data, pos = cur["data"], cur["pos"]
            k = min(n, len(data["obs"]) - pos)
            piece = {key: data[key][pos:pos + k] for key in ("obs", "actions", "first")}
            piece["returns"] = cur["returns"][cur["step"]:cur["step"] + k]
            pieces.append(piece)
            cur["pos"] += k
            cur["step"] += k
            n -= k
        return pieces

    def next(self) -> dict[str, torch.Tensor]:
        """Return the next ``seq_len`` steps of every stream (see the class docstring)."""
        cols = []
        for b in range(self.streams):
            pieces = self._take(b, self.seq_len)
            cols.append({k: np.concatenate([p[k] for p in pieces]) for k in pieces[0]})
        return {
            "obs": torch.from_numpy(np.stack([c["obs"] for c in cols], axis=1)),
            "actions": torch.from_numpy(np.stack([c["actions"] for c in cols], axis=1).astype(np.int64)),
            "resets": torch.from_numpy(np.stack([c["first"] for c in cols], axis=1).astype(bool)),
            "returns": torch.from_numpy(np.stack([c["returns"] for c in cols], axis=1)),
        }


def bc_loss(model: ActorCritic, batch: dict[str, torch.Tensor], h0: torch.Tensor, weights: list[torch.Tensor],
            value_coef: float, dtype: torch.dtype | None) -> tuple[torch.Tensor, dict[str, float], torch.Tensor]:
    """Weighted cross-entropy (+ value regression) of a demonstration batch; returns (loss, metrics, last state)."""
    steps, streams = batch["actions"].shape[:2]
    flat = batch["obs"].reshape(steps * streams, *batch["obs"].shape[2:])
    feats = model.encode(flat, dtype).view(steps, streams, -1)
    keep = (~batch["resets"]).float().unsqueeze(-1)
    core = gru_sequence(model.core, feats, h0, keep)
    logits, values = model.actor(core), model.critic(core).squeeze(-1)
    ce = torch.zeros(())
    correct = []
    for i, head in enumerate(split_logits(logits, model.action_nvec)):
        target = batch["actions"][..., i].reshape(-1)
        flat_logits = head.reshape(-1, head.shape[-1])
        ce = ce + torch.nn.functional.cross_entropy(flat_logits, target, weight=weights[i])
        correct.append((flat_logits.argmax(-1) == target).float().mean())
    value = torch.mean((values - batch["returns"]) ** 2)
    loss = ce + value_coef * value
    metrics = {"bc/cross_entropy": float(ce.detach()), "bc/value_loss": float(value.detach()),
               **{f"bc/accuracy_{i}": float(c) for i, c in enumerate(correct)}}
    return loss, metrics, core[-1].detach()


class AuxiliaryCloning:
    """The optional behaviour-cloning term of APPO's loss (``--bc-demos``, ``--bc-coef``, ``--bc-decay-steps``).

    Each learner step adds ``bc_coefficient(cfg, step)`` times the class-weighted cross-entropy (no value term) of
    ``bc_streams`` demonstration streams of ``rollout`` steps, with their own carried GRU state; at coefficient 0
    no demonstration batch is read.
    """

    def __init__(self, model: ActorCritic, cfg: AppoConfig) -> None:
        folder = Path(cfg.bc_demos)
        self.model, self.cfg = model, cfg
        counts = action_counts(folder, model.action_nvec)
        # Plain cross-entropy: the policy being trained samples its own heads, so no class weights (which would
        # pull it toward the rare choices, see calibrated_state).
        self.weights = [torch.from_numpy(w) for w in class_weights(counts, 0.0, 10.0)]
        self.streams = DemoStreams(folder, cfg.bc_streams, cfg.rollout, 0.99, seeding.rng(cfg.seed, "bc.demos"))
        self.h = torch.zeros(cfg.bc_streams, model.rnn_size)

    def add_to(self, terms: dict[str, torch.Tensor], step: int) -> dict[str, torch.Tensor]:
        """Return ``terms`` with ``bc_loss``/``bc_coef`` added and the weighted term added to ``loss``."""
        from trainers.appo.config import bc_coefficient

        coef = bc_coefficient(self.cfg, step)
        if coef <= 0:
            return {**terms, "bc_coef": torch.zeros(())}
        aux, _, self.h = bc_loss(self.model, self.streams.next(), self.h, self.weights, 0.0,
                                 encoder_dtype(self.cfg.encoder_precision))
        return {**terms, "loss": terms["loss"] + coef * aux, "bc_loss": aux.detach(), "bc_coef": torch.tensor(coef)}
