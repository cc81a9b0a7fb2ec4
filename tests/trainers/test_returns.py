"""V-trace and GAE against plain per-element loops; masked losses ignore invalid junk."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from trainers.common.gae import gae
from trainers.common.losses import masked_mean, normalize_advantages, ppo_policy_loss, value_loss
from trainers.common.vtrace import vtrace


def naive_vtrace(blogp: np.ndarray, tlogp: np.ndarray, rewards: np.ndarray, values: np.ndarray,
                 bootstrap: np.ndarray, discounts: np.ndarray, rho_bar: float, c_bar: float, lam: float
                 ) -> tuple[np.ndarray, np.ndarray]:
    """Definition-level V-trace: vs_s = V(x_s) + sum_t gamma^(t-s) (prod_{i<t} c_i) rho_t delta_t, per env."""
    steps, batch = rewards.shape
    vs = np.zeros_like(values)
    adv = np.zeros_like(values)
    for b in range(batch):
        v_ext = [*values[:, b], bootstrap[b]]
        for s in range(steps):
            total = v_ext[s]
            coef = 1.0
            for t in range(s, steps):
                rho = math.exp(tlogp[t, b] - blogp[t, b])
                delta = min(rho_bar, rho) * (rewards[t, b] + discounts[t, b] * v_ext[t + 1] - v_ext[t])
                total += coef * delta
                coef *= discounts[t, b] * lam * min(c_bar, rho)
            vs[s, b] = total
        for s in range(steps):
            next_vs = vs[s + 1, b] if s + 1 < steps else bootstrap[b]
            rho = math.exp(tlogp[s, b] - blogp[s, b])
            adv[s, b] = min(rho_bar, rho) * (rewards[s, b] + discounts[s, b] * next_vs - values[s, b])
    return vs, adv


def naive_gae(rewards: np.ndarray, values: np.ndarray, bootstrap: np.ndarray, discounts: np.ndarray, lam: float
              ) -> np.ndarray:
    """Definition-level GAE: A_s = sum_t (prod_{i<t} discount_i lam) delta_t, per env."""
    steps, batch = rewards.shape
    adv = np.zeros_like(values)
    for b in range(batch):
        v_ext = [*values[:, b], bootstrap[b]]
        for s in range(steps):
            coef, total = 1.0, 0.0
            for t in range(s, steps):
                total += coef * (rewards[t, b] + discounts[t, b] * v_ext[t + 1] - v_ext[t])
                coef *= discounts[t, b] * lam
            adv[s, b] = total
    return adv


def _random_rollout(rng: np.random.Generator, steps: int, batch: int) -> dict[str, np.ndarray]:
    dones = rng.random((steps, batch)) < 0.2
    return {
        "blogp": np.log(rng.uniform(0.05, 1.0, (steps, batch))),
        "tlogp": np.log(rng.uniform(0.05, 1.0, (steps, batch))),
        "rewards": rng.normal(size=(steps, batch)),
        "values": rng.normal(size=(steps, batch)),
        "bootstrap": rng.normal(size=batch),
        "discounts": 0.97 * (~dones),
    }


@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), steps=st.integers(1, 9), batch=st.integers(1, 4),
       rho_bar=st.sampled_from([1.0, 0.5, 2.0]), c_bar=st.sampled_from([1.0, 0.7]), lam=st.sampled_from([1.0, 0.9]))
def test_vtrace_matches_naive(seed: int, steps: int, batch: int, rho_bar: float, c_bar: float, lam: float) -> None:
    r = _random_rollout(np.random.default_rng(seed), steps, batch)
    want_vs, want_adv = naive_vtrace(r["blogp"], r["tlogp"], r["rewards"], r["values"], r["bootstrap"],
                                     r["discounts"], rho_bar, c_bar, lam)
    t = {k: torch.from_numpy(v).double() for k, v in r.items()}
    got = vtrace(t["blogp"], t["tlogp"], t["rewards"], t["values"], t["bootstrap"], t["discounts"],
                 rho_bar=rho_bar, c_bar=c_bar, lam=lam)
    np.testing.assert_allclose(got.vs.numpy(), want_vs, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(got.pg_advantages.numpy(), want_adv, rtol=1e-10, atol=1e-10)


def test_vtrace_on_policy_equals_nstep_returns() -> None:
    """With target == behaviour and lambda 1, vs are the discounted bootstrapped returns."""
    r = _random_rollout(np.random.default_rng(0), 6, 3)
    t = {k: torch.from_numpy(v).double() for k, v in r.items()}
    got = vtrace(t["blogp"], t["blogp"], t["rewards"], t["values"], t["bootstrap"], t["discounts"])
    returns = t["bootstrap"].clone()
    expected = torch.zeros_like(t["values"])
    for step in range(5, -1, -1):
        returns = t["rewards"][step] + t["discounts"][step] * returns
        expected[step] = returns
    torch.testing.assert_close(got.vs, expected)


@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), steps=st.integers(1, 9), batch=st.integers(1, 4),
       lam=st.sampled_from([1.0, 0.95, 0.0]))
def test_gae_matches_naive(seed: int, steps: int, batch: int, lam: float) -> None:
    r = _random_rollout(np.random.default_rng(seed), steps, batch)
    want = naive_gae(r["rewards"], r["values"], r["bootstrap"], r["discounts"], lam)
    t = {k: torch.from_numpy(v).double() for k, v in r.items()}
    got = gae(t["rewards"], t["values"], t["bootstrap"], t["discounts"], lam=lam)
    np.testing.assert_allclose(got.advantages.numpy(), want, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(got.returns.numpy(), want + r["values"], rtol=1e-10, atol=1e-10)


def test_gae_lambda_one_equals_vtrace_on_policy_advantage_sum() -> None:
    r = _random_rollout(np.random.default_rng(3), 7, 2)
    t = {k: torch.from_numpy(v).double() for k, v in r.items()}
    g = gae(t["rewards"], t["values"], t["bootstrap"], t["discounts"], lam=1.0)
    v = vtrace(t["blogp"], t["blogp"], t["rewards"], t["values"], t["bootstrap"], t["discounts"])
    torch.testing.assert_close(g.returns, v.vs)


def test_masked_losses_ignore_invalid_entries_even_nan() -> None:
    gen = torch.Generator().manual_seed(0)
    logp = torch.randn(8, 5, generator=gen)
    old = torch.randn(8, 5, generator=gen)
    adv = torch.randn(8, 5, generator=gen)
    vals = torch.randn(8, 5, generator=gen)
    targ = torch.randn(8, 5, generator=gen)
    valid = torch.rand(8, 5, generator=gen) > 0.3
    junk = ~valid
    logp2, old2, adv2, vals2, targ2 = (x.clone() for x in (logp, old, adv, vals, targ))
    for x in (logp2, old2, adv2, vals2, targ2):
        x[junk] = torch.tensor([float("nan"), float("inf"), 1e30, -1e30])[torch.arange(int(junk.sum())) % 4]
    for a, b in [(ppo_policy_loss(logp, old, adv, valid, 0.1), ppo_policy_loss(logp2, old2, adv2, valid, 0.1)),
                 (value_loss(vals, targ, valid), value_loss(vals2, targ2, valid)),
                 (masked_mean(vals, valid), masked_mean(vals2, valid))]:
        assert torch.isfinite(b)
        torch.testing.assert_close(a, b)
    normed = normalize_advantages(adv2, valid)
    assert torch.isfinite(normed).all()
    assert float(normed[valid].mean()) == pytest.approx(0.0, abs=1e-6)


def test_ppo_loss_is_clipped() -> None:
    adv = torch.ones(4, 1)
    valid = torch.ones(4, 1, dtype=torch.bool)
    old = torch.zeros(4, 1)
    big = torch.full((4, 1), 1.0)  # ratio e > 1 + 0.1
    loss = ppo_policy_loss(big, old, adv, valid, 0.1)
    assert float(loss) == pytest.approx(-1.1)
