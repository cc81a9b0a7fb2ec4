"""Settings read from the simulator that runs, and the one settings diff with its one ``unknown`` sentinel."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from evaltk.envs import EnvSpec, describe, env_for_id
from evaltk.envs.atari_settings import UNKNOWN, settings_of
from evaltk.simulators import get
from evaltk.verdict.differences import difference_rows

A2C = Path(__file__).resolve().parents[3] / "suites" / "checkpoints" / "a2c_breakout"


V5 = {"env_id": "ALE/Breakout-v5", "frameskip": 4, "repeat_action_probability": 0.25, "full_action_space": False,
      "max_episode_frames": 108_000, "episodic_life": False, "reward_clip": False, "fire_on_reset": False}
"""gymnasium's ``ALE/*-v5`` defaults (its Atari docs), as settings."""
EXPECTED = {
    "a2c": {**V5, "max_pool": True, "noop_starts": [1, 30], "obs_type": "grayscale", "obs_size": [84, 84],
            "frame_stack": 4, "grayscale": "ALE grayscale palette", "resize": "cv2 INTER_AREA"},
    "raw": {**V5, "env_id": "ALE/Pong-v5", "max_pool": False, "noop_starts": [0, 0], "obs_type": "rgb",
            "obs_size": None, "frame_stack": 1, "grayscale": "none", "resize": "none"},
}
"""The shipped A2C's env (frameskip 1 under AtariPreprocessing's 4, 30 NOOPs, 84x84 gray, 4 stacked) and a raw id."""



def _a2c_env() -> EnvSpec:
    return EnvSpec.from_json(json.loads((A2C / "policy.json").read_text())["env"])

@pytest.mark.parametrize("source", ["a2c", "raw"])
def test_gym_settings_are_read_from_the_built_env(source: str) -> None:
    env_dict = _a2c_env() if source == "a2c" else env_for_id("ALE/Pong-v5")
    got = get("gym").settings(describe(env_dict).env)
    assert got.pop("package").startswith("gymnasium ")
    assert got == EXPECTED[source]


def test_a_step_limit_caps_the_frames_at_its_base_env_frame_skip() -> None:
    facts = {"frameskip": 4, "max_num_frames": None, "max_episode_steps": 100, "repeat_action_probability": 0.0,
             "full_action_space": False, "obs_type": "rgb", "atari_preprocessing": None, "frame_stack": 1,
             "reward_clip": True}
    assert settings_of("p", "X-v5", facts)["max_episode_frames"] == 400
    assert settings_of("p", "X-v5", {**facts, "max_num_frames": 300})["max_episode_frames"] == 300
    assert settings_of("p", "X-v5", {**facts, "max_episode_steps": None})["max_episode_frames"] is None
    assert settings_of("p", "X-v5", facts)["reward_clip"] is True


def test_gym_settings_follow_the_wrappers_applied() -> None:
    env = describe(_a2c_env()).env
    env = replace(env, kwargs={**env.kwargs, "repeat_action_probability": 0.1, "full_action_space": True},
                  preprocessing={**env.preprocessing, "frame_stack": 2,
                                 "atari_preprocessing": {**env.preprocessing["atari_preprocessing"], "noop_max": 7,
                                                         "terminal_on_life_loss": True}})
    got = get("gym").settings(env)
    assert (got["repeat_action_probability"], got["full_action_space"], got["frame_stack"]) == (0.1, True, 2)
    assert (got["noop_starts"], got["episodic_life"]) == ([1, 7], True)


def test_one_diff_one_unknown() -> None:
    rows = difference_rows({"frameskip": 4, "noop_starts": [1, 30]}, {"frameskip": 4, "noop_starts": [0, 29]})
    assert [(r["setting"], r["differs"]) for r in rows] == [("frameskip", False), ("noop_starts", True)]
    rows = difference_rows({"x": UNKNOWN, "y": 1}, {"x": 2})
    assert rows == [{"setting": "x", "a": UNKNOWN, "b": 2, "differs": False},
                    {"setting": "y", "a": 1, "b": UNKNOWN, "differs": False}]


def test_gpu_env_settings_are_read_from_the_vector_env_it_builds() -> None:
    env = describe(_a2c_env()).env
    env = replace(env, kwargs={**env.kwargs, "repeat_action_probability": 0.1, "max_num_frames_per_episode": 5000})
    got = get("gpu_env").settings(env)
    assert (got["repeat_action_probability"], got["max_episode_frames"]) == (0.1, 5000)
    assert (got["frame_stack"], got["obs_size"], got["full_action_space"]) == (4, [84, 84], False)
    assert got | {"package": "x"} == get("gym").settings(env) | {"package": "x"}  # gpu_env reproduces gym's rules
