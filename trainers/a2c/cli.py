"""The command line of A2C+V-trace: its options, a run with progress lines, and ``--json``.

``python -m trainers.a2c_vtrace`` calls :func:`main`; ``evaltk train atari`` adds the same options
with :func:`add_arguments` and dispatches to :func:`run_from_args`. Importing this module is cheap:
torch and the emulator are imported when a run starts.
"""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Sequence

from evaltk.report.jsonline import emit_json
from trainers.a2c import config
from trainers.common.config_cli import command_main


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the A2C options (one per :class:`trainers.a2c.config.A2cConfig` field) and ``--json``."""
    config.add_arguments(parser)
    parser.add_argument("--json", action="store_true", help="last stdout line: the run summary as JSON")


def run_from_args(args: argparse.Namespace) -> int:
    """Run A2C+V-trace with the parsed options; with ``--json`` the last stdout line is the run summary."""
    from trainers.a2c.runner import run

    cfg = config.config_from_args(args)
    print(f"a2c_vtrace: {cfg.env_id} on gpu_env ({cfg.backend}), {cfg.num_envs} envs x {cfg.rollout} steps, "
          f"{cfg.num_minibatches} updates per rollout, out {cfg.out}", flush=True)
    result = run(cfg, log=lambda line: print(line, flush=True))
    print(f"done: {result.frames} frames in {result.seconds:.1f} s ({result.fps:.0f} fps, {result.cpu_seconds:.1f} "
          f"CPU-s), {result.episodes} episodes, mean return (last {cfg.stats_window}) "
          f"{result.mean_episode_return:.2f}, stopped by {result.stopped_by}, checkpoint {result.checkpoint}",
          flush=True)
    if getattr(args, "json", False):
        emit_json(dataclasses.asdict(result))
    return 0


def main(argv: Sequence[str] | None = None, *, prog: str = "python -m trainers.a2c_vtrace",
         description: str | None = None) -> int:
    """Parse the options, run, print the summary; returns the exit status (2 for bad input)."""
    return command_main(argv, prog=prog, description=description, add=add_arguments, run=run_from_args)
