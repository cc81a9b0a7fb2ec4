"""The project's own lint and type gates run as tests, so CI enforces them."""

from __future__ import annotations

import subprocess

import pytest

from tests.lint_tools import MYPY_RUN, ROOT, tool


def test_ruff_clean() -> None:
    result = subprocess.run([tool("ruff"), "check", "."], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_mypy_strict_clean(request: pytest.FixtureRequest) -> None:
    # Started by conftest.py when this test was collected (tests/lint_tools.py); run here otherwise.
    run = request.config.stash.get(MYPY_RUN, None)
    if run is None:
        result = subprocess.run([tool("mypy")], cwd=ROOT, capture_output=True, text=True)
        output, code = result.stdout + result.stderr, result.returncode
    else:
        output, _ = run.communicate(timeout=900)
        code = run.returncode
    assert code == 0, output
