"""Evaluation throughput: ``evaltk evaluate``'s engine next to ``ale_py.AtariVectorEnv``, same settings, same run.

All rows run the uniformly random policy on full episodes of ALE/Breakout-v5 with gymnasium's v5 settings
(frameskip 4, sticky actions 0.25, 210x160 RGB observations, 108,000-frame limit, no preprocessing):

* ``evaltk evaluate``   - ``evaltk.evaluate.evaluate`` (the engine behind the CLI): every episode reset with its
                          own recorded seed, rows written and fsynced as episodes finish.
* ``evaltk evaluate --fast-reset`` - the same with the opt-in ``FastSeededReset``: a seeded reset restores a cached
                          post-load state with the RNG rebuilt for the seed (checked byte-identical) instead of
                          reloading the ROM; rows are identical to the row above.
* ``AtariVectorEnv, seeded`` - ale-py's C++ vector env with the same evaluation semantics: every new episode
                          reset with its own seed (``reset(seed=..., options={"reset_mask": ...})``; SAME_STEP
                          autoreset, so the reference also pays one unseeded reset per episode, ~5 % of a seeded one).
* ``AtariVectorEnv, autoreset`` - the C++ vector env as it runs by default: episodes chained by unseeded autoresets
                          (not individually reproducible; shown as the ceiling).

A seeded reset reloads the ROM (~0.1 CPU-s in ale-py), which dominates short random-policy episodes; both
"seeded" rows pay it. Rates are env steps per second (x4 for frames). The machine may be shared: CPU seconds
(this process + its children) and steps per CPU-second are printed next to the wall rates.

Run: ``python benchmarks/eval_throughput.py [--episodes 40] [--num-envs 8] [--repeats 2]``
"""

from __future__ import annotations

import argparse
import resource
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

GAME, ENV_ID = "breakout", "ALE/Breakout-v5"


def _cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def run_evaltk(episodes: int, num_envs: int, seed: int, *, fast_reset: bool = False) -> int:
    """Run ``episodes`` random-policy episodes through evaltk's engine; returns env steps."""
    from evaltk.evaluate import EvalConfig, evaluate

    with tempfile.TemporaryDirectory() as tmp:
        res = evaluate(EvalConfig("builtin:random", Path(tmp), episodes=episodes, seed=seed, num_envs=num_envs,
                                  env_id=ENV_ID, fast_reset=fast_reset))
    return res.env_steps


def _vector_env(num_envs: int, mode: str) -> object:
    import ale_py

    return ale_py.AtariVectorEnv(
        GAME, num_envs, img_height=210, img_width=160, grayscale=False, stack_num=1, frameskip=4, maxpool=False,
        noop_max=0, use_fire_reset=False, reward_clipping=False, episodic_life=False, repeat_action_probability=0.25,
        max_num_frames_per_episode=108_000, full_action_space=False, autoreset_mode=mode)


def run_vector(episodes: int, num_envs: int, seed: int, *, seeded: bool) -> int:
    """Run ``episodes`` random episodes in AtariVectorEnv; ``seeded`` resets each new episode with its own seed."""
    env = _vector_env(num_envs, "SameStep" if seeded else "NextStep")
    rng = np.random.default_rng(seed)
    env.reset(seed=np.arange(num_envs) + seed)  # type: ignore[attr-defined]
    started, finished, steps = num_envs, 0, 0
    active = np.ones(num_envs, bool)
    resetting = np.zeros(num_envs, bool)  # NextStep: the step after an episode end only resets; not counted
    while finished < episodes:
        _, _, term, trunc, _ = env.step(rng.integers(0, 4, num_envs))  # type: ignore[attr-defined]
        steps += int((active & ~resetting).sum())
        done = (term | trunc) & active & ~resetting
        resetting = done.copy() if not seeded else resetting
        finished += int(done.sum())
        if done.any():
            for i in np.flatnonzero(done):
                if started >= episodes:
                    active[i] = False
                started += 1
            if seeded:
                env.reset(seed=np.arange(int(done.sum())) + seed + started,  # type: ignore[attr-defined]
                          options={"reset_mask": done})
    env.close()  # type: ignore[attr-defined]
    return steps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--episodes", type=int, default=40, help="episodes per run")
    parser.add_argument("--num-envs", type=int, default=8, help="envs stepped as one batch")
    parser.add_argument("--repeats", type=int, default=2, help="runs per implementation (interleaved)")
    args = parser.parse_args()
    impls: dict[str, Callable[[int, int, int], int]] = {
        "evaltk evaluate": run_evaltk,
        "evaltk evaluate --fast-reset": lambda e, k, s: run_evaltk(e, k, s, fast_reset=True),
        "AtariVectorEnv, seeded": lambda e, k, s: run_vector(e, k, s, seeded=True),
        "AtariVectorEnv, autoreset": lambda e, k, s: run_vector(e, k, s, seeded=False),
    }
    results: dict[str, list[tuple[float, float, int]]] = {name: [] for name in impls}
    for rep in range(args.repeats):
        for name, fn in impls.items():
            w0, c0 = time.perf_counter(), _cpu()
            steps = fn(args.episodes, args.num_envs, 1000 * rep)
            results[name].append((time.perf_counter() - w0, _cpu() - c0, steps))
    print(f"{ENV_ID}, random policy, v5 settings, {args.episodes} episodes x {args.repeats} runs, "
          f"num_envs={args.num_envs}")
    print(f"{'implementation':<31}{'steps/s (median)':>18}{'best run':>10}{'CPU used':>10}{'steps/CPU-s':>13}")
    wall: dict[str, float] = {}
    per_cpu: dict[str, float] = {}
    for name, runs in results.items():
        rates = [s / w for w, _, s in runs]
        cpu = sum(c for _, c, _ in runs) / sum(w for w, _, _ in runs)
        per_cpu[name] = sum(s for _, _, s in runs) / sum(c for _, c, _ in runs)
        wall[name] = float(np.median(rates))
        print(f"{name:<31}{wall[name]:>18,.0f}{max(rates):>10,.0f}{cpu:>10.2f}{per_cpu[name]:>13,.0f}")
    print("ratios (ours / reference): wall median, per CPU-second")
    for ours, ref in (("evaltk evaluate", "AtariVectorEnv, seeded"),
                      ("evaltk evaluate --fast-reset", "AtariVectorEnv, seeded"),
                      ("evaltk evaluate --fast-reset", "AtariVectorEnv, autoreset"),
                      ("evaltk evaluate", "AtariVectorEnv, autoreset")):
        print(f"  {ours} / {ref}: {wall[ours] / wall[ref]:.2f}x wall, {per_cpu[ours] / per_cpu[ref]:.2f}x per CPU-s")


if __name__ == "__main__":
    main()
