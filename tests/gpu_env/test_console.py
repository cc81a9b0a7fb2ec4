"""The console against ale-py: controllers, cartridge schemes, PAL, interrupted frames.

Each case imports ale-py's state and compares every field for a few hundred random-action frames
(the lockstep engine, conformance.lockstep).
"""

from __future__ import annotations

import pytest

from conformance.lockstep import LockstepConfig, run_lockstep

CASES = {
    "pong": "two paddles, swapped paddle pins",
    "breakout": "left paddles, right joystick",
    "surround": "swapped controller ports",
    "air_raid": "PAL autodetected: 250 rows, PAL palette, colour loss",
    "pitfall2": "DPC cartridge",
    "darkchambers": "F6SC cartridge, no HMOVE blanks",
    "elevator_action": "F8SC cartridge",
    "robotank": "FE cartridge",
    "montezuma_revenge": "E0 cartridge",
    "ms_pacman": "F8, no HMOVE blanks",
    "carnival": "display window YStart 26, height 214",
    "tic_tac_toe_3d": "frames interrupted after 25,000 instructions while the computer thinks",
}


@pytest.mark.parametrize("game", sorted(CASES))
def test_console_matches_ale(game: str) -> None:
    result = run_lockstep(LockstepConfig(game, 250, seed=7, warmup_frames=60))
    assert not result.diverged, f"{game} ({CASES[game]}): {result.summary()}"


def test_state_cloned_inside_an_interrupted_frame_continues_it() -> None:
    # Q*bert ends reset_game in the middle of a ~7,900-scanline frame (ALE executionStatus 0).
    result = run_lockstep(LockstepConfig("qbert", 150, seed=1, warmup_frames=0))
    assert not result.diverged, result.summary()
