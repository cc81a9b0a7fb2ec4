"""The project's own lint and type gates run as tests, so CI enforces them."""

from __future__ import annotations

import subprocess

import pytest

from tests.lint_tools import MYPY_RUN, ROOT, start_mypy, tool


def test_ruff_clean() -> None:
    result = subprocess.run([tool("ruff"), "check", "."], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_mypy_strict_clean(request: pytest.FixtureRequest) -> None:
    # Started by conftest.py when this test was collected (tests/lint_tools.py); started here otherwise.
    run = request.config.stash.get(MYPY_RUN, None) or start_mypy()
    if run is None:
        tool("mypy")  # fails, naming the fix
        return
    output, _ = run.communicate(timeout=900)
    assert run.returncode == 0, output
