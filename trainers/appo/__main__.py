"""``python -m trainers.appo [options]``: train APPO on a Doom scenario (same options as ``evaltk train doom``)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    """Parse the options, run, print the summary; returns the exit status."""
    from evaltk.cli.train import run_doom
    from evaltk.errors import EvaltkError
    from trainers.appo.config import add_arguments

    parser = argparse.ArgumentParser(prog="python -m trainers.appo", description=__doc__)
    add_arguments(parser)
    parser.add_argument("--json", action="store_true", help="last stdout line: the run summary as JSON")
    args = parser.parse_args(argv)
    try:
        return run_doom(args)
    except EvaltkError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
