"""Sample Factory 2.x actor-critics built by Sample Factory itself load in evaltk with the same logits and values.

The model is Sample Factory's own (``create_actor_critic`` from its config); the checkpoint dict is
made by its learner's ``_get_checkpoint_dict`` and written with ``torch.save`` as its learner does, with
``config.json`` from ``cfg_dict``. Compared: logits and values on 256 observations (running
normaliser statistics moved off their defaults), over several steps of the GRU, and greedy actions.
"""

from __future__ import annotations

import json
import types
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from evaltk.envs import EnvSpec
from evaltk.importers import detect_format, import_checkpoint
from evaltk.importers.nets import ImportedPolicy
from evaltk.policies import load_policy

pytest.importorskip("sample_factory", reason="needs sample-factory (pip install sample-factory)")

TOL = 1e-5


def _cfg(env: str) -> Any:
    from sample_factory.cfg.arguments import parse_full_cfg, parse_sf_args

    argv = [f"--env={env}", "--experiment=test"]
    parser, _ = parse_sf_args(argv)
    if env.startswith("doom_"):
        from sf_examples.vizdoom.doom.doom_params import add_doom_env_args, doom_override_defaults

        add_doom_env_args(parser)
        doom_override_defaults(parser)
    else:
        from sf_examples.atari.atari_params import atari_override_defaults

        atari_override_defaults(env, parser)
    return parse_full_cfg(parser, argv)


def _write_run(tmp_path: Path, env: str, obs_shape: tuple[int, ...], num_actions: int) -> tuple[Any, Path]:
    import gymnasium as gym
    from sample_factory.algo.learning.learner import Learner
    from sample_factory.cfg.arguments import cfg_dict
    from sample_factory.model.actor_critic import create_actor_critic

    cfg = _cfg(env)
    torch.manual_seed(0)
    space = gym.spaces.Dict({"obs": gym.spaces.Box(0, 255, obs_shape, np.uint8)})
    model = create_actor_critic(cfg, space, gym.spaces.Discrete(num_actions))
    gen = torch.Generator().manual_seed(1)
    with torch.no_grad():
        for name, tensor in model.state_dict().items():
            if name.endswith("running_mean"):
                tensor.copy_(torch.rand(tensor.shape, generator=gen, dtype=tensor.dtype) * 0.5)
            elif name.endswith("running_var"):
                tensor.copy_(torch.rand(tensor.shape, generator=gen, dtype=tensor.dtype) * 0.2 + 0.01)
            elif tensor.is_floating_point() and "normalizer" not in name:
                tensor.add_(0.05 * torch.randn(tensor.shape, generator=gen, dtype=tensor.dtype))
    model.eval()
    learner = types.SimpleNamespace(train_step=100, env_steps=409600, best_performance=-1.0, actor_critic=model,
                                    optimizer=torch.optim.Adam(model.parameters()), curr_lr=1e-4)
    run = tmp_path / "train_dir" / "test"
    (run / "checkpoint_p0").mkdir(parents=True)
    torch.save(Learner._get_checkpoint_dict(learner), run / "checkpoint_p0" / "checkpoint_000000100_409600.pth")
    (run / "config.json").write_text(json.dumps(cfg_dict(cfg), indent=2))
    return model, run


def _sf_forward(model: Any, obs: torch.Tensor, rnn: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    with torch.no_grad():
        out = model(model.normalize_obs({"obs": obs}), rnn)
    return out["action_logits"], out["values"], out["new_rnn_states"]


def _compare(model: Any, run: Path, tmp_path: Path, obs_shape: tuple[int, ...]) -> ImportedPolicy:
    assert detect_format(run) == "sample-factory"
    ckpt, imported = import_checkpoint(run, tmp_path / "ckpt", actions="greedy")
    assert imported.source["env_steps"] == 409600
    policy = load_policy(str(ckpt))
    assert isinstance(policy, ImportedPolicy)
    rng = np.random.default_rng(0)
    size = policy.model.state_size
    rnn = torch.zeros(256, max(size, 1))
    state = torch.zeros(256, size) if size else None
    for _ in range(3):  # several steps: the GRU state is carried
        obs = torch.from_numpy(rng.integers(0, 256, size=(256, *obs_shape), dtype=np.uint8))
        ref_logits, ref_values, rnn = _sf_forward(model, obs, rnn)
        with torch.no_grad():
            z, state = policy.model.features(obs, state)
            logits, values = policy.model.policy(z), policy.model.value(z).squeeze(-1)
        np.testing.assert_allclose(logits.numpy(), ref_logits.numpy(), atol=TOL, rtol=0)
        np.testing.assert_allclose(values.numpy(), ref_values.numpy(), atol=TOL, rtol=0)
        if state is not None:
            np.testing.assert_allclose(state.numpy(), rnn.numpy(), atol=TOL, rtol=0)
    return policy


def _greedy_steps(model: Any, policy: ImportedPolicy, frames: np.ndarray) -> None:
    """Feed a sequence of frames to both; evaltk's greedy action equals the argmax of Sample Factory's logits."""
    size = policy.model.state_size
    rnn = torch.zeros(1, max(size, 1))
    policy.reset(1, np.random.default_rng(0))
    for t, frame in enumerate(frames):
        ours = int(policy.act(frame[None], np.array([t == 0]))[0])
        logits, _, rnn = _sf_forward(model, torch.from_numpy(frame[None]), rnn)
        assert ours == int(logits.argmax(-1)[0]), f"step {t}"


def test_atari_encoder_matches_sample_factory(tmp_path: Path) -> None:
    from evaltk.envs.atari import make_env

    model, run = _write_run(tmp_path, "atari_breakout", (4, 84, 84), 4)
    policy = _compare(model, run, tmp_path, (4, 84, 84))
    spec = policy.spec
    assert spec.env["env_id"] == "BreakoutNoFrameskip-v4"
    assert spec.env["preprocessing"]["frame_stack"] == 4
    env = make_env(spec.env_spec)
    obs, _ = env.reset(seed=1)
    frames = []
    for _ in range(40):
        frames.append(np.asarray(obs))
        obs, *_ = env.step(1)
    env.close()
    _greedy_steps(model, policy, np.stack(frames))


@pytest.mark.vizdoom
def test_doom_convnet_simple_gru_and_normaliser_match_sample_factory(tmp_path: Path) -> None:
    from evaltk.envs import describe

    info = describe(EnvSpec("doom", "basic"))
    shape = tuple(info.obs_spec["shape"])
    model, run = _write_run(tmp_path, "doom_basic", shape, int(info.action_spec["n"]))
    cfg = json.loads((run / "config.json").read_text())
    assert cfg["encoder_conv_architecture"] == "convnet_simple"
    assert cfg["use_rnn"] is True
    assert cfg["normalize_input"] is True
    policy = _compare(model, run, tmp_path, shape)
    assert policy.model.state_size == 512
    assert policy.spec.env["family"] == "doom"
    frames = np.random.default_rng(2).integers(0, 256, size=(20, *shape), dtype=np.uint8)
    _greedy_steps(model, policy, frames)
