"""``gpu_env.envpool``: EnvPool's API, checked against EnvPool's own traces, the installed EnvPool and its surface.

``tests/data/envpool/atari_traces.json`` holds traces recorded from EnvPool 1.2.5 and 1.2.7 themselves
(``tests/gpu_env/envpool_golden.py``; the two releases recorded equal traces): game overs, episodic life
with reward clipping, sticky actions, truncation, a seed per env with mode and difficulty, and episodic
life without fire reset at ``frame_skip=2``. Replaying them on gpu_env must give the same
observations, RAM, rewards, flags and infos at every step. The side-by-side tests run against whichever
tested release is installed (1.2.5 on CPython 3.11, 1.2.7 on 3.12 and 3.13).
The loop of CleanRL's ``ppo_atari_envpool.py`` (its ``RecordEpisodeStatistics``
over ``env_type="gym"``) runs unchanged, and the async API returns each env's own trajectory.
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from gpu_env import envpool
from gpu_env.errors import GpuEnvError
from tests.data_paths import data_path
from tests.gpu_env.envpool_golden import CASES, trace


def golden_cases() -> list[dict[str, Any]]:
    """Return the recorded EnvPool cases."""
    cases: list[dict[str, Any]] = json.loads(data_path("envpool/atari_traces.json").read_text())["cases"]
    return cases


@pytest.mark.parametrize("index", range(len(CASES)))
def test_replays_envpool_traces(index: int) -> None:
    """Every step of every case, recorded by every tested EnvPool release, is reproduced exactly."""
    assert json.loads(data_path("envpool/atari_traces.json").read_text())["envpool_versions"] == list(
        envpool.TESTED_VERSIONS)
    case = golden_cases()[index]
    ours = trace(functools.partial(envpool.make, num_threads=1), case)
    expected = case["trace"]
    assert len(ours) == len(expected)
    for t, (row, ref) in enumerate(zip(ours, expected, strict=True)):
        assert row == ref, f"{case['task']} {case['options']}: step {t} differs: {row} != {ref}"


class RecordEpisodeStatistics:
    """CleanRL ``ppo_atari_envpool.py``'s wrapper (gym API, episodes end when lives reach 0), in its logic."""

    def __init__(self, env: Any) -> None:
        self.env = env
        self.num_envs = env.num_envs
        env.reset()
        info = env.step(np.zeros(self.num_envs, dtype=int))[-1]
        self.has_lives = bool(info["lives"].sum() > 0)

    def reset(self) -> Any:
        """Reset the pool and the statistics."""
        obs = self.env.reset()
        self.episode_returns = np.zeros(self.num_envs, dtype=np.float32)
        self.episode_lengths = np.zeros(self.num_envs, dtype=np.int32)
        self.returned_episode_returns = np.zeros(self.num_envs, dtype=np.float32)
        self.returned_episode_lengths = np.zeros(self.num_envs, dtype=np.int32)
        return obs

    def step(self, action: np.ndarray) -> tuple[Any, Any, Any, dict[str, Any]]:
        """Step and accumulate the unclipped ``info["reward"]`` until all lives are lost."""
        obs, rewards, dones, infos = self.env.step(action)
        self.episode_returns += infos["reward"]
        self.episode_lengths += 1
        self.returned_episode_returns[:] = self.episode_returns
        self.returned_episode_lengths[:] = self.episode_lengths
        exhausted = infos["lives"] == 0
        ended = exhausted if self.has_lives else dones
        self.episode_returns *= 1 - ended
        self.episode_lengths *= 1 - ended
        infos["r"], infos["l"] = self.returned_episode_returns, self.returned_episode_lengths
        return obs, rewards, dones, infos


def test_cleanrl_envpool_loop_runs() -> None:
    """The env part of ppo_atari_envpool.py: make, wrap, reset, step, log episodes when lives reach 0."""
    envs: Any = envpool.make("Breakout-v5", env_type="gym", num_envs=4, episodic_life=True, reward_clip=True, seed=1,
                             num_threads=1)
    envs.num_envs = 4
    envs.single_action_space = envs.action_space
    envs.single_observation_space = envs.observation_space
    wrapped = RecordEpisodeStatistics(envs)
    obs = wrapped.reset()
    assert obs.shape == (4, 4, 84, 84)
    assert envs.single_observation_space.shape == (4, 84, 84)
    rng = np.random.default_rng(0)
    life_losses, episodes = 0, []
    for _ in range(300):
        obs, reward, done, info = wrapped.step(rng.integers(0, envs.single_action_space.n, 4))
        assert set(np.unique(reward)) <= {0.0, 1.0}  # reward_clip
        for idx, d in enumerate(done):
            if d and info["lives"][idx] == 0:
                episodes.append((float(info["r"][idx]), int(info["l"][idx])))
            elif d:
                life_losses += 1
    assert life_losses >= 4
    assert episodes
    assert all(r >= 0 and length > 0 for r, length in episodes)


