"""Inference's oneDNN forward pass with packed weights equals the model's own step, before and after new weights."""

from __future__ import annotations

import queue

import numpy as np
import pytest
import torch

from trainers.appo import packed
from trainers.appo.buffers import BufferLayout, SharedBuffers
from trainers.appo.inference import Inference
from trainers.appo.network import ActorCritic, log_prob_entropy

pytestmark = pytest.mark.skipif(not packed.available(), reason="this torch build has no oneDNN operators")

OBS = (3, 72, 128)  # Sample Factory's Doom resolution: the real layer sizes


def _model(seed: int, nonlinearity: str = "elu") -> ActorCritic:
    torch.manual_seed(seed)
    model = ActorCritic(OBS, [3, 3, 2], nonlinearity=nonlinearity).eval()
    # Non-trivial normaliser statistics, so the input standardisation is exercised too.
    model.update_normalizer(torch.randint(0, 256, (32, *OBS), dtype=torch.uint8))
    return model


def _assert_same_step(a: tuple[torch.Tensor, ...], b: tuple[torch.Tensor, ...]) -> None:
    for x, y in zip(a, b, strict=True):
        assert x.shape == y.shape
        torch.testing.assert_close(x, y, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("nonlinearity", ["elu", "relu"])
@pytest.mark.parametrize("batch", [1, 3, 8, 13])
def test_packed_step_equals_the_model_step(batch: int, nonlinearity: str) -> None:
    model = _model(0, nonlinearity)
    step = packed.PackedStep(model, batch_hint=8)
    gen = torch.Generator().manual_seed(batch)
    obs = torch.randint(0, 256, (batch, *OBS), dtype=torch.uint8, generator=gen)
    h = torch.randn(batch, model.rnn_size, generator=gen)
    with torch.inference_mode():
        _assert_same_step(step.step(obs, h), model.step(obs, h))


@pytest.mark.skipif(not packed.available(torch.bfloat16),
                    reason="oneDNN's bf16 products need AVX512-BW/VL/DQ or AVX-NE-CONVERT, which this CPU lacks")
@pytest.mark.parametrize("batch", [1, 6])
def test_a_bf16_packed_encoder_equals_the_model_step_with_a_bf16_encoder(batch: int) -> None:
    model = _model(0)
    step = packed.PackedStep(model, batch_hint=8, encoder_dtype=torch.bfloat16)
    gen = torch.Generator().manual_seed(batch)
    obs = torch.randint(0, 256, (batch, *OBS), dtype=torch.uint8, generator=gen)
    h = torch.randn(batch, model.rnn_size, generator=gen)
    with torch.inference_mode():
        got, want, fp32 = step.step(obs, h), model.step(obs, h, torch.bfloat16), model.step(obs, h)
    for x, y, z in zip(got, want, fp32, strict=True):
        assert x.dtype == torch.float32
        # Both round every layer's output to bf16; oneDNN may sum the products in another order.
        torch.testing.assert_close(x, y, rtol=2e-2, atol=2e-3)
        assert not torch.equal(x, z)  # and the encoder did run in bf16


def test_repack_takes_the_new_weights_and_only_repack_does() -> None:
    model, other = _model(0), _model(1)
    step = packed.PackedStep(model, batch_hint=4)
    obs = torch.randint(0, 256, (4, *OBS), dtype=torch.uint8)
    h = torch.randn(4, model.rnn_size)
    model.load_state_dict(other.state_dict())
    with torch.inference_mode():
        stale = step.step(obs, h)
        step.repack()
        fresh = step.step(obs, h)
        expected = other.step(obs, h)
    assert not torch.allclose(stale[0], expected[0], atol=1e-3)  # the packed copy is a copy: repack is needed
    _assert_same_step(fresh, expected)


def test_inference_uses_the_packed_pass_and_repacks_on_publish() -> None:
    layout = BufferLayout(num_workers=1, envs_per_worker=2, slots_per_env=2, rollout=3, obs_shape=OBS,
                          num_heads=3, rnn_size=512)
    buffers = SharedBuffers(layout)
    try:
        requests: queue.Queue[tuple[int, int, int]] = queue.Queue()
        replies: list[queue.Queue[tuple[int, int]]] = [queue.Queue()]
        inference = Inference(_model(0), buffers, requests, lambda w: replies[w], lambda w: 0, worker_splits=1,
                              seed=0)
        assert inference._packed is not None
        new = _model(2)
        inference.publish(new.state_dict(), version=7)
        buffers.np["obs"][...] = np.random.default_rng(0).integers(0, 256, buffers.np["obs"].shape, dtype=np.uint8)
        requests.put((0, 0, 0))
        assert inference.serve(timeout=1.0) == 1
        assert inference.version == 7
        b = buffers.np
        slots, steps = b["env_slot"][:2], b["env_t"][:2]
        obs = torch.from_numpy(b["obs"][slots, steps].copy())
        with torch.inference_mode():
            logits, _, _ = new.step(obs, torch.zeros(2, 512))  # the GRU state of a fresh env is zero
            expected, _ = log_prob_entropy(logits, torch.from_numpy(b["actions"][slots, steps].astype(np.int64)),
                                           new.action_nvec)
        # The log-probabilities inference wrote are the published weights', not the first model's.
        np.testing.assert_allclose(b["logp"][slots, steps], expected.numpy(), rtol=1e-5, atol=1e-5)
        assert set(b["version"][slots, steps]) == {7}
    finally:
        buffers.close()


def test_inference_without_packed_weights_uses_the_model() -> None:
    layout = BufferLayout(num_workers=1, envs_per_worker=2, slots_per_env=2, rollout=3, obs_shape=OBS,
                          num_heads=3, rnn_size=512)
    buffers = SharedBuffers(layout)
    try:
        inference = Inference(_model(0), buffers, queue.Queue(), lambda w: queue.Queue(), lambda w: 0,
                              worker_splits=1, seed=0, packed_weights=False)
        assert inference._packed is None
    finally:
        buffers.close()


def test_forward_step_packs_a_bf16_encoder_only_where_onednn_runs_bf16() -> None:
    """Without oneDNN's bf16 products the step is the model's own (which runs anywhere), never a crashing pack."""
    model = _model(0)
    step = packed.forward_step(model, batch_hint=8, encoder_dtype=torch.bfloat16)
    obs = torch.randint(0, 256, (2, *OBS), dtype=torch.uint8, generator=torch.Generator().manual_seed(0))
    h = torch.zeros(2, model.rnn_size)
    with torch.inference_mode():
        got = step(obs, h)
        want = model.step(obs, h, torch.bfloat16)
    for x, y in zip(got, want, strict=True):
        torch.testing.assert_close(x, y, rtol=2e-2, atol=2e-3)
    assert isinstance(getattr(step, "__self__", None), packed.PackedStep) == packed.available(torch.bfloat16)
