"""``gpu_env.sb3_vec`` against SB3's own ``make_atari_env`` (DummyVecEnv, Monitor, AtariWrapper) on ale-py.

Same ids and seeds: every step's observations, rewards, dones and infos are equal (``terminal_observation``,
``TimeLimit.truncated`` and Monitor's ``episode`` included; only its wall-clock ``t`` differs), and
SB3's PPO trained through either env (torch on one thread) logs the same ``ep_info_buffer``.
"""

from __future__ import annotations

from typing import Any, cast

import ale_py
import gymnasium as gym
import numpy as np
import pytest
import torch
from stable_baselines3 import PPO
from stable_baselines3.common.atari_wrappers import EpisodicLifeEnv
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.env_util import make_atari_env
from stable_baselines3.common.monitor import Monitor
from stable_baselines3.common.utils import safe_mean
from stable_baselines3.common.vec_env import VecEnv, VecFrameStack

from gpu_env.sb3_vec import make_sb3_atari_env

gym.register_envs(ale_py)


def assert_same_infos(ours: list[dict[str, Any]], ref: list[dict[str, Any]], where: str) -> None:
    """Per-env info dicts equal, except Monitor's wall-clock ``episode["t"]``."""
    assert len(ours) == len(ref)
    for i, (a, b) in enumerate(zip(ours, ref, strict=True)):
        assert set(a) == set(b), f"{where} env {i}: keys {sorted(a)} != {sorted(b)}"
        for key in b:
            if key == "episode":
                assert {k: v for k, v in a[key].items() if k != "t"} == {k: v for k, v in b[key].items() if k != "t"}
            elif key == "terminal_observation":
                assert np.array_equal(a[key], b[key]), f"{where} env {i}: terminal_observation differs"
            else:
                assert a[key] == b[key], f"{where} env {i}: {key} {a[key]!r} != {b[key]!r}"


def test_steps_equal_make_atari_env() -> None:
    """Random actions, 2 envs: every output of every step equals SB3's DummyVecEnv stack."""
    env_id, seed = "BreakoutNoFrameskip-v4", 5
    ours = make_sb3_atari_env(env_id, n_envs=2, seed=seed, num_threads=1)
    ref = make_atari_env(env_id, n_envs=2, seed=seed)
    assert ours.observation_space == ref.observation_space
    assert ours.action_space == ref.action_space
    assert np.array_equal(cast(np.ndarray, ours.reset()), cast(np.ndarray, ref.reset()))
    assert ours.reset_infos == ref.reset_infos
    rng = np.random.default_rng(0)
    episodes = dones = 0
    for t in range(240):
        actions = rng.integers(0, ref.action_space.n, 2)  # type: ignore[attr-defined]
        obs, rew, done, infos = ours.step(actions)
        ref_obs, ref_rew, ref_done, ref_infos = ref.step(actions)
        assert np.array_equal(cast(np.ndarray, obs), cast(np.ndarray, ref_obs)), f"step {t}: observations differ"
        assert np.array_equal(rew, ref_rew), f"step {t}: rewards differ"
        assert rew.dtype == ref_rew.dtype
        assert np.array_equal(done, ref_done), f"step {t}: dones differ"
        assert_same_infos(infos, ref_infos, f"step {t}")
        dones += int(done.sum())
        episodes += sum("episode" in info for info in ref_infos)
    assert dones >= 2, dones  # life losses were compared
    assert episodes >= 1, episodes  # and a game over, with Monitor's episode
    assert ours.env_is_wrapped(Monitor) == [True, True]
    assert ours.env_is_wrapped(EpisodicLifeEnv) == [True, True]
    assert ours.env_method("get_action_meanings") == ref.env_method("get_action_meanings")
    assert ours.get_attr("was_real_done") == ref.get_attr("was_real_done")


class _EpRewMeanHistory(BaseCallback):
    """``rollout/ep_rew_mean`` as SB3 logs it, after every rollout (the mean of ``ep_info_buffer``)."""

    def __init__(self) -> None:
        super().__init__()
        self.history: list[tuple[int, float | None]] = []

    def _on_step(self) -> bool:
        return True

    def _on_rollout_end(self) -> None:
        buffer = self.model.ep_info_buffer
        mean = safe_mean([e["r"] for e in buffer]) if buffer else None
        self.history.append((self.num_timesteps, None if mean is None else float(mean)))


def ppo_episodes(env: VecEnv, steps: int, seed: int,
                 n_steps: int) -> tuple[list[tuple[int, float | None]], list[tuple[float, int]]]:
    """Train SB3's PPO; return its ``ep_rew_mean`` history and final ``ep_info_buffer`` (return, length)."""
    torch.set_num_threads(1)
    model = PPO("CnnPolicy", VecFrameStack(env, n_stack=4), n_steps=n_steps, batch_size=128, n_epochs=1, seed=seed,
                device="cpu")
    history = _EpRewMeanHistory()
    model.learn(total_timesteps=steps, callback=history)
    assert model.ep_info_buffer is not None
    return history.history, [(float(e["r"]), int(e["l"])) for e in model.ep_info_buffer]


@pytest.mark.parametrize(("env_id", "steps", "n_steps"), [
    ("ALE/Breakout-v5", 256, 32),
    pytest.param("BreakoutNoFrameskip-v4", 2048, 64, marks=pytest.mark.slow),
    pytest.param("ALE/Breakout-v5", 20_000, 128, marks=pytest.mark.slow),
])
def test_ppo_logs_the_same_episodes(env_id: str, steps: int, n_steps: int) -> None:
    """PPO through the adapter and through make_atari_env (same seeds, 4 envs) logs the same episodes."""
    ours = ppo_episodes(make_sb3_atari_env(env_id, n_envs=4, seed=0, num_threads=1), steps, seed=0, n_steps=n_steps)
    ref = ppo_episodes(make_atari_env(env_id, n_envs=4, seed=0), steps, seed=0, n_steps=n_steps)
    assert len(ref[1]) >= 1
    assert len(ref[0]) == steps // (4 * n_steps) + (steps % (4 * n_steps) > 0)  # one entry per rollout
    assert ours[0] == ref[0]  # the ep_rew_mean history, rollout by rollout
    assert ours[1] == ref[1]
