"""Shared test configuration: hypothesis profiles and marker-based skipping (always with a reason)."""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, settings

from tests.lint_tools import MYPY_RUN, MYPY_TEST, start_mypy

settings.register_profile("dev", max_examples=30, deadline=None)
settings.register_profile(
    "ci", max_examples=50, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))


@pytest.fixture(autouse=True, scope="session")
def _sb3_logs_in_pytest_tmp(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Point Stable-Baselines3's logs (``$SB3_LOGDIR``) into pytest's temporary folder.

    ``learn()`` makes a log folder, ``$SB3_LOGDIR`` or else a new ``/tmp/SB3-<date-time>`` per call that nothing
    removes.
    """
    patch = pytest.MonkeyPatch()
    patch.setenv("SB3_LOGDIR", str(tmp_path_factory.mktemp("sb3_logs")))
    yield
    patch.undo()


def _gpu_available() -> bool:
    if importlib.util.find_spec("cupy") is None:
        return False
    try:
        import cupy

        return int(cupy.cuda.runtime.getDeviceCount()) > 0
    except Exception:
        return False


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Skip ``gpu`` tests without a GPU and ``vizdoom`` tests without ViZDoom, naming the reason."""
    has_gpu = _gpu_available()
    has_vizdoom = importlib.util.find_spec("vizdoom") is not None
    for item in items:
        if "gpu" in item.keywords and not has_gpu:
            item.add_marker(pytest.mark.skip(reason="needs CuPy and a CUDA GPU (none found)"))
        if "vizdoom" in item.keywords and not has_vizdoom:
            item.add_marker(pytest.mark.skip(reason="needs vizdoom: pip install -e '.[doom]'"))


def pytest_collection_finish(session: pytest.Session) -> None:
    """Start mypy in the background when its test is selected (tests/lint_tools.py says why).

    Not in a pytest-xdist worker: every worker collects every test, so each would start one; there the
    test runs mypy itself while the other worker goes on with other files.
    """
    if os.environ.get("PYTEST_XDIST_WORKER"):
        return
    if any(item.nodeid == MYPY_TEST for item in session.items):
        run = start_mypy()
        if run is not None:
            session.config.stash[MYPY_RUN] = run


def pytest_unconfigure(config: pytest.Config) -> None:
    """Stop a background mypy whose test did not get to read it (an interrupted or failed-fast run)."""
    run = config.stash.get(MYPY_RUN, None)
    if run is not None and run.poll() is None:
        run.kill()
        run.wait()
