"""evaltk.envs.atari / evaltk.envs.vector: exact rebuild of the gymnasium env, validation, the episode vector."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import pytest

from evaltk.checkpoint import CheckpointSpec
from evaltk.envs import EnvInfo, EnvSpec, check_compatible, describe, env_for_id
from evaltk.envs.atari import ALE_KWARGS, atari_env, make_env, resolve_env
from evaltk.envs.vector import EpisodeVector
from evaltk.errors import SpecError

DQN = atari_env("ALE/Breakout-v5", kwargs={"frameskip": 1, "repeat_action_probability": 0.0},
                atari_preprocessing={"noop_max": 30, "frame_skip": 4, "screen_size": 84}, frame_stack=4)


def test_defaults_are_gymnasium_registered_kwargs() -> None:
    env = env_for_id("ALE/Breakout-v5")
    registered = gym.spec("ALE/Breakout-v5").kwargs
    for key in ALE_KWARGS:
        if key in registered:
            assert env.kwargs[key] == registered[key]
    assert env.kwargs["mode"] is None
    assert env.preprocessing == {"atari_preprocessing": None, "frame_stack": 1}
    nofs = env_for_id("BreakoutNoFrameskip-v4")
    assert nofs.kwargs["frameskip"] == 1
    assert nofs.kwargs["repeat_action_probability"] == 0.0


def test_unknown_env_id_suggests_and_explains() -> None:
    with pytest.raises(SpecError, match=r"unknown Atari env id 'ALE/Breakout-v9'.*did you mean ALE/Breakout-v5") as e:
        env_for_id("ALE/Breakout-v9")
    assert "\n" not in str(e.value)
    with pytest.raises(SpecError, match="list valid ids with"):
        env_for_id("CartPole-v1")


@pytest.mark.parametrize(("kwargs", "pre", "message"), [
    ({"frameskip": 0}, None, "frameskip must be an int >= 1, got 0"),
    ({"frameskip": [2, 5]}, None, "stochastic frameskip"),
    ({"repeat_action_probability": 1.5}, None, "repeat_action_probability must be a number in .0, 1., got 1.5"),
    ({"full_action_space": "yes"}, None, "full_action_space must be true or false, got 'yes'"),
    ({"obs_type": "rgb_array"}, None, "obs_type must be one of rgb, grayscale, ram, got 'rgb_array'"),
    ({"mode": -1}, None, "mode must be null or an int >= 0, got -1"),
    ({"max_num_frames_per_episode": 0}, None, "max_num_frames_per_episode"),
    ({"sticky": 1}, None, "unknown ALE kwarg.*sticky"),
    ({"frameskip": 4}, {"frame_skip": 4}, "frame_skip=4 needs env.kwargs.frameskip=1, got 4"),
    ({"frameskip": 1}, {"noop_max": -1}, "noop_max must be an int >= 0, got -1"),
    ({"frameskip": 1}, {"screen_size": [84]}, "screen_size must be"),
    ({"frameskip": 1}, {"grayscale": True}, "unknown AtariPreprocessing option"),
    ({"frameskip": 1, "obs_type": "ram"}, {}, "needs image observations"),
])
def test_bad_specs_show_the_bad_value(kwargs: dict[str, Any], pre: dict[str, Any] | None, message: str) -> None:
    with pytest.raises(SpecError, match=message):
        atari_env("ALE/Breakout-v5", kwargs=kwargs, atari_preprocessing=pre)


def test_bad_mode_is_a_spec_error() -> None:
    with pytest.raises(SpecError, match="could not build"):
        make_env(atari_env("ALE/Breakout-v5", kwargs={"mode": 77}))


def test_preprocessed_env_equals_hand_built_gymnasium_pipeline() -> None:
    ours = make_env(DQN)
    ref = gym.wrappers.FrameStackObservation(
        gym.wrappers.AtariPreprocessing(gym.make("ALE/Breakout-v5", frameskip=1, repeat_action_probability=0.0),
                                        noop_max=30, frame_skip=4, screen_size=84), 4)
    o1, _ = ours.reset(seed=5)
    o2, _ = ref.reset(seed=5)
    assert o1.shape == (4, 84, 84)
    np.testing.assert_array_equal(o1, o2)
    rng = np.random.default_rng(0)
    for a in rng.integers(0, 4, 200).tolist():
        s1, s2 = ours.step(a), ref.step(a)
        np.testing.assert_array_equal(s1[0], s2[0])
        assert s1[1:4] == s2[1:4]
        if s1[2] or s1[3]:
            break


@pytest.mark.parametrize(("env", "shape", "dtype", "layout"), [
    (env_for_id("ALE/Breakout-v5"), [210, 160, 3], "uint8", "HWC"),
    (atari_env("ALE/Breakout-v5", kwargs={"obs_type": "grayscale"}), [210, 160], "uint8", "HW"),
    (atari_env("ALE/Breakout-v5", kwargs={"obs_type": "ram"}), [128], "uint8", "N"),
    (DQN, [4, 84, 84], "uint8", "SHW"),
    (atari_env("ALE/Breakout-v5", kwargs={"frameskip": 1}, atari_preprocessing={
        "grayscale_obs": False, "screen_size": [64, 48], "scale_obs": True}), [48, 64, 3], "float32", "HWC"),
])
def test_describe(env: EnvSpec, shape: list[int], dtype: str, layout: str) -> None:
    info = describe(env)
    assert info.obs_spec == {"shape": shape, "dtype": dtype, "layout": layout}
    assert info.action_spec == {"type": "discrete", "n": 4}
    assert info.action_meanings == ["NOOP", "FIRE", "RIGHT", "LEFT"]


def test_full_action_space_and_resolution_is_idempotent() -> None:
    env = atari_env("ALE/Pong-v5", kwargs={"full_action_space": True})
    assert describe(env).action_spec == {"type": "discrete", "n": 18}
    assert resolve_env(env) == env


def test_check_compatible_names_the_mismatch() -> None:
    info = describe(env_for_id("ALE/Pong-v5"))
    spec = CheckpointSpec(model_class="builtin:random", model_kwargs={},
                          obs_spec={"shape": [4, 84, 84], "dtype": "uint8"}, action_spec={"type": "discrete", "n": 6},
                          env=info.env.to_json())
    expected = r"expects observations uint8\[4, 84, 84\] but ALE/Pong-v5.*uint8\[210, 160, 3\]"
    with pytest.raises(SpecError, match=expected):
        check_compatible(spec, info)
    spec4 = CheckpointSpec(model_class="builtin:random", model_kwargs={}, obs_spec=info.obs_spec,
                           action_spec={"type": "discrete", "n": 4}, env=info.env.to_json())
    with pytest.raises(SpecError, match=r"action spec .* does not match ALE/Pong-v5"):
        check_compatible(spec4, EnvInfo(info.env, info.obs_spec, info.action_spec, None))


def _rollout(vec: EpisodeVector, k: int, steps: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    vec.reset(list(range(k)), [100 + i for i in range(k)])
    rng = np.random.default_rng(3)
    active = np.ones(k, bool)
    rewards, frames, obs_sums = [], [], []
    for _ in range(steps):
        res = vec.step(rng.integers(0, 4, k), active)
        rewards.append(res.reward)
        frames.append(res.frames)
        obs_sums.append(vec.obs.reshape(k, -1).sum(axis=1))
        active &= ~(res.terminated | res.truncated)
    return np.array(rewards), np.array(frames), np.array(obs_sums)


def test_episode_vector_workers_match_in_process_and_plain_env() -> None:
    info = describe(env_for_id("ALE/Breakout-v5"))
    kw: dict[str, Any] = {"obs_shape": info.obs_spec["shape"], "obs_dtype": info.obs_spec["dtype"]}
    with EpisodeVector(info.env, 3, num_workers=0, **kw) as local:
        a = _rollout(local, 3, 120)
    with EpisodeVector(info.env, 3, num_workers=2, **kw) as multi:
        b = _rollout(multi, 3, 120)
    for x, y in zip(a, b, strict=True):
        np.testing.assert_array_equal(x, y)
    plain = gym.make("ALE/Breakout-v5")
    obs, _ = plain.reset(seed=101)
    rng = np.random.default_rng(3)
    for t in range(120):
        act = rng.integers(0, 4, 3)
        obs, r, term, trunc, _ = plain.step(int(act[1]))
        assert r == a[0][t, 1]
        assert obs.sum() == a[2][t, 1]
        if term or trunc:
            break


@pytest.mark.parametrize("env_id", ["ALE/Breakout-v5", "ALE/MsPacman-v5"])
def test_fast_reset_gives_the_states_and_steps_of_a_real_reload(env_id: str) -> None:
    env = env_for_id(env_id)
    fast, ref = make_env(env, fast_reset=True), make_env(env)
    ale_fast: Any = fast.unwrapped
    ale_ref: Any = ref.unwrapped
    for seed in (1, 2, 2**31 - 1):  # consecutive episodes in the same env: state left by the last one
        o1, _ = fast.reset(seed=seed)
        o2, _ = ref.reset(seed=seed)
        assert ale_fast.ale.cloneState(include_rng=True).__getstate__() == \
            ale_ref.ale.cloneState(include_rng=True).__getstate__()
        np.testing.assert_array_equal(o1, o2)
        rng = np.random.default_rng(seed)
        for _ in range(150):
            a = int(rng.integers(ref.action_space.n))  # type: ignore[attr-defined]
            s1, s2 = fast.step(a), ref.step(a)
            np.testing.assert_array_equal(s1[0], s2[0])
            assert s1[1:4] == s2[1:4]
