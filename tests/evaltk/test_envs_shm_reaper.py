"""evaltk.envs.shm_reaper and shm_owners without a game.

An owner's pipe to its reaper, the owner's exit, what a reaper removes, and the owner records that tell a dead
owner's files from a live one's.
"""

from __future__ import annotations

import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

from evaltk.envs import shm_owners
from evaltk.envs.shm_reaper import SHM_DIR, start_time, sweep
from tests.evaltk.shm_fakes import FakeOwner

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


def _wait(condition: Callable[[], bool], what: str, bound_s: float = 120.0) -> None:
    """Wait until ``condition()`` holds; fail with ``what`` after ``bound_s`` (only a hang gets there)."""
    deadline = time.monotonic() + bound_s
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


def _text(path: Path) -> str:
    try:
        return path.read_text(errors="replace")
    except FileNotFoundError:
        return "(gone)"


def _record(pid: int, text: str) -> shm_owners.Record:
    record = shm_owners.parse(f"/x/{pid}-100", text)
    assert record is not None
    return record


def test_garbage_is_a_dead_owners_file_that_no_live_owner_claims_and_no_process_maps() -> None:
    dead = _record(1, "begin a 100.0\nadd ViZDoomSMold\nend a 101.0\nbegin b 200.0\n")
    in_init = _record(2, "begin c 300.0\n")
    running = _record(3, "begin d 150.0\nadd ViZDoomSMlive\nend d 151.0\nadd ViZDoomSMhalf")  # last line unfinished
    files = {"ViZDoomSMold": 100.5, "ViZDoomMQCtrx": 100.8, "ViZDoomSMlive": 150.5, "ViZDoomMQDoomy": 250.0,
             "ViZDoomMQDoomz": 299.8, "ViZDoomSMafter": 320.0, "ViZDoomSMmapped": 260.0, "ViZDoomSMhalf": 150.9}
    assert running.names == {"ViZDoomSMlive"}
    assert running.windows == {"d": (150.0, 151.0)}
    # The dead owner claims its recorded name and what was made in its windows (the second one still open);
    # the owner in init holds back what was made since its window began (less the clock's slack).
    assert shm_owners.claimed(dead, files) == set(files) - {"ViZDoomSMlive", "ViZDoomSMhalf"}
    assert shm_owners.protected([in_init, running], files) == {"ViZDoomSMlive", "ViZDoomMQDoomz", "ViZDoomSMafter"}
    assert shm_owners.garbage(dead, [in_init, running], files, {"ViZDoomSMmapped"}) == {
        "ViZDoomSMold", "ViZDoomMQCtrx", "ViZDoomMQDoomy"}
    assert shm_owners.parse("/x/not-a-record", "") is None


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="the reaper reads Linux's /proc")
def test_a_dead_owners_init_leftovers_are_swept_and_a_live_owner_in_init_keeps_its_unmapped_file() -> None:
    tag = uuid.uuid4().hex[:8]
    dead = FakeOwner(f"ViZDoomMQCtrTestDead{tag}")
    live = FakeOwner(f"ViZDoomMQCtrTestLive{tag}")  # made inside the dead owner's window, not mapped yet
    records = Path(shm_owners.owners_dir())
    dead_record = records / f"{dead.proc.pid}-{start_time(dead.proc.pid)}"
    live_record = records / f"{live.proc.pid}-{start_time(live.proc.pid)}"
    try:
        assert dead_record.exists()
        assert live_record.exists()
        dead.kill()  # inside init(): its reaper knows no name, only the window
        # Swept: the dead owner's window is closed; its record is kept while the live owner's window holds a file.
        _wait(lambda: "\nend " in _text(dead_record), f"the dead owner's reaper did not sweep: {_text(dead_record)!r}")
        assert live.path.exists(), "a sweep unlinked the unmapped file of a live owner in init()"
        live.go()  # maps its file and leaves init(): the names are recorded, the window closed
        live.expect("inited")
        _wait(lambda: not dead.path.exists(), "the dead owner's file made in init() was not unlinked")
        _wait(lambda: not dead_record.exists(), "the dead owner's record was not deleted")
        assert live.path.exists(), "a sweep unlinked a live owner's recorded file"
        assert sweep() == (set(), set())  # nothing dead is left to sweep
        live.kill()
        _wait(lambda: not live.path.exists(), "the killed live owner's reaper did not unlink its file")
        _wait(lambda: not live_record.exists(), "the killed live owner's record was not deleted")
    finally:
        for owner in (dead, live):
            owner.kill()
            owner.path.unlink(missing_ok=True)
