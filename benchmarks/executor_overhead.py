"""Executor throughput: the same work on ``--executor local`` and on a Ray cluster, side by side.

Two kinds of work, each run on both executors in turns (local, ray, local, ray, ...):

* ``empty``: ``--units`` work units that do nothing (``os.getpid``) through :func:`evaltk.executor.stream`,
  on the local process pool (``--workers`` processes) and as Ray tasks: units/s, and wall time per unit,
  which is the executor's own overhead;
* ``evaluate``: ``evaltk.evaluation.run.evaluate`` of ``builtin:random`` on ALE/Breakout-v5 for ``--episodes``
  episodes (``--fast-reset``, ``--num-envs`` 2): locally in this process with ``--workers`` env workers, on
  Ray as units of ``num_envs`` episodes; both tables are checked equal. Episodes/s and wall per episode.

The Ray cluster is the one at ``--ray-address`` (or ``RAY_ADDRESS``); start one with
``ray start --head --num-cpus 2 --object-store-memory 100000000 --include-dashboard false``. The load
average and the cluster's CPUs are printed with the table.

Run: ``python benchmarks/executor_overhead.py --ray-address 127.0.0.1:6379 [--units 200] [--episodes 16] [--json]``
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # this checkout first (not an installed copy): a run measures the code beside it
    sys.path.insert(0, str(ROOT))

from evaltk.evaluation.run import EvalConfig, evaluate  # noqa: E402
from evaltk.executor import WorkUnit, stream  # noqa: E402
from evaltk.executor.local import LocalExecutor  # noqa: E402
from evaltk.executor.ray_executor import RayExecutor  # noqa: E402


def _empty(executor: Any, units: int) -> float:
    start = time.perf_counter()
    done = list(stream(executor, [WorkUnit(f"u{i}", os.getpid) for i in range(units)]))
    assert len(done) == units
    return time.perf_counter() - start


def _evaluate(name: str, address: str | None, episodes: int, workers: int) -> tuple[float, list[Any]]:
    out = Path(tempfile.mkdtemp(prefix=f"exec-{name}-"))
    try:
        start = time.perf_counter()
        result = evaluate(EvalConfig("builtin:random", out, episodes=episodes, seed=5, num_envs=2,
                                     env_id="ALE/Breakout-v5", workers=workers, fast_reset=True, executor=name,
                                     ray_address=address))
        return time.perf_counter() - start, [(r.index, r.seed, r.episode_return, r.frames) for r in result.rows]
    finally:
        shutil.rmtree(out, ignore_errors=True)


def main() -> None:
    """Measure and print the table."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ray-address", default=os.environ.get("RAY_ADDRESS"))
    parser.add_argument("--units", type=int, default=200)
    parser.add_argument("--episodes", type=int, default=16)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    load_before = os.getloadavg()
    times: dict[str, list[float]] = {k: [] for k in ("empty/local", "empty/ray", "evaluate/local", "evaluate/ray")}
    with RayExecutor(address=args.ray_address) as ray_ex:
        cpus = ray_ex.slots()
        _empty(ray_ex, 4)  # start the workers once: this measures dispatch, not worker start-up
        for _ in range(args.rounds):
            with LocalExecutor(mode="processes", workers=args.workers) as local:
                times["empty/local"].append(_empty(local, args.units))
            times["empty/ray"].append(_empty(ray_ex, args.units))
        for _ in range(args.rounds):
            t_local, rows_local = _evaluate("local", None, args.episodes, args.workers)
            t_ray, rows_ray = _evaluate("ray", None, args.episodes, args.workers)
            assert rows_local == rows_ray, "the Ray table differs from the local one"
            times["evaluate/local"].append(t_local)
            times["evaluate/ray"].append(t_ray)
    load_after = os.getloadavg()
    rows = []
    for key, values in times.items():
        work, side = key.split("/")
        n = args.units if work == "empty" else args.episodes
        wall = statistics.median(values)
        rows.append({"work": work, "executor": side, "units": n, "wall_s": round(wall, 3),
                     "units_per_s": round(n / wall, 2), "ms_per_unit": round(1000 * wall / n, 2)})
    print(f"cores {os.cpu_count()}, Ray cluster CPUs {cpus}, local workers {args.workers}, median of {args.rounds}; "
          f"load average {load_before[0]:.1f} before, {load_after[0]:.1f} after")
    print("| work | executor | units | wall s | units/s | ms per unit |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['work']} | {r['executor']} | {r['units']} | {r['wall_s']} | {r['units_per_s']} | "
              f"{r['ms_per_unit']} |")
    if args.json:
        print(json.dumps({"load": [load_before[0], load_after[0]], "ray_cpus": cpus, "rows": rows}))


if __name__ == "__main__":
    main()
