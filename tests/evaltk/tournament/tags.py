"""Process tags of the real-ViZDoom tournament tests: the ``tag`` fixture (see ``conftest.py``), ``tagged``."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator

import pytest

from evaltk.envs.shm_reaper import tagged_pids

TEST_VAR = "EVALTK_TEST_TAG"


def tagged(value: str) -> list[int]:
    """PIDs (other than this one) whose environment carries ``EVALTK_TEST_TAG=value``."""
    return [p for p in tagged_pids(TEST_VAR, value) if p != os.getpid()]


@pytest.fixture
def tag(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """Yield a fresh tag in this process's environment, inherited by players and engines.

    Afterwards, assert that no tagged process survives.
    """
    value = uuid.uuid4().hex
    monkeypatch.setenv(TEST_VAR, value)
    yield value
    assert tagged(value) == [], "orphan player/engine processes left behind"
