"""V-trace off-policy targets (Espeholt et al., 2018) as a pure function over time-major tensors."""

from __future__ import annotations

from typing import NamedTuple

import torch


class VTraceReturns(NamedTuple):
    """``vs``: value targets ``float[T, B]``; ``pg_advantages``: policy-gradient advantages ``float[T, B]``."""

    vs: torch.Tensor
    pg_advantages: torch.Tensor


def vtrace(
    behaviour_logp: torch.Tensor,
    target_logp: torch.Tensor,
    rewards: torch.Tensor,
    values: torch.Tensor,
    bootstrap_value: torch.Tensor,
    discounts: torch.Tensor,
    *,
    rho_bar: float = 1.0,
    c_bar: float = 1.0,
    pg_rho_bar: float | None = None,
    lam: float = 1.0,
) -> VTraceReturns:
    """Compute V-trace targets; every input is time-major ``float[T, B]`` except ``bootstrap_value`` ``float[B]``.

    ``discounts[t]`` is ``gamma * (1 - done[t])`` (zero where the episode ended after step ``t``).
    ``values`` and ``bootstrap_value`` are the current value estimates ``V(x_t)`` and ``V(x_T)``.
    With ``rho = exp(target_logp - behaviour_logp)``, ``rho_t = min(rho_bar, rho)`` and
    ``c_t = lam * min(c_bar, rho)``::

        delta_t  = rho_t * (r_t + discount_t * V(x_{t+1}) - V(x_t))
        vs_t     = V(x_t) + delta_t + discount_t * c_t * (vs_{t+1} - V(x_{t+1}))
        pg_adv_t = min(pg_rho_bar, rho) * (r_t + discount_t * vs_{t+1} - V(x_t))

    Gradients do not flow through the result (the targets are constants for the loss).
    """
    with torch.no_grad():
        rho = torch.exp(target_logp - behaviour_logp)
        clipped_rho = torch.clamp(rho, max=rho_bar)
        cs = lam * torch.clamp(rho, max=c_bar)
        next_values = torch.cat([values[1:], bootstrap_value.unsqueeze(0)], dim=0)
        deltas = clipped_rho * (rewards + discounts * next_values - values)
        acc = torch.zeros_like(bootstrap_value)
        corrections = torch.empty_like(values)
        for t in range(values.shape[0] - 1, -1, -1):
            acc = deltas[t] + discounts[t] * cs[t] * acc
            corrections[t] = acc
        vs = values + corrections
        next_vs = torch.cat([vs[1:], bootstrap_value.unsqueeze(0)], dim=0)
        pg_rho = torch.clamp(rho, max=rho_bar if pg_rho_bar is None else pg_rho_bar)
        pg_advantages = pg_rho * (rewards + discounts * next_vs - values)
    return VTraceReturns(vs=vs, pg_advantages=pg_advantages)
