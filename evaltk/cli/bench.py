"""``evaltk bench``: run one of the throughput benchmarks in ``benchmarks/`` by name.

Each benchmark is a standalone script that measures ours and the reference side by side in the same
run and prints a table; this subcommand only finds and runs it, passing the remaining arguments on.
"""

from __future__ import annotations

import argparse
import runpy
import sys
from pathlib import Path

from evaltk.errors import EvaltkError


def benchmarks_dir() -> Path:
    """Return the ``benchmarks/`` folder of the source checkout evaltk runs from."""
    return Path(__file__).resolve().parents[2] / "benchmarks"


def available() -> list[str]:
    """Names of the benchmark scripts present (file stems of ``benchmarks/*.py``)."""
    folder = benchmarks_dir()
    return sorted(p.stem for p in folder.glob("*.py") if not p.stem.startswith("_")) if folder.is_dir() else []


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``bench`` subcommand."""
    parser = subparsers.add_parser(
        "bench",
        help="run a throughput benchmark (ours next to the reference, same run)",
        description="Run benchmarks/NAME.py with the remaining arguments. "
        f"Available: {', '.join(available()) or '(none found)'}.",
    )
    parser.add_argument("name", help="benchmark name, e.g. atari_cpu, eval_throughput, doom_throughput")
    parser.add_argument("args", nargs=argparse.REMAINDER, help="arguments passed to the benchmark script")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run the named benchmark script in this interpreter."""
    names = available()
    if args.name not in names:
        raise EvaltkError(
            f"unknown benchmark {args.name!r}; available: {', '.join(names) or 'none'} "
            f"(benchmarks are read from {benchmarks_dir()}, i.e. from a source checkout of evaltk)"
        )
    script = benchmarks_dir() / f"{args.name}.py"
    saved_argv = sys.argv
    sys.argv = [str(script), *args.args]
    try:
        runpy.run_path(str(script), run_name="__main__")
    except SystemExit as exc:
        return int(exc.code or 0) if not isinstance(exc.code, str) else 1
    finally:
        sys.argv = saved_argv
    return 0
