"""``evaltk train``: train agents.

``evaltk train doom`` runs APPO (:mod:`trainers.appo`) on a ViZDoom scenario; ``evaltk train atari``
runs A2C+V-trace (:mod:`trainers.a2c_vtrace`, the CuLE recipe) on gpu_env. Each trainer owns its
command line (``trainers.appo.cli``, ``trainers.a2c.cli``): this module adds those options under
``train`` and dispatches to the trainer's ``run_from_args``.
"""

from __future__ import annotations

import argparse


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``train`` with its ``doom`` and ``atari`` subcommands."""
    from trainers.a2c import cli as a2c_cli
    from trainers.appo import cli as appo_cli

    parser = subparsers.add_parser(
        "train", help="train an agent (doom: asynchronous APPO on ViZDoom; atari: A2C+V-trace on gpu_env)",
        description=__doc__)
    families = parser.add_subparsers(dest="family", metavar="FAMILY", required=True)
    doom = families.add_parser(
        "doom", help="APPO on a ViZDoom scenario (Sample Factory architecture)",
        description="Train APPO on a ViZDoom scenario. Prints FPS, policy lag and mean episode reward as it goes; "
                    "writes config.json, metrics.jsonl, TensorBoard events and checkpoints under --out.")
    appo_cli.add_arguments(doom)
    doom.set_defaults(func=appo_cli.run_from_args)
    atari = families.add_parser(
        "atari", help="A2C+V-trace on an Atari game, batched on gpu_env (the CuLE recipe)",
        description="Train A2C with V-trace on ALE/<Game>-v5 emulated by gpu_env (all tensors on the emulator's "
                    "device). Prints frames, FPS and mean episode return as it goes; writes config.json, "
                    "metrics.jsonl, TensorBoard events and evaltk checkpoints under --out.")
    a2c_cli.add_arguments(atari)
    atari.set_defaults(func=a2c_cli.run_from_args)
