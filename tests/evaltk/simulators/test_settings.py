"""Settings read from the simulator that runs, and the one settings diff with its one ``unknown`` sentinel."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evaltk.envs import describe, env_for_id
from evaltk.simulators import get
from evaltk.simulators.settings import UNKNOWN, difference_rows, reference_settings

A2C = Path(__file__).resolve().parents[3] / "suites" / "checkpoints" / "a2c_breakout"


@pytest.mark.parametrize("source", ["a2c", "raw"])
def test_gym_settings_are_read_from_the_built_env_and_agree_with_the_env_dict(source: str) -> None:
    env_dict = json.loads((A2C / "policy.json").read_text())["env"] if source == "a2c" else env_for_id("ALE/Pong-v5")
    env = describe(env_dict).env
    built = get("gym").settings(env)
    assert built == reference_settings(env, package=built["package"])


def test_gym_settings_follow_the_wrappers_applied() -> None:
    env = describe(json.loads((A2C / "policy.json").read_text())["env"]).env
    env["kwargs"] = {**env["kwargs"], "repeat_action_probability": 0.1, "full_action_space": True}
    env["preprocessing"] = {**env["preprocessing"], "frame_stack": 2,
                            "atari_preprocessing": {**env["preprocessing"]["atari_preprocessing"], "noop_max": 7,
                                                    "terminal_on_life_loss": True}}
    got = get("gym").settings(env)
    assert (got["repeat_action_probability"], got["full_action_space"], got["frame_stack"]) == (0.1, True, 2)
    assert (got["noop_starts"], got["episodic_life"]) == ([1, 7], True)


def test_one_diff_one_unknown() -> None:
    rows = difference_rows({"frameskip": 4, "noop_starts": [1, 30]}, {"frameskip": 4, "noop_starts": [0, 29]},
                           keys=())
    assert [(r["setting"], r["differs"]) for r in rows] == [("frameskip", False), ("noop_starts", True)]
    rows = difference_rows({"a": UNKNOWN, "b": 1}, {"a": 2}, keys=())
    assert rows == [{"setting": "a", "sim": UNKNOWN, "reference": 2, "differs": False},
                    {"setting": "b", "sim": 1, "reference": UNKNOWN, "differs": False}]


def test_gpu_env_settings_are_read_from_the_vector_env_it_builds() -> None:
    env = describe(json.loads((A2C / "policy.json").read_text())["env"]).env
    env["kwargs"] = {**env["kwargs"], "repeat_action_probability": 0.1, "max_num_frames_per_episode": 5000}
    got = get("gpu_env").settings(env)
    assert (got["repeat_action_probability"], got["max_episode_frames"]) == (0.1, 5000)
    assert (got["frame_stack"], got["obs_size"], got["full_action_space"]) == (4, [84, 84], False)
    assert got | {"package": "x"} == get("gym").settings(env) | {"package": "x"}  # gpu_env reproduces gym's rules
