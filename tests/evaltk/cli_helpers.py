"""Helpers shared by the evaltk CLI tests."""

from __future__ import annotations

import pytest

from evaltk.cli.main import main


def error_line(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    """Run ``evaltk argv``; assert exit status 2 and exactly one ``error: ...`` line on stderr, return it."""
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert err[0].startswith("error: ")
    return err[0]
