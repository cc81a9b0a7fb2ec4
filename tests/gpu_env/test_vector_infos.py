"""Info dicts, episode statistics, output formats and rendering of ``gpu_env.make_vec`` against gymnasium.

The reference is ``gymnasium.make_vec(id, vectorization_mode="sync", wrappers=[..., RecordEpisodeStatistics],
vector_kwargs={"autoreset_mode": mode})`` on ale-py, with the same seeds and actions.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import ale_py
import gymnasium as gym
import numpy as np
import pytest
import torch
from gymnasium.vector import AutoresetMode
from gymnasium.wrappers import AtariPreprocessing, FrameStackObservation, RecordEpisodeStatistics

from gpu_env.errors import GpuEnvError
from gpu_env.make import make_vec
from gpu_env.vector import AtariVecEnv, default_num_threads
from tests.gpu_env.test_vector import DQN, compare, info_differences, reference, step_differences

gym.register_envs(ale_py)

# Life losses and truncation after 160 frames (less the 1-30 no-op frames) end episodes on different
# steps in different envs, so the masks are partial.
LIFE_LOSS: dict[str, Any] = {**DQN, "terminal_on_life_loss": True, "stack_size": 4, "max_num_frames_per_episode": 160}


@pytest.mark.parametrize("mode", [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP, AutoresetMode.DISABLED])
def test_infos_equal_gymnasium_key_by_key(mode: AutoresetMode) -> None:
    assert compare("ALE/Breakout-v5", 2, 70, seed=5, obs_format="numpy", autoreset_mode=mode, **LIFE_LOSS) is None


def test_raw_frames_infos_with_truncation() -> None:
    assert compare("PongNoFrameskip-v4", 2, 70, seed=1, obs_format="numpy", autoreset_mode=AutoresetMode.SAME_STEP,
                   max_num_frames_per_episode=30) is None


def _episodes_as_a_script_logs(env: Any, mode: AutoresetMode, steps: int) -> list[tuple[int, float, int]]:
    """(step, return, length) of each finished episode, read the way CleanRL/SB3-style scripts read them."""
    rng = np.random.default_rng(0)
    env.reset(seed=0)
    logged = []
    for t in range(steps):
        infos = env.step(rng.integers(0, 4, env.num_envs))[4]
        source = infos.get("final_info", {}) if mode == AutoresetMode.SAME_STEP else infos
        if "episode" in source:
            for i in np.flatnonzero(source["_episode"]):
                logged.append((t, float(source["episode"]["r"][i]), int(source["episode"]["l"][i])))
    env.close()
    return logged


@pytest.mark.parametrize(("mode", "obs_format"), [(AutoresetMode.SAME_STEP, "numpy"),
                                                  (AutoresetMode.SAME_STEP, "torch"),
                                                  (AutoresetMode.NEXT_STEP, "torch")])
def test_a_script_logs_the_same_episodes(mode: AutoresetMode, obs_format: str) -> None:
    kwargs: dict[str, Any] = {**LIFE_LOSS, "autoreset_mode": mode}
    want = _episodes_as_a_script_logs(reference("ALE/Breakout-v5", 2, **kwargs), mode, 100)
    got = _episodes_as_a_script_logs(make_vec("ALE/Breakout-v5", 2, obs_format=obs_format, **kwargs), mode, 100)
    assert len(want) >= 4
    assert got == want


def test_numpy_format_gives_plain_numpy_without_warnings() -> None:
    env = make_vec("ALE/Breakout-v5", 2, obs_format="numpy", autoreset_mode=AutoresetMode.SAME_STEP, **LIFE_LOSS)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        obs, info = env.reset(seed=1)
        total = 0.0
        for _ in range(50):
            obs, reward, term, trunc, info = env.step(np.array([1, 3]))
            for x in (obs, reward, term, trunc, info["lives"]):
                assert type(x) is np.ndarray
            # What numpy-written scripts do with the arrays.
            scaled = np.asarray(obs, dtype=np.float32) / 255.0
            total += float(np.sum(reward)) + float(np.mean(scaled))
            np.concatenate([obs, obs])
            np.logical_or(term, trunc).any()
        assert obs.dtype == np.uint8
        assert reward.dtype == np.float64
    assert np.isfinite(total)


def _assert_same_batches(ours: Any, ref: Any, steps: int) -> int:
    """Step both envs with seeded random actions: equal values, types and dtypes, infos key for key.

    Returns the number of episodes that ended on the way.
    """
    o1, i1 = ref.reset(seed=8)
    o2, i2 = ours.reset(seed=8)
    assert type(o2) is np.ndarray
    assert o2.dtype == o1.dtype
    np.testing.assert_array_equal(o2, o1)
    assert info_differences(i1, i2, exact=True, path="reset info") == []
    rng = np.random.default_rng(8)
    ended = 0
    for t in range(steps):
        actions = rng.integers(0, ref.single_action_space.n, ref.num_envs)
        want, got = ref.step(actions), ours.step(actions)
        assert step_differences(t, want, got, exact=True) == []
        ended += int((want[2] | want[3]).sum())
    ref.close()
    ours.close()
    return ended


def test_default_make_vec_equals_gymnasium_make_vec_with_the_dqn_wrappers() -> None:
    """``gpu_env.make_vec(id, n, **options)`` with no output option is gymnasium's sync vector env.

    The reference is ``gymnasium.make_vec(id, n, vectorization_mode="sync", wrappers=[AtariPreprocessing,
    FrameStackObservation(4), RecordEpisodeStatistics])`` with the same sticky actions (0.25): numpy
    observations, float64 rewards, bool flags and the info dicts (int64 ``lives``/frame numbers, float64/int64
    ``episode``), equal value for value and dtype for dtype on every step, episodes ending on the way.
    """
    options: dict[str, Any] = {**DQN, "repeat_action_probability": 0.25, "max_num_frames_per_episode": 400}
    ref = gym.make_vec("ALE/Breakout-v5", 2, vectorization_mode="sync",
                       wrappers=[lambda e: AtariPreprocessing(e, noop_max=30, frame_skip=4, screen_size=84),
                                 lambda e: FrameStackObservation(e, 4), RecordEpisodeStatistics],
                       frameskip=1, repeat_action_probability=0.25, max_num_frames_per_episode=400)
    ours = make_vec("ALE/Breakout-v5", 2, stack_size=4, **options)
    assert ours.single_observation_space == ref.single_observation_space
    assert _assert_same_batches(ours, ref, 120) >= 2


def test_default_make_vec_equals_plain_gymnasium_make_vec() -> None:
    """``gpu_env.make_vec(id, n)`` against ``gymnasium.make_vec(id, n, vectorization_mode="sync")``, no wrappers.

    No episode ends in these 60 Pong steps, so gymnasium's plain infos (no ``RecordEpisodeStatistics``)
    have the same keys as gpu_env's.
    """
    ref = gym.make_vec("ALE/Pong-v5", 2, vectorization_mode="sync", repeat_action_probability=0.25)
    ours = make_vec("ALE/Pong-v5", 2, repeat_action_probability=0.25)
    assert _assert_same_batches(ours, ref, 60) == 0


def test_torch_output_is_asked_for() -> None:
    env = make_vec("ALE/Pong-v5", 2, obs_format="torch")
    obs, info = env.reset(seed=0)
    out = env.step(np.zeros(2, dtype=np.int64))
    assert isinstance(obs, torch.Tensor)
    assert all(isinstance(x, torch.Tensor) for x in out[:4])
    assert out[1].dtype == torch.float32
    assert isinstance(info["lives"], torch.Tensor)


def test_render_equals_ale_py_render() -> None:
    ours = make_vec("ALE/Pong-v5", 2, render_mode="rgb_array", obs_format="numpy", autoreset_mode="SameStep",
                    max_num_frames_per_episode=40)
    ref = gym.make_vec("ALE/Pong-v5", 2, vectorization_mode="sync", render_mode="rgb_array",
                       vector_kwargs={"autoreset_mode": AutoresetMode.SAME_STEP}, max_num_frames_per_episode=40)
    assert ours.render_mode == ref.render_mode == "rgb_array"
    assert "rgb_array" in ours.metadata["render_modes"]
    assert ours.metadata["render_fps"] == ref.metadata["render_fps"]
    ours.reset(seed=2)
    ref.reset(seed=2)
    rng = np.random.default_rng(2)
    for _ in range(15):  # an episode end (40 frames = 10 steps) included
        frames, want = ours.render(), ref.render()
        assert isinstance(frames, tuple)
        assert len(frames) == 2
        for got, w in zip(frames, want, strict=True):
            assert got.shape == (210, 160, 3)
            assert got.dtype == np.uint8
            np.testing.assert_array_equal(got, w)
        actions = rng.integers(0, 6, 2)
        ours.step(actions)
        ref.step(actions)
    ref.close()


def test_record_video_writes_a_file(tmp_path: Path) -> None:
    pytest.importorskip("moviepy", reason="gymnasium's RecordVideo needs moviepy (pip install moviepy)")
    env = make_vec("ALE/Pong-v5", 2, render_mode="rgb_array", obs_format="numpy", max_num_frames_per_episode=60)
    recorder = gym.wrappers.vector.RecordVideo(env, str(tmp_path), episode_trigger=lambda e: e == 0,
                                               disable_logger=True)
    recorder.reset(seed=0)
    for _ in range(20):  # 15 steps end the first episode (60 frames), which closes its video
        recorder.step(np.zeros(2, dtype=np.int64))
    recorder.close()
    videos = list(tmp_path.glob("*.mp4"))
    assert len(videos) == 1
    assert videos[0].stat().st_size > 1000


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [({"obs_format": "jax"}, "obs_format='jax'"),
     ({"render_mode": "human"}, "render_mode='human'"),
     ({"obs_format": "numpy", "device": "meta"}, "obs_format='numpy' returns host arrays"),
     ({"num_threads": 0}, "num_threads=0"),
     ({"block_size": 64, "noop_table_depth": 8}, "block_size=64, noop_table_depth=8: options of backend='cuda'")],
)
def test_bad_output_options_are_named(kwargs: dict[str, Any], match: str) -> None:
    with pytest.raises(GpuEnvError, match=match):
        AtariVecEnv("ALE/Pong-v5", 1, **kwargs)


def test_render_needs_a_render_mode() -> None:
    with pytest.raises(GpuEnvError, match="render_mode='rgb_array'"):
        make_vec("ALE/Pong-v5", 1).render()


def test_default_threads_are_the_allowed_cores(monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    import gpu_env.vector

    assert default_num_threads() == len(os.sched_getaffinity(0))
    monkeypatch.setattr(gpu_env.vector, "default_num_threads", lambda: 2)
    assert make_vec("ALE/Pong-v5", 1)._opts.num_threads == 2  # asked for when num_threads is None, and only then
    assert make_vec("ALE/Pong-v5", 1, num_threads=3)._opts.num_threads == 3


def test_default_threads_do_not_read_the_load() -> None:
    """One busy process per allowed core changes nothing: the default is not taken from the load."""
    import os
    import subprocess
    import sys

    before = default_num_threads()
    busy = [subprocess.Popen([sys.executable, "-c", "print('busy', flush=True)\nwhile True: pass"],
                             stdout=subprocess.PIPE, text=True)
            for _ in range(len(os.sched_getaffinity(0)))]
    try:
        for proc in busy:
            assert proc.stdout is not None
            assert proc.stdout.readline() == "busy\n"  # its loop runs from here on
        assert default_num_threads() == before == len(os.sched_getaffinity(0))
    finally:
        for proc in busy:
            proc.kill()
            proc.communicate()  # reaped, its pipe closed
