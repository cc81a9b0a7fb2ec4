"""``python -m trainers.a2c_vtrace --game Breakout --out DIR``: A2C+V-trace on gpu_env (the CuLE recipe).

The same options as ``evaltk train atari``. The implementation is the :mod:`trainers.a2c` package:
``config`` (options), ``model`` (Nature CNN actor-critic and its evaltk policy), ``rollout`` (batched
collection on the emulator's device), ``learner`` (the V-trace loss), ``checkpointing`` and ``runner``.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from trainers.a2c.config import A2cConfig, ConfigError, config_from_args
from trainers.a2c.runner import RunResult, run

__all__ = ["A2cConfig", "ConfigError", "RunResult", "config_from_args", "main", "run"]


def main(argv: Sequence[str] | None = None) -> int:
    """Parse the options, run, print the summary; returns the exit status (2 for bad input)."""
    from evaltk.cli.train import add_atari_arguments, run_atari
    from evaltk.errors import EvaltkError

    parser = argparse.ArgumentParser(prog="python -m trainers.a2c_vtrace", description=__doc__)
    add_atari_arguments(parser)
    args = parser.parse_args(argv)
    try:
        return run_atari(args)
    except EvaltkError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
