"""``gpu_env.ale_vector``: ale-py 0.12's ``AtariVectorEnv``, checked step for step against ale-py's own.

Both sides are seeded alike (``reset(seed=...)`` reloads each env's ROM with its seed and reseeds its
no-op generator), so every observation, reward, flag and info value must be equal. Async runs
(``batch_size < num_envs``) return envs in the order they finish, on both sides, so they are compared
per env: each env's actions depend only on the env and its step count.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from ale_py.vector_env import AtariVectorEnv as AlePyVectorEnv
from gymnasium.envs.registration import registry
from gymnasium.vector import AutoresetMode, SyncVectorEnv

from gpu_env import ale_vector
from gpu_env.ale_vector import AtariVectorEnv


def assert_same_batch(theirs: tuple[Any, ...], ours: tuple[Any, ...], where: str) -> None:
    assert len(theirs) == len(ours), where
    for name, a, b in zip(("obs", "reward", "terminated", "truncated"), theirs[:-1], ours[:-1], strict=False):
        assert a.dtype == b.dtype, f"{where}: {name} dtype {b.dtype}, ale-py {a.dtype}"
        assert np.array_equal(a, b), f"{where}: {name} differs"
    info_a, info_b = theirs[-1], ours[-1]
    assert info_a.keys() == info_b.keys(), where
    for key in info_a:
        if key == "final_obs":  # ale-py leaves the rows of envs that did not end uninitialised
            ended = theirs[2] | theirs[3]
            assert np.array_equal(info_a[key][ended], info_b[key][ended]), f"{where}: final_obs"
        else:
            assert np.array_equal(info_a[key], info_b[key]), f"{where}: info[{key!r}]"


@pytest.mark.parametrize(("game", "options"), [
    ("breakout", {}),
    ("breakout", {"autoreset_mode": "SameStep", "episodic_life": True}),
    ("breakout", {"grayscale": False, "stack_num": 2, "img_height": 210, "img_width": 160, "maxpool": False,
                  "reward_clipping": False, "repeat_action_probability": 0.25}),
    ("ms_pacman", {"noop_max": 0, "use_fire_reset": False, "life_loss_info": True, "frameskip": 3,
                   "max_num_frames_per_episode": 500, "full_action_space": True}),
])
def test_equals_ale_py_step_for_step(game: str, options: dict[str, Any]) -> None:
    theirs, ours = AlePyVectorEnv(game, 3, **options), AtariVectorEnv(game, 3, **options)
    assert_same_batch(theirs.reset(seed=3), ours.reset(seed=3), "reset")
    rng = np.random.default_rng(0)
    for t in range(250):
        actions = rng.integers(0, len(theirs.ale.get_action_set()), 3)
        assert_same_batch(theirs.step(actions), ours.step(actions), f"step {t}")
    mask = np.array([True, False, True])
    assert_same_batch(theirs.reset(seed=np.array([5, 6]), options={"reset_mask": mask}),
                       ours.reset(seed=np.array([5, 6]), options={"reset_mask": mask}), "partial reset")
    actions = np.ones(3, dtype=np.int64)
    assert_same_batch(theirs.step(actions), ours.step(actions), "after the partial reset")


def test_continuous_actions_equal_ale_py() -> None:
    theirs, ours = (cls("pong", 2, continuous=True, continuous_action_threshold=0.3)
                    for cls in (AlePyVectorEnv, AtariVectorEnv))
    assert ours.single_action_space == theirs.single_action_space
    assert_same_batch(theirs.reset(seed=1), ours.reset(seed=1), "reset")
    rng = np.random.default_rng(4)
    for t in range(60):
        actions = rng.uniform([0, -np.pi, 0], [1, np.pi, 1], (2, 3)).astype(np.float32)
        assert_same_batch(theirs.step(actions), ours.step(actions), f"step {t}")


@pytest.fixture
def registered() -> Iterator[list[str]]:
    """``ale_vector.register()`` for one test; ale-py's entry points restored after it."""
    import ale_py

    gym.register_envs(ale_py)
    before = {i: s for i, s in registry.items() if s.vector_entry_point == ale_vector.ALE_PY_ENTRY_POINT}
    yield ale_vector.register()
    registry.update(before)