def test_async_envs_follow_their_own_trajectories() -> None:
    """With batch_size < num_envs, each env's outputs equal the same env stepped in a sync pool."""
    kwargs: dict[str, Any] = {"num_envs": 3, "seed": 9, "episodic_life": True, "num_threads": 1}
    sync = envpool.make("Breakout-v5", **kwargs)
    pool = envpool.make("Breakout-v5", batch_size=2, **kwargs)
    assert pool.is_async
    assert not sync.is_async
    rng = np.random.default_rng(2)
    actions = rng.integers(0, 4, (40, 3))
    sync_obs = [sync.reset()[0]]
    sync_obs += [sync.step(a)[0] for a in actions]
    pool.async_reset()
    seen: dict[int, list[np.ndarray]] = {0: [], 1: [], 2: []}
    while min(len(v) for v in seen.values()) < 30:
        obs, _, _, _, info = pool.recv()
        assert info["env_id"].shape == (2,)
        for k, env_id in enumerate(info["env_id"]):
            seen[int(env_id)].append(obs[k])
        ids = info["env_id"]
        pool.send(np.array([actions[len(seen[int(i)]) - 1, int(i)] for i in ids]), ids)
    for env_id, frames in seen.items():
        for t, frame in enumerate(frames[:30]):
            assert np.array_equal(frame, sync_obs[t][env_id]), f"env {env_id} step {t}"


@pytest.mark.parametrize("options", [
    {"gray_scale": False, "stack_num": 2},
    {"img_height": 105, "img_width": 80, "frame_skip": 3, "noop_max": 1},
    {"episodic_life": True, "reward_clip": True, "full_action_space": True, "repeat_action_probability": 0.25},
    {"seed": [7, 2**31 - 1, 0], "max_episode_steps": 150},
])
def test_equals_envpool_itself(options: dict[str, Any]) -> None:
    """Side by side with the installed EnvPool: config, every output and info field, every step."""
    real = pytest.importorskip("envpool")
    assert real.__version__ in envpool.TESTED_VERSIONS
    options = {"seed": 7, **options}
    theirs = real.make("Seaquest-v5", env_type="gymnasium", num_envs=3, **options)
    ours = envpool.make("Seaquest-v5", env_type="gymnasium", num_envs=3, num_threads=2, **options)
    differ = {k for k in theirs.config if theirs.config[k] != ours.config.get(k)}
    assert differ == {"base_path", "num_threads"}  # EnvPool's asset folder; the thread count asked here
    assert (theirs.observation_space, theirs.action_space) == (ours.observation_space, ours.action_space)
    for a, b in zip(theirs.reset(), ours.reset(), strict=True):
        assert np.array_equal(a, b) if not isinstance(a, dict) else a.keys() == b.keys()
    rng = np.random.default_rng(1)
    for t in range(200):
        act = rng.integers(0, theirs.action_space.n, 3)
        got, want = ours.step(act), theirs.step(act)
        for x, y in zip(got[:4], want[:4], strict=True):
            assert x.dtype == y.dtype, f"step {t}"
            assert np.array_equal(x, y), f"step {t}"
        assert got[4].keys() == want[4].keys()
        for key in ("env_id", "lives", "reward", "terminated", "elapsed_step", "ram"):
            assert got[4][key].dtype == want[4][key].dtype, f"step {t} info[{key!r}]"
            assert np.array_equal(got[4][key], want[4][key]), f"step {t} info[{key!r}]"


def test_task_ids_equal_envpools() -> None:
    real = pytest.importorskip("envpool")
    registered = real.registration.registry.specs  # task id -> (module, spec class, options)
    atari = sorted(t for t in real.list_all_envs() if registered[t][0] == "envpool.atari")
    assert envpool.list_all_envs() == atari
    with pytest.raises(GpuEnvError, match="names no Atari ROM"):
        envpool.make("Combat-v5")  # an ale-py ROM EnvPool has no task for


