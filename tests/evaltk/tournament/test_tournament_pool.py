"""Real ViZDoom matches through a :class:`PlayerPool`: reuse, crash, hang, close.

Every test tags the processes it starts (the ``tag`` fixture of ``conftest.py``) and checks that none is
left running.
"""

from __future__ import annotations

import os
import signal
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import replace
from functools import partial
from pathlib import Path

import pytest

from evaltk.tournament.match import MatchResult, MatchSpec, run_match
from evaltk.tournament.pool import PlayerPool
from tests.evaltk.tournament.running import freeze_running, running_players, wait_for
from tests.evaltk.tournament.tags import tagged

pytestmark = pytest.mark.vizdoom


def _spec(match_id: str, seed: int, minutes: float = 0.25) -> MatchSpec:
    return MatchSpec(match_id=match_id, agents=("random", "scripted"), bots=(), map="map01", seed=seed,
                     timelimit_min=minutes)


def test_pooled_players_serve_match_after_match(tmp_path: Path, tag: str) -> None:
    # Multiplayer matches are not repeatable even with fresh players (the joiner's decisions depend on network
    # timing: 114 vs 109 for the same seed here), so the check is that every match is played in full.
    with PlayerPool("evaltk.tournament.player", tmp_path / "players") as pool:
        pooled = [run_match(_spec(f"p{seed}", seed), workdir=tmp_path, timeout_s=300, pool=pool)
                  for seed in (1, 2, 3)]
        assert pool.started == 2  # two processes played all three matches
        pids = {p.pid for p in pool._idle}
    assert all(r.outcome == "played" for r in pooled), [r.error for r in pooled]
    for result in pooled:
        host = result.participants[0]
        assert (host["agent"], host["tics"]) == ("random", round(0.25 * 60 * 35))
        assert host["decisions"] > 0
        assert result.participants[1]["agent"] == "scripted"
    for pid in pids:  # closed: every player is gone
        assert not Path(f"/proc/{pid}").exists() or "Z" in Path(f"/proc/{pid}/stat").read_text().split()[2]


def _pending(future: Future[MatchResult]) -> bool:
    return not future.done()


def _while_playing(pool: PlayerPool, spec: MatchSpec, workdir: Path, timeout_s: float, tag: str,
                   disturb: signal.Signals) -> MatchResult:
    """Play ``spec`` through ``pool``, stop a player while its game is known to run, then send it ``disturb``.

    A player stopped while its game runs has not reported (:func:`running.freeze_running`), so the match cannot
    come back played. Should its game have ended between the look and the stop, the player is continued and
    another match of the spec (``<match_id>-<n>``) is played for the disturbance, three at most.
    """
    with ThreadPoolExecutor(1) as match_thread:
        for n in range(3):
            future = match_thread.submit(run_match, replace(spec, match_id=f"{spec.match_id}-{n}"), workdir=workdir,
                                         timeout_s=timeout_s, pool=pool)
            player = wait_for("a pooled player's game running",
                              lambda: next(iter(running_players(tagged(tag))), None), alive=partial(_pending, future))
            frozen = freeze_running(player)
            if frozen and disturb != signal.SIGSTOP:
                os.kill(player, disturb)
            result = future.result(timeout=timeout_s + 300)
            if frozen:
                return result
    pytest.fail("three matches ended before a player of theirs could be stopped in play")


@pytest.mark.parametrize(("disturb", "timeout_s", "message"),
                         [(signal.SIGKILL, 60.0, "exited with status -9"),
                          pytest.param(signal.SIGSTOP, 30.0, "timed out", marks=pytest.mark.slow)])
def test_a_crashed_or_hung_pooled_player_voids_its_match_and_is_replaced(
        tmp_path: Path, tag: str, disturb: signal.Signals, timeout_s: float, message: str) -> None:
    with PlayerPool("evaltk.tournament.player", tmp_path / "players") as pool:
        assert run_match(_spec("warm", 4), workdir=tmp_path, timeout_s=300, pool=pool).outcome == "played"
        first = {p.pid for p in pool._idle}
        void = _while_playing(pool, _spec("hit", 5, minutes=0.5), tmp_path, timeout_s, tag, disturb)
        assert void.outcome == "void"
        assert message in (void.error or "")
        assert "player0" in (void.error or "")  # the error names the players' logs
        assert pool._idle == []  # both players of the voided match were killed, not returned
        for pid in first:
            assert not Path(f"/proc/{pid}").exists() or "Z" in Path(f"/proc/{pid}/stat").read_text().split()[2]
        again = run_match(_spec("after", 6), workdir=tmp_path, timeout_s=300, pool=pool)
        assert again.outcome == "played", again.error
        assert pool.started == 4


def test_a_start_that_fails_half_way_returns_the_players_in_hand(tmp_path: Path, tag: str) -> None:
    logs = tmp_path / "players"
    (logs / "player0001.log").mkdir(parents=True)  # the second player's log cannot be opened
    with PlayerPool("evaltk.tournament.player", logs) as pool:
        with pytest.raises(IsADirectoryError):
            pool.acquire(2)
        assert pool.started == 1
        (first,) = pool._idle
        assert first.proc.poll() is None
        (logs / "player0001.log").rmdir()
        got = pool.acquire(2)
        assert first in got
        assert pool.started == 2
        pool.release(got)
        pids = [p.proc.pid for p in got]
    for pid in pids:
        assert not Path(f"/proc/{pid}").exists() or "Z" in Path(f"/proc/{pid}/stat").read_text().split()[2]

