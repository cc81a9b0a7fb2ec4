"""The network an imported checkpoint runs: a small layer program rebuilt in plain torch, and its policy.

An importer describes the foreign network as data in ``model_kwargs`` (so ``policy.json`` says
exactly what runs)::

    {"source": "sb3", "head": "logits" | "q", "obs_scale": 255.0,
     "layers": {"trunk": [...], "policy": [...], "value": [...]},
     "source_names": {"policy.0.weight": "action_net.weight", ...}}

Each layer is ``{"op": "conv", "in_channels": 4, "out_channels": 32, "kernel": 8, "stride": 4}``,
``{"op": "linear", "in_features": 3136, "out_features": 512}``, a parameter-free
``{"op": "relu" | "tanh" | "elu" | "leaky_relu" | "flatten"}``, Sample Factory's observation
normaliser ``{"op": "obs_norm", "shape": [...], "sub_mean": 0.0, "scale": 255.0, "running": true,
"eps": 1e-05, "clip": 5.0}`` (``(x - sub_mean) * (1 / scale)``, then ``(x - mean) * (1 / sqrt(var + eps))``
clipped to ``[-clip, clip]``) and a one-layer ``{"op": "gru", "input_size": 512, "hidden_size": 512}``
(trunk only; its state is carried across steps and zeroed where an episode starts). The float
observation (divided by ``obs_scale``) goes through ``trunk``, then ``policy`` gives the logits (or
Q-values) and ``value`` (optional, may be empty) the state value. Tensors are named
``<branch>.<index>.<param>`` (:data:`PARAMS`); ``source_names`` records the foreign name of each.

Sample Factory's Doom models add two optional keys: ``"measurements": 23`` (the observation carries
that many float32 values packed in its last row, :mod:`evaltk.envs.doom_measurements`; the
``measurements`` branch, from its own ``obs_norm``, maps them, and the trunk's parameter-free
``{"op": "concat_measurements"}`` appends that output to the screen features) and
``"action_heads": [3, 3, 2, 2, 11]`` (the policy output is split into that many categorical heads).

:class:`ImportedPolicy` acts greedily (argmax of logits or Q-values) as SB3's
``evaluate_policy(deterministic=True)`` and a DQN's greedy policy do, or samples (``actions: sample``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import torch
from torch import nn

from evaltk.checkpoint import Checkpoint, CheckpointSpec
from evaltk.policies import check_tensor_shapes

MODEL_CLASS = "evaltk.importers.nets:ImportedPolicy"
BRANCHES = ("trunk", "policy", "value", "measurements")
_ACTIVATIONS: dict[str, type[nn.Module]] = {"relu": nn.ReLU, "tanh": nn.Tanh, "elu": nn.ELU,
                                            "leaky_relu": nn.LeakyReLU}


PARAMS: dict[str, tuple[str, ...]] = {
    "conv": ("weight", "bias"), "linear": ("weight", "bias"), "obs_norm": ("running_mean", "running_var"),
    "gru": ("weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0"),
}
"""The tensors of each op with parameters (by their torch names)."""


class ObsNorm(nn.Module):
    """Sample Factory's ``ObservationNormalizer`` (scale, then running mean/std, clipped) without the updates."""

    def __init__(self, shape: Sequence[int], sub_mean: float, scale: float, running: bool, eps: float,
                 clip: float) -> None:
        super().__init__()
        self.sub_mean, self.scale, self.running, self.eps, self.clip = sub_mean, scale, running, eps, clip
        self.running_mean: torch.Tensor
        self.running_var: torch.Tensor
        self.register_buffer("running_mean", torch.zeros(tuple(shape)))
        self.register_buffer("running_var", torch.ones(tuple(shape)))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Normalise a float observation batch the way Sample Factory does before its encoder."""
        if abs(self.sub_mean) > 1e-8:
            x = x - self.sub_mean
        if abs(self.scale - 1.0) > 1e-8:
            x = x * (1.0 / self.scale)
        if self.running:
            sigma = torch.sqrt(self.running_var + self.eps)
            x = ((x - self.running_mean) * (1.0 / sigma)).clamp(-self.clip, self.clip)
        return x


class ConcatMeasurements(nn.Module):
    """Marks where the ``measurements`` branch's output is appended to the trunk's features (see LayerProgram)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Identity: :meth:`LayerProgram.features` does the concatenation."""
        return x


def unpack_measurements(obs: torch.Tensor, count: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Split ``uint8[B, C, H + 1, W]`` into the screen ``[B, C, H, W]`` and the float32 vector packed in row H.

    The layout is :mod:`evaltk.envs.doom_measurements`'s (little-endian float32 bytes, channel-major).
    """
    rows = obs[:, :, -1, :].reshape(obs.shape[0], -1)[:, :4 * count].contiguous()
    values = rows.to(torch.uint8).view(torch.float32)  # the row holds bytes (a float batch: their values)
    return obs[:, :, :-1, :], values


