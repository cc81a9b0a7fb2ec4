"""The A2C+V-trace loss on one group of envs of a rollout, and the rollout storage it reads.

Behaviour log-probs come from the logits stored at rollout time; target log-probs, values and the
bootstrap value from the learner's forward pass with the current weights. When a rollout is split into
``num_minibatches`` sequential updates, group ``g`` is learned from after ``g`` updates of the weights
that chose its actions: V-trace (:func:`trainers.common.vtrace.vtrace`) corrects for that lag.
Losses are :mod:`trainers.common.losses` (masked means).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from trainers.a2c.model import NatureActorCritic
from trainers.common.losses import entropy_bonus, masked_mean, value_loss
from trainers.common.vtrace import vtrace


@dataclass(frozen=True)
class Rollout:
    """Time-major rollout of ``T`` steps over ``B`` envs, all on the env's device.

    ``obs uint8[T+1, B, S, H, W]`` (``obs[T]`` is the bootstrap observation), ``actions int64[T, B]``,
    ``behaviour_logits float32[T, B, A]``, ``rewards float32[T, B]`` (already clipped if configured),
    ``discounts float32[T, B]`` (``gamma``, or 0 where the return is cut after step ``t``: episode end,
    life loss, or an invalid step), ``valid bool[T, B]`` (False for the NEXT_STEP autoreset step, whose
    action the env ignored).
    """

    obs: torch.Tensor
    actions: torch.Tensor
    behaviour_logits: torch.Tensor
    rewards: torch.Tensor
    discounts: torch.Tensor
    valid: torch.Tensor

    def envs(self, index: slice) -> Rollout:
        """Return the same rollout restricted to the envs in ``index`` (views, no copies)."""
        return Rollout(self.obs[:, index], self.actions[:, index], self.behaviour_logits[:, index],
                       self.rewards[:, index], self.discounts[:, index], self.valid[:, index])


@dataclass(frozen=True)
class LossTerms:
    """The total loss (with graph) and its detached parts, for logging."""

    total: torch.Tensor
    policy: torch.Tensor
    value: torch.Tensor
    entropy: torch.Tensor
    mean_rho: torch.Tensor


def action_logp(logits: torch.Tensor, actions: torch.Tensor) -> torch.Tensor:
    """Log-probability ``float[...]`` of ``actions int64[...]`` under ``logits float[..., A]``."""
    return torch.log_softmax(logits, dim=-1).gather(-1, actions.unsqueeze(-1)).squeeze(-1)


def a2c_vtrace_loss(model: NatureActorCritic, batch: Rollout, *, value_coef: float, entropy_coef: float,
                    rho_bar: float = 1.0, c_bar: float = 1.0) -> LossTerms:
    """Return ``pg + value_coef * value - entropy_coef * entropy`` for ``batch`` (see the module docstring).

    ``pg = -mean(target_logp * pg_advantage)`` and ``value = 0.5 * mean((V - vs)^2)`` over valid steps,
    with V-trace ``vs`` and ``pg_advantage`` computed from the detached values.
    """
    steps, envs = batch.actions.shape
    logits, values = model(batch.obs.flatten(0, 1))
    logits = logits.view(steps + 1, envs, -1)[:steps]
    values = values.view(steps + 1, envs)
    log_probs = torch.log_softmax(logits, dim=-1)
    target_logp = log_probs.gather(-1, batch.actions.unsqueeze(-1)).squeeze(-1)
    behaviour_logp = action_logp(batch.behaviour_logits, batch.actions)
    returns = vtrace(behaviour_logp, target_logp.detach(), batch.rewards, values[:steps].detach(),
                     values[steps].detach(), batch.discounts, rho_bar=rho_bar, c_bar=c_bar)
    policy = -masked_mean(target_logp * returns.pg_advantages, batch.valid)
    value = value_loss(values[:steps], returns.vs, batch.valid)
    entropy = entropy_bonus(-(log_probs.exp() * log_probs).sum(-1), batch.valid)
    with torch.no_grad():
        mean_rho = masked_mean(torch.exp(target_logp - behaviour_logp), batch.valid)
    total = policy + value_coef * value - entropy_coef * entropy
    return LossTerms(total=total, policy=policy.detach(), value=value.detach(), entropy=entropy.detach(),
                     mean_rho=mean_rho)
