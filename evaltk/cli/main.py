"""Entry point of the ``evaltk`` command.

Each subcommand lives in its own module ``evaltk.cli.<name>`` exposing
``register(subparsers) -> None``, which adds its parser and sets ``func`` (a callable taking the
parsed ``argparse.Namespace`` and returning an exit status). A subcommand whose module is not part
of this installation is simply not offered.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from evaltk import __version__
from evaltk.errors import EvaltkError

SUBCOMMANDS = ("evaluate", "compare", "tournament", "conformance", "bench", "train")


def build_parser() -> argparse.ArgumentParser:
    """Return the top-level parser with every available subcommand registered."""
    parser = argparse.ArgumentParser(
        prog="evaltk",
        description="Policy-transfer validation and evaluation for RL "
        "(gpu_env Atari emulator, Gym/ViZDoom evaluation, statistics, tournaments).",
    )
    parser.add_argument("--version", action="version", version=f"evaltk {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in SUBCOMMANDS:
        module_name = f"evaltk.cli.{name}"
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name == module_name:
                continue
            raise
        module.register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``evaltk`` command; returns the process exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    func = getattr(args, "func", None)
    if func is None:
        parser.print_help()
        return 2
    try:
        status = func(args)
    except EvaltkError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted: results written so far are kept on disk; re-run the same command to resume.",
              file=sys.stderr)
        return 130
    return int(status or 0)


if __name__ == "__main__":
    sys.exit(main())
