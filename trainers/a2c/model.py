"""The Nature-DQN actor-critic (Mnih et al., 2015 encoder; Mnih et al., 2016 A3C heads) and its evaltk policy.

Encoder: conv 8x8/4 -> 32, 4x4/2 -> 64, 3x3/1 -> 64, FC -> 512, ReLU after each; a linear actor
(logits over the game's minimal action set) and a linear critic. Input ``uint8[B, S, H, W]``
(stacked grayscale frames) is scaled to [0, 1]. Orthogonal initialisation (gain sqrt(2); 0.01 for the
actor, 1 for the critic), as in the OpenAI baselines A2C. For 4x84x84 inputs and 4 actions the model
has 1,686,693 parameters.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
from torch import nn
from torch.nn import functional

from evaltk.checkpoint import Checkpoint, CheckpointSpec
from trainers.common import onednn
from trainers.common.sampling import EpisodeGenerators
from trainers.common.state_io import model_from_checkpoint

MODEL_CLASS = "trainers.a2c.model:A2cPolicy"


def _conv_out(size: int, kernel: int, stride: int) -> int:
    return (size - kernel) // stride + 1


_CONVS = ((32, 8, 4), (64, 4, 2), (64, 3, 1))


class NatureActorCritic(nn.Module):
    """Nature CNN encoder with actor and critic heads. ``obs_shape``: ``(stack, height, width)``."""

    def __init__(self, obs_shape: tuple[int, int, int], num_actions: int, hidden_size: int = 512) -> None:
        super().__init__()
        channels, h, w = obs_shape
        self.obs_shape = obs_shape
        self.num_actions = num_actions
        layers: list[nn.Module] = []
        for out, kernel, stride in _CONVS:
            layers += [nn.Conv2d(channels, out, kernel, stride), nn.ReLU()]
            channels, h, w = out, _conv_out(h, kernel, stride), _conv_out(w, kernel, stride)
        if h < 1 or w < 1:
            raise ValueError(f"observation {obs_shape} is too small for the Nature CNN (needs >= 36x36)")
        self.conv = nn.Sequential(*layers)
        self.fc = nn.Linear(channels * h * w, hidden_size)
        self.actor = nn.Linear(hidden_size, num_actions)
        self.critic = nn.Linear(hidden_size, 1)
        for module in self.modules():
            if isinstance(module, nn.Conv2d | nn.Linear):
                gain = 0.01 if module is self.actor else 1.0 if module is self.critic else math.sqrt(2.0)
                nn.init.orthogonal_(module.weight, gain)
                if module.bias is not None:
                    nn.init.zeros_(module.bias)

    def forward(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``obs uint8[B, S, H, W]`` -> (logits ``float32[B, A]``, value ``float32[B]``)."""
        x = obs.to(torch.float32).mul_(1.0 / 255.0)
        features = torch.relu(self.fc(self.conv(x).flatten(1)))
        return self.actor(features), self.critic(features).squeeze(-1)

    def tensor_shapes(self) -> dict[str, list[int]]:
        """Names and shapes of every tensor in the state dict (for the checkpoint checks)."""
        return {k: list(v.shape) for k, v in self.state_dict().items()}


def model_kwargs(model: NatureActorCritic) -> dict[str, Any]:
    """Return the JSON ``model_kwargs`` that rebuild ``model``'s architecture."""
    return {"obs_shape": list(model.obs_shape), "num_actions": model.num_actions,
            "hidden_size": model.fc.out_features}


def build_model(kwargs: dict[str, Any]) -> NatureActorCritic:
    """Build a :class:`NatureActorCritic` from :func:`model_kwargs` output."""
    shape = [int(x) for x in kwargs["obs_shape"]]
    if len(shape) != 3:
        raise ValueError(f"obs_shape must be [stack, height, width], got {shape}")
    return NatureActorCritic((shape[0], shape[1], shape[2]), int(kwargs["num_actions"]),
                             int(kwargs.get("hidden_size", 512)))


