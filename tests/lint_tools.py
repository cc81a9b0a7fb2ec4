"""The lint and type tools the code-quality tests run, and mypy started early in the background.

mypy's cold start over the packages takes about a minute here, mostly in torch's and gymnasium's
stubs. Without pytest-xdist, conftest.py starts it niced as soon as the test is collected, so it checks the
code on the CPU the other tests leave; ``test_mypy_strict_clean`` then gives it back the priority of the
process that now only waits for it, where the system allows, and reads its result. Under pytest-xdist (the CI
run: every worker collects every test, so conftest.py starts none) the test starts mypy itself at its own
priority. A niced mypy that a test waits for got almost no CPU on a loaded machine: 480-524 s, against
about 40 s quiet.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MYPY_TEST = "tests/test_code_quality.py::test_mypy_strict_clean"
MYPY_RUN = pytest.StashKey["subprocess.Popen[str]"]()


def _find(name: str) -> str | None:
    return shutil.which(name, path=str(Path(sys.executable).parent)) or shutil.which(name)


def tool(name: str) -> str:
    """Return the path of console script ``name`` of this environment, or fail saying how to install it."""
    path = _find(name)
    if path is None:
        pytest.fail(f"{name} is not installed: pip install -e '.[dev]'")
    return path


def start_mypy(niced: bool = True) -> subprocess.Popen[str] | None:
    """Start mypy on the project (as pyproject.toml configures it), niced if ``niced``; None without mypy."""
    path = _find("mypy")
    if path is None:
        return None  # the test itself then fails, naming the fix
    return subprocess.Popen(
        [path], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        preexec_fn=(lambda: os.nice(10)) if niced else None,
    )


def unnice(run: subprocess.Popen[str]) -> None:
    """Run ``run`` at this process's priority from now on, where allowed (raising a priority needs CAP_SYS_NICE)."""
    with contextlib.suppress(OSError):  # not permitted, or mypy has exited: it finishes (or finished) niced
        os.setpriority(os.PRIO_PROCESS, run.pid, os.getpriority(os.PRIO_PROCESS, 0))
