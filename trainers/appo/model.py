"""The evaltk :class:`~evaltk.policies.Policy` of a trained APPO network (:mod:`trainers.appo.network`).

Checkpoints name it as ``model_class = "trainers.appo.model:AppoPolicy"`` (:data:`MODEL_CLASS`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from evaltk.checkpoint import Checkpoint, CheckpointSpec
from trainers.appo import packed
from trainers.appo.network import ActorCritic, build_model, sample_actions
from trainers.common.sampling import EpisodeGenerators
from trainers.common.state_io import model_from_checkpoint

MODEL_CLASS = "trainers.appo.model:AppoPolicy"


class AppoPolicy:
    """evaltk :class:`~evaltk.policies.Policy` around a trained :class:`ActorCritic` (stochastic actions)."""

    def __init__(self, spec: CheckpointSpec, model: ActorCritic, device: str = "cpu") -> None:
        self.spec = spec
        self.model = model.to(device).eval()
        self.device = device
        self._discrete = spec.action_spec["type"] == "discrete"
        self._h = torch.zeros(0, model.rnn_size, device=device)
        self._gens = EpisodeGenerators("cpu")
        # On the CPU the forward pass runs on weights packed once, now (trainers/appo/packed.py); the weights of a
        # policy do not change after it is built.
        self.step: packed.StepFn = packed.forward_step(self.model, batch_hint=1) if device == "cpu" else self.model.step

    @classmethod
    def from_checkpoint(cls, ckpt: Checkpoint, device: str = "cpu") -> AppoPolicy:
        """Rebuild the model named by ``ckpt.spec.model_kwargs`` and load its tensors (shapes checked)."""
        return cls(ckpt.spec, model_from_checkpoint(ckpt, build_model), device)

    def reset(self, num_envs: int, rng: np.random.Generator) -> None:
        """Zero the recurrent state of ``num_envs`` envs; action sampling is seeded from ``rng``."""
        self._h = torch.zeros(num_envs, self.model.rnn_size, device=self.device)
        self._gens.reset(rng)

    def begin_episodes(self, slots: np.ndarray, rngs: Sequence[np.random.Generator]) -> None:
        """Take one generator per new episode (:class:`~evaltk.policies.EpisodeSeeded`) for its slot's actions."""
        self._gens.begin(slots, rngs)

    @torch.inference_mode()
    def act(self, obs: np.ndarray, first: np.ndarray) -> np.ndarray:
        """``obs uint8[B, 3, H, W]``, ``first bool[B]`` -> ``int64[B]`` (discrete) or ``int64[B, k]``."""
        if self._h.shape[0] != obs.shape[0]:
            self._h = torch.zeros(obs.shape[0], self.model.rnn_size, device=self.device)
        keep = torch.from_numpy(~np.asarray(first, dtype=bool)).float().unsqueeze(-1).to(self.device)
        logits, _, self._h = self.step(torch.from_numpy(np.ascontiguousarray(obs)).to(self.device), self._h * keep)
        logits = logits.cpu()
        if self._gens.per_episode:
            actions = torch.cat([sample_actions(logits[i:i + 1], self.model.action_nvec, self._gens.for_row(i))[0]
                                 for i in range(logits.shape[0])])
        else:
            actions, _ = sample_actions(logits, self.model.action_nvec, self._gens.batch)
        out = actions.numpy().astype(np.int64)
        return out[:, 0] if self._discrete else out
