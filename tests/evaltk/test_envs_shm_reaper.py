"""evaltk.envs.shm_reaper without a game: an owner's pipe to its reaper, the owner's exit, what the reaper removes."""

from __future__ import annotations

import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from evaltk.envs.shm_reaper import SHM_DIR

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="the reaper reads Linux's /proc")
def test_owner_exits_without_a_resource_warning_and_its_reaper_removes_what_it_left() -> None:
    segment = Path(SHM_DIR, f"evaltk-test-{uuid.uuid4().hex}")
    segment.write_bytes(b"left behind")
    try:
        code = f"from evaltk.envs import shm_reaper; shm_reaper.add_segment({segment.name!r})"
        owner = subprocess.run([sys.executable, "-X", "dev", "-c", code], cwd=ROOT, capture_output=True, text=True,
                               timeout=120, check=False)
        assert owner.returncode == 0, owner.stderr
        # The pipe stays open for the owner's whole life (its EOF tells the reaper the owner is gone), and no file
        # object or child process of it is left for the interpreter to finalise.
        assert "ResourceWarning" not in owner.stderr, owner.stderr
        deadline = time.monotonic() + 60
        while segment.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not segment.exists(), "the reaper did not unlink the segment its owner registered and left"
    finally:
        segment.unlink(missing_ok=True)
