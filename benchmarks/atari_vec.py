"""DQN-preprocessed Atari throughput: ``gpu_env.make_vec`` next to ``ale_py.AtariVectorEnv``, same run.

Setting (both sides): 84x84 grayscale, max-pool of the last two frames, frame skip 4, frame stack 4,
up to 30 no-op starts, sticky actions p=0.25, random actions, autoreset; ale-py without fire-reset,
episodic life or reward clipping. ``--threads`` threads for both. Each contender is timed
``--repeats`` times per game; the table shows medians of env steps/s and emulated frames/s
(= steps x 4), wall clock and process CPU time (the machine may be shared: CPU time is the steadier
number).

Usage: python benchmarks/atari_vec.py [--games pong breakout] [--num-envs 32] [--threads 2] [--steps 200]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

FRAME_SKIP = 4
DEFAULT_GAMES = ("pong", "breakout", "space_invaders", "ms_pacman")


@dataclass(frozen=True)
class Timing:
    """One timed run: env steps, wall seconds, process CPU seconds."""

    steps: int
    wall: float
    cpu: float


def _timed(fn: Callable[[], int]) -> Timing:
    w0, c0 = time.perf_counter(), time.process_time()
    steps = fn()
    return Timing(steps, time.perf_counter() - w0, time.process_time() - c0)


def _env_name(game: str) -> str:
    return "ALE/" + game.title().replace("_", "") + "-v5"


def bench_gpu_env(game: str, num_envs: int, threads: int, steps: int, seed: int) -> Timing:
    from gpu_env.vector import make_vec

    env = make_vec(_env_name(game), num_envs, backend="cpu", num_threads=threads, frameskip=1,
                   repeat_action_probability=0.25, noop_max=30, frame_skip=FRAME_SKIP, screen_size=84,
                   grayscale_obs=True, stack_size=4)
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    n = len(env.batch.minimal_action_set())

    def run() -> int:
        for _ in range(steps):
            env.step(rng.integers(0, n, num_envs))
        return steps * num_envs

    return _timed(run)


def bench_ale_vector(game: str, num_envs: int, threads: int, steps: int, seed: int) -> Timing:
    from ale_py.vector_env import AtariVectorEnv

    env: Any = AtariVectorEnv(game, num_envs, num_threads=threads, frameskip=FRAME_SKIP, stack_num=4,
                              img_height=84, img_width=84, grayscale=True, maxpool=True, noop_max=30,
                              repeat_action_probability=0.25, use_fire_reset=False, episodic_life=False,
                              reward_clipping=False)
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    n = int(env.single_action_space.n)

    def run() -> int:
        for _ in range(steps):
            env.step(rng.integers(0, n, num_envs))
        return steps * num_envs

    try:
        return _timed(run)
    finally:
        env.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--games", nargs="+", default=list(DEFAULT_GAMES))
    parser.add_argument("--num-envs", type=int, default=32)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    print(f"DQN setting: {args.num_envs} envs, {args.threads} threads, {args.steps} steps x {FRAME_SKIP} frames, "
          f"median of {args.repeats}")
    header = f"{'game':16s} {'contender':22s} {'steps/s':>9s} {'frames/s':>10s} {'CPU s':>7s} {'frames/CPU s':>13s}"
    print(header)
    print("-" * len(header))
    for game in args.games:
        rows: dict[str, tuple[float, float]] = {}
        for name, bench in (("gpu_env make_vec", bench_gpu_env), ("ale_py AtariVectorEnv", bench_ale_vector)):
            runs = [bench(game, args.num_envs, args.threads, args.steps, seed) for seed in range(args.repeats)]
            sps = statistics.median(r.steps / r.wall for r in runs)
            fpc = statistics.median(r.steps * FRAME_SKIP / max(r.cpu, 1e-9) for r in runs)
            cpu = statistics.median(r.cpu for r in runs)
            rows[name] = (sps, fpc)
            print(f"{game:16s} {name:22s} {sps:9.0f} {sps * FRAME_SKIP:10.0f} {cpu:7.2f} {fpc:13.0f}", flush=True)
        ours, ref = rows["gpu_env make_vec"], rows["ale_py AtariVectorEnv"]
        print(f"{game:16s} {'ratio ours/ale_py':22s} {ours[0] / ref[0]:9.2f}x wall, {ours[1] / ref[1]:.2f}x per CPU s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
