"""``evaltk evaluate --sim gpu_env`` reproduces the Gym simulator's rows exactly (same seeds, same actions)."""

from pathlib import Path

import pytest

from evaltk.envs.atari import atari_env
from evaltk.evaluation.run import EvalConfig, evaluate
from evaltk.policies import save_builtin

KEYS = ("index", "seed", "return", "frames", "steps", "truncated", "digest", "obs_digest")  # step for step


def _rows(checkpoint: str, out: Path, simulator: str, env_id: str | None, episodes: int) -> list[tuple[object, ...]]:
    result = evaluate(EvalConfig(checkpoint=checkpoint, out=out, episodes=episodes, seed=7, num_envs=3,
                                 env_id=env_id, simulator=simulator, workers=0))
    return [tuple(r.to_json()[k] for k in KEYS) for r in result.rows]


@pytest.mark.parametrize("env_id", ["ALE/Breakout-v5", "ALE/Pong-v5"])
def test_raw_v5_rows_equal_gym(tmp_path: Path, env_id: str) -> None:
    episodes = 4 if "Breakout" in env_id else 1
    gym_rows = _rows("builtin:random", tmp_path / "gym", "gym", env_id, episodes)
    ours = _rows("builtin:random", tmp_path / "gpu", "gpu_env", env_id, episodes)
    assert ours == gym_rows


def test_dqn_preprocessed_rows_equal_gym(tmp_path: Path) -> None:
    env = atari_env("ALE/Breakout-v5", kwargs={"frameskip": 1},
                    atari_preprocessing={"noop_max": 30, "frame_skip": 4, "screen_size": 84}, frame_stack=4)
    ckpt = save_builtin(tmp_path / "random_dqn", "random", env)
    gym_rows = _rows(str(ckpt), tmp_path / "gym", "gym", None, 3)
    ours = _rows(str(ckpt), tmp_path / "gpu", "gpu_env", None, 3)
    assert ours == gym_rows
