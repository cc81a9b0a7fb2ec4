"""``gpu_env.presets.make`` against each client's own wrappers over ale-py, frame for frame.

Same ids, seeds and random actions; every step compares observations, rewards, terminations,
truncations and the whole info dict (``final_obs``/``final_info`` included; only the wall-clock
``episode.t`` differs). The runs cover life losses and a game over on Breakout.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import ale_py
import gymnasium as gym
import numpy as np
import pytest
import torch
from gymnasium.vector import AutoresetMode, SyncVectorEnv
from gymnasium.wrappers import (
    AtariPreprocessing,
    FrameStackObservation,
    GrayscaleObservation,
    RecordEpisodeStatistics,
    ResizeObservation,
)
from stable_baselines3.common.atari_wrappers import (
    AtariWrapper,
    ClipRewardEnv,
    EpisodicLifeEnv,
    FireResetEnv,
    MaxAndSkipEnv,
    NoopResetEnv,
)
from stable_baselines3.common.monitor import Monitor

from gpu_env import presets
from gpu_env.errors import GpuEnvError

gym.register_envs(ale_py)


def sb3_env(env_id: str, **kwargs: Any) -> gym.Env[Any, Any]:
    """Build the sub-env of SB3's ``make_atari_env``: Monitor inside ``AtariWrapper`` (``kwargs`` to ``gym.make``)."""
    return AtariWrapper(Monitor(gym.make(env_id, **kwargs)))


def cleanrl_env(env_id: str, **kwargs: Any) -> gym.Env[Any, Any]:
    """``make_env`` of CleanRL's ``ppo_atari.py`` (gymnasium 1.x port), in its order (``kwargs`` to ``gym.make``)."""
    env: gym.Env[Any, Any] = gym.make(env_id, **kwargs)
    env = RecordEpisodeStatistics(env)
    env = NoopResetEnv(env, noop_max=30)
    env = MaxAndSkipEnv(env, skip=4)
    env = EpisodicLifeEnv(env)
    if "FIRE" in env.unwrapped.get_action_meanings():  # type: ignore[attr-defined]
        env = FireResetEnv(env)
    env = ClipRewardEnv(env)
    env = ResizeObservation(env, (84, 84))
    env = GrayscaleObservation(env)
    return FrameStackObservation(env, 4)


REFERENCES: dict[str, Callable[..., gym.Env[Any, Any]]] = {"sb3": sb3_env, "cleanrl": cleanrl_env}


def host(value: Any) -> Any:
    """Return a tensor as a numpy array (anything else unchanged)."""
    return value.detach().cpu().numpy() if isinstance(value, torch.Tensor) else value


def assert_same(ours: Any, ref: Any, where: str) -> None:
    """Recursive equality of batched infos/arrays, ignoring wall-clock ``t`` entries."""
    ours, ref = host(ours), host(ref)
    if isinstance(ref, dict):
        assert isinstance(ours, dict), f"{where}: {type(ours)} is not a dict"
        keys = set(ref) - {"t", "_t"}
        assert set(ours) - {"t", "_t"} == keys, f"{where}: keys {sorted(ours)} != {sorted(ref)}"
        for key in keys:
            assert_same(ours[key], ref[key], f"{where}.{key}")
        return
    if ref is None or ours is None:
        assert ours is ref, f"{where}: {ours!r} != {ref!r}"
        return
    a, b = np.asarray(ours), np.asarray(ref)
    if b.dtype == object:
        assert a.shape == b.shape, f"{where}: shape {a.shape} != {b.shape}"
        for i, (x, y) in enumerate(zip(a.ravel(), b.ravel(), strict=True)):
            assert_same(x, y, f"{where}[{i}]")
        return
    assert a.shape == b.shape, f"{where}: shape {a.shape} != {b.shape}"
    assert np.array_equal(a, b), f"{where}: {np.argwhere(a != b)[:5].tolist()} differ"


def run_lockstep(ours: Any, ref: Any, steps: int, seed: int, action_seed: int = 0) -> dict[str, int]:
    """Step both with the same random actions; assert every output equal. Returns event counts."""
    obs, info = ours.reset(seed=seed)
    ref_obs, ref_info = ref.reset(seed=seed)
    assert_same(obs, ref_obs, "reset obs")
    assert_same(info, ref_info, "reset info")
    rng = np.random.default_rng(action_seed)
    counts = {"done": 0, "episodes": 0}
    for t in range(steps):
        actions = rng.integers(0, ref.single_action_space.n, ref.num_envs)
        out, ref_out = ours.step(actions), ref.step(actions)
        for name, a, b in zip(("obs", "reward", "terminated", "truncated", "info"), out, ref_out, strict=True):
            assert_same(a, b, f"step {t} {name}")
        counts["done"] += int(np.sum(ref_out[2] | ref_out[3]))
        for source in (ref_out[4], ref_out[4].get("final_info", {})):
            counts["episodes"] += int(np.sum(source.get("_episode", 0)))
    return counts


