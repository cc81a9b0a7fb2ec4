"""Helpers shared by the evaltk CLI tests."""

from __future__ import annotations

import signal

import pytest

from evaltk.cli.main import main


def error_line(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    """Run ``evaltk argv``; assert exit status 2 and exactly one ``error: ...`` line on stderr, return it."""
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert err[0].startswith("error: ")
    return err[0]


def restore_sigint() -> None:
    """``preexec_fn`` for a child that must see Ctrl-C: SIGINT back at its default before the exec.

    A shell starts background jobs with SIGINT ignored, an ignored signal stays ignored across exec,
    and Python then installs no KeyboardInterrupt handler: a test run from such a job would see no Ctrl-C.
    """
    signal.signal(signal.SIGINT, signal.SIG_DFL)
