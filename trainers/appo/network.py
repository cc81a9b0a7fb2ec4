"""Actor-critic for Doom at Sample Factory's reference size (its evaltk policy: :mod:`trainers.appo.model`).

Encoder (``convnet_simple``): conv 8x8/4 -> 32, 4x4/2 -> 64, 3x3/2 -> 128, FC -> ``hidden_size``, ELU after
each; a GRU cell core (``rnn_size``); a linear critic and one linear layer producing the logits of every
action head. Observations ``uint8[B, 3, H, W]`` are scaled to [0, 1] and standardised with a per-pixel
running mean/variance (``obs_mean``, ``obs_var``, ``obs_count``: buffers saved with the weights).
For 3x72x128 inputs and 4 actions the model has 2,871,525 trainable parameters (Sample Factory's
2,926,825 count includes its 55,300 normaliser statistics).
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Sequence
from typing import Any

import torch
from torch import nn

from trainers.appo import cpu_features
from trainers.appo.gru import gru_sequence


@functools.cache
def encoder_dtype(precision: str) -> torch.dtype | None:
    """Return the encoder's dtype in training for ``--encoder-precision`` (``None`` = fp32).

    ``auto`` takes bf16 only where the CPU multiplies bf16 natively: there a 1,024-sample learner step of the Doom
    model takes 0.50 s of one core against 0.73 s in fp32, and inference's encoder 1.05 ms against 1.46 ms for 6
    envs (AMD EPYC with AVX512-BF16, 2026-12-04); without those instructions oneDNN emulates bf16. The CPU is read
    through public interfaces (:func:`trainers.appo.cpu_features.native_bf16`). Cached: the learner asks on every
    step and the CPU does not change.
    """
    if precision == "fp32":
        return None
    if precision == "bf16" or cpu_features.native_bf16():
        return torch.bfloat16
    return None


def version_key(tensors: Sequence[torch.Tensor]) -> tuple[tuple[int, int], ...] | None:
    """Identity and in-place version counter of each tensor, or None where torch has no ``_version`` counter.

    ``Tensor._version`` is torch's private counter of in-place changes; without it (None) a cache keyed on this
    must be recomputed on every call (:meth:`ActorCritic.input_affine`).
    """
    try:
        return tuple((id(t), int(t._version)) for t in tensors)
    except AttributeError:
        return None


def _conv_out(size: int, kernel: int, stride: int) -> int:
    return (size - kernel) // stride + 1


class ActorCritic(nn.Module):
    """Conv encoder + GRU + critic/actor heads. ``action_nvec``: options per action head."""

    obs_mean: torch.Tensor
    obs_var: torch.Tensor
    obs_count: torch.Tensor

    def __init__(self, obs_shape: tuple[int, int, int], action_nvec: list[int], hidden_size: int = 512,
                 rnn_size: int = 512, nonlinearity: str = "elu") -> None:
        super().__init__()
        if nonlinearity not in ("elu", "relu"):
            raise ValueError(f"nonlinearity must be 'elu' or 'relu', got {nonlinearity!r}")
        self.nonlinearity = nonlinearity
        act: type[nn.Module] = nn.ELU if nonlinearity == "elu" else nn.ReLU
        channels, height, width = obs_shape
        self.obs_shape = obs_shape
        self.action_nvec = list(action_nvec)
        self.rnn_size = rnn_size
        self.conv = nn.Sequential(
            nn.Conv2d(channels, 32, 8, 4), act(inplace=True),
            nn.Conv2d(32, 64, 4, 2), act(inplace=True),
            nn.Conv2d(64, 128, 3, 2), act(inplace=True),
        )
        h, w = height, width
        for kernel, stride in ((8, 4), (4, 2), (3, 2)):
            h, w = _conv_out(h, kernel, stride), _conv_out(w, kernel, stride)
        if h < 1 or w < 1:
            raise ValueError(f"observation {obs_shape} is too small for the conv encoder (needs >= 36x36)")
        self.conv_out_shape = (128, h, w)
        self.fc = nn.Linear(128 * h * w, hidden_size)
        self.core = nn.GRUCell(hidden_size, rnn_size)
        self.critic = nn.Linear(rnn_size, 1)
        self.actor = nn.Linear(rnn_size, sum(self.action_nvec))
        self.register_buffer("obs_mean", torch.zeros(obs_shape))
        self.register_buffer("obs_var", torch.ones(obs_shape))
        self.register_buffer("obs_count", torch.zeros((), dtype=torch.float64))
        self._affine_cache: tuple[tuple[tuple[int, int], ...] | None, torch.Tensor, torch.Tensor] | None = None
        self.conv.to(memory_format=torch.channels_last)  # type: ignore[call-overload]

    def tensor_shapes(self) -> dict[str, list[int]]:
        """Names and shapes of every tensor in the state dict (for the checkpoint checks)."""
        return {k: list(v.shape) for k, v in self.state_dict().items()}

    @torch.no_grad()
    def update_normalizer(self, obs: torch.Tensor) -> None:
        """Merge the statistics of ``obs`` (``uint8[N, C, H, W]``) into the running mean/variance."""
        n = float(obs.shape[0])
        if n == 0:
            return
        # Two passes over a contiguous float copy: 3 ms for 64 frames of 3x72x128, where torch.var_mean (Welford in
        # double) takes 15 ms (2-core AMD EPYC guest, 2026-12-04).
        x = obs.to(torch.float32, memory_format=torch.contiguous_format).div_(255.0)
        batch_mean = x.mean(0)
        batch_var = x.sub_(batch_mean).square_().mean(0)
        count = float(self.obs_count.item())
        total = count + n
        delta = batch_mean - self.obs_mean
        self.obs_mean += delta * (n / total)
        self.obs_var.copy_((self.obs_var * count + batch_var * n + delta.square() * (count * n / total)) / total)
        self.obs_count.fill_(total)

    def encode(self, obs: torch.Tensor, dtype: torch.dtype | None = None) -> torch.Tensor:
        """``uint8[N, C, H, W]`` -> features ``float[N, hidden]``.

        ``dtype`` (``torch.bfloat16``): the convolutions and the FC product run in that precision under
        ``torch.autocast`` (fp32 weights, fp32 gradients into them, fp32 features out); ``None``: fp32 throughout.
        """
        with contextlib.nullcontext() if dtype is None else torch.autocast(obs.device.type, dtype=dtype):
            x = self.conv(self.standardize(obs))
            y = nn.functional.linear(self.flatten_hwc(x), self.fc_weight_hwc(), self.fc.bias)
        return self.activation(y.float())  # .float() returns an fp32 tensor itself

    def fc_weight_hwc(self) -> torch.Tensor:
        """Return the FC weight with its input columns in (H, W, C) order, matching :meth:`flatten_hwc` (a copy).

        The stored weight keeps torch's (C, H, W) column order (``flatten(1)`` of NCHW), so checkpoints are
        unchanged; the encoder permutes the 1.2M-entry weight instead of the 2.4M-per-1,024-frames activation.
        """
        c, h, w = self.conv_out_shape
        return self.fc.weight.view(-1, c, h, w).permute(0, 2, 3, 1).reshape(self.fc.out_features, -1)

    @staticmethod
    def flatten_hwc(x: torch.Tensor) -> torch.Tensor:
        """``float[N, C, H, W]`` -> ``[N, H*W*C]`` in (H, W, C) order: a view of a channels_last tensor.

        ``flatten(1)`` would copy the channels_last conv output into (C, H, W) order, and in the backward pass
        hand the last ELU a contiguous gradient against its channels_last input, where torch's elementwise
        kernels take a slow strided path (17 ms instead of about 2 ms per 1,024-sample learner step, Intel Xeon
        guest, 2026-12-03).
        """
        return x.permute(0, 2, 3, 1).reshape(x.shape[0], -1)

    def standardize(self, obs: torch.Tensor) -> torch.Tensor:
        """``uint8[N, C, H, W]`` -> the encoder's input ``float[N, C, H, W]`` (channels_last), standardised."""
        # One copy converts uint8 -> float and NCHW -> channels_last; the standardisation is then done in place
        # with (x / 255 - mean) / std folded into one subtract and one multiply.
        x = obs.to(torch.float32, memory_format=torch.channels_last)
        shift, scale = self.input_affine()
        return x.sub_(shift).mul_(scale)

    def activation(self, x: torch.Tensor) -> torch.Tensor:
        """Apply the encoder's nonlinearity (ELU or ReLU) to ``x`` in place (``x`` is a layer's fresh output).

        In place, as the conv stack's own ``nn.ELU(inplace=True)``: no new activation tensor, and autograd takes
        the derivative from the result; a linear or convolution layer's backward does not need its output.
        """
        return nn.functional.elu_(x) if self.nonlinearity == "elu" else nn.functional.relu_(x)

    def input_affine(self) -> tuple[torch.Tensor, torch.Tensor]:
        """Per-pixel shift and scale (``[1, C, H, W]``, channels_last), recomputed when the statistics change.

        The statistics change only in place (:meth:`update_normalizer`, ``load_state_dict``), which bumps each
        buffer's version counter, or when a buffer is replaced: the cache is keyed on both, so a call costs no
        reduction and no device sync when nothing changed (inference calls it once per pass); where torch has no
        version counter (:func:`version_key` is None) it is recomputed on every call.
        """
        key = version_key((self.obs_count, self.obs_mean, self.obs_var))
        if key is None or self._affine_cache is None or self._affine_cache[0] != key:
            if float(self.obs_count.item()) > 0:
                shift = self.obs_mean * 255.0
                scale = torch.rsqrt(self.obs_var + 1e-5) / 255.0
            else:
                shift, scale = torch.zeros_like(self.obs_mean), torch.full_like(self.obs_var, 1.0 / 255.0)
            fmt = torch.channels_last
            self._affine_cache = (key, shift.unsqueeze(0).contiguous(memory_format=fmt),
                                  scale.unsqueeze(0).contiguous(memory_format=fmt))
        return self._affine_cache[1], self._affine_cache[2]

    def step(self, obs: torch.Tensor, h: torch.Tensor, encoder_dtype: torch.dtype | None = None
             ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """One step: ``obs uint8[B, C, H, W]``, ``h float[B, rnn]`` -> (logits ``[B, A]``, value ``[B]``, h').

        ``encoder_dtype``: the encoder's precision (:meth:`encode`).
        """
        h = self.core(self.encode(obs, encoder_dtype), h)
        return self.actor(h), self.critic(h).squeeze(-1), h

    def unroll(self, obs: torch.Tensor, h0: torch.Tensor, resets: torch.Tensor, *, bootstrap_last: bool = False,
               encoder_dtype: torch.dtype | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """Unroll over time: ``obs uint8[T, B, C, H, W]``, ``h0 float[B, rnn]``, ``resets bool[T, B]``.

        ``resets[t]`` zeroes the state before step ``t`` (an episode starts there). Returns logits
        ``float[T, B, A]`` and values ``float[T, B]``. ``bootstrap_last``: the last step only supplies the
        bootstrap value, so it runs without autograd (no activations kept, no backward through its frames: the
        learner's batch is 1,024 frames with gradients, not 1,056); a gradient through its outputs reaches the
        heads only. The GRU runs over the steps as one autograd node (:func:`trainers.appo.gru.gru_sequence`: the
        cell's equations, batched input and weight-gradient products), equal to a loop of ``self.core`` calls.
        ``encoder_dtype``: the encoder's precision (:meth:`encode`); the GRU and the heads stay fp32.
        """
        steps, batch = obs.shape[:2]
        grad_steps = steps - 1 if bootstrap_last else steps
        flat = obs[:grad_steps].reshape(grad_steps * batch, *obs.shape[2:])
        feats = self.encode(flat, encoder_dtype).view(grad_steps, batch, -1)
        keep = (~resets).float().unsqueeze(-1)
        core = gru_sequence(self.core, feats, h0, keep[:grad_steps])
        if bootstrap_last:
            with torch.no_grad():
                last = self.core(self.encode(obs[-1], encoder_dtype), core[-1] * keep[-1])
            core = torch.cat([core, last.unsqueeze(0)])
        return self.actor(core), self.critic(core).squeeze(-1)


def split_logits(logits: torch.Tensor, nvec: list[int]) -> list[torch.Tensor]:
    """Split ``[..., sum(nvec)]`` logits into one tensor per head."""
    return list(torch.split(logits, nvec, dim=-1))


def log_prob_entropy(logits: torch.Tensor, actions: torch.Tensor, nvec: list[int]
                     ) -> tuple[torch.Tensor, torch.Tensor]:
    """Log-probability of ``actions`` (``int64[..., k]``) and entropy, summed over heads; both ``float[...]``."""
    logp = torch.zeros(logits.shape[:-1])
    entropy = torch.zeros(logits.shape[:-1])
    for i, head in enumerate(split_logits(logits, nvec)):
        log_softmax = torch.log_softmax(head, dim=-1)
        logp = logp + log_softmax.gather(-1, actions[..., i : i + 1]).squeeze(-1)
        entropy = entropy - (log_softmax.exp() * log_softmax).sum(-1)
    return logp, entropy


def sample_actions(logits: torch.Tensor, nvec: list[int], generator: torch.Generator | None = None
                   ) -> tuple[torch.Tensor, torch.Tensor]:
    """Sample ``int64[B, k]`` actions from ``[B, A]`` logits; returns (actions, log-prob ``float[B]``)."""
    actions = []
    logp = torch.zeros(logits.shape[0])
    for head in split_logits(logits, nvec):
        log_softmax = torch.log_softmax(head, dim=-1)
        a = torch.multinomial(log_softmax.exp(), 1, generator=generator)
        actions.append(a)
        logp = logp + log_softmax.gather(-1, a).squeeze(-1)
    return torch.cat(actions, dim=-1), logp


def model_kwargs(model: ActorCritic) -> dict[str, Any]:
    """Return the JSON ``model_kwargs`` that rebuild ``model``'s architecture."""
    return {"obs_shape": list(model.obs_shape), "action_nvec": list(model.action_nvec),
            "hidden_size": model.fc.out_features, "rnn_size": model.rnn_size, "nonlinearity": model.nonlinearity}


def build_model(kwargs: dict[str, Any]) -> ActorCritic:
    """Build an :class:`ActorCritic` from :func:`model_kwargs` output."""
    shape = tuple(int(x) for x in kwargs["obs_shape"])
    return ActorCritic((shape[0], shape[1], shape[2]), [int(n) for n in kwargs["action_nvec"]],
                       int(kwargs["hidden_size"]), int(kwargs["rnn_size"]), str(kwargs.get("nonlinearity", "elu")))
