"""Where the tests find their committed data (``tests/data/``), and what happens when it is missing.

Every test that reads a data file goes through :func:`data_path`. Missing data is an error in CI
(the environment variable ``CI`` set to a true value, as CI services do): the test fails instead of
skipping, so a broken checkout cannot pass by running fewer tests. Elsewhere the test is skipped with
the path it looked for. ``EVALTK_TEST_DATA`` points the lookup at another folder with the same
layout (relative paths are taken from the current directory).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import NoReturn

import pytest

DATA_DIR = Path(__file__).resolve().parent / "data"
_TRUE = {"1", "true", "yes", "on"}


def ci_enabled() -> bool:
    """Whether ``CI`` is set to a true value (1, true, yes, on; any case)."""
    return os.environ.get("CI", "").strip().lower() in _TRUE


def data_root() -> Path:
    """Return the data folder: ``$EVALTK_TEST_DATA`` if set, else ``tests/data`` of this checkout."""
    configured = os.environ.get("EVALTK_TEST_DATA")
    return Path(configured).resolve() if configured else DATA_DIR


def missing_data(message: str) -> NoReturn:
    """Fail (under CI) or skip (elsewhere) the running test because its data is missing."""
    if ci_enabled():
        pytest.fail(f"{message} (CI is set, so missing test data is an error, not a skip)", pytrace=False)
    pytest.skip(message)


def data_path(relative: str) -> Path:
    """Return ``relative`` under :func:`data_root`, or fail/skip the test when it does not exist."""
    path = data_root() / relative
    if not path.exists():
        missing_data(f"test data {relative} not found at {path}: see tests/data/README.md")
    return path


def data_exists(relative: str) -> bool:
    """Whether ``relative`` exists under :func:`data_root` (for collection-time parametrisation)."""
    return (data_root() / relative).exists()
