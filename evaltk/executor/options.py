"""The ``--executor`` and ``--ray-address`` options, shared by every command that fans work out."""

from __future__ import annotations

import argparse

from evaltk.executor import EXECUTORS


def add_executor_arguments(parser: argparse.ArgumentParser, *, default: str | None = "local") -> None:
    """Add ``--executor {local,ray}`` and ``--ray-address ADDR`` to ``parser``.

    ``default=None`` leaves ``args.executor`` None when the flag is absent (a suite file may then choose).
    """
    parser.add_argument("--executor", choices=EXECUTORS, default=default,
                        help="where the work units run: local (this machine, as always; the default) or ray "
                             "(Ray tasks on a cluster; needs pip install 'evaltk[ray]'; see docs/executor.md)")
    parser.add_argument("--ray-address", default=None, metavar="ADDR",
                        help="Ray cluster head HOST:PORT for --executor ray (default: RAY_ADDRESS, or a local "
                             "cluster already running on this machine, else a new one-node cluster)")
