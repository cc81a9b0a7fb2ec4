"""Entry point of the ``evaltk`` command.

Each subcommand lives in its own module ``evaltk.cli.<name>`` exposing
``register(subparsers) -> None``, which adds its parser and sets ``func`` (a callable taking the
parsed ``argparse.Namespace`` and returning an exit status). A subcommand whose module is not part
of this installation is simply not offered.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import traceback
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

from evaltk import __version__, installed_versions
from evaltk.cli.args import command_entry_points
from evaltk.errors import CheckpointWarning, EvaltkError
from evaltk.registry import did_you_mean

DEBUG_ENV = "EVALTK_DEBUG"
"""Set to 1 (or pass ``--debug``) to get the full traceback of an unexpected error."""
BUG_URL = "https://github.com/evaltk/evaltk/issues"
_PACKAGES = ("evaltk", "trainers", "conformance", "gpu_env")

SUBCOMMANDS = ("evaluate", "validate", "import_cmd", "compare", "tournament", "conformance", "bench", "train",
               "shipped")
"""The commands in the order ``evaltk --help`` lists them: evaltk's own modules (``evaltk.cli.NAME``) and the
commands other packages of the distribution register (:data:`COMMAND_GROUP`); a registered name not listed here
comes after them."""
COMMAND_GROUP = "evaltk_commands"
"""Entry points ``NAME = "module:register"`` through which a package adds a command (``conformance``, ``train``):
evaltk's own code imports neither conformance nor trainers."""
# What `evaltk --version` reports besides evaltk: (name shown, the distributions that provide it, first found wins).
VERSION_REPORT = (("ale-py", ("ale-py",)), ("ViZDoom", ("vizdoom",)), ("torch", ("torch",)),
                  ("CuPy", ("cupy-cuda12x", "cupy-cuda13x", "cupy-cuda11x", "cupy")))


def version_text() -> str:
    """Return the ``--version`` report: evaltk's version and folder, then a line per :data:`VERSION_REPORT` entry."""
    lines = [f"evaltk {__version__} ({Path(__file__).resolve().parents[1]})"]
    installed = installed_versions(d for _, distributions in VERSION_REPORT for d in distributions)
    for shown, distributions in VERSION_REPORT:
        found = "not installed"
        for distribution in distributions:
            version = installed[distribution]
            if version is None:
                continue
            found = version if distribution == shown.lower() else f"{version} ({distribution})"
            break
        lines.append(f"{shown} {found}")
    return "\n".join(lines)


class VersionAction(argparse.Action):
    """``--version``: print :func:`version_text` as it is (argparse's own action rewraps lines) and exit 0."""

    def __init__(self, option_strings: Sequence[str], dest: str = argparse.SUPPRESS, help: str | None = None) -> None:
        super().__init__(option_strings, dest=dest, default=argparse.SUPPRESS, nargs=0, help=help)

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        """Print the report on stdout and exit."""
        print(version_text())
        parser.exit(0)


class OneLineErrorParser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose usage errors are one ``error:`` line (exit status 2), like every other failure.

    A value outside an option's choices (or an unknown subcommand) gets the close choices, as every bad name of
    evaltk does (:func:`evaltk.registry.did_you_mean`). Subcommand parsers inherit the class (``add_subparsers``
    defaults to the parent's type).
    """

    def _check_value(self, action: argparse.Action, value: Any) -> None:
        """Refuse a value outside ``action.choices``, naming the close choices and then every choice."""
        if action.choices is not None and value not in action.choices:
            choices = [str(c) for c in action.choices]
            raise argparse.ArgumentError(action, f"invalid choice: {value!r}: {did_you_mean(str(value), choices)}use "
                                                 f"one of {', '.join(choices)}")

    def error(self, message: str) -> NoReturn:
        """Print ``error: <prog>: <message>`` and a pointer to ``--help`` on one line; exit with status 2."""
        self.exit(2, f"error: {self.prog}: {message} (see '{self.prog} --help')\n")


def build_parser() -> argparse.ArgumentParser:
    """Return the top-level parser with every available subcommand registered."""
    parser = OneLineErrorParser(
        prog="evaltk",
        description="Policy-transfer validation and evaluation for RL "
        "(gpu_env Atari emulator, Gym/ViZDoom evaluation, statistics, tournaments).",
    )
    parser.add_argument("--version", action=VersionAction,
                        help="print evaltk's version and those of ale-py, ViZDoom, torch and CuPy found, then exit")
    parser.add_argument("--debug", action="store_true",
                        help=f"show the full traceback of an unexpected error (same as {DEBUG_ENV}=1)")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    registered = command_entry_points(COMMAND_GROUP)
    for name in (*SUBCOMMANDS, *(n for n in registered if n not in SUBCOMMANDS)):
        if name in registered:
            registered[name].load()(subparsers)
            continue
        module_name = f"evaltk.cli.{name}"
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name == module_name:
                continue
            raise
        module.register(subparsers)
    return parser



def _one_line_warning(message: Warning | str, category: type[Warning], filename: str, lineno: int,
                      line: str | None = None) -> str:
    """Format evaltk's own warnings as one ``warning:`` line (others keep Python's format)."""
    if issubclass(category, CheckpointWarning):
        return f"warning: {message}\n"
    return _DEFAULT_FORMAT(message, category, filename, lineno, line)


_DEFAULT_FORMAT = warnings.formatwarning


def _debug_requested(argv: Sequence[str] | None) -> bool:
    args = sys.argv[1:] if argv is None else list(argv)
    return os.environ.get(DEBUG_ENV, "") not in ("", "0") or "--debug" in args


def _run(args: argparse.Namespace, func: Any) -> int:
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


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``evaltk`` command; returns the process exit status.

    Every failure ends as one ``error:`` line on stderr and a non-zero status: 2 for bad input
    (:class:`~evaltk.errors.EvaltkError`, a bad argument), 130 for Ctrl-C, and 70 for an unexpected
    exception — a bug in evaltk, reported as one line naming the exception, with the full traceback
    under ``--debug`` or ``EVALTK_DEBUG=1``.
    """
    warnings.formatwarning = _one_line_warning
    try:
        parser = build_parser()
        args = parser.parse_args(argv)  # --help/--version and usage errors exit as argparse does (0 / 2)
        func = getattr(args, "func", None)
        if func is None:
            parser.print_help()
            return 2
        return _run(args, func)
    except Exception as exc:  # last resort: any other exception is a bug, not a user error
        if _debug_requested(argv):
            traceback.print_exc()
        frames = traceback.extract_tb(exc.__traceback__)
        ours = [f for f in frames if any(f"/{pkg}/" in f.filename for pkg in _PACKAGES)]
        where = (ours or frames)[-1]
        detail = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        print(f"error: internal error {type(exc).__name__}: {detail} (at {Path(where.filename).name}:{where.lineno}); "
              f"this is a bug in evaltk {__version__}: please report it at {BUG_URL} with the command line "
              f"(re-run with --debug or {DEBUG_ENV}=1 for the traceback)", file=sys.stderr)
        return 70
    finally:
        warnings.formatwarning = _DEFAULT_FORMAT


if __name__ == "__main__":
    sys.exit(main())