def _per_env_run(env: Any, steps: int) -> dict[int, list[tuple[Any, ...]]]:
    """Each env's outputs in its own order; env i's t-th action is (i + t) % actions."""
    seen: dict[int, list[tuple[Any, ...]]] = {i: [] for i in range(env.num_envs)}

    def record(out: tuple[Any, ...]) -> np.ndarray:
        obs, info = out[0], out[-1]
        flags = out[1:4] if len(out) == 5 else (np.zeros(len(obs)),) * 3
        for k, i in enumerate(info["env_id"]):
            ended = len(out) == 5 and bool(flags[1][k] or flags[2][k])
            final = info["final_obs"][k].copy() if ended and "final_obs" in info else None
            seen[int(i)].append((obs[k].copy(), *(f[k] for f in flags), info["lives"][k], info["frame_number"][k],
                                 info["episode_frame_number"][k], final))
        return np.asarray(info["env_id"])

    ids = record(env.reset(seed=11))
    n = int(env.single_action_space.n)
    while min(len(v) for v in seen.values()) < steps:
        ids = record(env.step(np.array([(i + len(seen[int(i)])) % n for i in ids], dtype=np.int64)))
    return {i: v[:steps] for i, v in seen.items()}


@pytest.mark.parametrize("mode", ["NextStep", "SameStep"])
@pytest.mark.parametrize("batch_size", [8, 4])
def test_make_vec_after_register_equals_ale_py(registered: list[str], mode: str, batch_size: int) -> None:
    """The must-show case: ``gymnasium.make_vec("ALE/Breakout-v5", 8, ...)`` on gpu_env equals ale-py's env."""
    assert "ALE/Breakout-v5" in registered
    assert "ALE/Pong-v5" in registered
    kwargs: dict[str, Any] = {"stack_num": 4, "batch_size": batch_size, "repeat_action_probability": 0.0,
                              "autoreset_mode": mode, "episodic_life": True}
    ours = gym.make_vec("ALE/Breakout-v5", 8, **kwargs)
    assert isinstance(ours, AtariVectorEnv)
    theirs = AlePyVectorEnv("breakout", 8, frameskip=4, max_num_frames_per_episode=108000, **kwargs)
    got, want = _per_env_run(ours, 120), _per_env_run(theirs, 120)
    for i in range(8):
        for t, (a, b) in enumerate(zip(want[i], got[i], strict=True)):
            for field, x, y in zip(("obs", "reward", "terminated", "truncated", "lives", "frame", "episode frame",
                                    "final_obs"), a, b, strict=True):
                assert np.array_equal(x, y) if x is not None else y is None, f"env {i} step {t}: {field}"
    assert isinstance(gym.make_vec("ALE/Breakout-v5", 2, vectorization_mode="sync"), SyncVectorEnv)


def test_refusals_match_ale_py() -> None:
    for mode in ("Disabled", AutoresetMode.DISABLED, "bogus"):  # gymnasium's third mode, and no mode at all
        with pytest.raises(ValueError, match=r"Invalid autoreset_mode: (Disabled|bogus) \(ale-py's AtariVectorEnv "
                                             r"takes 'NextStep' or 'SameStep'\)"):
            AtariVectorEnv("pong", 2, autoreset_mode=mode)
    same_step = AtariVectorEnv("pong", 1, autoreset_mode="SameStep")
    assert same_step.autoreset_mode is AutoresetMode.SAME_STEP
    same_step.close()
    with pytest.raises(gym.error.Error, match="frameskip"):
        AtariVectorEnv("pong", 2, frameskip=0)
    env = AtariVectorEnv("pong", 2)
    with pytest.raises(RuntimeError, match="before reset"):
        env.send(np.zeros(2, dtype=np.int64))
    with pytest.raises(RuntimeError, match="first reset"):
        env.reset(options={"reset_mask": np.array([True, False])})
    pool = AtariVectorEnv("pong", 4, batch_size=2)
    pool.reset(seed=0)
    pool.recv()  # the other two envs of the reset
    with pytest.raises(RuntimeError, match="send"):
        pool.recv()  # ale-py would wait for ever
    with pytest.raises(ValueError, match="Partial reset"):
        pool.reset(options={"reset_mask": np.array([True, False, False, False])})
