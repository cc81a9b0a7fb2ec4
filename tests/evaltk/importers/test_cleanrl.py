"""CleanRL ``.cleanrl_model`` files load in evaltk with the same logits, values, Q-values and greedy actions.

The networks below re-declare CleanRL's (v1, MIT licence) ``ppo_atari``/``ppo_atari_envpool`` ``Agent`` and
``dqn_atari`` ``QNetwork`` from its source (facts: layer types, sizes, strides, attribute names, the
``x / 255`` scaling): the ``cleanrl`` package on PyPI (0.4.8 here) ships old scripts that train at import
time, so the classes cannot be imported from it without running a training script.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from torch import nn

from evaltk.envs.atari import make_env
from evaltk.importers import ForeignCheckpointError, detect_format, import_checkpoint
from evaltk.importers.nets import ImportedPolicy
from evaltk.policies import load_policy

TOL = 1e-5


def _layer_init(layer: nn.Module, std: float = float(np.sqrt(2))) -> nn.Module:
    assert isinstance(layer, nn.Conv2d | nn.Linear)
    nn.init.orthogonal_(layer.weight, std)
    nn.init.constant_(layer.bias, 0.0)
    return layer


class Agent(nn.Module):
    """CleanRL ppo_atari / ppo_atari_envpool Agent."""

    def __init__(self, n: int) -> None:
        super().__init__()
        self.network = nn.Sequential(
            _layer_init(nn.Conv2d(4, 32, 8, stride=4)), nn.ReLU(),
            _layer_init(nn.Conv2d(32, 64, 4, stride=2)), nn.ReLU(),
            _layer_init(nn.Conv2d(64, 64, 3, stride=1)), nn.ReLU(),
            nn.Flatten(), _layer_init(nn.Linear(64 * 7 * 7, 512)), nn.ReLU())
        self.actor = _layer_init(nn.Linear(512, n), std=0.01)
        self.critic = _layer_init(nn.Linear(512, 1), std=1)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        hidden = self.network(x / 255.0)
        return self.actor(hidden), self.critic(hidden).squeeze(-1)


class QNetwork(nn.Module):
    """CleanRL dqn_atari QNetwork."""

    def __init__(self, n: int) -> None:
        super().__init__()
        self.network = nn.Sequential(
            nn.Conv2d(4, 32, 8, stride=4), nn.ReLU(), nn.Conv2d(32, 64, 4, stride=2), nn.ReLU(),
            nn.Conv2d(64, 64, 3, stride=1), nn.ReLU(), nn.Flatten(), nn.Linear(3136, 512), nn.ReLU(),
            nn.Linear(512, n))

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, None]:
        return self.network(x / 255.0), None


def _perturbed(net: nn.Module, seed: int) -> nn.Module:
    """Move the weights off their initialisation (actor std 0.01 would make every logit nearly equal)."""
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in net.parameters():
            p.add_(0.05 * torch.randn(p.shape, generator=gen))
    return net.eval()


@pytest.mark.parametrize(("script", "env_id", "net_cls"), [
    ("ppo_atari", "BreakoutNoFrameskip-v4", Agent),
    ("ppo_atari_envpool", "Breakout-v5", Agent),
    ("dqn_atari", "BreakoutNoFrameskip-v4", QNetwork),
])
def test_matches_cleanrl_network(script: str, env_id: str, net_cls: type[nn.Module], tmp_path: Path) -> None:
    torch.manual_seed(0)
    net = _perturbed(net_cls(4), 1)
    path = tmp_path / f"{script}.cleanrl_model"
    torch.save(net.state_dict(), path)
    assert detect_format(path) == "cleanrl"
    ckpt, imported = import_checkpoint(path, tmp_path / "ckpt", env_id=env_id, script=script)
    assert imported.source["script"] == script
    pre = imported.env.preprocessing
    assert pre["frame_stack"] == 4
    assert pre["atari_preprocessing"]["frame_skip"] == 4
    if script == "ppo_atari_envpool":
        assert imported.env.env_id == "ALE/Breakout-v5"
        assert imported.env.kwargs["repeat_action_probability"] == 0.0
        # EnvPool's grayscale + INTER_AREA observations equal the reference env's (docs/simulators.md's lockstep);
        # what differs is the number of no-op starts
        assert not any("gray conversion" in c for c in imported.caveats)
        assert any("0..29 NOOPs" in c and "1..30" in c for c in imported.caveats)
    policy = load_policy(str(ckpt))
    assert isinstance(policy, ImportedPolicy)
    obs = np.random.default_rng(0).integers(0, 256, size=(256, 4, 84, 84), dtype=np.uint8)
    with torch.no_grad():
        ref_out, ref_value = net(torch.from_numpy(obs))
        out, value = policy.model(torch.from_numpy(obs))
    np.testing.assert_allclose(out.numpy(), ref_out.numpy(), atol=TOL, rtol=0)
    if ref_value is not None:
        assert value is not None
        np.testing.assert_allclose(value.numpy(), ref_value.numpy(), atol=TOL, rtol=0)
    env = make_env(load_policy(str(ckpt)).spec.env_spec)
    frame, _ = env.reset(seed=5)
    for t in range(60):
        batch = np.asarray(frame)[None]
        ours = int(policy.act(batch, np.array([t == 0]))[0])
        with torch.no_grad():
            theirs = int(net(torch.from_numpy(batch))[0].argmax(-1)[0])
        assert ours == theirs
        frame, _, terminated, truncated, _ = env.step(ours)
        if terminated or truncated:
            break
    env.close()


def test_wrong_script_and_foreign_state_dict_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "q.cleanrl_model"
    torch.save(QNetwork(4).state_dict(), path)
    with pytest.raises(ForeignCheckpointError, match="holds a dqn QNetwork, not a ppo_atari network"):
        import_checkpoint(path, tmp_path / "a", script="ppo_atari")
    other = tmp_path / "other.cleanrl_model"
    torch.save(nn.Linear(3, 2).state_dict(), other)
    with pytest.raises(ForeignCheckpointError, match="is neither a CleanRL ppo_atari Agent"):
        import_checkpoint(other, tmp_path / "b")


def test_sampled_actions_follow_the_softmax_and_repeat(tmp_path: Path) -> None:
    torch.manual_seed(0)
    net = Agent(4).eval()
    with torch.no_grad():
        net.actor.bias.copy_(torch.tensor([0.0, 1.0, -1.0, 0.5]))
    path = tmp_path / "ppo_atari.cleanrl_model"
    torch.save(net.state_dict(), path)
    ckpt, _ = import_checkpoint(path, tmp_path / "ckpt", actions="sample")
    obs = np.zeros((1, 4, 84, 84), dtype=np.uint8)
    with torch.no_grad():
        probs = torch.softmax(net(torch.from_numpy(obs))[0], -1)[0].numpy()
    batch, runs = np.repeat(obs, 2000, axis=0), []
    for _ in range(2):  # 2,000 slots x 2 steps, each slot with its own generator
        policy = load_policy(str(ckpt))
        policy.reset(2000, np.random.default_rng(7))
        runs.append(np.concatenate([policy.act(batch, np.zeros(2000, dtype=bool)) for _ in range(2)]))
    np.testing.assert_array_equal(runs[0], runs[1])
    freq = np.bincount(runs[0], minlength=4) / len(runs[0])
    np.testing.assert_allclose(freq, probs, atol=0.03)
    greedy, _ = import_checkpoint(path, tmp_path / "greedy")
    assert {int(load_policy(str(greedy)).act(obs, np.array([True]))[0]) for _ in range(5)} == {int(probs.argmax())}
    torch.save(QNetwork(4).state_dict(), tmp_path / "q.cleanrl_model")
    with pytest.raises(ForeignCheckpointError, match="is a Q-network: its actions are greedy"):
        import_checkpoint(tmp_path / "q.cleanrl_model", tmp_path / "q", actions="sample")
