"""The learner's losses ignore invalid junk spliced into a batch; policy lag masks old samples."""

from __future__ import annotations

from typing import Any

import pytest
import torch

from trainers.appo.config import AppoConfig
from trainers.appo.learner import Batch, Learner, compute_losses
from trainers.appo.network import ActorCritic

T, N, OBS = 6, 3, (3, 36, 64)


def _batch(gen: torch.Generator, n: int, version: int = 0) -> Batch:
    return Batch(
        obs=torch.randint(0, 256, (T + 1, n, *OBS), dtype=torch.uint8, generator=gen),
        actions=torch.randint(0, 4, (T, n, 1), generator=gen),
        behaviour_logp=-torch.rand(T, n, generator=gen) * 2,
        rewards=torch.randn(T, n, generator=gen),
        dones=torch.rand(T, n, generator=gen) < 0.2,
        version=torch.full((T, n), version, dtype=torch.int64),
        rnn0=torch.randn(n, 32, generator=gen) * 0.1,
    )


def _splice(a: Batch, b: Batch) -> Batch:
    fields: dict[str, Any] = {
        key: None if x is None else torch.cat([x, y], dim=1 if x.dim() > 1 and x is not a.rnn0 else 0)
        for (key, x), y in zip(vars(a).items(), vars(b).values(), strict=True)}
    return Batch(**fields)


def _losses_and_grads(model: ActorCritic, batch: Batch, valid: torch.Tensor, cfg: AppoConfig
                      ) -> tuple[dict[str, torch.Tensor], list[torch.Tensor]]:
    model.zero_grad()
    terms = compute_losses(model, batch, valid, cfg)
    terms["loss"].backward()  # type: ignore[no-untyped-call]
    return {k: v.detach() for k, v in terms.items()}, [p.grad.clone() for p in model.parameters()]  # type: ignore[union-attr]


def test_junk_trajectories_do_not_change_losses_or_gradients() -> None:
    torch.manual_seed(0)
    model = ActorCritic(OBS, [4], hidden_size=32, rnn_size=32)
    gen = torch.Generator().manual_seed(1)
    for advantage in ("vtrace", "gae"):
        cfg = AppoConfig(advantage=advantage, gae_lambda=0.95)
        clean = _batch(gen, N)
        junk = _batch(gen, 2)
        junk = Batch(obs=junk.obs, actions=junk.actions, behaviour_logp=junk.behaviour_logp * 1e6,
                     rewards=junk.rewards * 1e9, dones=junk.dones, version=junk.version - 10**6, rnn0=junk.rnn0 * 1e3)
        spliced = _splice(clean, junk)
        valid_clean = torch.ones(T, N, dtype=torch.bool)
        valid_spliced = torch.cat([valid_clean, torch.zeros(T, 2, dtype=torch.bool)], dim=1)
        want, want_grads = _losses_and_grads(model, clean, valid_clean, cfg)
        got, got_grads = _losses_and_grads(model, spliced, valid_spliced, cfg)
        for key in ("loss", "policy_loss", "value_loss", "entropy"):
            torch.testing.assert_close(got[key], want[key], rtol=1e-4, atol=1e-5)
        for g_got, g_want in zip(got_grads, want_grads, strict=True):
            torch.testing.assert_close(g_got, g_want, rtol=1e-3, atol=1e-5)
        # And the junk is not inert by accident: counting it changes the loss.
        everything = torch.ones(T, N + 2, dtype=torch.bool)
        assert not torch.allclose(compute_losses(model, spliced, everything, cfg)["loss"], want["loss"])


def test_policy_lag_masks_old_samples() -> None:
    torch.manual_seed(0)
    model = ActorCritic(OBS, [4], hidden_size=32, rnn_size=32)
    learner = Learner(model, AppoConfig(max_policy_lag=2))
    learner.version = 5
    gen = torch.Generator().manual_seed(2)
    batch = _batch(gen, N, version=4)
    old = batch.version.clone()
    old[:, 0] = 1  # lag 4 > 2: masked
    metrics = learner.train(Batch(**{**vars(batch), "version": old}))
    assert metrics["train/valid_fraction"] == pytest.approx(2 / 3)
    assert metrics["train/lag_max"] == 4
    assert metrics["train/lag_min"] == 1
    assert learner.version == 6


def test_loading_an_optimizer_state_keeps_the_fused_adam() -> None:
    model = ActorCritic(OBS, [4], hidden_size=32, rnn_size=32)
    learner = Learner(model, AppoConfig())
    older = torch.optim.Adam(model.parameters(), lr=1e-3)  # a state dict as checkpoints before fused Adam held it
    model.zero_grad()
    compute_losses(model, _batch(torch.Generator().manual_seed(0), N), torch.ones(T, N, dtype=torch.bool),
                   AppoConfig())["loss"].backward()  # type: ignore[no-untyped-call]
    older.step()
    state = older.state_dict()
    assert state["param_groups"][0]["fused"] is None
    learner.load_optimizer_state(state)
    assert all(group["fused"] for group in learner.optimizer.param_groups)
    assert learner.optimizer.param_groups[0]["lr"] == 1e-3
    torch.testing.assert_close(learner.optimizer.state_dict()["state"][0]["exp_avg"], state["state"][0]["exp_avg"])


def test_a_bf16_encoder_is_close_to_fp32_and_its_gradients_reach_fp32_weights() -> None:
    torch.manual_seed(0)
    model = ActorCritic(OBS, [4], hidden_size=32, rnn_size=32)
    gen = torch.Generator().manual_seed(3)
    batch, valid = _batch(gen, N), torch.ones(T, N, dtype=torch.bool)
    obs = batch.obs[0]
    with torch.no_grad():
        want, got = model.encode(obs), model.encode(obs, torch.bfloat16)
    assert got.dtype == torch.float32
    # bf16 keeps 8 significant bits: features within a few percent of the fp32 ones, not equal to them.
    assert 0 < float((got - want).abs().max()) < 0.05 * float(want.abs().max())
    fp32, bf16 = AppoConfig(encoder_precision="fp32"), AppoConfig(encoder_precision="bf16")
    want_terms, want_grads = _losses_and_grads(model, batch, valid, fp32)
    got_terms, got_grads = _losses_and_grads(model, batch, valid, bf16)
    torch.testing.assert_close(got_terms["loss"], want_terms["loss"], rtol=0.05, atol=0.01)
    for param, g_got, g_want in zip(model.parameters(), got_grads, want_grads, strict=True):
        assert param.dtype == g_got.dtype == torch.float32
        cosine = torch.nn.functional.cosine_similarity(g_got.flatten(), g_want.flatten(), dim=0)
        assert cosine > 0.98
    learner = Learner(model, bf16)
    learner.train(batch)
    assert all(p.dtype == torch.float32 for p in model.parameters())
