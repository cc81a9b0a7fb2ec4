"""trainers.common.onednn: the packed linear layer equals F.linear; addmm where oneDNN cannot run it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import torch
from torch.nn import functional

from trainers.common import onednn


@pytest.fixture
def fresh_probe() -> Iterator[None]:
    onednn.linear_works.cache_clear()
    yield
    onednn.linear_works.cache_clear()


def _weights(out: int, inp: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    generator = torch.Generator().manual_seed(seed)
    return torch.randn(out, inp, generator=generator), torch.randn(out, generator=generator)


def test_this_torch_runs_the_packed_product() -> None:
    # The speed path of A2C's acting (docs/benchmarks.md); a torch without it would fall back, slower.
    assert onednn.linear_works()
    weight, bias = _weights(16, 32, 0)
    assert isinstance(onednn.packed_linear(weight, bias), onednn.PackedLinear)


@pytest.mark.parametrize("relu", [False, True])
@pytest.mark.parametrize("with_bias", [False, True])
@pytest.mark.parametrize("batch", [1, 3, 8, 13])
def test_packed_linear_equals_f_linear_for_any_batch_size(relu: bool, with_bias: bool, batch: int) -> None:
    weight, bias = _weights(512, 3136, batch)
    x = torch.randn(batch, 3136, generator=torch.Generator().manual_seed(100 + batch))
    layer = onednn.packed_linear(weight, bias if with_bias else None, batch_hint=8, relu=relu)
    with torch.inference_mode():
        got = layer(x)
        want = functional.linear(x, weight, bias if with_bias else None)
        if relu:
            want = want.relu()
    assert got.shape == (batch, 512)
    assert got.dtype == torch.float32
    # 3,136 terms of size ~1 per output: float rounding reaches ~1e-4 absolute on outputs of size ~50
    torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-3)
    if relu:
        assert bool((got >= 0).all())
        assert bool((got == 0).any())


def test_the_weights_are_read_when_packed() -> None:
    weight, bias = _weights(8, 12, 1)
    x = torch.randn(2, 12)
    layer = onednn.packed_linear(weight, bias)
    with torch.inference_mode():
        before = layer(x)
        weight.mul_(2.0)
        torch.testing.assert_close(layer(x), before, rtol=0, atol=0)


def test_without_an_operator_the_product_is_addmm_and_equal(monkeypatch: pytest.MonkeyPatch,
                                                            fresh_probe: None) -> None:
    weight, bias = _weights(64, 96, 2)
    x = torch.randn(5, 96, generator=torch.Generator().manual_seed(3))
    fast = onednn.packed_linear(weight, bias, relu=True)
    monkeypatch.setattr(onednn, "LINEAR_OPS", (*onednn.LINEAR_OPS, "_an_operator_this_torch_lacks"))
    onednn.linear_works.cache_clear()
    assert not onednn.linear_works()
    slow = onednn.packed_linear(weight, bias, relu=True)
    assert isinstance(slow, onednn._TransposedLinear)
    with torch.inference_mode():
        torch.testing.assert_close(slow(x), fast(x), rtol=1e-5, atol=1e-5)
        torch.testing.assert_close(slow(x), functional.linear(x, weight, bias).relu(), rtol=1e-5, atol=1e-5)


def test_an_operator_that_fails_counts_as_missing(monkeypatch: pytest.MonkeyPatch, fresh_probe: None) -> None:
    def changed(*_: object) -> torch.Tensor:  # what a torch whose operator takes other arguments raises
        raise TypeError("_linear_pointwise() takes 5 positional arguments but 6 were given")

    monkeypatch.setattr(onednn.PackedLinear, "__call__", changed)
    assert onednn.linear_works() is False
    weight, bias = _weights(4, 6, 4)
    assert isinstance(onednn.packed_linear(weight, bias), onednn._TransposedLinear)


def test_other_dtypes_take_addmm() -> None:
    weight, bias = _weights(4, 6, 5)
    layer = onednn.packed_linear(weight.double(), bias.double())
    assert isinstance(layer, onednn._TransposedLinear)
    x = torch.randn(3, 6, dtype=torch.float64)
    torch.testing.assert_close(layer(x), functional.linear(x, weight.double(), bias.double()))
