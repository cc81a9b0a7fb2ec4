"""``evaltk shipped``: the suites and checkpoints that come with evaltk, and where this installation keeps them.

``evaltk shipped`` lists them; ``evaltk shipped NAME`` prints the path of one, for use in another command::

    evaltk validate "$(evaltk shipped a2c_breakout)" --episodes 10 --margin 2 --out runs/quickstart
"""

from __future__ import annotations

import argparse

from evaltk.cli.args import add_command
from evaltk.cli.output import emit_json


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``shipped`` subcommand."""
    parser = add_command(subparsers, "shipped",
                         help="list the shipped suites and checkpoints, or print the path of one", description=__doc__)
    parser.add_argument("name", nargs="?", default=None,
                        help="a suite (e.g. gpu_env_traces) or checkpoint (e.g. a2c_breakout): print its path")
    parser.add_argument("--json", action="store_true", help="print one JSON object as the last line")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Print one item's path, or every item with its kind and path."""
    from evaltk import shipped

    if args.name is not None:
        item = shipped.find(args.name)
        print(item.path)
        if args.json:
            emit_json({"kind": item.kind, "name": item.name, "path": str(item.path)})
        return 0
    listed = shipped.items()
    print(f"shipped with evaltk, in {shipped.suites_dir()}:")
    for item in listed:
        print(f"  {item.kind:10s} {item.name:20s} {item.path}")
    if args.json:
        emit_json({"folder": str(shipped.suites_dir()),
                   "items": [{"kind": i.kind, "name": i.name, "path": str(i.path)} for i in listed]})
    return 0
