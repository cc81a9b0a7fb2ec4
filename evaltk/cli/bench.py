"""``evaltk bench``: run one of the throughput benchmarks in ``benchmarks/`` by name.

Each benchmark is a standalone script that measures ours and the reference side by side in the same
run and prints a table; this subcommand only finds and runs it, passing the remaining arguments on.
The scripts belong to a source checkout (they write under its ``runs/`` and ``build/`` and some run git), so
a wheel does not carry them: ``bench`` uses the checkout evaltk runs from, else the one in the current
directory, and otherwise says how to get one.
"""

from __future__ import annotations

import argparse
import runpy
import sys
from pathlib import Path

from evaltk.errors import EvaltkError
from evaltk.registry import did_you_mean

SOURCE_URL = "https://github.com/evaltk/evaltk"
"""Where the source checkout comes from (pyproject.toml's ``project.urls``)."""


def checkout_roots() -> tuple[Path, Path]:
    """Where ``bench`` looks for a source checkout: the folder above this evaltk package, then the current one."""
    return Path(__file__).resolve().parents[2], Path.cwd()


def benchmarks_dir() -> Path | None:
    """Return ``benchmarks/`` of the first of :func:`checkout_roots` that is an evaltk checkout, or None."""
    for root in checkout_roots():
        folder = root / "benchmarks"
        if (root / "pyproject.toml").is_file() and (root / "evaltk" / "cli").is_dir() and folder.is_dir():
            return folder
    return None


def available() -> list[str]:
    """Names of the benchmark scripts present (file stems of ``benchmarks/*.py``); empty outside a checkout."""
    folder = benchmarks_dir()
    return sorted(p.stem for p in folder.glob("*.py") if not p.stem.startswith("_")) if folder else []


def needs_checkout_message() -> str:
    """Return what ``bench`` says outside a source checkout: where it looked and how to get one."""
    here, cwd = checkout_roots()
    return (f"evaltk bench runs the scripts in benchmarks/ of a source checkout, and neither {here} (where this "
            f"evaltk is installed) nor the current directory {cwd} is one: `git clone {SOURCE_URL} && cd evaltk`, "
            "then run `evaltk bench NAME` there")


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``bench`` subcommand."""
    parser = subparsers.add_parser(
        "bench",
        help="run a throughput benchmark (ours next to the reference, same run)",
        description="Run benchmarks/NAME.py of a source checkout with the remaining arguments. "
        f"Available: {', '.join(available()) or '(none: not in a source checkout)'}.",
    )
    parser.add_argument("name", help="benchmark name, e.g. atari_cpu, eval_throughput, doom_throughput")
    parser.add_argument("args", nargs=argparse.REMAINDER, help="arguments passed to the benchmark script")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run the named benchmark script in this interpreter."""
    folder = benchmarks_dir()
    if folder is None:
        raise EvaltkError(needs_checkout_message())
    names = available()
    if args.name not in names:
        raise EvaltkError(f"unknown benchmark {args.name!r}: {did_you_mean(args.name, names)}available in {folder}: "
                          f"{', '.join(names) or 'none'}")
    script = folder / f"{args.name}.py"
    saved_argv = sys.argv
    sys.argv = [str(script), *args.args]
    try:
        runpy.run_path(str(script), run_name="__main__")
    except SystemExit as exc:
        return int(exc.code or 0) if not isinstance(exc.code, str) else 1
    finally:
        sys.argv = saved_argv
    return 0
