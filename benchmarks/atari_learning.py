"""A2C+V-trace learning curve on gpu_env, from a committed version, in one command.

    python benchmarks/atari_learning.py --game Breakout --max-frames 1500000 --max-seconds 0 \
        --out runs/atari_learning [--ship suites/checkpoints/a2c_breakout]

Trains ``python -m trainers.a2c_vtrace`` (default configuration, ``--seed``) for ``--max-frames``
frames and/or ``--max-seconds`` of training wall time (a frame budget does not depend on the
machine's speed), then writes ``OUT/curve.png`` (mean return of the last 100 training episodes
against frames) and ``OUT/curve.md`` (the same as a table, with the commit, the machine's load and
the command).
With ``--ship DIR`` the run's final checkpoint is copied to ``DIR`` (evaltk's own format: ``policy.json``
+ ``policy.safetensors``), which is how the checkpoint that ``make run`` validates was made.

The commit is ``git rev-parse HEAD``; the table says "uncommitted changes" when the work tree was dirty,
so a curve is only reproducible from a commit when it says it was clean.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # this checkout first (not an installed copy): a run measures the code beside it
    sys.path.insert(0, str(ROOT))


def _git(*args: str) -> str:
    result = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=False)
    return result.stdout.strip()


def _records(run_dir: Path) -> list[dict[str, Any]]:
    lines = (run_dir / "metrics.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def _table(records: list[dict[str, Any]], rows: int = 12) -> list[str]:
    """Markdown rows of about ``rows`` evenly spaced records (always the last one)."""
    picked = records[:: max(1, len(records) // rows)]
    if records and picked[-1] is not records[-1]:
        picked.append(records[-1])
    out = ["| frames | training seconds | episodes | mean return (last 100) | frames/s |",
           "| ---: | ---: | ---: | ---: | ---: |"]
    for r in picked:
        ret = r["charts/episodic_return"]
        out.append(f"| {r['frames']:,} | {r['seconds']:.0f} | {r['episodes']:,} | "
                   f"{'n/a' if math.isnan(ret) else f'{ret:.2f}'} | {r['perf/fps']:,.0f} |")
    return out


def _plot(records: list[dict[str, Any]], path: Path, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    xs = [r["frames"] for r in records if not math.isnan(r["charts/episodic_return"])]
    ys = [r["charts/episodic_return"] for r in records if not math.isnan(r["charts/episodic_return"])]
    fig, ax = plt.subplots(figsize=(7, 4), dpi=100)
    ax.plot(xs, ys, color="#1f77b4")
    ax.set_xlabel("frames (agent steps x frame skip, all envs)")
    ax.set_ylabel("mean return, last 100 training episodes")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    """Train, then write the curve (PNG + Markdown) and optionally ship the final checkpoint."""
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--game", default="Breakout")
    p.add_argument("--max-seconds", type=float, default=1200.0, help="training wall time (default 1200; 0 = none)")
    p.add_argument("--max-frames", type=int, default=0, help="stop after this many frames (default 0 = none)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", type=Path, default=Path("runs/atari_learning"))
    p.add_argument("--ship", type=Path, default=None, help="copy the final checkpoint to this directory")
    args = p.parse_args(argv)
    if args.max_seconds < 0 or args.max_frames < 0 or not (args.max_seconds or args.max_frames):
        p.error("give --max-seconds > 0 or --max-frames > 0")
    run_dir = args.out / "run"
    if run_dir.exists():
        p.error(f"{run_dir} exists: choose another --out (a curve is measured from a fresh run)")
    args.out.mkdir(parents=True, exist_ok=True)
    commit = _git("rev-parse", "HEAD") or "unknown"
    dirty = bool(_git("status", "--porcelain", "--untracked-files=no"))
    command = [sys.executable, "-m", "trainers.a2c_vtrace", "--game", args.game, "--out", str(run_dir),
               "--seed", str(args.seed), "--max-seconds", str(args.max_seconds), "--max-frames", str(args.max_frames)]
    load_before = os.getloadavg()
    t0 = time.monotonic()
    subprocess.run(command, cwd=ROOT, check=True)
    wall = time.monotonic() - t0
    load_after = os.getloadavg()
    records = _records(run_dir)
    if not records:
        print(f"error: {run_dir}/metrics.jsonl has no records", file=sys.stderr)
        return 1
    _plot(records, args.out / "curve.png", f"A2C+V-trace on gpu_env, {args.game}, seed {args.seed}")
    last = records[-1]
    lines = [
        f"A2C+V-trace (`python -m trainers.a2c_vtrace --game {args.game} --seed {args.seed} "
        f"--max-seconds {args.max_seconds:g} --max-frames {args.max_frames}`), default configuration, "
        f"commit `{commit[:12]}`"
        f"{' with uncommitted changes' if dirty else ''}; {os.cpu_count()} CPUs, load average "
        f"{load_before[0]:.2f} before and {load_after[0]:.2f} after; {wall:.0f} s wall in all.",
        "",
        *_table(records),
        "",
        f"Final: {last['frames']:,} frames, mean return of the last 100 training episodes "
        f"{last['charts/episodic_return']:.2f}.",
    ]
    (args.out / "curve.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))
    if args.ship is not None:
        from trainers.common.state_io import latest_policy_path

        policy = latest_policy_path(run_dir)
        if policy is None:
            print(f"error: {run_dir} has no checkpoint to ship", file=sys.stderr)
            return 1
        if args.ship.exists():
            shutil.rmtree(args.ship)
        shutil.copytree(policy, args.ship)
        print(f"shipped {policy} -> {args.ship}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
