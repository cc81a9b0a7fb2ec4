"""The event the tests that disturb a match wait for: a player whose game is running, and its match frozen there.

A player's game runs from the moment its ``init()`` returned until its ``close()``: the player's owner record
(:mod:`evaltk.envs.shm_owners`) holds the game's shared-memory segments exactly then (they are written in one line
with the end of the ``init()`` window, and taken back after ``close()``). A player reports its match only after
``close()``, so a player stopped (SIGSTOP) while its record holds segments has not reported: killing it now voids
its match for certain, and leaving it stopped is a real hang.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TypeVar

from evaltk.envs import shm_owners
from evaltk.envs.shm_reaper import start_time

T = TypeVar("T")


def game_running(player: int) -> bool:
    """Return whether the game of the player process ``player`` is initialised and not closed (read from its record)."""
    start = start_time(player)
    if start is None:
        return False
    path = shm_owners.record_path(player, start)
    try:
        text = Path(path).read_text()
    except OSError:
        return False
    record = shm_owners.parse(path, text)
    return record is not None and bool(record.names)


def running_players(pids: Iterable[int]) -> list[int]:
    """Return those of ``pids`` that are players with a running game, in pid order."""
    return [pid for pid in sorted(pids) if game_running(pid)]


def match_of(player: int) -> tuple[str, int] | None:
    """Return ``(match id, attempt)`` of a fresh (not pooled) player, from the name of its log (its stdout).

    ``run_match`` writes a player's stdout to ``logs/<match_id>.<attempt>.<slot>.out``; None if the player is gone.
    """
    with contextlib.suppress(OSError):
        match_id, attempt, _slot, _ = Path(os.readlink(f"/proc/{player}/fd/1")).name.rsplit(".", 3)
        return match_id, int(attempt)
    return None


def wait_for(what: str, find: Callable[[], T | None], *, alive: Callable[[], bool] = lambda: True,
             limit_s: float = 300.0) -> T:
    """Poll ``find`` until it returns a value; fail naming ``what`` once ``alive()`` is false or after ``limit_s``.

    ``limit_s`` is a bound only a real hang reaches (a match starts in seconds).
    """
    deadline = time.monotonic() + limit_s
    while (found := find()) is None:
        assert alive(), f"{what}: the run ended first"
        assert time.monotonic() < deadline, f"{what}: not within {limit_s:g} s"
        time.sleep(0.02)
    return found


def freeze_running(player: int, target: int | None = None) -> bool:
    """SIGSTOP ``target`` (the player by default) and return whether the player's game is running then.

    True means the match is frozen in play: with ``target`` the player, it has not reported and cannot; with
    ``target`` its engine, the game cannot advance (the player may be closing it already: the match's result tells).
    False (the game ended between the look and the signal) leaves ``target`` continued again, or gone.
    """
    victim = player if target is None else target
    try:
        os.kill(victim, signal.SIGSTOP)
    except ProcessLookupError:
        return False
    if game_running(player):
        return True
    with contextlib.suppress(ProcessLookupError):
        os.kill(victim, signal.SIGCONT)
    return False