SLOW = pytest.mark.slow


@pytest.mark.parametrize(("preset", "env_id", "mode", "steps"), [
    ("sb3", "BreakoutNoFrameskip-v4", AutoresetMode.NEXT_STEP, 240),
    ("cleanrl", "BreakoutNoFrameskip-v4", AutoresetMode.SAME_STEP, 240),
    pytest.param("sb3", "BreakoutNoFrameskip-v4", AutoresetMode.SAME_STEP, 1000, marks=SLOW),
    pytest.param("cleanrl", "BreakoutNoFrameskip-v4", AutoresetMode.NEXT_STEP, 1000, marks=SLOW),
    pytest.param("sb3", "MsPacmanNoFrameskip-v4", AutoresetMode.SAME_STEP, 600, marks=SLOW),
    pytest.param("cleanrl", "MsPacmanNoFrameskip-v4", AutoresetMode.NEXT_STEP, 600, marks=SLOW),
    pytest.param("sb3", "ALE/Pong-v5", AutoresetMode.NEXT_STEP, 300, marks=SLOW),
    ("sb3", "Breakout-v4", AutoresetMode.SAME_STEP, 200),  # frameskip (2, 5): a draw per AtariEnv step
    pytest.param("cleanrl", "SpaceInvaders-v4", AutoresetMode.NEXT_STEP, 300, marks=SLOW),
])
def test_preset_matches_client_wrappers(preset: str, env_id: str, mode: AutoresetMode, steps: int) -> None:
    """Every step equals SyncVectorEnv over the client's wrappers (Breakout: life losses and a game over)."""
    num_envs = 2
    ours = presets.make(env_id, num_envs, preset, autoreset_mode=mode, num_threads=1)
    ref = SyncVectorEnv([lambda: REFERENCES[preset](env_id) for _ in range(num_envs)], autoreset_mode=mode)
    assert ours.single_observation_space == ref.single_observation_space
    assert ours.single_action_space == ref.single_action_space
    counts = run_lockstep(ours, ref, steps, seed=7)
    if "Pong" not in env_id:
        assert counts["done"] >= 2, counts  # life losses end episodes
    if env_id.startswith("Breakout"):
        assert counts["episodes"] >= 1, counts  # a real game over, with its episode statistics


@pytest.mark.parametrize(("preset", "mode"), [("sb3", AutoresetMode.SAME_STEP), ("cleanrl", AutoresetMode.NEXT_STEP)])
def test_frame_cap_truncations_match_client_wrappers(preset: str, mode: AutoresetMode) -> None:
    """``max_num_frames_per_episode`` truncates episodes (and re-resets inside NOOP/FIRE resets) as the clients do."""
    env_id, cap = "BreakoutNoFrameskip-v4", 150
    ours = presets.make(env_id, 2, preset, autoreset_mode=mode, num_threads=1, max_num_frames_per_episode=cap)
    ref = SyncVectorEnv([lambda: REFERENCES[preset](env_id, max_num_frames_per_episode=cap) for _ in range(2)],
                        autoreset_mode=mode)
    counts = run_lockstep(ours, ref, 120, seed=9)
    assert counts["episodes"] >= 2, counts  # truncated games, with their episode statistics


@pytest.mark.parametrize("preset", ["sb3", "cleanrl"])
def test_disabled_autoreset_and_reset_mask_match_client_wrappers(preset: str) -> None:
    """DISABLED: ended envs refuse steps until ``reset(options={"reset_mask": ...})``, which equals the client's."""
    env_id, num_envs = "BreakoutNoFrameskip-v4", 3
    mode = AutoresetMode.DISABLED
    ours: Any = presets.make(env_id, num_envs, preset, autoreset_mode=mode, num_threads=2)
    ref: Any = SyncVectorEnv([lambda: REFERENCES[preset](env_id) for _ in range(num_envs)], autoreset_mode=mode)
    for name, a, b in zip(("obs", "info"), ours.reset(seed=4), ref.reset(seed=4), strict=True):
        assert_same(a, b, f"reset {name}")
    rng = np.random.default_rng(2)
    partial_resets = 0
    for t in range(150):
        actions = rng.integers(0, ref.single_action_space.n, num_envs)
        out, ref_out = ours.step(actions), ref.step(actions)
        for name, a, b in zip(("obs", "reward", "terminated", "truncated", "info"), out, ref_out, strict=True):
            assert_same(a, b, f"step {t} {name}")
        assert ours.call("was_real_done") == ref.call("was_real_done")
        assert ours.call("lives") == ref.call("lives")
        ended = ref_out[2] | ref_out[3]
        if ended.any():
            with pytest.raises(GpuEnvError, match="DISABLED"):
                ours.step(actions)
            options = {"reset_mask": ended}
            pairs = zip(("obs", "info"), ours.reset(options=options), ref.reset(options=options), strict=True)
            for name, a, b in pairs:
                assert_same(a, b, f"reset_mask after step {t}: {name}")
            partial_resets += 1
    assert partial_resets >= 2, partial_resets


