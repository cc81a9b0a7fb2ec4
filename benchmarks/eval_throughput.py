"""Evaluation throughput: ``evaltk evaluate --sim gpu_env`` next to ``--sim gym``, alternated in one run.

Both sides run ``evaltk.evaluation.run.evaluate`` (the engine behind ``evaltk evaluate``) with the same policy, the
same episodes, the same base seed and the same ``--num-envs``, so they play the same seeded episodes
(every row is checked equal between the two sides); only the env differs:

* ``--sim gym``: gymnasium ``AtariEnv`` + the checkpoint's wrappers, one per slot, in evaltk's worker
  processes (``min(num_envs, cores)`` of them), each episode a ``reset(seed=...)`` that reloads the ROM;
* ``--sim gpu_env``: ``gpu_env.make_vec`` (cpu backend, its threads) through
  the simulator registry (``evaltk.simulators.get("gpu_env")``: ``GpuEnvEpisodeVector``), each episode reset
  with its seed the same way.

Rows (``--policies``): ``builtin:random`` on ALE/Breakout-v5 (v5 settings: frameskip 4, sticky 0.25, 210x160
RGB), and the shipped A2C checkpoint ``suites/checkpoints/a2c_breakout`` (84x84 gray, frame stack 4; its
network's time is the same on both sides). Each timed run is one ``evaluate()`` call in this process (the
imports are done before the first one; policy loading, env start-up, episodes and the fsynced table are
inside; torch inference on ``--torch-threads`` threads, 1 as ``evaltk evaluate``'s default), ``--rounds``
times per side, in turns (gpu_env, gym, gpu_env, gym, ...). Rates are env steps per
wall second (median) and per CPU second (this process and its children); the load average and the cores
are printed with the table.

Run: ``python benchmarks/eval_throughput.py [--quick] [--episodes 32] [--num-envs 8] [--rounds 3] [--json]``
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # this checkout first (not an installed copy): a run measures the code beside it
    sys.path.insert(0, str(ROOT))
POLICIES = {
    "random": ("builtin:random", "ALE/Breakout-v5"),
    "a2c_breakout": (str(ROOT / "suites" / "checkpoints" / "a2c_breakout"), None),
}
SIMULATORS = ("gpu_env", "gym")


@dataclass(frozen=True)
class Run:
    """One timed ``evaluate()`` call: env steps, wall seconds, CPU seconds (self + children), the rows."""

    steps: int
    wall: float
    cpu: float
    rows: tuple[tuple[int, int, float, int], ...]


def _cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def run_evaluate(checkpoint: str, env_id: str | None, simulator: str, episodes: int, num_envs: int, seed: int,
                 torch_threads: int = 1) -> Run:
    """One ``evaltk evaluate`` (engine call, ``--torch-threads torch_threads``) into a fresh output directory, timed."""
    from evaltk.evaluation.run import EvalConfig, evaluate

    with tempfile.TemporaryDirectory() as tmp:
        config = EvalConfig(checkpoint, Path(tmp) / "out", episodes=episodes, seed=seed, num_envs=num_envs,
                            env_id=env_id, simulator=simulator, torch_threads=torch_threads)
        w0, c0 = time.perf_counter(), _cpu()
        result = evaluate(config)
        wall, cpu = time.perf_counter() - w0, _cpu() - c0
    rows = tuple((r.index, r.seed, r.episode_return, r.steps) for r in result.rows)
    return Run(result.env_steps, wall, cpu, rows)


def _warm_imports() -> None:
    """Import what both sides use, so that neither timed run pays for the first import.

    Torch's thread count is ``evaluate()``'s own (``EvalConfig.torch_threads``, set from ``--torch-threads``).
    """
    import ale_py  # noqa: F401
    import gymnasium  # noqa: F401
    import scipy.stats  # noqa: F401
    import torch  # noqa: F401

    import evaltk.evaluation.run  # noqa: F401
    import gpu_env.vector  # noqa: F401


def _load() -> list[float] | None:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None


def measure(policy: str, args: argparse.Namespace) -> dict[str, Any]:
    """Alternate the two simulators ``args.rounds`` times on one policy; medians, ratios, row equality."""
    checkpoint, env_id = POLICIES[policy]
    runs: dict[str, list[Run]] = {b: [] for b in SIMULATORS}
    for _ in range(args.rounds):
        for simulator in SIMULATORS:
            run = run_evaluate(checkpoint, env_id, simulator, args.episodes, args.num_envs, args.seed,
                               args.torch_threads)
            runs[simulator].append(run)
            print(f"  [{policy}] --sim {simulator}: {run.steps / run.wall:,.0f} steps/s", flush=True)
    out: dict[str, Any] = {"policy": policy, "checkpoint": checkpoint,
                           "env_id": env_id or "the checkpoint's", "episodes": args.episodes,
                           "num_envs": args.num_envs, "seed": args.seed}
    for simulator, rs in runs.items():
        out[simulator] = {"steps": rs[0].steps, "steps_per_s": statistics.median(r.steps / r.wall for r in rs),
                        "steps_per_cpu_s": statistics.median(r.steps / max(r.cpu, 1e-9) for r in rs),
                        "cpu_per_wall": statistics.median(r.cpu / r.wall for r in rs)}
    out["ratio"] = out["gpu_env"]["steps_per_s"] / out["gym"]["steps_per_s"]
    out["ratio_cpu"] = out["gpu_env"]["steps_per_cpu_s"] / out["gym"]["steps_per_cpu_s"]
    out["rows_identical"] = all(r.rows == runs["gym"][0].rows for rs in runs.values() for r in rs)
    return out


def markdown(results: list[dict[str, Any]], meta: dict[str, Any]) -> str:
    """Format the run as a Markdown table with the machine's cores and load."""
    lines = [f"Machine: {meta['cores']} cores; load average (1/5/15 min) before {meta['load_before']}, after "
             f"{meta['load_after']}; {meta['rounds']} alternated rounds per side, medians; torch threads "
             f"{meta['torch_threads']} (both sides); {meta['started']}", "",
             "| policy (env) | episodes x envs | --sim gpu_env steps/s | --sim gym steps/s | ratio | "
             "gpu_env steps/CPU-s | gym steps/CPU-s | ratio (CPU) | rows identical |",
             "|---|---|---:|---:|---:|---:|---:|---:|---|"]
    for r in results:
        g, y = r["gpu_env"], r["gym"]
        lines.append(f"| {r['policy']} ({r['env_id']}) | {r['episodes']} x {r['num_envs']} | {g['steps_per_s']:,.0f} | "
                     f"{y['steps_per_s']:,.0f} | **{r['ratio']:.2f}** | {g['steps_per_cpu_s']:,.0f} | "
                     f"{y['steps_per_cpu_s']:,.0f} | {r['ratio_cpu']:.2f} | {'yes' if r['rows_identical'] else 'NO'} |")
    lines += ["", "- each run: one evaluate() call (policy load, env start-up, episodes, fsynced rows); imports done "
              "before the first run", "- gym steps its slots in worker processes (CPU includes them); gpu_env in this "
              "process on its threads", ""]
    return "\n".join(lines)


