"""Learner: one SGD step of PPO-clip with V-trace (or GAE) targets on a batch of trajectory slots.

Policy lag of a sample = the learner's ``version`` (SGD steps taken) minus the version that chose its action;
samples with lag > ``max_policy_lag`` are masked out (``valid`` False). Losses are in
:mod:`trainers.common.losses`; targets in :mod:`trainers.common.vtrace` / :mod:`trainers.common.gae`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from trainers.appo.buffers import SharedBuffers
from trainers.appo.config import AppoConfig
from trainers.appo.dagger import DaggerLoss
from trainers.appo.network import ActorCritic, encoder_dtype, log_prob_entropy
from trainers.common.gae import gae
from trainers.common.losses import entropy_bonus, normalize_advantages, ppo_policy_loss, value_loss
from trainers.common.vtrace import vtrace


@dataclass(frozen=True)
class Batch:
    """A training batch, time-major (``N`` trajectories of ``T`` steps).

    ``obs uint8[T+1, N, C, H, W]``, ``actions int64[T, N, K]``, ``behaviour_logp``/``rewards float32[T, N]``,
    ``dones bool[T, N]``, ``version int64[T, N]``, ``rnn0 float32[N, R]``. A DAgger run's batches also carry the
    teacher's ``teacher_logits float32[T, N, A]`` and ``teacher_value float32[T, N]`` and the players grid
    ``players uint8[T, N, G]`` (:mod:`trainers.appo.dagger`); None otherwise.
    """

    obs: torch.Tensor
    actions: torch.Tensor
    behaviour_logp: torch.Tensor
    rewards: torch.Tensor
    dones: torch.Tensor
    version: torch.Tensor
    rnn0: torch.Tensor
    teacher_logits: torch.Tensor | None = None
    teacher_value: torch.Tensor | None = None
    players: torch.Tensor | None = None


def gather_batch(buffers: SharedBuffers, slots: list[int]) -> Batch:
    """Copy ``slots`` out of shared memory (time-major) and hand the slots back to their envs."""
    b = buffers.np
    idx = np.asarray(slots, dtype=np.int64)
    batch = Batch(
        # Time-major, channels-last memory under a channel-first view: unroll's (T, N) merge is then a view and
        # the model's float conversion a straight cast.
        obs=torch.from_numpy(np.ascontiguousarray(buffers.obs_hwc[idx].swapaxes(0, 1))).permute(0, 1, 4, 2, 3),
        actions=torch.from_numpy(b["actions"][idx]).transpose(0, 1),
        behaviour_logp=torch.from_numpy(b["logp"][idx]).transpose(0, 1),
        rewards=torch.from_numpy(b["rewards"][idx]).transpose(0, 1),
        dones=torch.from_numpy(b["dones"][idx].astype(bool)).transpose(0, 1),
        version=torch.from_numpy(b["version"][idx].astype(np.int64)).transpose(0, 1),
        rnn0=torch.from_numpy(b["rnn0"][idx]),
        **({} if "teacher_logits" not in b else {key: torch.from_numpy(b[key][idx]).transpose(0, 1)
                                                  for key in ("teacher_logits", "teacher_value", "players")}),
    )
    b["slot_ready"][idx] = 0
    return batch


def compute_losses(model: ActorCritic, batch: Batch, valid: torch.Tensor, cfg: AppoConfig
                   ) -> dict[str, torch.Tensor]:
    """Forward the batch and return every loss term (``loss`` is the one to minimise).

    ``valid bool[T, N]`` selects the samples that count; invalid ones change neither the losses nor the grads.
    The encoder runs in ``cfg.encoder_precision`` (:func:`encoder_dtype`).
    """
    steps = batch.rewards.shape[0]
    resets = torch.zeros(batch.obs.shape[:2], dtype=torch.bool)
    resets[1:] = batch.dones
    # The last observation only bootstraps the targets: no gradient flows through it.
    logits, values = model.unroll(batch.obs, batch.rnn0, resets, bootstrap_last=True,
                                  encoder_dtype=encoder_dtype(cfg.encoder_precision))
    logp, entropy = log_prob_entropy(logits[:steps], batch.actions, model.action_nvec)
    discounts = cfg.gamma * (~batch.dones).float()
    rewards, behaviour = batch.rewards, batch.behaviour_logp
    if cfg.advantage == "vtrace":
        vt = vtrace(behaviour, logp.detach(), rewards, values[:steps].detach(), values[steps].detach(), discounts,
                    rho_bar=cfg.vtrace_rho, c_bar=cfg.vtrace_c, lam=cfg.gae_lambda)
        targets, advantages = vt.vs, vt.pg_advantages
    else:
        g = gae(rewards, values[:steps].detach(), values[steps].detach(), discounts, lam=cfg.gae_lambda)
        targets, advantages = g.returns, g.advantages
    advantages = normalize_advantages(advantages, valid)
    policy = ppo_policy_loss(logp, behaviour, advantages, valid, cfg.ppo_clip)
    value = value_loss(values[:steps], targets, valid)
    entropy_mean = entropy_bonus(entropy, valid)
    loss = policy + cfg.value_coef * value - cfg.entropy_coef * entropy_mean
    return {"loss": loss, "policy_loss": policy, "value_loss": value, "entropy": entropy_mean,
            "value_mean": values[:steps].detach().mean()}


def make_adam(params: list[torch.nn.Parameter], lr: float, eps: float, *, fused: bool = True) -> torch.optim.Adam:
    """Adam over ``params``: torch's fused implementation where this torch has it for the CPU, else the default.

    Fused Adam makes one pass over each parameter (2 ms a step for the Doom model on one CPU core, against 14 ms for
    the per-parameter loop); torch builds without a fused CPU kernel refuse ``fused=True`` with a ``RuntimeError``
    at construction, and then the default implementation runs: the same update to float rounding
    (``tests/trainers/test_learner.py``). ``fused=False`` asks for the default directly.
    """
    if fused:
        try:
            return torch.optim.Adam(params, lr=lr, eps=eps, fused=True)
        except RuntimeError:
            pass
    return torch.optim.Adam(params, lr=lr, eps=eps)


class Learner:
    """Holds the trainable model and its optimizer; :meth:`train` takes one SGD step."""

    def __init__(self, model: ActorCritic, cfg: AppoConfig) -> None:
        self.model = model
        self.cfg = cfg
        self.dagger: DaggerLoss | None = None
        extra: list[torch.nn.Parameter] = []
        if cfg.dagger_teacher:
            self.dagger = DaggerLoss(model, cfg)
            extra = self.dagger.parameters()
        self.optimizer = make_adam(list(model.parameters()) + extra, cfg.learning_rate, cfg.adam_eps)
        self.fused = bool(self.optimizer.defaults.get("fused"))
        self.version = 0
        self.aux: Any = None
        if cfg.bc_coef > 0:
            from trainers.appo.cloning import AuxiliaryCloning

            self.aux = AuxiliaryCloning(model, cfg)

    def state_tensors(self) -> dict[str, torch.Tensor]:
        """Tensors the training state saves besides the model and Adam: a DAgger run's auxiliary head."""
        return self.dagger.state_tensors() if self.dagger is not None else {}

    def load_state_tensors(self, tensors: dict[str, torch.Tensor]) -> None:
        """Load :meth:`state_tensors` from a training state's tensors (other names are ignored)."""
        if self.dagger is not None:
            self.dagger.load_state_tensors(tensors)

    def load_optimizer_state(self, state: dict[str, Any]) -> None:
        """Load an Adam ``state_dict`` (a checkpoint's or another learner's) and keep this learner's implementation.

        ``load_state_dict`` also restores each group's ``fused`` flag, which is unset in checkpoints written before
        the learner used fused Adam (and set in those written where it did); the update is the same either way,
        only its speed differs, so the flag is set back to what this torch runs (:func:`make_adam`).
        """
        self.optimizer.load_state_dict(state)
        for group in self.optimizer.param_groups:
            group["fused"] = self.fused

    def train(self, batch: Batch) -> dict[str, float]:
        """SGD on ``batch``; returns scalar metrics (losses, lag, grad norm, valid fraction) of the last step.

        One step in APPO; ``dagger_epochs`` steps on the same batch in a DAgger run (each counts as a version).
        """
        lag = self.version - batch.version
        valid = lag <= self.cfg.max_policy_lag
        if self.cfg.normalize_obs:
            steps = batch.rewards.shape[0]
            # Every 16th valid sample, picked before copying: a boolean mask would copy the whole batch first.
            picked = valid.flatten().nonzero().squeeze(1)[::16]
            self.model.update_normalizer(batch.obs[:steps].reshape(-1, *batch.obs.shape[2:])[picked])
        for _ in range(self.cfg.dagger_epochs if self.dagger is not None else 1):
            terms, grad_norm = self._step(batch, valid)
        metrics = {f"losses/{k}": float(v.detach()) for k, v in terms.items()}
        metrics.update({
            "train/grad_norm": float(grad_norm),
            "train/valid_fraction": float(valid.float().mean()),
            "train/lag_min": float(lag.min()), "train/lag_avg": float(lag.float().mean()),
            "train/lag_max": float(lag.max()),
        })
        return metrics

    def _step(self, batch: Batch, valid: torch.Tensor) -> tuple[dict[str, torch.Tensor], torch.Tensor]:
        """One SGD step on the ``valid`` samples of ``batch``; returns the loss terms and the gradient norm."""
        terms = (self.dagger.losses(self.model, batch, valid) if self.dagger is not None
                 else compute_losses(self.model, batch, valid, self.cfg))
        if self.aux is not None:
            terms = self.aux.add_to(terms, self.version)
        self.optimizer.zero_grad(set_to_none=True)
        terms["loss"].backward()  # type: ignore[no-untyped-call]
        grad_norm = torch.nn.utils.clip_grad_norm_(
            [p for group in self.optimizer.param_groups for p in group["params"]], self.cfg.max_grad_norm)
        self.optimizer.step()
        self.version += 1
        return terms, grad_norm
