"""``evaltk import``: convert a Stable-Baselines3, CleanRL or Sample Factory checkpoint into an evaltk checkpoint."""

from __future__ import annotations

import argparse
from pathlib import Path

from evaltk.cli.args import add_command, add_format_option
from evaltk.cli.output import emit_json

EPILOG = """examples:
  evaltk import ppo_breakout.zip --env-id BreakoutNoFrameskip-v4 --out runs/ppo_breakout
  evaltk import runs/Breakout__ppo_atari/ppo_atari.cleanrl_model --out runs/cleanrl_ppo
  evaltk import agent.cleanrl_model --format cleanrl --script ppo_atari_envpool --env-id Breakout-v5 --out runs/x
  evaltk import train_dir/doom_basic_run --out runs/sf_doom_basic              # Sample Factory experiment folder

The file is parsed, never unpickled: anything but tensors and plain data in its pickles is refused.
What the reference env cannot reproduce of the library's preprocessing is printed and recorded in
policy.json (env.not_equivalent). See docs/importers.md.
"""


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``import`` subcommand."""
    p = add_command(
        subparsers, "import",
        help="convert an SB3 .zip, CleanRL .cleanrl_model or Sample Factory run into an evaltk checkpoint",
        description="Read a foreign checkpoint without unpickling it, rebuild its network and preprocessing "
                    "spec, and write evaltk's own checkpoint directory (policy.safetensors + policy.json).",
        epilog=EPILOG)
    p.add_argument("path", metavar="PATH",
                   help="SB3 model .zip, CleanRL .cleanrl_model, Sample Factory experiment folder or checkpoint_*.pth, "
                        "local or hf://ORG/REPO[@REVISION][/PATH] (Hugging Face Hub)")
    p.add_argument("--out", type=Path, required=True, help="evaltk checkpoint directory to write")
    add_format_option(p, dest="fmt", help="source format (default: detected from the file)")
    p.add_argument("--env-id", default=None,
                   help="gymnasium id the policy was trained on (required for SB3; CleanRL default: the "
                        "script's default env; Sample Factory default: config.json's env)")
    p.add_argument("--script", default=None, choices=("ppo_atari", "ppo_atari_envpool", "dqn_atari"),
                   help="CleanRL script that wrote the file (default: ppo_atari for an Agent, dqn_atari for a "
                        "QNetwork)")
    p.add_argument("--actions", choices=("greedy", "sample"), default=None,
                   help="greedy: argmax, as SB3's predict(deterministic=True) (the default, except Sample Factory); "
                        "sample: from the policy's softmax, as CleanRL's and Sample Factory's evaluation scripts "
                        "(Sample Factory's default unless its config sets eval_deterministic; not for DQN)")
    p.add_argument("--json", action="store_true", help="print one JSON object as the last stdout line")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Import the checkpoint, print what was read and what is not equivalent."""
    from evaltk.importers import ForeignCheckpointError, describe_import, import_checkpoint
    from evaltk.locations import locate

    where = locate(args.path)
    if where.fmt == "evaltk":
        raise ForeignCheckpointError(f"{where.label} is already an evaltk checkpoint: pass it to evaltk evaluate or "
                                     "validate as it is")
    out, imported = import_checkpoint(where.path, args.out, fmt=args.fmt or where.fmt,
                                      env_id=args.env_id or where.env_id, script=args.script, actions=args.actions,
                                      origin=where.source)
    src = imported.source
    print(f"imported {where.label} ({src['format']}) -> {out}")
    print(f"  env {imported.env.env_id}: obs {imported.obs_spec['dtype']}{imported.obs_spec['shape']}, "
          f"{imported.action_spec.get('n', imported.action_spec.get('nvec'))} actions, {len(imported.tensors)} tensors")
    for caveat in imported.caveats:
        print(f"  not equivalent: {caveat}")
    if args.json:
        emit_json({"out": str(out), **describe_import(imported)})
    return 0