def sample(logits: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    """Sample ``int64[B]`` actions from ``float[B, A]`` logits with ``generator`` (on the logits' device)."""
    return torch.multinomial(torch.softmax(logits, dim=-1), 1, generator=generator).squeeze(-1)


class ActingForward:
    """The actor's logits of a trained :class:`NatureActorCritic`, as acting needs them (no value, no gradient).

    The model's layers and fp32 weights, called without ``nn.Module``'s per-layer dispatch: the observation is
    converted to float once, each ReLU is in place, and the FC layer (with its ReLU) multiplies by a copy of its
    weight packed here, once, by oneDNN (:func:`trainers.common.onednn.packed_linear`; a transposed copy for
    ``addmm`` where oneDNN's operators are missing): at acting's batch sizes MKL's sgemm repacks the 6.4 MB
    weight on every call (``docs/benchmarks.md``). The convolutions are the model's, in its NCHW layout, so
    their outputs are the model's bit for bit; the FC product sums in another order, so the logits equal
    :meth:`NatureActorCritic.forward`'s to float rounding (``tests/trainers/test_a2c_acting.py``). The weights
    are read when this is built: build it again after they change.
    """

    def __init__(self, model: NatureActorCritic) -> None:
        convs = [layer for layer in model.conv if isinstance(layer, nn.Conv2d)]
        self.convs = [(conv.weight.detach(), None if conv.bias is None else conv.bias.detach(), conv.stride)
                      for conv in convs]
        self.fc = onednn.packed_linear(model.fc.weight, model.fc.bias, relu=True)
        self.actor_weight, self.actor_bias = model.actor.weight.detach(), model.actor.bias.detach()

    def encode(self, obs: torch.Tensor) -> torch.Tensor:
        """``obs uint8[B, S, H, W]`` -> the convolutions' flattened output ``float32[B, C * H' * W']``."""
        x = obs.to(torch.float32).mul_(1.0 / 255.0)
        for weight, bias, stride in self.convs:
            x = functional.conv2d(x, weight, bias, stride).relu_()
        return x.flatten(1)

    def __call__(self, obs: torch.Tensor) -> torch.Tensor:
        """``obs uint8[B, S, H, W]`` -> logits ``float32[B, A]``."""
        return functional.linear(self.fc(self.encode(obs)), self.actor_weight, self.actor_bias)


class A2cPolicy:
    """evaltk :class:`~evaltk.policies.Policy` around a trained :class:`NatureActorCritic` (sampled actions)."""

    def __init__(self, spec: CheckpointSpec, model: NatureActorCritic, device: str = "cpu") -> None:
        self.spec = spec
        self.model = model.to(device).eval()
        self.device = torch.device(device)
        self._gens = EpisodeGenerators(self.device)
        self._logits = ActingForward(self.model)  # a policy's weights do not change after it is built

    @classmethod
    def from_checkpoint(cls, ckpt: Checkpoint, device: str = "cpu") -> A2cPolicy:
        """Rebuild the model named by ``ckpt.spec.model_kwargs`` and load its tensors (shapes checked)."""
        return cls(ckpt.spec, model_from_checkpoint(ckpt, build_model), device)

    def reset(self, num_envs: int, rng: np.random.Generator) -> None:
        """Seed action sampling from ``rng`` (the policy has no recurrent state)."""
        self._gens.reset(rng)

    def begin_episodes(self, slots: np.ndarray, rngs: Sequence[np.random.Generator]) -> None:
        """Take one generator per new episode (:class:`~evaltk.policies.EpisodeSeeded`) for its slot's actions."""
        self._gens.begin(slots, rngs)

    def act(self, obs: np.ndarray, first: np.ndarray) -> np.ndarray:
        """``obs uint8[B, S, H, W]``, ``first bool[B]`` (unused: no memory) -> ``int64[B]``.

        One forward pass over the batch (:class:`ActingForward`), then one draw per row from the row's
        generator (:meth:`~trainers.common.sampling.EpisodeGenerators.sample`).
        """
        return self._act(obs, None)

    def act_slots(self, obs: np.ndarray, first: np.ndarray, slots: np.ndarray) -> np.ndarray:
        """:meth:`act` for the batch slots ``slots`` (int64[n]) alone (:class:`~evaltk.policies.ActsOnSlots`)."""
        return self._act(obs, np.asarray(slots).tolist())

    @torch.inference_mode()
    def _act(self, obs: np.ndarray, slots: list[int] | None) -> np.ndarray:
        logits = self._logits(torch.from_numpy(np.ascontiguousarray(obs)).to(self.device))
        return self._gens.sample(logits, slots).cpu().numpy()