QUICK = {"episodes": 8, "rounds": 2}
FULL = {"episodes": 32, "rounds": 3}


def main(argv: list[str] | None = None) -> int:
    """Measure, print the Markdown table (and one JSON line with ``--json``)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--policies", nargs="+", choices=sorted(POLICIES), default=["random", "a2c_breakout"])
    parser.add_argument("--episodes", type=int, help="episodes per run (same on both sides)")
    parser.add_argument("--num-envs", type=int, default=8, help="evaltk evaluate --num-envs (both sides)")
    parser.add_argument("--rounds", "--repeats", dest="rounds", type=int, help="timed runs per side, alternated")
    parser.add_argument("--seed", type=int, default=0, help="evaltk evaluate --seed (both sides)")
    parser.add_argument("--torch-threads", type=int, default=1,
                        help="torch threads for the checkpoint's inference (evaltk evaluate's default: 1)")
    parser.add_argument("--quick", action="store_true", help=f"short run: {QUICK}")
    parser.add_argument("--json", action="store_true", help="print one JSON object of the run as the last line")
    args = parser.parse_args(argv)
    for key, value in (QUICK if args.quick else FULL).items():
        if getattr(args, key) is None:
            setattr(args, key, value)
    if min(args.episodes, args.num_envs, args.rounds, args.torch_threads) < 1:
        parser.error(f"--episodes, --num-envs, --rounds and --torch-threads must be >= 1, got {args.episodes}, "
                     f"{args.num_envs}, {args.rounds}, {args.torch_threads}")
    _warm_imports()
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    meta: dict[str, Any] = {"started": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "cores": cores,
                            "load_before": _load(), "rounds": args.rounds, "torch_threads": args.torch_threads}
    results = [measure(p, args) for p in args.policies]
    meta["load_after"] = _load()
    print(markdown(results, meta))
    if args.json:
        print(json.dumps({**meta, "results": results}))
    return 0 if all(r["rows_identical"] for r in results) else 1


if __name__ == "__main__":
    raise SystemExit(main())
