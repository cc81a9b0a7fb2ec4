"""``evaltk train``: train agents. ``evaltk train doom`` runs APPO (:mod:`trainers.appo`) on a ViZDoom scenario.

Further families (``evaltk train atari``) add their own sub-subcommand in :func:`register`.
"""

from __future__ import annotations

import argparse
import dataclasses

from evaltk.cli.output import emit_json


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``train`` with its ``doom`` subcommand."""
    from trainers.appo.config import add_arguments

    parser = subparsers.add_parser("train", help="train an agent (doom: asynchronous APPO on ViZDoom)",
                                   description=__doc__)
    families = parser.add_subparsers(dest="family", metavar="FAMILY", required=True)
    doom = families.add_parser(
        "doom", help="APPO on a ViZDoom scenario (Sample Factory architecture)",
        description="Train APPO on a ViZDoom scenario. Prints FPS, policy lag and mean episode reward as it goes; "
                    "writes config.json, metrics.jsonl, TensorBoard events and checkpoints under --out.")
    add_arguments(doom)
    doom.add_argument("--json", action="store_true", help="last stdout line: the run summary as JSON")
    doom.set_defaults(func=run_doom)


def run_doom(args: argparse.Namespace) -> int:
    """Run APPO with the parsed options; with ``--json`` the last stdout line is the run summary."""
    from trainers.appo.config import config_from_args
    from trainers.appo.runner import run

    cfg = config_from_args(args)
    print(f"appo: scenario {cfg.scenario}, {cfg.num_workers} workers x {cfg.envs_per_worker} envs"
          f"{' (serial)' if cfg.serial else ''}, batch {cfg.batch_size}, out {cfg.out}", flush=True)
    result = run(cfg, log=lambda line: print(line, flush=True))
    print(f"done: {result.env_frames} frames in {result.seconds:.1f} s ({result.fps:.0f} fps), mean episode reward "
          f"{result.mean_episode_reward:.3f}, checkpoint {result.checkpoint}", flush=True)
    if getattr(args, "json", False):
        emit_json(dataclasses.asdict(result))
    return 0
