"""Two evaluations and a tournament pool play while the shared-memory sweep runs: no live game loses a segment.

The sweep is made to work hard: one thread runs :func:`evaltk.envs.shm_reaper.sweep` in a loop, and another
starts fake owners and SIGKILLs them inside ``init()`` (:class:`tests.evaltk.shm_fakes.FakeOwner`), so that their
reapers sweep dead owners' ``init()`` windows that overlap the real games' own starts. A live game that lost a
segment shows it in its engine's ``/proc/<pid>/maps`` as a ``/dev/shm/ViZDoom... (deleted)`` mapping (a game's
controller removes its files only after its engine has exited); a monitor thread reads every engine below this
process until the runs end. The runs must also finish (a queue file unlinked before its engine opens it fails the
engine's start), every file the sweep loop unlinked must be a fake owner's, and every fake owner's file must be gone.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest

from evaltk.envs.shm_reaper import SHM_DIR, engine_children, sweep
from evaltk.tournament.match import MatchResult, MatchSpec, run_match
from evaltk.tournament.pool import PlayerPool
from tests.evaltk.doom_procs import descendants
from tests.evaltk.shm_fakes import FakeOwner

pytestmark = pytest.mark.vizdoom
ROOT = Path(__file__).resolve().parents[2]


def _lost_segments(pids: list[int]) -> set[str]:
    """Return the ``(deleted)`` ViZDoom mappings of the engines of ``pids``: a live game's unlinked segments."""
    lost = set()
    for pid in pids:
        for engine in engine_children(pid):
            try:
                lines = Path(f"/proc/{engine}/maps").read_text().splitlines()
            except OSError:
                continue
            lost |= {line.split()[-2] for line in lines if f"{SHM_DIR}/ViZDoom" in line and line.endswith("(deleted)")}
    return lost


def _evaluation(out: Path) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "evaltk", "evaluate", "random", "--env-id", "basic", "--episodes",
                             "12", "--num-envs", "2", "--workers", "2", "--out", str(out)], cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def _matches(pool: PlayerPool, workdir: Path, results: list[MatchResult]) -> None:
    for seed in (1, 2):
        spec = MatchSpec(match_id=f"m{seed}", agents=("random", "scripted"), bots=(), map="map01", seed=seed,
                         timelimit_min=0.1)
        results.append(run_match(spec, workdir=workdir, timeout_s=300, pool=pool))


def test_concurrent_games_keep_their_segments_while_dead_owners_are_swept(tmp_path: Path) -> None:
    stop = threading.Event()
    swept: set[str] = set()
    lost: set[str] = set()
    fakes: list[FakeOwner] = []

    def sweep_loop() -> None:
        while not stop.is_set():
            swept.update(sweep()[0])

    def kill_in_init() -> None:  # dead owners whose init() windows overlap the real games' starts
        while not stop.is_set():
            fake = FakeOwner(f"ViZDoomMQCtrTestConc{uuid.uuid4().hex[:10]}")
            fakes.append(fake)
            fake.kill()
            stop.wait(0.5)

    def monitor() -> None:
        while not stop.wait(0.05):
            lost.update(_lost_segments(descendants(os.getpid())))

    threads = [threading.Thread(target=f, daemon=True) for f in (sweep_loop, kill_in_init, monitor)]
    for thread in threads:
        thread.start()
    results: list[MatchResult] = []
    try:
        runs = [_evaluation(tmp_path / f"ev{i}") for i in (1, 2)]
        with PlayerPool("evaltk.tournament.player", tmp_path / "players") as pool:
            _matches(pool, tmp_path, results)
        errors = [run.communicate(timeout=600)[1] for run in runs]
    finally:
        stop.set()
        for thread in threads:
            thread.join(timeout=120)
    assert [run.returncode for run in runs] == [0, 0], [e[-2000:] for e in errors]
    for i in (1, 2):
        assert len((tmp_path / f"ev{i}" / "episodes.csv").read_text().splitlines()) == 1 + 12
    assert [r.outcome for r in results] == ["played", "played"], [r.error for r in results]
    assert lost == set(), f"live games lost segments: {sorted(lost)}"
    fake_names = {fake.name for fake in fakes}
    assert swept <= fake_names, f"the sweep unlinked files of no dead owner: {sorted(swept - fake_names)}"
    assert len(fakes) >= 2
    left = [fake.name for fake in fakes if fake.path.exists()]
    assert left == [] or _gone_later(left), f"dead owners' files left: {left}"


def _gone_later(names: list[str]) -> bool:
    """Whether the reapers of the last fakes (killed as the runs ended) unlink ``names`` (within 120 s)."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if not any(Path(SHM_DIR, name).exists() for name in names):
            return True
        time.sleep(0.1)
    return False
