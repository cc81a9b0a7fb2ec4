import json
import subprocess
import sys

import pytest

from evaltk.cli.main import build_parser, main
from evaltk.cli.output import to_json_line


def test_help_lists_subcommands(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["--help"])
    assert info.value.code == 0
    out = capsys.readouterr().out
    assert "bench" in out


def test_the_commands_are_the_same_whoever_registers_them() -> None:
    """The conformance and train commands come from entry points (pyproject), the rest from evaltk.cli: one order."""
    parser = build_parser()
    commands = next(a for a in parser._actions if a.dest == "command")
    assert list(commands.choices) == ["evaluate", "validate", "import", "compare", "tournament",  # type: ignore[arg-type]
                                      "conformance", "bench", "train", "shipped"]
    tournament = commands.choices["tournament"]  # type: ignore[index]
    formats = next(a for a in tournament._actions if a.dest == "format")
    assert "population" in formats.choices  # trainers' format, by entry point


def test_every_subcommand_has_help() -> None:
    parser = build_parser()
    subparsers = next(a for a in parser._actions if a.dest == "command")
    for name in subparsers.choices:  # type: ignore[union-attr]
        result = subprocess.run([sys.executable, "-m", "evaltk", name, "--help"], capture_output=True, text=True)
        assert result.returncode == 0, (name, result.stderr)
        assert "usage" in result.stdout


def test_no_command_prints_help_and_fails(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2
    assert "usage" in capsys.readouterr().out


def test_unknown_benchmark_is_a_clear_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "no_such_benchmark"]) == 2
    err = capsys.readouterr().err
    assert "unknown benchmark 'no_such_benchmark'" in err


def test_json_line_is_strict_and_one_line() -> None:
    import numpy as np

    line = to_json_line({"a": np.float64(1.5), "b": float("nan"), "c": np.arange(3), "d": (1, 2)})
    assert "\n" not in line
    assert json.loads(line) == {"a": 1.5, "b": None, "c": [0, 1, 2], "d": [1, 2]}