def test_versions_never_tested_are_refused_in_one_line(tmp_path: Path) -> None:
    assert [envpool.check_version(v) for v in envpool.TESTED_VERSIONS] == ["1.2.5", "1.2.7"]
    for version in ("1.2.6", "1.3.0", "1.2.5.post1"):
        with pytest.raises(GpuEnvError, match=rf"^EnvPool {version} is installed, .* 1\.2\.5 and 1\.2\.7: pip install"):
            envpool.check_version(version)
    # make() reads the installed distribution's metadata: a child process finds an EnvPool 1.2.6 (its metadata
    # only, first on the path: 1.2.6 has no CPython 3.11 wheel to install here) and is refused.
    site = tmp_path / "site"
    (site / "envpool-1.2.6.dist-info").mkdir(parents=True)
    (site / "envpool-1.2.6.dist-info" / "METADATA").write_text("Metadata-Version: 2.1\nName: envpool\nVersion: 1.2.6\n")
    code = ("import gpu_env.envpool as e\ntry:\n    e.make('Pong-v5')\nexcept e.GpuEnvError as x:\n    print(x)")
    repo = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(repo)])}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120,
                         check=True).stdout.splitlines()
    assert len(out) == 1
    assert out[0].startswith("EnvPool 1.2.6 is installed, and gpu_env.envpool reproduces")


def test_async_recv_returns_whichever_envs_are_done() -> None:
    """recv() hands back batch_size envs as the worker threads finish them, each env once per send."""
    pool = envpool.make("Pong-v5", num_envs=6, batch_size=2, seed=1, num_threads=2)
    pool.async_reset()
    received: list[int] = []
    for _ in range(30):
        _, _, _, _, info = pool.recv()
        ids = info["env_id"]
        assert len(set(ids.tolist())) == 2
        received += ids.tolist()
        pool.send(np.zeros(2, dtype=np.int32), ids)
    assert sorted(set(received)) == list(range(6))
    with pytest.raises(GpuEnvError, match="still running"):
        pool.send(np.zeros(1, dtype=np.int32), np.array([int(i) for i in range(6) if i not in ids][:1]))


def test_surface_and_errors() -> None:
    """Spaces, config, spec and info keys as EnvPool's; bad options give one-line errors."""
    env = envpool.make("Pong-v5", num_envs=2)
    assert env.config["seed"] == envpool.DEFAULT_SEED
    assert env.spec.config.max_episode_steps == 27000
    assert env.observation_space.shape == (4, 84, 84)
    assert env.action_space.n == 6
    _, info = env.reset()
    assert set(info) == {"env_id", "players", "lives", "reward", "terminated", "ram", "elapsed_step"}
    _, reward, terminated, truncated, info = env.step(np.zeros(2, dtype=np.int32), np.array([1, 0]))
    assert info["env_id"].tolist() == [1, 0]
    assert reward.dtype == np.float32
    assert terminated.dtype == truncated.dtype == np.bool_
    assert "Pong-v5" in envpool.list_all_envs()
    with pytest.raises(GpuEnvError, match="unknown envpool option"):
        envpool.make("Pong-v5", num_env=2)
    with pytest.raises(GpuEnvError, match="not an EnvPool Atari id"):
        envpool.make("ALE/Pong-v5")
    with pytest.raises(GpuEnvError, match="batch_size"):
        envpool.make("Pong-v5", num_envs=2, batch_size=3)
    with pytest.raises(GpuEnvError, match="fixed at construction"):
        env.reset(seed=1)
    with pytest.raises(GpuEnvError, match="not both"):
        envpool.make("Pong-v5", num_envs=2, seed=[1, 2], env_seed=[3, 4])
    with pytest.raises(GpuEnvError, match="is not an int32"):
        envpool.make("Pong-v5", seed=2**31)
    with pytest.raises(GpuEnvError, match="env_seed has 1 seeds for num_envs=2"):
        envpool.make("Pong-v5", num_envs=2, seed=[1])


def test_the_pool_is_also_a_gymnasium_env_as_envpools_is() -> None:
    # EnvPool 1.2.5's pool class has gymnasium's VectorEnv and Env as bases, and scripts wrap it in
    # gymnasium.Wrapper subclasses; the wrapped pool steps exactly as the bare one.
    import gymnasium

    bare, wrapped = (envpool.make("Breakout-v5", env_type="gymnasium", num_envs=2, seed=3) for _ in range(2))
    assert isinstance(bare, gymnasium.Env)
    assert isinstance(bare, gymnasium.vector.VectorEnv)
    wrapper = gymnasium.Wrapper(wrapped)
    assert wrapper.observation_space == bare.observation_space
    np.testing.assert_array_equal(wrapper.reset()[0], bare.reset()[0])
    actions = np.random.default_rng(0).integers(0, 4, size=(20, 2))
    for a in actions:
        got, want = wrapper.step(a), bare.step(a)
        for x, y in zip(got[:4], want[:4], strict=True):
            np.testing.assert_array_equal(x, y)
