"""What a policy trace reaches that random play does not, in the same number of frames.

Random play: ``builtin:random`` (uniform over the minimal action set) through the checkpoint's own pipeline
(its ``policy.json`` env: gymnasium + ale-py, sticky actions 0.25, ``AtariPreprocessing`` with no-op starts,
frame skip 4, stack 4), recorded frame by frame with :func:`conformance.policy_trace.record_play` for
``--seeds`` seeds (0, 1, ...), ``--frames`` frames each, ``reset_game`` after every game over. The policy side
is the shipped trace (``--trace``). For each recording: the score over those frames, bricks cleared (frames with
a reward), the best single game, the highest brick value hit (Breakout: 1 = the two bottom rows, 4 = the
middle rows, 7 = the two top rows), lives lost and game overs. Prints one Markdown table (random: max and
mean over seeds; the policy trace) and the count of random seeds that reach each policy figure.

Usage: OMP_NUM_THREADS=1 python benchmarks/policy_trace_reach.py [--seeds 100] [--frames 4000]
       [--trace suites/traces/breakout_a2c_policy_seed1_4000.npz] [--checkpoint suites/checkpoints/a2c_breakout]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # this checkout first (not an installed copy): a run measures the code beside it
    sys.path.insert(0, str(ROOT))

from conformance.policy_trace import record_play  # noqa: E402
from conformance.trace import Trace, load  # noqa: E402
from evaltk.checkpoint import load as load_checkpoint  # noqa: E402
from evaltk.policies import make_builtin  # noqa: E402

METRICS = ("score", "bricks cleared", "best game", "highest brick value", "lives lost", "game overs")


def reach(trace: Trace) -> dict[str, int]:
    """Return the figures of one recording (see the module docstring)."""
    reward, lives, reset = trace.reward.astype(np.int64), trace.lives.astype(np.int64), trace.reset
    games = np.split(reward, np.flatnonzero(reset) + 1)
    drops = np.diff(lives) < 0
    lost = int(np.sum(drops & ~reset[:-1]))
    return {"score": int(reward.sum()), "bricks cleared": int((reward > 0).sum()),
            "best game": int(max(int(g.sum()) for g in games)), "highest brick value": int(reward.max()),
            "lives lost": lost + int(reset.sum()), "game overs": int(reset.sum())}


def main() -> None:
    """Measure and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=100)
    parser.add_argument("--frames", type=int, default=4000)
    parser.add_argument("--trace", default=str(ROOT / "suites/traces/breakout_a2c_policy_seed1_4000.npz"))
    parser.add_argument("--checkpoint", default=str(ROOT / "suites/checkpoints/a2c_breakout"))
    args = parser.parse_args()
    start = time.perf_counter()
    env = load_checkpoint(args.checkpoint).spec.env_spec
    rows = []
    for seed in range(args.seeds):
        rows.append(reach(record_play(make_builtin("random", env), env, frames=args.frames, seed=seed)))
    policy = reach(load(args.trace))
    print(f"{args.seeds} random seeds x {args.frames} frames ({time.perf_counter() - start:.0f} s); "
          f"policy trace {Path(args.trace).name}\n")
    print("| in the first frames | random: max over seeds | random: mean | policy trace | random seeds reaching it |")
    print("|---|---:|---:|---:|---:|")
    for m in METRICS:
        values = np.array([r[m] for r in rows])
        lower_is_better = m in ("lives lost", "game overs")
        reached = int(np.sum(values <= policy[m])) if lower_is_better else int(np.sum(values >= policy[m]))
        print(f"| {m} | {values.max()} | {values.mean():.2f} | {policy[m]} | {reached} of {args.seeds} |")


if __name__ == "__main__":
    main()