def test_gymnasium_preset_matches_atari_preprocessing() -> None:
    """``preset="gymnasium"`` is AtariPreprocessing (frameskip=1) + FrameStackObservation(4), numpy out."""
    env_id = "ALE/Breakout-v5"
    ours = presets.make(env_id, 2, "gymnasium", num_threads=1)
    ref = gym.make_vec(env_id, 2, vectorization_mode="sync", frameskip=1,
                       wrappers=[AtariPreprocessing, lambda e: FrameStackObservation(e, 4), RecordEpisodeStatistics])
    obs, _ = ours.reset(seed=3)
    ref_obs, _ = ref.reset(seed=3)
    assert_same(obs, ref_obs, "reset obs")
    rng = np.random.default_rng(1)
    for t in range(60):
        actions = rng.integers(0, 4, 2)
        out, ref_out = ours.step(actions), ref.step(actions)
        for name, a, b in zip(("obs", "reward", "terminated", "truncated"), out[:4], ref_out[:4], strict=True):
            assert type(a) is np.ndarray, f"step {t} {name}: {type(a).__name__}"
            assert a.dtype == b.dtype, f"step {t} {name}: {a.dtype} != {b.dtype}"
            assert_same(a, b, f"step {t} {name}")


def test_gymnasium_preset_refuses_torch_output() -> None:
    with pytest.raises(GpuEnvError, match="preset='gymnasium' returns numpy arrays"):
        presets.make("ALE/Breakout-v5", 1, "gymnasium", obs_format="torch")


def test_seed_argument_seeds_the_first_reset() -> None:
    """``make(..., seed=s)`` then ``reset()`` equals ``reset(seed=s)``."""
    a = presets.make("BreakoutNoFrameskip-v4", 2, "sb3", seed=11, num_threads=1)
    b = presets.make("BreakoutNoFrameskip-v4", 2, "sb3", num_threads=1)
    obs_a, _ = a.reset()
    obs_b, _ = b.reset(seed=11)
    assert np.array_equal(obs_a, obs_b)
    for _ in range(20):
        actions = np.array([1, 3])
        assert np.array_equal(a.step(actions)[0], b.step(actions)[0])


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"env_id": "Nope-v4", "preset": "sb3"}, "not an Atari id ale-py registers"),
    ({"env_id": "BreakoutNoFrameskip-v4", "preset": "rllib"}, "unknown preset"),
    ({"env_id": "BreakoutNoFrameskip-v4", "preset": "sb3", "frame_skip": 4}, "unknown env kwargs"),
])
def test_bad_arguments_are_named(kwargs: dict[str, Any], message: str) -> None:
    """Unknown ids, presets and options give a one-line error naming them."""
    with pytest.raises(GpuEnvError, match=message):
        presets.make(num_envs=1, **kwargs)


def test_envpool_preset_is_envpool_make() -> None:
    """``preset="envpool"`` is ``gpu_env.envpool.make`` of the same game with EnvPool's defaults."""
    from gpu_env import envpool

    ours = presets.make("ALE/Breakout-v5", 2, "envpool", seed=3)
    ref = envpool.make("Breakout-v5", num_envs=2, seed=3)
    assert ours.single_observation_space == ref.single_observation_space
    assert_same(ours.reset()[0], ref.reset()[0], "reset obs")
    for t in range(20):
        actions = np.array([t % 4, 1], dtype=np.int32)
        for k, (x, y) in enumerate(zip(ours.step(actions)[:4], ref.step(actions)[:4], strict=True)):
            assert_same(x, y, f"step {t} output {k}")
    with pytest.raises(GpuEnvError, match="NEXT_STEP"):
        presets.make("Breakout-v5", 1, "envpool", autoreset_mode="SameStep")


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"backend": "ale_py"}, "runs on the native pool of backend 'cpu'"),
    ({"mode": 1}, "plays the game's default mode"),
])
def test_sb3_and_cleanrl_refuse_what_the_native_pool_does_not_run(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(GpuEnvError, match=message):
        presets.make("BreakoutNoFrameskip-v4", 1, "sb3", **kwargs)
