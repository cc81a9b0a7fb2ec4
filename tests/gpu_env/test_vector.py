"""``gpu_env.make_vec`` against ``gymnasium.make_vec(..., vectorization_mode="sync")`` on ale-py.

Same ids, settings, seeds and actions; every step compares observations, rewards, terminations,
truncations, lives and the episode statistics. The default tests are short; the long comparison
(10,000 steps per game, results in docs/ale_semantics.md) runs with:
    python tests/gpu_env/test_vector.py --steps 10000 [--games Pong,Breakout] [--config dqn|raw]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
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
from gpu_env.vector import AtariVecEnv, rom_id_from_env_id

gym.register_envs(ale_py)

DQN: dict[str, Any] = {"frameskip": 1, "noop_max": 30, "frame_skip": 4, "screen_size": 84,
                       "grayscale_obs": True, "terminal_on_life_loss": False, "scale_obs": False}
PREPROCESSING_KEYS = ("noop_max", "frame_skip", "screen_size", "terminal_on_life_loss", "grayscale_obs",
                      "grayscale_newaxis", "scale_obs")
OURS_ONLY = ("obs_format", "num_threads")


def reference(env_id: str, num_envs: int, **kwargs: Any) -> Any:
    """Build the gymnasium stack our make_vec reproduces from the same keyword arguments.

    Per env: AtariEnv, [AtariPreprocessing], [FrameStackObservation], RecordEpisodeStatistics.
    """
    kwargs = {k: v for k, v in kwargs.items() if k not in OURS_ONLY}
    pp = {k: kwargs.pop(k) for k in PREPROCESSING_KEYS if k in kwargs}
    stack = kwargs.pop("stack_size", None)
    mode = kwargs.pop("autoreset_mode", AutoresetMode.NEXT_STEP)
    wrappers: list[Callable[[gym.Env[Any, Any]], gym.Wrapper[Any, Any, Any, Any]]] = []
    if pp:
        wrappers.append(lambda e: AtariPreprocessing(e, **pp))
    if stack is not None:
        wrappers.append(lambda e: FrameStackObservation(e, stack))
    wrappers.append(RecordEpisodeStatistics)
    return gym.make_vec(env_id, num_envs, vectorization_mode="sync", wrappers=wrappers,
                        vector_kwargs={"autoreset_mode": mode}, **kwargs)


def host(value: Any) -> Any:
    """Return a tensor as a numpy array (anything else unchanged)."""
    return value.detach().cpu().numpy() if isinstance(value, torch.Tensor) else value


def info_differences(want: dict[str, Any], got: dict[str, Any], exact: bool, path: str = "info") -> list[str]:
    """Where ``got`` differs from gymnasium's ``want``: keys, masks, values; dtypes and types if ``exact``.

    ``t`` (seconds) is compared by dtype and mask only; ``final_obs`` env by env; with ``exact=False``
    (torch output) values are compared as numpy arrays and the extra ``episode["frames"]`` is allowed.
    """
    extra = set(got) - set(want) - (set() if exact or not path.endswith("'episode']") else {"frames", "_frames"})
    bad = [f"{path}: keys {sorted(set(want) - set(got))} missing, {sorted(extra)} extra"] if extra or set(want) - set(
        got) else []
    for key in want.keys() & got.keys():
        w, g = want[key], got[key]
        where = f"{path}[{key!r}]"
        if isinstance(w, dict):
            bad += info_differences(w, g, exact, where) if isinstance(g, dict) else [f"{where}: not a dict"]
            continue
        g = host(g)
        if exact and (type(g) is not type(w) or getattr(g, "dtype", None) != getattr(w, "dtype", None)):
            bad.append(f"{where}: {type(g).__name__}/{getattr(g, 'dtype', None)} != "
                       f"{type(w).__name__}/{getattr(w, 'dtype', None)}")
        elif key == "t":
            if np.asarray(g).shape != np.asarray(w).shape or (np.asarray(g) < 0).any():
                bad.append(f"{where}: {g} vs {w}")
        elif key in ("final_obs", "seeds"):
            mask = np.array([x is not None for x in w])
            if exact and not np.array_equal(mask, [x is not None for x in g]):
                bad.append(f"{where}: entries differ")
            elif not all(np.array_equal(np.asarray(w[i]), np.asarray(g[i])) for i in np.flatnonzero(mask)):
                bad.append(f"{where}: values differ")
        elif not np.array_equal(np.asarray(w), np.asarray(g)):
            bad.append(f"{where}: {g} != {w}")
    return bad


def step_differences(t: int, want: tuple[Any, ...], got: tuple[Any, ...], exact: bool) -> list[str]:
    """Differences between two ``step`` results (observations, rewards, flags, info)."""
    bad = []
    for name, w, g in zip(("obs", "reward", "terminated", "truncated"), want[:4], got[:4], strict=True):
        g = host(g)
        if exact and (type(g) is not type(w) or g.dtype != w.dtype):
            bad.append(f"{name}: {type(g).__name__}/{g.dtype} != {type(w).__name__}/{w.dtype}")
        elif not np.array_equal(w, g):
            bad.append(f"{name} differs")
    return [f"step {t}: {b}" for b in bad + info_differences(want[4], got[4], exact)]


def compare(env_id: str, num_envs: int, steps: int, seed: int, backend: str = "cpu", **kwargs: Any) -> str | None:
    """Step both stacks with the same random actions; the first differences, or None.

    With numpy output (the default) the info dicts must equal gymnasium's key for key, type for type.
    """
    ref = reference(env_id, num_envs, **dict(kwargs))
    ours = make_vec(env_id, num_envs, backend=backend, **kwargs)
    exact = kwargs.get("obs_format", "numpy") == "numpy"
    mode = kwargs.get("autoreset_mode", AutoresetMode.NEXT_STEP)
    try:
        o1, i1 = ref.reset(seed=seed)
        o2, i2 = ours.reset(seed=seed)
        bad = ([] if np.array_equal(o1, host(o2)) else ["reset: observations differ"]) + info_differences(
            i1, i2, exact, "reset info")
        rng = np.random.default_rng(seed)
        for t in range(steps):
            if bad:
                return "; ".join(bad[:6])
            actions = rng.integers(0, ref.single_action_space.n, num_envs)
            want, got = ref.step(actions), ours.step(actions)
            bad = step_differences(t, want, got, exact)
            ended = want[2] | want[3]
            if mode == AutoresetMode.DISABLED and ended.any() and not bad:
                o1, i1 = ref.reset(options={"reset_mask": ended})
                o2, i2 = ours.reset(options={"reset_mask": ended})
                bad = ([] if np.array_equal(o1, host(o2)) else [f"step {t}: obs after reset(reset_mask) differ"]
                       ) + info_differences(i1, i2, exact, f"step {t} reset info")
        return "; ".join(bad[:6]) if bad else None
    finally:
        ref.close()
        ours.close()


def test_raw_rgb_v5_with_truncation() -> None:
    assert compare("ALE/Pong-v5", 2, 60, seed=1, max_num_frames_per_episode=120) is None


def test_dqn_preprocessing_frame_stack_and_life_loss() -> None:
    assert compare("ALE/Breakout-v5", 2, 80, seed=3, stack_size=4, **{**DQN, "terminal_on_life_loss": True}) is None


def test_grayscale_stochastic_frameskip_mode_and_full_action_space() -> None:
    assert compare("ALE/SpaceInvaders-v5", 2, 40, seed=5, obs_type="grayscale", frameskip=(2, 5), mode=2,
                   difficulty=1, full_action_space=True) is None


@pytest.mark.parametrize("mode", [AutoresetMode.SAME_STEP, AutoresetMode.DISABLED])
def test_autoreset_modes_match_gymnasium(mode: AutoresetMode) -> None:
    # Short episodes so that several end during the comparison; torch output (the default, numpy, is
    # compared key for key by the other tests here and in test_vector_infos.py).
    assert compare("ALE/Pong-v5", 2, 40, seed=2, obs_format="torch", autoreset_mode=mode,
                   max_num_frames_per_episode=60) is None


@pytest.mark.parametrize("mode", [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP])
def test_frame_stack_through_autoresets(mode: AutoresetMode) -> None:
    # The pool refills the stack of an env it resets (in the step with NEXT_STEP, in a second call with
    # SAME_STEP). Short episodes: several autoresets during the comparison.
    assert compare("ALE/Pong-v5", 2, 50, seed=4, stack_size=3, autoreset_mode=mode,
                   max_num_frames_per_episode=90, **DQN) is None


def test_rgb_preprocessing_stack_scaled_and_noop_max_zero() -> None:
    # RGB frames stack as [S, H, W, 3] (gymnasium's layout, not EnvPool's planes); scale_obs is float32.
    assert compare("ALE/Breakout-v5", 2, 30, seed=6, stack_size=2, frameskip=1, noop_max=0, grayscale_obs=False,
                   scale_obs=True, screen_size=(64, 48)) is None


def test_ram_and_grayscale_newaxis_stacks() -> None:
    assert compare("ALE/Pong-v5", 2, 30, seed=8, obs_type="ram", stack_size=2) is None
    assert compare("ALE/Pong-v5", 2, 30, seed=8, stack_size=2, grayscale_newaxis=True,
                   **{**DQN, "frame_skip": 1, "frameskip": (2, 5)}) is None


def test_no_ops_that_end_the_game_reset_again_with_the_same_seed() -> None:
    # Episodes of 20 frames, up to 30 no-ops of one frame each: a reset's no-ops often truncate the game,
    # and gymnasium's AtariPreprocessing then resets again with the same seed (the generator restarts).
    assert compare("ALE/Pong-v5", 4, 12, seed=9, max_num_frames_per_episode=20, **DQN) is None


def test_backend_ale_py_is_refused_naming_gymnasium() -> None:
    with pytest.raises(GpuEnvError, match=r"backend='ale_py'.*gymnasium.make_vec\(env_id, n, "
                       r"vectorization_mode='sync'"):
        make_vec("ALE/Pong-v5", 2, backend="ale_py")


def test_disabled_autoreset_refuses_to_step_an_ended_env() -> None:
    env = make_vec("ALE/Pong-v5", 2, autoreset_mode=AutoresetMode.DISABLED, max_num_frames_per_episode=8)
    env.reset(seed=0)
    noop = np.zeros(2, dtype=np.int64)
    assert not env.step(noop)[3].any()
    assert env.step(noop)[3].all()  # 8 frames = 2 steps of frameskip 4
    with pytest.raises(GpuEnvError, match=r"envs \[0, 1\] ended and autoreset_mode is DISABLED"):
        env.step(np.zeros(2, dtype=np.int64))
    env.reset(options={"reset_mask": np.array([True, True])})
    assert not env.step(noop)[3].any()


def test_metadata_spaces_and_devices() -> None:
    env = make_vec("ALE/Breakout-v5", 3, stack_size=4, obs_format="torch", **DQN)
    assert env.metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP
    assert env.single_observation_space.shape == (4, 84, 84)
    assert env.observation_space.shape == (3, 4, 84, 84)
    assert isinstance(env.single_action_space, gym.spaces.Discrete)
    assert env.single_action_space.n == 4
    obs, info = env.reset(seed=0)
    assert isinstance(obs, torch.Tensor)
    assert obs.dtype == torch.uint8
    assert obs.device.type == "cpu"
    assert set(info) >= {"lives", "episode_frame_number", "frame_number"}


def test_seeded_reset_reloads_and_reproduces() -> None:
    env = make_vec("ALE/Qbert-v5", 2, repeat_action_probability=0.25)
    actions = np.array([1, 2])
    runs = []
    for _ in range(2):
        obs, _ = env.reset(seed=42)
        frames = [obs]
        for _ in range(30):
            frames.append(env.step(actions)[0])
        runs.append(np.stack(frames))
    np.testing.assert_array_equal(runs[0], runs[1])


def test_partial_reset_with_mask_leaves_others() -> None:
    env = make_vec("ALE/Pong-v5", 2)
    env.reset(seed=7)
    for _ in range(5):
        before = env.step(np.array([2, 3]))[0]
    obs, _ = env.reset(options={"reset_mask": np.array([True, False])})
    np.testing.assert_array_equal(obs[1], before[1])


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"obs_type": "pixels"}, GpuEnvError, "obs_type"),
        ({"frameskip": 0}, GpuEnvError, "frameskip"),
        ({"frameskip": 4, "frame_skip": 4}, GpuEnvError, "frameskip=1"),
        ({"autoreset_mode": "Sometimes"}, GpuEnvError, "NextStep, SameStep, Disabled"),
    ],
)
def test_bad_arguments_are_named(kwargs: dict[str, Any], error: type[Exception], match: str) -> None:
    with pytest.raises(error, match=match):
        AtariVecEnv("ALE/Pong-v5", 1, **kwargs)


def test_env_ids() -> None:
    assert rom_id_from_env_id("ALE/SpaceInvaders-v5") == "space_invaders"
    assert rom_id_from_env_id("ALE/MontezumaRevenge-v5") == "montezuma_revenge"
    assert rom_id_from_env_id("PongNoFrameskip-v4") == "pong"
    with pytest.raises(GpuEnvError, match="not an Atari id ale-py registers"):
        rom_id_from_env_id("ALE/NotAGame-v5")


LONG_GAMES = ("Pong", "Breakout", "MontezumaRevenge", "Crossbow", "SpaceInvaders", "Qbert", "Seaquest",
              "MsPacman", "Enduro", "Asteroids", "DoubleDunk", "Skiing")


@pytest.mark.slow
@pytest.mark.parametrize("game", LONG_GAMES)
def test_long_dqn_comparison(game: str) -> None:
    assert compare(f"ALE/{game}-v5", 2, 10_000, seed=0, stack_size=4, **DQN) is None


def main(argv: list[str] | None = None) -> int:
    """Run the long comparison and print one line per game."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=10_000)
    parser.add_argument("--num-envs", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--games", default=",".join(LONG_GAMES))
    parser.add_argument("--config", choices=("dqn", "raw"), default="dqn")
    args = parser.parse_args(argv)
    kwargs: dict[str, Any] = {"stack_size": 4, **DQN} if args.config == "dqn" else {}
    failed = 0
    for game in args.games.split(","):
        start = time.perf_counter()
        err = compare(f"ALE/{game}-v5", args.num_envs, args.steps, args.seed, **kwargs)
        failed += err is not None
        print(f"{game:18s} {args.config} steps={args.steps} envs={args.num_envs} "
              f"{time.perf_counter() - start:7.1f}s {'OK' if err is None else 'DIVERGED ' + err}", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
