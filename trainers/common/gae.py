"""Generalised advantage estimation (Schulman et al., 2016) as a pure function over time-major tensors."""

from __future__ import annotations

from typing import NamedTuple

import torch


class GaeReturns(NamedTuple):
    """``advantages`` and ``returns`` (= advantages + values), both ``float[T, B]``."""

    advantages: torch.Tensor
    returns: torch.Tensor


def gae(
    rewards: torch.Tensor,
    values: torch.Tensor,
    bootstrap_value: torch.Tensor,
    discounts: torch.Tensor,
    *,
    lam: float = 0.95,
) -> GaeReturns:
    """Compute GAE; inputs are time-major ``float[T, B]`` except ``bootstrap_value`` ``float[B]``.

    ``discounts[t]`` is ``gamma * (1 - done[t])``::

        delta_t = r_t + discount_t * V(x_{t+1}) - V(x_t)
        A_t     = delta_t + discount_t * lam * A_{t+1}

    No gradient flows through the result.
    """
    with torch.no_grad():
        next_values = torch.cat([values[1:], bootstrap_value.unsqueeze(0)], dim=0)
        deltas = rewards + discounts * next_values - values
        advantages = torch.empty_like(values)
        acc = torch.zeros_like(bootstrap_value)
        for t in range(values.shape[0] - 1, -1, -1):
            acc = deltas[t] + discounts[t] * lam * acc
            advantages[t] = acc
    return GaeReturns(advantages=advantages, returns=advantages + values)
