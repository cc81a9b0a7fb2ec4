"""Each fast path of APPO that rests on a private or recent torch API has a public fallback that computes the same.

Every test forces the fallback on this torch (a missing public report, a missing oneDNN operator, a private
operator that fails, no tensor version counter, no fused Adam) and compares it with the path taken here.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from trainers.appo import cpu_features, network, packed
from trainers.appo.config import AppoConfig
from trainers.appo.learner import Batch, Learner, compute_losses, make_adam
from trainers.appo.network import ActorCritic, encoder_dtype

OBS = (3, 36, 64)
CPUINFO = Path("/proc/cpuinfo")


def _model(seed: int) -> ActorCritic:
    torch.manual_seed(seed)
    model = ActorCritic(OBS, [3, 2], hidden_size=32, rnn_size=32).eval()
    model.update_normalizer(torch.randint(0, 256, (16, *OBS), dtype=torch.uint8))
    return model


def _inputs(batch: int) -> tuple[torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(batch)
    return torch.randint(0, 256, (batch, *OBS), dtype=torch.uint8, generator=gen), torch.randn(batch, 32, generator=gen)


def test_cpuinfo_flags_are_read_as_torch_names(tmp_path: Path) -> None:
    info = tmp_path / "cpuinfo"
    info.write_text("processor\t: 0\nflags\t\t: fpu avx2 avx512bw avx512vl avx512dq amx_tile\n\n"
                    "processor\t: 1\nflags\t\t: fpu avx2 avx512bw avx512vl avx512dq amx_tile\n")
    found = cpu_features.from_cpuinfo(info)
    assert found == {"avx512_bw", "avx512_vl", "avx512_dq", "amx_tile"}
    assert cpu_features.native_bf16(found)
    assert cpu_features.onednn_bf16(found)
    assert not cpu_features.native_bf16({"avx512_bw"})
    assert not cpu_features.onednn_bf16({"avx512_bw", "avx512_vl"})
    assert cpu_features.onednn_bf16({"avx_ne_convert"})
    assert cpu_features.from_cpuinfo(tmp_path / "missing") == frozenset()


@pytest.mark.skipif(not CPUINFO.is_file(), reason="no /proc/cpuinfo on this OS")
def test_without_torchs_public_report_the_cpuinfo_fallback_gives_the_same_answers(
        monkeypatch: pytest.MonkeyPatch) -> None:
    fast = cpu_features.from_torch()
    if fast is None:
        pytest.skip("this torch has no torch.cpu.get_capabilities: the fallback is the only path")
    dtype = encoder_dtype.__wrapped__("auto")
    monkeypatch.delattr(torch.cpu, "get_capabilities")
    cpu_features.features.cache_clear()
    try:
        assert cpu_features.from_torch() is None
        assert cpu_features.features() == fast
        assert encoder_dtype.__wrapped__("auto") is dtype
    finally:
        cpu_features.features.cache_clear()


def test_the_cpu_reading_agrees_with_torchs_private_helpers_where_they_exist() -> None:
    private = [getattr(torch.cpu, name, None) for name in ("_is_avx512_bf16_supported", "_is_amx_tile_supported")]
    if any(f is None for f in private):
        pytest.skip("this torch has no private CPU helpers to compare with")
    assert cpu_features.native_bf16() == any(f() for f in private if f is not None)


@pytest.mark.parametrize("encoder_dtype_", [None, torch.bfloat16], ids=["fp32", "bf16"])
def test_without_a_onednn_operator_the_model_step_runs_and_equals_the_packed_step(
        monkeypatch: pytest.MonkeyPatch, encoder_dtype_: torch.dtype | None) -> None:
    if not packed.available(encoder_dtype_):
        pytest.skip("oneDNN's packed step does not run here: the model's own step is the only path")
    model = _model(0)
    fast = packed.forward_step(model, batch_hint=4, encoder_dtype=encoder_dtype_)
    assert isinstance(getattr(fast, "__self__", None), packed.PackedStep)
    monkeypatch.setattr(packed, "_OPS", (*packed._OPS, "_an_operator_this_torch_lacks"))
    assert not packed.available(encoder_dtype_)
    slow = packed.forward_step(model, batch_hint=4, encoder_dtype=encoder_dtype_)
    assert not isinstance(getattr(slow, "__self__", None), packed.PackedStep)
    tol = 1e-5 if encoder_dtype_ is None else 2e-2
    for batch in (1, 5):
        obs, h = _inputs(batch)
        with torch.inference_mode():
            for x, y in zip(slow(obs, h), fast(obs, h), strict=True):
                torch.testing.assert_close(x, y, rtol=tol, atol=tol)


def test_a_private_operator_that_fails_makes_the_packed_step_unavailable(monkeypatch: pytest.MonkeyPatch) -> None:
    def changed(*_: object) -> torch.Tensor:  # what a torch whose operator takes other arguments raises
        raise TypeError("_linear_pointwise() takes 5 positional arguments but 6 were given")

    monkeypatch.setattr(packed.PackedStep, "_linear", changed)
    assert packed._probe.__wrapped__(None) is False
    state = torch.get_rng_state()
    packed._probe.__wrapped__(None)
    assert torch.equal(torch.get_rng_state(), state)  # the probe's model does not move the global RNG


def test_without_tensor_version_counters_the_normaliser_is_recomputed_each_call(
        monkeypatch: pytest.MonkeyPatch) -> None:
    model, other = _model(0), _model(1)
    obs, _ = _inputs(3)
    cached = model.standardize(obs).clone()
    monkeypatch.setattr(network, "version_key", lambda tensors: None)
    torch.testing.assert_close(model.standardize(obs), cached, rtol=0, atol=0)
    model.obs_mean.copy_(other.obs_mean)  # an in-place change the cache would have caught by its counter
    model.obs_var.copy_(other.obs_var)
    torch.testing.assert_close(model.standardize(obs), other.standardize(obs), rtol=0, atol=0)


def _batch(gen: torch.Generator, n: int = 3, steps: int = 5) -> Batch:
    return Batch(obs=torch.randint(0, 256, (steps + 1, n, *OBS), dtype=torch.uint8, generator=gen),
                 actions=torch.stack([torch.randint(0, 3, (steps, n), generator=gen),
                                      torch.randint(0, 2, (steps, n), generator=gen)], -1),
                 behaviour_logp=-torch.rand(steps, n, generator=gen) * 2, rewards=torch.randn(steps, n, generator=gen),
                 dones=torch.rand(steps, n, generator=gen) < 0.2, version=torch.zeros(steps, n, dtype=torch.int64),
                 rnn0=torch.randn(n, 32, generator=gen) * 0.1)


def test_the_default_adam_takes_the_fused_adams_steps() -> None:
    cfg = AppoConfig(encoder_precision="fp32")
    models = [_model(0), _model(0)]
    optimizers = [make_adam(list(models[0].parameters()), 1e-3, 1e-6),
                  make_adam(list(models[1].parameters()), 1e-3, 1e-6, fused=False)]
    assert not optimizers[1].defaults.get("fused")
    for step in range(3):
        for model, optimizer in zip(models, optimizers, strict=True):
            batch = _batch(torch.Generator().manual_seed(step))
            optimizer.zero_grad()
            compute_losses(model, batch, torch.ones(5, 3, dtype=torch.bool), cfg)["loss"].backward()  # type: ignore[no-untyped-call]
            optimizer.step()
    for a, b in zip(models[0].parameters(), models[1].parameters(), strict=True):
        torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-6)


def test_a_learner_keeps_its_own_adam_when_loading_a_state_written_by_the_other() -> None:
    learner = Learner(_model(0), AppoConfig())
    other = make_adam(list(_model(0).parameters()), 1e-3, 1e-6, fused=not learner.fused)
    learner.load_optimizer_state(other.state_dict())
    assert all(bool(group["fused"]) == learner.fused for group in learner.optimizer.param_groups)
