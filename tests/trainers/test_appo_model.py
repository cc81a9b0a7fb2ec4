"""The Doom encoder's channels-last flatten computes the model as defined: ``fc(conv(x).flatten(1))``."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from trainers.appo import cpu_features
from trainers.appo.network import ActorCritic, encoder_dtype

OBS = (3, 72, 128)


def _definition(model: ActorCritic, obs: torch.Tensor) -> torch.Tensor:
    """Compute the encoder the plain way: (C, H, W) flatten against the stored FC weight."""
    x = model.conv(model.standardize(obs))
    return model.activation(model.fc(x.flatten(1)))


@pytest.mark.parametrize("nonlinearity", ["elu", "relu"])
@pytest.mark.parametrize("batch", [1, 5])
def test_encode_equals_the_definition_in_values_and_gradients(batch: int, nonlinearity: str) -> None:
    torch.manual_seed(batch)
    model = ActorCritic(OBS, [3], nonlinearity=nonlinearity)
    model.update_normalizer(torch.randint(0, 256, (16, *OBS), dtype=torch.uint8))
    obs = torch.randint(0, 256, (batch, *OBS), dtype=torch.uint8)
    probe = torch.randn(batch, model.fc.out_features)

    grads = []
    outputs = []
    for encode in (model.encode, lambda o: _definition(model, o)):
        model.zero_grad(set_to_none=True)
        out = encode(obs)
        (out * probe).sum().backward()  # type: ignore[no-untyped-call]
        outputs.append(out.detach())
        grads.append({name: p.grad.clone() for name, p in model.named_parameters() if p.grad is not None})
    torch.testing.assert_close(outputs[0], outputs[1], rtol=1e-5, atol=1e-5)
    assert grads[0].keys() == grads[1].keys() == {n for n, _ in model.named_parameters()
                                                  if n.startswith(("conv", "fc"))}
    for name in grads[0]:
        torch.testing.assert_close(grads[0][name], grads[1][name], rtol=1e-4, atol=1e-5, msg=name)


def test_the_stored_fc_weight_keeps_torch_column_order() -> None:
    model = ActorCritic(OBS, [3])
    c, h, w = model.conv_out_shape
    assert model.fc.weight.shape == (512, c * h * w)
    hwc = model.fc_weight_hwc()
    # Column (y, x, ch) of the permuted weight is column (ch, y, x) of the stored one.
    y, x, ch = 2, 5, 7
    torch.testing.assert_close(hwc[:, (y * w + x) * c + ch], model.fc.weight[:, (ch * h + y) * w + x])
    assert isinstance(model.fc, nn.Linear)


def test_unroll_bootstrap_last_changes_no_output_and_no_gradient() -> None:
    torch.manual_seed(3)
    model = ActorCritic(OBS, [3, 2])
    steps, batch = 5, 3
    obs = torch.randint(0, 256, (steps, batch, *OBS), dtype=torch.uint8)
    h0 = torch.randn(batch, model.rnn_size)
    resets = torch.rand(steps, batch) < 0.3
    probe_l, probe_v = torch.randn(steps - 1, batch, 5), torch.randn(steps - 1, batch)
    results = []
    for bootstrap_last in (False, True):
        model.zero_grad(set_to_none=True)
        logits, values = model.unroll(obs, h0, resets, bootstrap_last=bootstrap_last)
        # The learner's use: the gradient comes from the first T-1 steps; the last value is only read, detached.
        ((logits[:-1] * probe_l).sum() + (values[:-1] * probe_v).sum()).backward()  # type: ignore[no-untyped-call]
        results.append((logits.detach(), values.detach(),
                        {n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None}))
    (l0, v0, g0), (l1, v1, g1) = results
    torch.testing.assert_close(l0, l1, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(v0, v1, rtol=1e-5, atol=1e-5)
    assert g0.keys() == g1.keys()
    for name in g0:
        torch.testing.assert_close(g0[name], g1[name], rtol=1e-4, atol=1e-6, msg=name)
    # Through the last step a gradient reaches the heads only, never the encoder or the GRU.
    model.zero_grad(set_to_none=True)
    model.unroll(obs, h0, resets, bootstrap_last=True)[1][-1].sum().backward()  # type: ignore[no-untyped-call]
    assert model.critic.weight.grad is not None
    assert all(p.grad is None or not p.grad.any() for n, p in model.named_parameters()
               if n.startswith(("conv", "fc", "core")))


def test_standardize_follows_every_change_of_the_statistics() -> None:
    model = ActorCritic(OBS, [3])
    obs = torch.randint(0, 256, (4, *OBS), dtype=torch.uint8)

    def expected(m: ActorCritic) -> torch.Tensor:
        if float(m.obs_count) == 0:
            return obs.float() / 255.0
        return (obs.float() / 255.0 - m.obs_mean) / torch.sqrt(m.obs_var + 1e-5)

    torch.testing.assert_close(model.standardize(obs), expected(model))
    model.update_normalizer(torch.randint(0, 256, (8, *OBS), dtype=torch.uint8))
    torch.testing.assert_close(model.standardize(obs), expected(model), rtol=1e-4, atol=1e-4)
    other = ActorCritic(OBS, [3])
    other.update_normalizer(torch.randint(100, 256, (8, *OBS), dtype=torch.uint8))
    model.load_state_dict(other.state_dict())
    torch.testing.assert_close(model.standardize(obs), expected(other), rtol=1e-4, atol=1e-4)


def test_the_running_statistics_are_those_of_every_frame_seen() -> None:
    model = ActorCritic(OBS, [3])
    gen = torch.Generator().manual_seed(5)
    # Channels-last views, as the learner passes them (a permuted view of the HWC trajectory memory).
    first = torch.randint(0, 256, (6, *OBS[1:], OBS[0]), dtype=torch.uint8, generator=gen).permute(0, 3, 1, 2)
    second = torch.randint(50, 200, (9, *OBS[1:], OBS[0]), dtype=torch.uint8, generator=gen).permute(0, 3, 1, 2)
    model.update_normalizer(first)
    model.update_normalizer(second)
    frames = torch.cat([first, second]).double() / 255.0
    assert float(model.obs_count) == 15
    torch.testing.assert_close(model.obs_mean.double(), frames.mean(0), rtol=0, atol=1e-6)
    torch.testing.assert_close(model.obs_var.double(), frames.var(0, unbiased=False), rtol=0, atol=1e-6)


def test_encoder_precision_names_the_encoder_dtype() -> None:
    assert encoder_dtype("fp32") is None
    assert encoder_dtype("bf16") is torch.bfloat16
    assert encoder_dtype("auto") is (torch.bfloat16 if cpu_features.native_bf16() else None)
