"""The player's engine watchdog on real processes: a dead engine ends the player at once, a live one does not."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from evaltk.tournament.player import ENGINE_DIED

# A stand-in for a player: a child process plays the engine (a real process, killed for real); the main thread
# then blocks as a player waiting on a dead engine's message queue would.
_PLAYER = textwrap.dedent("""
    import os, signal, subprocess, sys, time
    from evaltk.tournament.player import engine_watchdog
    engine = subprocess.Popen(["sleep", "3600"])
    try:
        with engine_watchdog({engine.pid}, period_s=0.05):
            if sys.argv[1] == "kill":
                os.kill(engine.pid, signal.SIGKILL)  # not reaped: a zombie, as an engine no one waited for
                time.sleep(3600)  # only the watchdog ends this
            else:
                time.sleep(0.5)
    finally:
        engine.kill()
    print("left the block")
""")


def _run(mode: str) -> subprocess.CompletedProcess[str]:
    # The limit is far past anything but a real hang (the blocked main thread would sleep an hour).
    return subprocess.run([sys.executable, "-c", _PLAYER, mode], capture_output=True, text=True, timeout=300)


def test_a_dead_engine_ends_the_player_with_its_status_and_one_line() -> None:
    done = _run("kill")
    assert done.returncode == ENGINE_DIED
    assert "left the block" not in done.stdout
    (line,) = done.stderr.splitlines()
    assert "ViZDoom engine" in line
    assert "died during the match" in line


def test_a_live_engine_lets_the_block_finish() -> None:
    done = _run("live")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "left the block"
