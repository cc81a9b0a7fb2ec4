"""Inference's forward pass with oneDNN weights packed once per policy version (CPU, same model).

``nn.Linear`` and ``nn.GRUCell`` on the CPU call MKL's sgemm, which packs the whole weight matrix into its
panel format on every call. At inference's batch sizes (2-8 envs) that copy is most of a pass: ``perf`` of a
loop of 4-env :meth:`ActorCritic.step` calls puts 26 % of the samples in ``mkl_blas_def_sgemm_scopy_right16_bdz``
(2-core AMD EPYC guest, 2026-12-02). oneDNN's linear takes weights packed ahead of time
(``torch.ops.mkldnn._reorder_linear_weight``), so :class:`PackedStep` packs the FC layer and both GRU matrices
when the learner publishes new weights, and a pass only multiplies. The convolutions go through oneDNN's
pointwise convolution as ``nn.Conv2d`` does, with their weights reordered into oneDNN's blocked layout at the
same time (``_reorder_convolution_weight``) instead of on every call: bit-identical outputs for any batch size,
0.01-0.03 ms less per convolution and pass (2-core AMD EPYC guest, 2026-12-04).

The arithmetic is the model's: the same fp32 weights, layers and GRU gate equations, summed in another order,
so outputs equal :meth:`ActorCritic.step` to float rounding (``tests/trainers/test_appo_packed.py``); with a bf16
encoder (``--encoder-precision``), those of :meth:`ActorCritic.step` with the same encoder dtype to bf16 rounding.
These are torch's private ``mkldnn`` operators (the ones ``torch.compile`` emits on the CPU), so they are used only
where :func:`available` says so: the build has oneDNN and the four operators, and a pass of :class:`PackedStep` over
a small model, run once per encoder dtype, equals :meth:`ActorCritic.step` (a torch whose private operators
changed their arguments or results fails that check). Everywhere else the forward pass is :meth:`ActorCritic.step`,
public torch only (:func:`forward_step`; ``tests/trainers/test_appo_torch_fallbacks.py`` forces it and compares).

Users: the trainer's inference thread (:class:`trainers.appo.inference.Inference`, repacked on every published
version) and :class:`trainers.appo.model.AppoPolicy` on the CPU (evaluation, tournaments, self-play players;
packed once, when the policy is built from its weights).
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import torch
from torch import nn

from trainers.appo import cpu_features
from trainers.appo.network import ActorCritic
from trainers.common import onednn

_OPS = ("_reorder_linear_weight", "_reorder_convolution_weight", "_linear_pointwise", "_convolution_pointwise")
_PROBE_OBS = (3, 36, 36)  # the smallest observation the encoder takes


def available(encoder_dtype: torch.dtype | None = None) -> bool:
    """Whether :class:`PackedStep` runs here, and equals :meth:`ActorCritic.step`, for ``encoder_dtype``.

    Needs oneDNN with the operators of ``_OPS``; for a bf16 encoder also a CPU on which oneDNN runs bf16 products
    (AVX512-BW/VL/DQ or AVX-NE-CONVERT, :func:`trainers.appo.cpu_features.onednn_bf16`; elsewhere its weight
    reorder raises); and a pass over a small model that matches the model's own step (:func:`_probe`, once per
    dtype). Where any is missing, :func:`forward_step` uses the model's own step instead.
    """
    if not onednn.has_ops(_OPS):
        return False
    if encoder_dtype is not None and not cpu_features.onednn_bf16():
        return False
    return _probe(encoder_dtype)


@functools.cache
def _probe(encoder_dtype: torch.dtype | None) -> bool:
    """Run :class:`PackedStep` once on a small random model; True when it equals :meth:`ActorCritic.step`.

    Any error of the private operators (an argument list or a result they no longer have) counts as "not
    available". The global RNG is left as it was (the model's initialisation draws from it).
    """
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        model = ActorCritic(_PROBE_OBS, [3, 2], hidden_size=16, rnn_size=16).eval()
        obs = torch.randint(0, 256, (2, *_PROBE_OBS), dtype=torch.uint8)
        h = torch.randn(2, 16)
    tol = 1e-4 if encoder_dtype is None else 2e-2
    try:
        with torch.inference_mode():
            got = PackedStep(model, 2, encoder_dtype, probe=False).step(obs, h)
            want = model.step(obs, h, encoder_dtype)
        return all(x.shape == y.shape and bool(torch.allclose(x, y, rtol=tol, atol=tol))
                   for x, y in zip(got, want, strict=True))
    except (RuntimeError, TypeError, ValueError, IndexError, NotImplementedError):
        return False


StepFn = Callable[[torch.Tensor, torch.Tensor], tuple[torch.Tensor, torch.Tensor, torch.Tensor]]


def forward_step(model: ActorCritic, batch_hint: int, encoder_dtype: torch.dtype | None = None) -> StepFn:
    """Return the forward pass of ``model``, whose weights will not change after this call.

    It is :class:`PackedStep`'s where oneDNN can run it (:func:`available`), :meth:`ActorCritic.step` otherwise;
    the encoder runs in ``encoder_dtype`` (``None``: fp32).
    """
    if available(encoder_dtype):
        return PackedStep(model, batch_hint, encoder_dtype).step
    return functools.partial(model.step, encoder_dtype=encoder_dtype)


def _conv_output(chw: list[int], conv: nn.Conv2d, padding: list[int], stride: list[int]) -> list[int]:
    """``[C, H, W]`` after ``conv`` with ``padding`` and ``stride`` (dilation 1, as every convolution here)."""
    kh, kw = conv.kernel_size
    return [conv.out_channels, (chw[1] + 2 * padding[0] - kh) // stride[0] + 1,
            (chw[2] + 2 * padding[1] - kw) // stride[1] + 1]


class PackedStep:
    """:meth:`ActorCritic.step` of ``model`` with pre-packed weights; call :meth:`repack` after the weights change.

    ``batch_hint``: the batch size oneDNN picks its weight layout for (any batch size works). ``encoder_dtype``
    (``torch.bfloat16``): the convolutions and the FC product take bf16 copies of the weights and activations, as
    :meth:`ActorCritic.encode` under autocast does; the GRU and the heads stay fp32. Raises ``RuntimeError`` where
    :func:`available` is false (``probe=False`` skips that check: :func:`available`'s own probe builds one).
    """

    def __init__(self, model: ActorCritic, batch_hint: int, encoder_dtype: torch.dtype | None = None, *,
                 probe: bool = True) -> None:
        if probe and not available(encoder_dtype):
            raise RuntimeError(f"oneDNN cannot run this step here (its operators, {encoder_dtype} products on this "
                               "CPU, or a pass equal to the model's own are missing): use ActorCritic.step")
        self.model = model
        self.batch_hint = batch_hint
        self.encoder_dtype = encoder_dtype
        # Each convolution with its oneDNN arguments (padding, stride, dilation, groups), fixed by the architecture.
        self._convs: list[tuple[nn.Conv2d, list[int], list[int], list[int], int]] = [
            (layer, [int(p) for p in layer.padding], list(layer.stride), list(layer.dilation), layer.groups)
            for layer in model.conv if isinstance(layer, nn.Conv2d)]
        self._linears: dict[str, onednn.PackedLinear] = {}
        self._conv_weights: list[torch.Tensor] = []
        self._conv_biases: list[torch.Tensor | None] = []
        self.repack()

    @torch.no_grad()
    def repack(self) -> None:
        """Pack the convolution, FC and GRU weights of the model's current weights."""
        m = self.model
        dtype = self.encoder_dtype or torch.float32
        hint = self.batch_hint
        self._linears = {  # the heads' two layers as one product
            "fc": onednn.PackedLinear(m.fc_weight_hwc().to(dtype), m.fc.bias.to(dtype), hint, relu=False),
            "ih": onednn.PackedLinear(m.core.weight_ih, m.core.bias_ih, hint, relu=False),
            "hh": onednn.PackedLinear(m.core.weight_hh, m.core.bias_hh, hint, relu=False),
            "heads": onednn.PackedLinear(torch.cat([m.actor.weight, m.critic.weight]),
                                         torch.cat([m.actor.bias, m.critic.bias]), hint, relu=False)}
        shape = [self.batch_hint, *m.obs_shape]
        self._conv_weights, self._conv_biases = [], []
        for conv, padding, stride, dilation, groups in self._convs:
            weight = conv.weight.detach().to(dtype).contiguous(memory_format=torch.channels_last)
            self._conv_weights.append(torch.ops.mkldnn._reorder_convolution_weight(weight, padding, stride, dilation,
                                                                                   groups, shape))
            self._conv_biases.append(None if conv.bias is None else conv.bias.detach().to(dtype))
            shape = [self.batch_hint, *_conv_output(shape[1:], conv, padding, stride)]

    def _linear(self, x: torch.Tensor, name: str) -> torch.Tensor:
        return self._linears[name](x)

    @torch.inference_mode()
    def step(self, obs: torch.Tensor, h: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """``obs uint8[B, C, H, W]``, ``h float[B, rnn]`` -> (logits ``[B, A]``, value ``[B]``, h'), as the model."""
        m = self.model
        x = m.standardize(obs)
        if self.encoder_dtype is not None:
            x = x.to(self.encoder_dtype)
        for (_, padding, stride, dilation, groups), weight, bias in zip(self._convs, self._conv_weights,
                                                                         self._conv_biases, strict=True):
            x = m.activation(torch.ops.mkldnn._convolution_pointwise(x, weight, bias, padding, stride,
                                                                     dilation, groups, "none", [], ""))
        features = m.activation(self._linear(m.flatten_hwc(x), "fc").float())
        # GRUCell (gates r, z, n in torch's order): r, z = sigmoid(i_rz + h_rz), n = tanh(i_n + r * h_n),
        # h' = n + z * (h - n); r and z in one op, and the products fused (fewer calls a pass, same formulas).
        rnn = m.rnn_size
        gi = self._linear(features, "ih")
        gh = self._linear(h, "hh")
        rz = gi[:, : 2 * rnn].add_(gh[:, : 2 * rnn]).sigmoid_()
        n = torch.addcmul(gi[:, 2 * rnn :], rz[:, :rnn], gh[:, 2 * rnn :]).tanh_()
        h_new = torch.addcmul(n, rz[:, rnn:], h - n)
        heads = self._linear(h_new, "heads")
        return heads[:, :-1], heads[:, -1], h_new
