"""Emulated Atari frames per second on the CPU: gpu_env's C++ core next to ale-py, same run.

Three contenders, raw frames (frameskip 1, no preprocessing, sticky actions off, random actions
from the minimal action set):
  * gpu_env ``AtariBatch`` (``--threads`` threads over ``--num-envs`` environments, started from an
    ale-py state with ``load_ale_state``; rewards, lives and game over computed every frame; with
    ``--obs index`` (default) the screens (palette indices, uint8[N, 210, 160]) are fetched every
    step, with ``--obs rgb`` as RGB, with ``--obs none`` not at all);
  * ``ale_py.AtariVectorEnv`` with the same number of threads and environments, 210x160 RGB
    observations, no frame stacking, no max-pooling, no resize, no no-op starts;
  * one ``ale_py.ALEInterface`` in a Python loop.
Each is timed ``--repeats`` times per game (wall clock and process CPU time; the gpu_env and
VectorEnv runs alternate); the table shows medians.
The machine may be shared: wall-clock numbers are noisy, CPU-time numbers less so.

With ``--setting dqn`` it runs the DQN-preprocessed comparison instead (84x84 grayscale, max-pool,
frame skip 4, frame stack 4, no-op starts, sticky actions: ``gpu_env.make_vec`` next to
``ale_py.AtariVectorEnv`` with the same settings; the code is ``benchmarks/atari_vec.py``).

Usage: python benchmarks/atari_cpu.py [--setting raw|dqn] [--games pong breakout ...] [--num-envs 64] [--threads 2]
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import sys
import time
import types
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

DEFAULT_GAMES = ("pong", "breakout", "space_invaders", "ms_pacman", "seaquest", "montezuma_revenge")


@dataclass(frozen=True)
class Timing:
    """One timed run: frames emulated, wall seconds, process CPU seconds."""

    frames: int
    wall: float
    cpu: float


def _timed(fn: Callable[[], int]) -> Timing:
    w0, c0 = time.perf_counter(), time.process_time()
    frames = fn()
    return Timing(frames, time.perf_counter() - w0, time.process_time() - c0)


def _ale(game: str) -> object:
    import ale_py
    from ale_py import roms

    ale = ale_py.ALEInterface()
    ale.setLoggerMode(ale_py.LoggerMode.Error)
    ale.setInt("random_seed", 0)
    ale.setFloat("repeat_action_probability", 0.0)
    ale.loadROM(str(roms.get_rom_path(game)))
    return ale


def bench_gpu_env(
    game: str, num_envs: int, threads: int, steps: int, rng: np.random.Generator, obs: str = "index"
) -> Timing:
    from gpu_env import AtariBatch

    ale = _ale(game)
    actions = np.array([a.value for a in ale.getMinimalActionSet()])  # type: ignore[attr-defined]
    batch = AtariBatch(game, num_envs, repeat_action_probability=0.0, num_threads=threads)
    for i in range(num_envs):
        for _ in range(int(rng.integers(0, 30))):
            ale.act(ale.getMinimalActionSet()[0])  # type: ignore[attr-defined]
        batch.load_ale_state(i, ale.cloneState(), ale.getScreen())  # type: ignore[attr-defined]
    plan = rng.choice(actions, size=(steps, num_envs))

    def nothing() -> None:
        return None

    fetchers: dict[str, Callable[[], object]] = {
        "index": batch.get_screen, "rgb": batch.get_screen_rgb, "none": nothing,
    }
    fetch = fetchers[obs]

    def run() -> int:
        for t in range(steps):
            batch.act(plan[t])
            fetch()
        return steps * num_envs

    return _timed(run)


def bench_vector_env(game: str, num_envs: int, threads: int, steps: int, rng: np.random.Generator) -> Timing:
    import ale_py

    env = ale_py.AtariVectorEnv(
        game, num_envs, num_threads=threads, frameskip=1, img_height=210, img_width=160, grayscale=False,
        stack_num=1, maxpool=False, noop_max=0, reward_clipping=False, use_fire_reset=False,
        repeat_action_probability=0.0,
    )
    env.reset(seed=0)
    n_actions = int(getattr(env.single_action_space, "n", 18))
    plan = rng.integers(0, n_actions, size=(steps, num_envs))

    def run() -> int:
        for t in range(steps):
            env.step(plan[t])
        return steps * num_envs

    timing = _timed(run)
    env.close()
    return timing


def bench_single_ale(game: str, frames: int, rng: np.random.Generator) -> Timing:
    ale = _ale(game)
    actions = ale.getMinimalActionSet()  # type: ignore[attr-defined]
    plan = rng.integers(0, len(actions), size=frames)

    def run() -> int:
        for t in range(frames):
            ale.act(actions[plan[t]])  # type: ignore[attr-defined]
        return frames

    return _timed(run)


def _load_average() -> str:
    """Return the 1/5/15-minute load averages as text ("n/a" where the OS does not report them)."""
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "n/a"


def _median_fps(timings: list[Timing]) -> tuple[float, float]:
    return (statistics.median(t.frames / t.wall for t in timings), statistics.median(t.frames / t.cpu for t in timings))


def _dqn_setting() -> types.ModuleType:
    """benchmarks/atari_vec.py, loaded by path (this script also runs through ``evaltk bench``)."""
    path = Path(__file__).with_name("atari_vec.py")
    spec = importlib.util.spec_from_file_location("atari_vec", path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", nargs="+", default=list(DEFAULT_GAMES))
    parser.add_argument("--num-envs", type=int, default=64)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--steps", type=int, default=200, help="batched steps per timed run")
    parser.add_argument("--single-frames", type=int, default=5000, help="frames per timed single-ALE run")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--obs", choices=("index", "rgb", "none"), default="index",
                        help="what gpu_env returns each step (VectorEnv always returns RGB)")
    parser.add_argument("--setting", choices=("raw", "dqn"), default="raw",
                        help="raw frames (default) or the DQN-preprocessed setting (see the module docstring)")
    args = parser.parse_args(argv)
    if args.setting == "dqn":
        return int(_dqn_setting().main(["--games", *args.games, "--num-envs", str(args.num_envs), "--threads",
                                    str(args.threads), "--steps", str(args.steps), "--repeats", str(args.repeats)]))
    rng = np.random.default_rng(0)
    header = (f"{'game':<20} {'gpu_env fps':>12} {'VectorEnv fps':>14} {'ratio':>6} {'1xALE fps':>10} "
              f"{'gpu_env fps/cpu':>16} {'VectorEnv fps/cpu':>18} {'ratio/cpu':>9}")
    print(f"raw frames, frameskip 1, {args.num_envs} envs, {args.threads} threads, medians of {args.repeats} runs, "
          f"gpu_env observations: {args.obs}, load average at start: {_load_average()}")
    print(header)
    print("-" * len(header))
    ratios = []
    cpu_ratios = []
    for game in args.games:
        # Alternate the two batched contenders so that a change in the machine's load hits both alike.
        ours: list[Timing] = []
        vec: list[Timing] = []
        for _ in range(args.repeats):
            ours.append(bench_gpu_env(game, args.num_envs, args.threads, args.steps, rng, args.obs))
            vec.append(bench_vector_env(game, args.num_envs, args.threads, args.steps, rng))
        one = [bench_single_ale(game, args.single_frames, rng) for _ in range(args.repeats)]
        (ow, oc), (vw, vc), (sw, _) = _median_fps(ours), _median_fps(vec), _median_fps(one)
        ratios.append(ow / vw)
        cpu_ratios.append(oc / vc)
        print(f"{game:<20} {ow:>12.0f} {vw:>14.0f} {ow / vw:>6.2f} {sw:>10.0f} {oc:>16.0f} {vc:>18.0f} {oc / vc:>9.2f}")
    print(f"geometric mean wall-clock ratio gpu_env / AtariVectorEnv: {float(np.exp(np.mean(np.log(ratios)))):.2f}")
    print(f"geometric mean CPU-time ratio gpu_env / AtariVectorEnv: {float(np.exp(np.mean(np.log(cpu_ratios)))):.2f}")
    print("fps/cpu = frames per second of process CPU time (all threads), less sensitive to other load")
    print(f"load average at end: {_load_average()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
