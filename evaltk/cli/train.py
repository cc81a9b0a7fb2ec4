"""``evaltk train``: train agents.

``evaltk train doom`` runs APPO (:mod:`trainers.appo`) on a ViZDoom scenario; ``evaltk train atari``
runs A2C+V-trace (:mod:`trainers.a2c_vtrace`, the CuLE recipe) on gpu_env.
"""

from __future__ import annotations

import argparse
import dataclasses

from evaltk.cli.output import emit_json


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``train`` with its ``doom`` and ``atari`` subcommands."""
    from trainers.appo.config import add_arguments

    parser = subparsers.add_parser(
        "train", help="train an agent (doom: asynchronous APPO on ViZDoom; atari: A2C+V-trace on gpu_env)",
        description=__doc__)
    families = parser.add_subparsers(dest="family", metavar="FAMILY", required=True)
    doom = families.add_parser(
        "doom", help="APPO on a ViZDoom scenario (Sample Factory architecture)",
        description="Train APPO on a ViZDoom scenario. Prints FPS, policy lag and mean episode reward as it goes; "
                    "writes config.json, metrics.jsonl, TensorBoard events and checkpoints under --out.")
    add_arguments(doom)
    doom.add_argument("--json", action="store_true", help="last stdout line: the run summary as JSON")
    doom.set_defaults(func=run_doom)
    atari = families.add_parser(
        "atari", help="A2C+V-trace on an Atari game, batched on gpu_env (the CuLE recipe)",
        description="Train A2C with V-trace on ALE/<Game>-v5 emulated by gpu_env (all tensors on the emulator's "
                    "device). Prints frames, FPS and mean episode return as it goes; writes config.json, "
                    "metrics.jsonl, TensorBoard events and evaltk checkpoints under --out.")
    add_atari_arguments(atari)
    atari.set_defaults(func=run_atari)


def add_atari_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the A2C options (one per :class:`trainers.a2c.config.A2cConfig` field) and ``--json``."""
    from trainers.a2c.config import add_arguments

    add_arguments(parser)
    parser.add_argument("--json", action="store_true", help="last stdout line: the run summary as JSON")


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


def run_atari(args: argparse.Namespace) -> int:
    """Run A2C+V-trace with the parsed options; with ``--json`` the last stdout line is the run summary."""
    from trainers.a2c.config import config_from_args
    from trainers.a2c.runner import run

    cfg = config_from_args(args)
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
