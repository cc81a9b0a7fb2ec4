"""The A2C+V-trace loss wiring against plain n-step returns, junk in invalid steps, and the rollout's cut flags."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import gpu_env
from trainers.a2c.config import A2cConfig
from trainers.a2c.learner import Rollout, a2c_vtrace_loss, action_logp
from trainers.a2c.model import NatureActorCritic
from trainers.a2c.rollout import RolloutCollector

STEPS, ENVS, ACTIONS = 5, 3, 4


def _model() -> NatureActorCritic:
    torch.manual_seed(0)
    return NatureActorCritic((4, 36, 36), ACTIONS, hidden_size=16)


def _rollout(model: NatureActorCritic, seed: int) -> Rollout:
    """Random observations; behaviour logits are the model's own (on-policy); some steps invalid."""
    gen = torch.Generator().manual_seed(seed)
    obs = torch.randint(0, 256, (STEPS + 1, ENVS, 4, 36, 36), generator=gen, dtype=torch.uint8)
    with torch.no_grad():
        logits, _ = model(obs[:STEPS].flatten(0, 1))
    valid = torch.ones(STEPS, ENVS, dtype=torch.bool)
    valid[2, 0] = False  # env 0: episode ended at step 1, step 2 is the NEXT_STEP reset
    discounts = torch.full((STEPS, ENVS), 0.9, dtype=torch.float32)
    discounts[1, 0] = discounts[2, 0] = 0.0
    discounts[3, 2] = 0.0  # env 2: a life lost at step 3
    return Rollout(obs=obs, actions=torch.randint(0, ACTIONS, (STEPS, ENVS), generator=gen),
                   behaviour_logits=logits.view(STEPS, ENVS, ACTIONS),
                   rewards=torch.randn(STEPS, ENVS, generator=gen, dtype=torch.float32),
                   discounts=discounts, valid=valid)


def test_on_policy_loss_is_a2c_with_nstep_returns() -> None:
    """Behaviour == target: value target = bootstrapped n-step return, pg advantage = return - V (a plain loop)."""
    model = _model()
    batch = _rollout(model, seed=1)
    terms = a2c_vtrace_loss(model, batch, value_coef=1.0, entropy_coef=0.0)
    with torch.no_grad():
        logits, values = model(batch.obs.flatten(0, 1))
    values = values.view(STEPS + 1, ENVS)
    logp = action_logp(logits.view(STEPS + 1, ENVS, ACTIONS)[:STEPS], batch.actions)
    returns = np.zeros((STEPS, ENVS))
    for b in range(ENVS):
        g = float(values[STEPS, b])
        for t in range(STEPS - 1, -1, -1):
            g = float(batch.rewards[t, b]) + float(batch.discounts[t, b]) * g
            returns[t, b] = g
    valid = batch.valid.numpy()
    v = values[:STEPS].numpy()
    want_value = 0.5 * np.mean(((v - returns) ** 2)[valid])
    want_policy = -np.mean((logp.numpy() * (returns - v))[valid])
    assert float(terms.value) == pytest.approx(want_value, rel=1e-5)
    assert float(terms.policy) == pytest.approx(want_policy, rel=1e-5)
    assert float(terms.mean_rho) == pytest.approx(1.0, rel=1e-5)
    assert float(terms.total.detach()) == pytest.approx(want_policy + want_value, rel=1e-5)


def test_junk_in_invalid_steps_changes_neither_loss_nor_gradient() -> None:
    model = _model()
    batch = _rollout(model, seed=2)
    junk = Rollout(obs=batch.obs, actions=batch.actions.clone(), behaviour_logits=batch.behaviour_logits.clone(),
                   rewards=batch.rewards.clone(), discounts=batch.discounts, valid=batch.valid)
    junk.rewards[2, 0] = 1e30
    junk.actions[2, 0] = (int(batch.actions[2, 0]) + 1) % ACTIONS
    junk.behaviour_logits[2, 0] = torch.tensor([-1e3, 50.0, 0.0, 7.0])
    grads = []
    for b in (batch, junk):
        model.zero_grad()
        terms = a2c_vtrace_loss(model, b, value_coef=0.5, entropy_coef=0.01)
        terms.total.backward()  # type: ignore[no-untyped-call]
        grads.append([p.grad.clone() for p in model.parameters() if p.grad is not None])
        assert torch.isfinite(terms.total)
    for g0, g1 in zip(*grads, strict=True):
        torch.testing.assert_close(g0, g1)


def test_stale_behaviour_is_importance_weighted() -> None:
    """A behaviour policy other than the learner's gives rho != 1 and a different loss than on-policy."""
    model = _model()
    batch = _rollout(model, seed=3)
    stale = Rollout(obs=batch.obs, actions=batch.actions, behaviour_logits=batch.behaviour_logits * 0.0,
                    rewards=batch.rewards, discounts=batch.discounts, valid=batch.valid)
    on = a2c_vtrace_loss(model, batch, value_coef=0.5, entropy_coef=0.0)
    off = a2c_vtrace_loss(model, stale, value_coef=0.5, entropy_coef=0.0)
    assert float(off.mean_rho) != pytest.approx(1.0, abs=1e-3)
    assert float(off.total.detach()) != pytest.approx(float(on.total.detach()), rel=1e-6)


@pytest.mark.parametrize("life_loss_cut", [True, False])
def test_rollout_cuts_returns_at_episode_ends_and_lost_lives(life_loss_cut: bool) -> None:
    """Breakout, random-ish policy: each finished episode has its reset step invalid; cuts = 5 or 1 per episode."""
    cfg = A2cConfig(num_envs=2, rollout=400, num_minibatches=1, life_loss_cut=life_loss_cut, clip_rewards=True)
    env = gpu_env.make_vec(cfg.env_id, 2, backend="cpu", obs_format="torch", frameskip=1, noop_max=30,
                           frame_skip=4, screen_size=84, grayscale_obs=True, stack_size=4, num_threads=1)
    torch.manual_seed(0)
    model = NatureActorCritic((4, 84, 84), int(env.single_action_space.n))  # type: ignore[attr-defined]
    collector = RolloutCollector(env, model, cfg, torch.Generator().manual_seed(0), seed=5)
    batch = collector.collect()
    returns, _ = collector.take_episodes()
    invalid = ~batch.valid
    assert int(invalid.sum()) >= len(returns) >= 1  # an episode ending on the last step resets in the next rollout
    for t, b in invalid.nonzero().tolist():
        assert float(batch.discounts[t, b]) == 0.0
        assert t == 0 or float(batch.discounts[t - 1, b]) == 0.0  # the step that ended the episode
    cuts = int(((batch.discounts == 0) & batch.valid).sum())
    per_episode = 5 if life_loss_cut else 1  # Breakout: 5 lives; the last loss is the game over
    assert cuts >= per_episode * int(invalid.sum())
    assert cuts <= per_episode * (int(invalid.sum()) + 2)  # plus unfinished episodes' cuts, at most per env
    assert set(np.unique(batch.rewards.numpy()).tolist()) <= {0.0, 1.0}
    assert batch.obs.device == env.device
    assert batch.obs.dtype == torch.uint8
