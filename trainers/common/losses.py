"""Masked PPO losses. ``valid`` (bool, same shape as the per-sample terms) drops samples entirely.

Invalid samples may hold any value, NaN and inf included: every term is selected with ``torch.where``
before it is reduced, so they change neither the loss nor its gradient.
"""

from __future__ import annotations

import torch


def masked_mean(x: torch.Tensor, valid: torch.Tensor) -> torch.Tensor:
    """Mean of ``x`` over ``valid`` entries (0 when none is valid)."""
    total = torch.where(valid, x, torch.zeros_like(x)).sum()
    return total / valid.sum().clamp(min=1)


def normalize_advantages(adv: torch.Tensor, valid: torch.Tensor, eps: float = 1e-8) -> torch.Tensor:
    """Standardise ``adv`` with the mean and std of its valid entries (invalid entries become 0)."""
    mean = masked_mean(adv, valid)
    centred = torch.where(valid, adv - mean, torch.zeros_like(adv))
    var = masked_mean(centred.square(), valid)
    return centred / (var.sqrt() + eps)


def ppo_policy_loss(logp: torch.Tensor, behaviour_logp: torch.Tensor, advantages: torch.Tensor,
                    valid: torch.Tensor, clip_ratio: float) -> torch.Tensor:
    """Clipped surrogate loss (to minimise); ratio clipped to ``[1/(1+clip), 1+clip]`` as Sample Factory does."""
    safe_logp = torch.where(valid, logp, torch.zeros_like(logp))
    safe_old = torch.where(valid, behaviour_logp, torch.zeros_like(behaviour_logp))
    safe_adv = torch.where(valid, advantages, torch.zeros_like(advantages))
    ratio = torch.exp(safe_logp - safe_old)
    clipped = torch.clamp(ratio, 1.0 / (1.0 + clip_ratio), 1.0 + clip_ratio)
    surrogate = torch.minimum(ratio * safe_adv, clipped * safe_adv)
    return -masked_mean(surrogate, valid)


def value_loss(values: torch.Tensor, targets: torch.Tensor, valid: torch.Tensor,
               old_values: torch.Tensor | None = None, clip: float | None = None) -> torch.Tensor:
    """Half squared error to ``targets``; with ``old_values`` and ``clip``, the PPO clipped-value variant."""
    safe_v = torch.where(valid, values, torch.zeros_like(values))
    safe_t = torch.where(valid, targets, torch.zeros_like(targets))
    err = (safe_v - safe_t).square()
    if old_values is not None and clip is not None:
        safe_old = torch.where(valid, old_values, torch.zeros_like(old_values))
        clipped_v = safe_old + torch.clamp(safe_v - safe_old, -clip, clip)
        err = torch.maximum(err, (clipped_v - safe_t).square())
    return 0.5 * masked_mean(err, valid)


def entropy_bonus(entropy: torch.Tensor, valid: torch.Tensor) -> torch.Tensor:
    """Mean entropy over valid samples (subtract ``coef * this`` from the loss)."""
    safe = torch.where(valid, entropy, torch.zeros_like(entropy))
    return masked_mean(safe, valid)