def conv(in_channels: int, out_channels: int, kernel: int, stride: int) -> dict[str, Any]:
    """Describe a ``Conv2d`` (no padding)."""
    return {"op": "conv", "in_channels": in_channels, "out_channels": out_channels, "kernel": kernel,
            "stride": stride}


def linear(in_features: int, out_features: int) -> dict[str, Any]:
    """Describe a ``Linear`` layer."""
    return {"op": "linear", "in_features": in_features, "out_features": out_features}


def op(name: str) -> dict[str, Any]:
    """Describe a parameter-free layer (an activation or ``flatten``)."""
    return {"op": name}


def _module(layer: Mapping[str, Any]) -> nn.Module:
    kind = layer["op"]
    if kind == "conv":
        return nn.Conv2d(int(layer["in_channels"]), int(layer["out_channels"]), int(layer["kernel"]),
                         stride=int(layer["stride"]))
    if kind == "linear":
        return nn.Linear(int(layer["in_features"]), int(layer["out_features"]))
    if kind == "obs_norm":
        return ObsNorm(layer["shape"], float(layer["sub_mean"]), float(layer["scale"]), bool(layer["running"]),
                       float(layer["eps"]), float(layer["clip"]))
    if kind == "gru":
        return nn.GRU(int(layer["input_size"]), int(layer["hidden_size"]), 1)
    if kind == "flatten":
        return nn.Flatten()
    if kind == "concat_measurements":
        return ConcatMeasurements()
    if kind in _ACTIVATIONS:
        return _ACTIVATIONS[kind]()
    raise ValueError(f"unknown layer op {kind!r}: use conv, linear, flatten or one of {', '.join(_ACTIVATIONS)}")


