"""gpu_env against ale-py through the lockstep engine (conformance/lockstep.py), every frame.

The default run checks every one of the 104 playable ROMs in both start modes for ``ALL_ROM_FRAMES``
frames: ``boot`` (both sides' own ``loadROM``, ALE v5's sticky actions 0.25, the full action set,
``reset_game`` at every game over) and ``ale-state`` (an imported ale-py state, re-imported after
every game over). Compared after the start, every act and every reset: reward, RAM, screen, lives,
game over, truncation and the frame counters; RGB and grayscale at the start and the end.

The long runs are ``slow``; the whole table at 20,000 frames is
``evaltk conformance lockstep --game all --start boot --actions full --sticky 0.25 --frames 20000 --seed 0``.
"""

from __future__ import annotations

import pytest

from conformance.lockstep import LockstepConfig, run_lockstep
from conformance.report import playable_roms, sweep_config

ALL_ROM_FRAMES = 300
ROMS = playable_roms()


@pytest.mark.parametrize("start", ["boot", "ale-state"])
@pytest.mark.parametrize("game", ROMS)
def test_every_rom_in_lockstep(game: str, start: str) -> None:
    result = run_lockstep(sweep_config(game, start, ALL_ROM_FRAMES, seed=0))
    assert result.divergence is None, result.summary()
    assert result.frames_compared == ALL_ROM_FRAMES
    assert {"reward", "ram", "screen", "lives", "game_over", "truncated", "frame_number",
            "screen_rgb"} <= set(result.compared)


def test_all_104_roms_are_checked() -> None:
    assert len(ROMS) == 104


def test_lockstep_frameskip_modes_and_batch() -> None:
    config = LockstepConfig("space_invaders", 150, seed=11, start="boot", num_envs=3, actions="full",
                            repeat_action_probability=0.25, frameskip=3, mode=1, difficulty=1)
    result = run_lockstep(config)
    assert result.divergence is None, result.summary()


def test_truncation_is_compared_and_followed_by_reset() -> None:
    config = LockstepConfig("pong", 400, seed=2, start="boot", actions="full", repeat_action_probability=0.25,
                            max_num_frames_per_episode=150)
    result = run_lockstep(config)
    assert result.divergence is None, result.summary()
    assert result.resets >= 2  # truncated at 150 and 300 frames, reset on both sides


# Long runs: a paddle game, an E0, an F6, an SC cart, DPC, FE, a PAL ROM with random select presses
# (Adventure), games whose setMode acts (Double Dunk, Berzerk), a partial-frame reset (Q*bert), and
# Lost Luggage (illegal FIRE actions, 38 select presses).
LONG_GAMES = ("pong", "breakout", "montezuma_revenge", "crossbow", "darkchambers", "pitfall2", "robotank",
              "adventure", "double_dunk", "berzerk", "qbert", "lost_luggage")


@pytest.mark.slow
@pytest.mark.parametrize("game", LONG_GAMES)
def test_lockstep_long(game: str) -> None:
    result = run_lockstep(sweep_config(game, "boot", 20_000, seed=0))
    assert result.divergence is None, result.summary()


@pytest.mark.slow
@pytest.mark.parametrize("start", ["boot", "ale-state"])
@pytest.mark.parametrize("game", ROMS)
def test_every_rom_in_lockstep_long(game: str, start: str) -> None:
    result = run_lockstep(sweep_config(game, start, 5_000, seed=3))
    assert result.divergence is None, result.summary()
