"""Stable-Baselines3 models written by SB3 itself load in evaltk with the same logits, values and greedy actions."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from evaltk.checkpoint import load_spec
from evaltk.envs import EnvSpec
from evaltk.envs.atari import make_env
from evaltk.importers import ForeignCheckpointError, import_checkpoint
from evaltk.importers.nets import ImportedPolicy
from evaltk.policies import load_policy

sb3 = pytest.importorskip("stable_baselines3", reason="needs stable-baselines3 (pip install stable-baselines3)")

ATARI_ID = "BreakoutNoFrameskip-v4"
TOL = 1e-5


def _atari_vec_env() -> Any:
    import ale_py
    import gymnasium as gym
    from stable_baselines3.common.env_util import make_atari_env
    from stable_baselines3.common.vec_env import VecFrameStack

    gym.register_envs(ale_py)
    return VecFrameStack(make_atari_env(ATARI_ID, n_envs=1, seed=0), n_stack=4)


def _train(algo: str, policy: str, env: Any) -> Any:
    """Return a real SB3 model after a short ``learn`` (weights moved off their initialisation)."""
    cls = getattr(sb3, algo)
    kw: dict[str, Any] = {"seed": 0, "device": "cpu"}
    if algo == "PPO":
        kw.update(n_steps=64, batch_size=32, n_epochs=1)
    elif algo == "A2C":
        kw.update(n_steps=8)
    else:
        kw.update(buffer_size=500, learning_starts=32, train_freq=4, batch_size=16)
    if policy == "MlpPolicy" and algo != "DQN":
        kw["policy_kwargs"] = {"net_arch": {"pi": [32, 16], "vf": [24]}}
    model = cls(policy, env, **kw)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.learn(total_timesteps=64 if policy == "CnnPolicy" else 256)
    return model


def _sb3_outputs(model: Any, obs: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
    """Logits (or Q-values) and values from SB3's own policy forward."""
    with torch.no_grad():
        obs_t = model.policy.obs_to_tensor(obs)[0]
        if hasattr(model, "q_net"):
            return model.q_net(obs_t).numpy(), None
        policy = model.policy
        latent_pi = policy.mlp_extractor.forward_actor(policy.extract_features(obs_t, policy.pi_features_extractor))
        values = policy.predict_values(obs_t).squeeze(-1)
        logits = policy.action_net(latent_pi)
        dist_logits = policy.get_distribution(obs_t).distribution.logits
        np.testing.assert_allclose(torch.log_softmax(logits, -1).numpy(), dist_logits.numpy(), atol=TOL)
        return logits.numpy(), values.numpy()


def _ours(path: Path, obs: np.ndarray) -> tuple[ImportedPolicy, np.ndarray, np.ndarray | None]:
    policy = load_policy(str(path))
    assert isinstance(policy, ImportedPolicy)
    with torch.no_grad():
        out, value = policy.model(torch.from_numpy(obs))
    return policy, out.numpy(), None if value is None else value.numpy()


@pytest.fixture(scope="module")
def atari_models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Any, Path]]:
    folder = tmp_path_factory.mktemp("sb3_atari")
    out = {}
    for algo in ("PPO", "A2C", "DQN"):
        model = _train(algo, "CnnPolicy", _atari_vec_env())
        model.save(folder / f"{algo}.zip")
        out[algo] = (model, folder / f"{algo}.zip")
    return out


@pytest.mark.parametrize("algo", ["PPO", "A2C", "DQN"])
def test_cnn_policy_matches_sb3(algo: str, atari_models: dict[str, tuple[Any, Path]], tmp_path: Path) -> None:
    model, zip_path = atari_models[algo]
    ckpt, imported = import_checkpoint(zip_path, tmp_path / "ckpt", env_id=ATARI_ID)
    spec = load_spec(ckpt)
    assert spec.obs_spec == {"shape": [4, 84, 84], "dtype": "uint8", "layout": "SHW"}
    assert spec.env["preprocessing"]["atari_preprocessing"]["noop_max"] == 30
    assert spec.env["preprocessing"]["frame_stack"] == 4
    assert any("FireResetEnv" in c for c in spec.env["not_equivalent"])
    assert imported.source["sb3_version"] == sb3.__version__
    rng = np.random.default_rng(0)
    obs = rng.integers(0, 256, size=(256, 4, 84, 84), dtype=np.uint8)
    ref_out, ref_value = _sb3_outputs(model, obs)
    policy, out, value = _ours(ckpt, obs)
    np.testing.assert_allclose(out, ref_out, atol=TOL, rtol=0)
    if ref_value is not None:
        assert value is not None
        np.testing.assert_allclose(value, ref_value, atol=TOL, rtol=0)
    _greedy_episode(model, policy, spec.env_spec, steps=100)


def _greedy_episode(model: Any, policy: ImportedPolicy, env_dict: EnvSpec, steps: int) -> None:
    """Play the reference env with evaltk's policy; SB3's deterministic ``predict`` agrees on every step."""
    env = make_env(env_dict)
    obs, _ = env.reset(seed=3)
    policy.reset(1, np.random.default_rng(0))
    for t in range(steps):
        batch = np.asarray(obs)[None]
        ours = policy.act(batch, np.array([t == 0]))
        theirs, _ = model.predict(batch, deterministic=True)
        assert int(ours[0]) == int(theirs[0]), f"step {t}: evaltk {ours[0]} vs SB3 {theirs[0]}"
        obs, _, terminated, truncated, _ = env.step(int(ours[0]))
        if terminated or truncated:
            break
    env.close()


@pytest.mark.parametrize("algo", ["PPO", "A2C", "DQN"])
def test_mlp_policy_on_cartpole_matches_sb3(algo: str, tmp_path: Path) -> None:
    import gymnasium as gym

    model = _train(algo, "MlpPolicy", gym.make("CartPole-v1"))
    model.save(tmp_path / "m.zip")
    ckpt, imported = import_checkpoint(tmp_path / "m.zip", tmp_path / "ckpt", env_id="CartPole-v1")
    assert imported.obs_spec == {"shape": [4], "dtype": "float32", "layout": "N"}
    assert imported.env.family == "gymnasium"
    obs = np.random.default_rng(1).normal(size=(256, 4)).astype(np.float32)
    ref_out, ref_value = _sb3_outputs(model, obs)
    policy, out, value = _ours(ckpt, obs)
    np.testing.assert_allclose(out, ref_out, atol=TOL, rtol=0)
    if ref_value is not None:
        np.testing.assert_allclose(value, ref_value, atol=TOL, rtol=0)
    env = gym.make("CartPole-v1")
    state, _ = env.reset(seed=0)
    for t in range(500):
        ours = int(policy.act(state[None].astype(np.float32), np.array([t == 0]))[0])
        assert ours == int(model.predict(state, deterministic=True)[0])
        state, _, terminated, truncated, _ = env.step(ours)
        if terminated or truncated:
            break


def test_env_id_is_required_and_checked(atari_models: dict[str, tuple[Any, Path]], tmp_path: Path) -> None:
    _, zip_path = atari_models["PPO"]
    with pytest.raises(ForeignCheckpointError, match="does not record its env id: pass --env-id"):
        import_checkpoint(zip_path, tmp_path / "a")
    with pytest.raises(ForeignCheckpointError, match="the network has 4 outputs but PongNoFrameskip-v4 has"):
        import_checkpoint(zip_path, tmp_path / "b", env_id="PongNoFrameskip-v4")
