"""A linear layer with its weight packed once by oneDNN, where this torch can run it (CPU inference).

``torch.addmm`` and ``nn.Linear`` on the CPU call MKL's sgemm, which repacks the whole weight on every call; at
acting's batch sizes (1-16 rows) that is most of the product. oneDNN's ``_linear_pointwise`` takes a weight packed
ahead of time (``_reorder_linear_weight``). Measured on the A2C Nature-CNN's FC layer (3136 x 512, 7 rows, one
thread, 2-core AMD EPYC guest, 2026-12-07, ``docs/benchmarks.md``): the FC alone 0.25 ms against 0.71 ms for
``addmm`` on a transposed copy, the whole acting forward pass 2.29 ms against 2.71 ms.

These are torch's private ``mkldnn`` operators (the ones ``torch.compile`` emits on the CPU), so they are used only
where :func:`linear_works` says so: the build has oneDNN and both operators, and a packed product over a small
random weight equals ``torch.nn.functional.linear`` (a torch whose private operators changed their arguments or
results fails that check). Everywhere else :func:`packed_linear` returns ``addmm`` on a transposed copy of the
weight. The sums run in another order than ``F.linear``'s, so results equal it to float rounding.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable

import torch
from torch.nn import functional

LINEAR_OPS = ("_reorder_linear_weight", "_linear_pointwise")

Linear = Callable[[torch.Tensor], torch.Tensor]


def has_ops(names: Iterable[str]) -> bool:
    """Whether torch was built with oneDNN and ``torch.ops.mkldnn`` has every operator of ``names``."""
    has_onednn = bool(torch.backends.mkldnn.is_available())  # type: ignore[no-untyped-call]
    return has_onednn and all(hasattr(torch.ops.mkldnn, name) for name in names)


@functools.cache
def linear_works() -> bool:
    """Whether a packed product runs here and equals ``F.linear`` (fused ReLU included), checked once.

    Any error of the private operators counts as "does not work". The global RNG is left as it was.
    """
    if not has_ops(LINEAR_OPS):
        return False
    generator = torch.Generator().manual_seed(0)
    weight, bias = torch.randn(24, 40, generator=generator), torch.randn(24, generator=generator)
    x = torch.randn(3, 40, generator=generator)
    try:
        with torch.inference_mode():
            got = PackedLinear(weight, bias, 3, relu=True)(x)
            want = functional.linear(x, weight, bias).relu()
        return got.shape == want.shape and bool(torch.allclose(got, want, rtol=1e-5, atol=1e-5))
    except (RuntimeError, TypeError, ValueError, IndexError, NotImplementedError):
        return False


class PackedLinear:
    """``x -> act(x @ weight.T + bias)`` on oneDNN's packed copy of ``weight``, in ``weight``'s dtype.

    The packed copy is made here, once; ``bias`` is kept as given (a view that follows in-place updates); ``x`` comes
    in ``weight``'s dtype.

    Needs the operators of :data:`LINEAR_OPS` (:func:`has_ops`); :func:`packed_linear` chooses it where
    :func:`linear_works`, APPO's :class:`trainers.appo.packed.PackedStep` where its own probe passes.
    """

    def __init__(self, weight: torch.Tensor, bias: torch.Tensor | None, batch_hint: int, *, relu: bool) -> None:
        with torch.no_grad():
            self.weight = torch.ops.mkldnn._reorder_linear_weight(weight.detach().contiguous(), batch_hint)
            self.bias = None if bias is None else bias.detach()
        self.attr = "relu" if relu else "none"

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        """``x [B, in] -> [B, out]``."""
        out: torch.Tensor = torch.ops.mkldnn._linear_pointwise(x, self.weight, self.bias, self.attr, [], "")
        return out


class _TransposedLinear:
    """``x -> act(addmm(bias, x, weight.T))`` on a contiguous transposed copy of ``weight`` (made here, once)."""

    def __init__(self, weight: torch.Tensor, bias: torch.Tensor | None, *, relu: bool) -> None:
        with torch.no_grad():
            self.weight_t = weight.detach().t().contiguous()
            self.bias = weight.new_zeros(weight.shape[0]) if bias is None else bias.detach()
        self.relu = relu

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        out = torch.addmm(self.bias, x, self.weight_t)
        return out.relu_() if self.relu else out


def packed_linear(weight: torch.Tensor, bias: torch.Tensor | None, *, batch_hint: int = 8,
                  relu: bool = False) -> Linear:
    """``x float32[B, in] -> float32[B, out]``: ``F.linear(x, weight, bias)`` (then ReLU if ``relu``), fp32, CPU.

    Packed by oneDNN where :func:`linear_works` (``batch_hint``: the batch size it picks its layout for; any batch
    size works), ``addmm`` on a transposed copy otherwise. The weights are read now: pack again after they change.
    """
    if weight.device.type == "cpu" and weight.dtype == torch.float32 and linear_works():
        return PackedLinear(weight, bias, batch_hint, relu=relu)
    return _TransposedLinear(weight, bias, relu=relu)
