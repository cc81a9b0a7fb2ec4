"""``gpu_env.make_vec`` against gymnasium's sync vector env: steps per second by thread count.

Same id, settings, seeds and seeded random actions on both sides. Settings (``--setting``): ``dqn``
(``ALE/Breakout-v5`` with ``frameskip=1``, AtariPreprocessing's defaults: 30 no-ops, frame_skip 4,
84x84 grayscale; ``FrameStackObservation(4)``; NEXT_STEP) and ``raw`` (``BreakoutNoFrameskip-v4``, RGB
frames). gpu_env runs with ``obs_format="numpy"`` (what gymnasium returns) at the default thread count
(:func:`gpu_env.vector.default_num_threads`), at 1 thread and at every core; the sides are timed in
turns (``--rounds``) and the median is printed, with the load average before and after.

Usage: python benchmarks/vector_threads.py [--num-envs 8] [--steps 300] [--rounds 3] [--setting dqn raw]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # this checkout first (not an installed copy): a run measures the code beside it
    sys.path.insert(0, str(ROOT))

SETTINGS: dict[str, tuple[str, dict[str, Any]]] = {
    "dqn": ("ALE/Breakout-v5", {"frameskip": 1, "noop_max": 30, "frame_skip": 4, "screen_size": 84,
                                "grayscale_obs": True, "stack_size": 4}),
    "raw": ("BreakoutNoFrameskip-v4", {}),
}


def gymnasium_env(env_id: str, num_envs: int, kwargs: dict[str, Any]) -> Any:
    """Build the gymnasium sync vector env of ``env_id`` from gpu_env's keyword arguments."""
    import ale_py
    import gymnasium as gym
    from gymnasium.wrappers import AtariPreprocessing, FrameStackObservation

    gym.register_envs(ale_py)
    kw = dict(kwargs)
    stack = kw.pop("stack_size", None)
    pp = {k: kw.pop(k) for k in ("noop_max", "frame_skip", "screen_size", "grayscale_obs") if k in kw}
    wrappers: list[Any] = []
    if pp:
        wrappers.append(lambda e: AtariPreprocessing(e, **pp))
    if stack is not None:
        wrappers.append(lambda e: FrameStackObservation(e, stack))
    return gym.make_vec(env_id, num_envs, vectorization_mode="sync", wrappers=wrappers or None, **kw)


def steps_per_second(env: Any, steps: int, seed: int) -> float:
    """Vector steps per wall second over ``steps`` seeded random steps (after a seeded reset)."""
    rng = np.random.default_rng(seed)
    actions = rng.integers(0, int(env.single_action_space.n), (steps, env.num_envs))
    env.reset(seed=seed)
    start = time.perf_counter()
    for a in actions:
        env.step(a)
    return steps / (time.perf_counter() - start)


def main(argv: list[str] | None = None) -> None:
    """Print one table per setting: steps/s and env steps/s of each contender."""
    from gpu_env.make import make_vec
    from gpu_env.vector import default_num_threads

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--num-envs", type=int, default=8)
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--setting", nargs="+", choices=sorted(SETTINGS), default=["dqn", "raw"])
    args = parser.parse_args(argv)
    cores = len(os.sched_getaffinity(0))
    default = default_num_threads()
    print(f"cores {cores}, load before {os.getloadavg()[0]:.2f}, default_num_threads() = {default}, "
          f"{args.num_envs} envs, {args.steps} steps x {args.rounds} rounds")
    for name in args.setting:
        env_id, kwargs = SETTINGS[name]
        contenders: dict[str, Any] = {"gymnasium sync": gymnasium_env(env_id, args.num_envs, kwargs)}
        for threads in sorted({default, 1, cores}):
            label = f"gpu_env {threads} thread{'s' if threads > 1 else ''}" + (" (default)" if threads == default
                                                                              else "")
            contenders[label] = make_vec(env_id, args.num_envs, obs_format="numpy", num_threads=threads, **kwargs)
        rates: dict[str, list[float]] = {k: [] for k in contenders}
        for r in range(args.rounds):
            for label, env in contenders.items():
                rates[label].append(steps_per_second(env, args.steps, seed=r))
        print(f"\n{name}: {env_id} {kwargs}")
        base = statistics.median(rates["gymnasium sync"])
        for label, values in rates.items():
            med = statistics.median(values)
            print(f"  {label:28s} {med:8.0f} steps/s  {med * args.num_envs:9.0f} env steps/s  x{med / base:.2f}")
        for env in contenders.values():
            env.close()
    print(f"\nload after {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
