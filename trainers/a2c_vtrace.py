"""``python -m trainers.a2c_vtrace --game Breakout --out DIR``: A2C+V-trace on gpu_env (the CuLE recipe).

The same options as ``evaltk train atari`` (both parse them with :mod:`trainers.a2c.cli`). The
implementation is the :mod:`trainers.a2c` package: ``config`` (options), ``cli`` (the command line),
``model`` (Nature CNN actor-critic and its evaltk policy), ``rollout`` (batched collection on the
emulator's device), ``learner`` (the V-trace loss), ``checkpointing`` and ``runner``.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from trainers.a2c import cli
from trainers.a2c.config import A2cConfig, ConfigError, config_from_args
from trainers.a2c.runner import RunResult, run

__all__ = ["A2cConfig", "ConfigError", "RunResult", "config_from_args", "main", "run"]


def main(argv: Sequence[str] | None = None) -> int:
    """Parse the options, run, print the summary; returns the exit status (2 for bad input)."""
    return cli.main(argv, prog="python -m trainers.a2c_vtrace", description=__doc__)


if __name__ == "__main__":
    sys.exit(main())