class LayerProgram(nn.Module):
    """``trunk`` -> (``policy``, ``value``) as described by ``layers`` (see the module docstring)."""

    def __init__(self, layers: Mapping[str, Sequence[Mapping[str, Any]]], obs_scale: float,
                 measurements: int = 0, heads: Sequence[int] | None = None) -> None:
        super().__init__()
        self.measurement_count = int(measurements)
        self.heads = [int(n) for n in heads] if heads else None
        unknown = sorted(set(layers) - set(BRANCHES))
        if unknown:
            raise ValueError(f"unknown branch(es) {', '.join(unknown)}: use {', '.join(BRANCHES)}")
        self.obs_scale = float(obs_scale)
        self.trunk = nn.Sequential(*(_module(layer) for layer in layers.get("trunk", [])))
        self.policy = nn.Sequential(*(_module(layer) for layer in layers["policy"]))
        self.value = nn.Sequential(*(_module(layer) for layer in layers.get("value", [])))
        self.measurements = nn.Sequential(*(_module(layer) for layer in layers.get("measurements", [])))
        if bool(self.measurement_count) != any(isinstance(m, ConcatMeasurements) for m in self.trunk):
            raise ValueError("a measurements count needs one concat_measurements op in the trunk, and back")
        self.has_value = bool(layers.get("value"))
        grus = [m for m in self.modules() if isinstance(m, nn.GRU)]
        if len(grus) > 1 or any(isinstance(m, nn.GRU) for m in [*self.policy, *self.value]):
            raise ValueError("at most one gru layer, in the trunk, is supported")
        self.state_size = grus[0].hidden_size if grus else 0

    def features(self, obs: torch.Tensor,
                 state: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor | None]:
        """``obs[B, ...]`` (any numeric dtype), GRU ``state[B, H]`` -> (trunk output float32, new state)."""
        meas = None
        if self.measurement_count:
            obs, meas = unpack_measurements(obs, self.measurement_count)
        x = obs.to(torch.float32)
        if self.obs_scale != 1.0:
            x = x / self.obs_scale
        new_state = None
        for module in self.trunk:
            if isinstance(module, nn.GRU):
                h = torch.zeros(x.shape[0], self.state_size) if state is None else state
                out, h_new = module(x.unsqueeze(0), h.unsqueeze(0).contiguous())
                x, new_state = out.squeeze(0), h_new.squeeze(0)
            elif isinstance(module, ConcatMeasurements) and meas is not None:
                x = torch.cat((x, self.measurements(meas)), dim=1)
            else:
                x = module(x)
        return x, new_state

    def forward(self, obs: torch.Tensor, state: torch.Tensor | None = None
                ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """``obs[B, ...]`` -> (logits or Q-values ``float32[B, A]``, value ``float32[B]`` or None); state zero."""
        z, _ = self.features(obs, state)
        value = self.value(z).squeeze(-1) if self.has_value else None
        return self.policy(z), value


def build(kwargs: Mapping[str, Any]) -> LayerProgram:
    """Build the :class:`LayerProgram` that ``model_kwargs`` describe."""
    return LayerProgram(kwargs["layers"], float(kwargs.get("obs_scale", 1.0)), int(kwargs.get("measurements", 0)),
                        kwargs.get("action_heads"))


ACTION_MODES = ("greedy", "sample")


class ImportedPolicy:
    """evaltk :class:`~evaltk.policies.Policy` around an imported network.

    ``model_kwargs["actions"]``: ``"greedy"`` (default: argmax of the logits or Q-values, like SB3's
    ``predict(deterministic=True)``) or ``"sample"`` (from the softmax of the logits, as CleanRL's and
    Sample Factory's own evaluation scripts do). Sampling draws one ``rng.random()`` per slot and step
    from the episode's generator (:class:`~evaltk.policies.EpisodeSeeded`), so an episode's actions are
    reproducible from its seed.
    """

    def __init__(self, spec: CheckpointSpec, model: LayerProgram, device: str = "cpu") -> None:
        self.spec = spec
        self.model = model.to(device).eval()
        self.device = torch.device(device)
        self.sample = spec.model_kwargs.get("actions", "greedy") == "sample"
        self._state: torch.Tensor | None = None
        self._rngs: list[np.random.Generator] = []

    @classmethod
    def from_checkpoint(cls, ckpt: Checkpoint, device: str = "cpu") -> ImportedPolicy:
        """Rebuild the layer program of ``ckpt.spec.model_kwargs`` and load its tensors (shapes checked)."""
        mode = ckpt.spec.model_kwargs.get("actions", "greedy")
        if mode not in ACTION_MODES or (mode == "sample" and ckpt.spec.model_kwargs.get("head") == "q"):
            raise ValueError(f"model_kwargs.actions {mode!r}: use greedy (or sample, for logits)")
        model = build(ckpt.spec.model_kwargs)
        check_tensor_shapes(ckpt, {k: list(v.shape) for k, v in model.state_dict().items()})
        model.load_state_dict(ckpt.tensors)
        return cls(ckpt.spec, model, device)

    def reset(self, num_envs: int, rng: np.random.Generator) -> None:
        """Zero the recurrent state (if any) of ``num_envs`` slots; give each slot a child generator of ``rng``."""
        size = self.model.state_size
        self._state = torch.zeros(num_envs, size, device=self.device) if size else None
        self._rngs = list(rng.spawn(num_envs)) if self.sample else []

    def begin_episodes(self, slots: np.ndarray, rngs: Sequence[np.random.Generator]) -> None:
        """Use ``rngs[k]`` for the episode starting in ``slots[k]`` (sampled actions only)."""
        if self.sample:
            for slot, rng in zip(slots.tolist(), rngs, strict=True):
                self._rngs[slot] = rng

    @torch.inference_mode()
    def act(self, obs: np.ndarray, first: np.ndarray) -> np.ndarray:
        """``obs[B, *obs_spec.shape]``, ``first bool[B]`` (zeroes the GRU state there) -> ``int64[B]``.

        With ``action_heads`` (several categorical heads, as Sample Factory's tuple action spaces) the
        logits are split per head and the result is ``int64[B, k]``, each head argmaxed or sampled.
        """
        x = torch.from_numpy(np.ascontiguousarray(obs)).to(self.device)
        if (self.model.state_size and (self._state is None or self._state.shape[0] != x.shape[0])) or (
                self.sample and len(self._rngs) != x.shape[0]):
            self.reset(x.shape[0], np.random.default_rng(0))
        state = None
        if self._state is not None:
            keep = torch.from_numpy(~np.asarray(first, dtype=bool)).to(self.device, torch.float32)
            state = self._state * keep[:, None]
        z, self._state = self.model.features(x, state)
        scores = self.model.policy(z)
        heads = self.model.heads
        if heads is None:
            return self._pick(scores)
        return np.stack([self._pick(part) for part in torch.split(scores, heads, dim=-1)], axis=1)

    def _pick(self, scores: torch.Tensor) -> np.ndarray:
        """Argmax of ``scores[B, n]``, or one draw per slot from their softmax (one ``rng.random()`` each)."""
        if not self.sample:
            actions: np.ndarray = scores.argmax(dim=-1).cpu().numpy().astype(np.int64)
            return actions
        cdf = torch.softmax(scores.to(torch.float64), dim=-1).cumsum(-1).cpu().numpy()
        u = np.array([rng.random() for rng in self._rngs]) * cdf[:, -1]
        picks = (cdf < u[:, None]).sum(axis=1)
        sampled: np.ndarray = np.minimum(picks, cdf.shape[1] - 1).astype(np.int64)
        return sampled
