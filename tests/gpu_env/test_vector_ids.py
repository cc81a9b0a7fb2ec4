"""Every Atari id ale-py registers, through ``gpu_env.make_vec``, against ``gymnasium.make_vec`` of the same id.

The settings come from ``gymnasium.registry`` at run time; each id family is stepped next to gymnasium
(observations, rewards, flags and the info dicts key for key, ``obs_format="numpy"``).
"""

from __future__ import annotations

from collections.abc import Iterator

import ale_py
import gymnasium as gym
import numpy as np
import pytest

from gpu_env.errors import GpuEnvError
from gpu_env.make import make_vec
from gpu_env.vector import env_id_settings
from tests.gpu_env.test_vector import compare

gym.register_envs(ale_py)

ALE_IDS = sorted(k for k, v in gym.registry.items() if v.entry_point == "ale_py.env:AtariEnv")


def test_every_registered_id_resolves_to_its_registry_settings() -> None:
    assert len(ALE_IDS) >= 350  # ale-py 0.12.1: 104 v5 ids, 62 games x {v0, v4} x {"", NoFrameskip}
    for env_id in ALE_IDS:
        registered = dict(gym.registry[env_id].kwargs)
        got = env_id_settings(env_id)
        assert got.rom_id == registered.pop("game")
        assert {k: got.settings[k] for k in registered} == registered, env_id
        assert got.settings["obs_type"] == "rgb"
        ram = env_id_settings(env_id.replace("NoFrameskip", "-ramNoFrameskip") if "NoFrameskip" in env_id
                              else env_id.replace("-v", "-ram-v"))
        assert ram.registered_id == env_id
        assert {**ram.settings, "obs_type": "rgb"} == got.settings
        assert ram.settings["obs_type"] == "ram"


@pytest.mark.parametrize(
    ("env_id", "steps"),
    [("BreakoutNoFrameskip-v4", 120), ("Breakout-v4", 40), ("SeaquestNoFrameskip-v0", 60)],
)
def test_id_family_equals_gymnasium(env_id: str, steps: int) -> None:
    assert compare(env_id, 2, steps, seed=4, obs_format="numpy") is None


def test_registered_settings_reach_the_env() -> None:
    env = make_vec("Breakout-v4", 2, obs_format="numpy")
    assert env._opts.frameskip == (2, 5)
    assert env.batch.repeat_action_probability == 0.0
    env = make_vec("BreakoutNoFrameskip-v4", 1)
    assert env._opts.frameskip == 1
    assert env.batch.repeat_action_probability == 0.0


def test_keyword_arguments_override_the_registry_as_gymnasium_make_does() -> None:
    assert compare("Pong-v0", 2, 30, seed=9, obs_format="numpy", repeat_action_probability=0.25,
                   max_num_frames_per_episode=50, full_action_space=True, frameskip=2) is None


@pytest.mark.parametrize(("env_id", "base"), [("Breakout-ramNoFrameskip-v4", "BreakoutNoFrameskip-v4"),
                                              ("ALE/Pong-ram-v5", "ALE/Pong-v5")])
def test_ram_ids_return_ram(env_id: str, base: str) -> None:
    ours = make_vec(env_id, 2, obs_format="numpy")
    ref = gym.make_vec(base, 2, vectorization_mode="sync", obs_type="ram")
    assert ours.single_observation_space == ref.single_observation_space
    o1, _ = ref.reset(seed=3)
    o2, _ = ours.reset(seed=3)
    assert o2.dtype == np.uint8
    assert o2.shape == (2, 128)
    rng = np.random.default_rng(3)
    for _ in range(25):
        np.testing.assert_array_equal(o1, o2)
        actions = rng.integers(0, ref.single_action_space.n, 2)
        o1 = ref.step(actions)[0]
        o2 = ours.step(actions)[0]
    ref.close()


@pytest.fixture
def registered_unsupported_rom() -> Iterator[str]:
    """Register a ROM that ale-py bundles but plays only multi-player (gpu_env has no rules for it)."""
    env_id = "GpuEnvTest/Combat-v5"
    gym.register(env_id, entry_point="ale_py.env:AtariEnv", kwargs={"game": "combat", "frameskip": 4})
    try:
        yield env_id
    finally:
        del gym.registry[env_id]


@pytest.mark.parametrize(
    ("env_id", "match"),
    [("ALE/NotAGame-v5", "not an Atari id ale-py registers"),
     ("BreakoutDeterministic-v4", r"close: 'BreakoutNoFrameskip-v4'"),
     ("CartPole-v1", "not an Atari id"),
     ("ALE/Breakout-v4", "not an Atari id")],
)
def test_unknown_ids_are_named(env_id: str, match: str) -> None:
    with pytest.raises(GpuEnvError, match=match):
        make_vec(env_id, 1)


def test_a_rom_without_rules_gives_the_clear_error(registered_unsupported_rom: str) -> None:
    with pytest.raises(GpuEnvError, match="runs the ROM 'combat', which gpu_env has no game rules for"):
        make_vec(registered_unsupported_rom, 1)


@pytest.mark.slow
def test_breakout_noframeskip_v4_equals_gymnasium_for_10000_steps() -> None:
    """The issue's check: 10,000 steps, same seeds and seeded random actions, obs/rewards/flags/infos equal."""
    assert compare("BreakoutNoFrameskip-v4", 2, 10_000, seed=0, obs_format="numpy") is None
