"""Timer poll loops run at once (core/console.h, console_timer_poll_loop) leave the machine as ale-py's.

A poll loop (``LDA/LDX/LDY INTIM`` + ``BNE`` back to it) is fast-forwarded by the CPU library instead of
being run one instruction at a time. Here the whole machine state (CPU registers and flags, cycle
counter, RIOT timer, TIA, RAM) is compared with ale-py's ``cloneState()`` after every frame:
* on a test program that polls after setting each of the four timer intervals to every value 0..255,
  through each load instruction and two INTIM mirrors, with one loop crossing a page (8-cycle
  iterations) and one waiting long enough (T1024T) that frames end on the 25,000-instruction limit
  inside the loop;
* on games whose frames spend 15-17 % of their instructions in such loops, one per cartridge scheme
  that has them (2K, 4K, F8, F6, F6SC, E0, FE).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from gpu_env.ale_state import parse_ale_state
from gpu_env.console_batch import ConsoleBatch
from gpu_env.console_native import ConsoleProps
from tests.gpu_env.tia_helpers import make_ale

VSYNC, WSYNC = 0x00, 0x02
TIM1T, TIM8T, TIM64T, T1024T = 0x294, 0x295, 0x296, 0x297


def _poll_program(long_waits: bool) -> bytes:
    """Return a 4 KiB ROM whose every frame polls the timer, set from the frame counter, four ways.

    With ``long_waits`` each frame then polls TIM8T 256 times (about 280,000 cycles, past a frame's
    25,000 instructions), so frames end on the instruction limit inside poll loops, where consecutive
    reads of the timer differ.
    """
    code = bytearray([0x78, 0xD8, 0xA2, 0xFF, 0x9A])  # SEI, CLD, LDX #$FF, TXS
    frame = 0xF000 + len(code)
    code += bytes([0xA9, 0x02, 0x85, VSYNC, 0x85, WSYNC, 0x85, WSYNC, 0x85, WSYNC, 0xA9, 0x00, 0x85, VSYNC])
    code += bytes([0xE6, 0x80])  # INC $80: the frame counter

    def timed_poll(timer: int, load: int, intim: int, keep: int, mask: int = 0xFF) -> None:
        code.extend([0xA5, 0x80, 0x29, mask, 0x8D, timer & 0xFF, timer >> 8])  # LDA $80, AND, STA timer
        code.extend([load, intim & 0xFF, intim >> 8, 0xD0, 0xFB])  # loop: LDx INTIM, BNE loop
        code.extend([{0xAD: 0x85, 0xAE: 0x86, 0xAC: 0x84}[load], keep])  # STA/STX/STY keep

    timed_poll(TIM64T, 0xAD, 0x0284, 0x81)
    timed_poll(TIM8T, 0xAE, 0x0286, 0x82)  # INTIM's mirror at $286
    timed_poll(TIM1T, 0xAC, 0x0A84, 0x83, mask=0x1F)  # a mirror with A11 set; TIM1T's count can be missed
    # A loop across a page boundary (the branch back costs 4 cycles) after setting T1024T.
    code.extend([0xA5, 0x80, 0x29, 0x07, 0x8D, T1024T & 0xFF, T1024T >> 8])  # LDA $80, AND #7, STA T1024T
    cross = 0xF0FB
    code.extend([0x4C, cross & 0xFF, cross >> 8])  # JMP cross
    assert 0xF000 + len(code) <= cross
    code.extend(b"\xEA" * (cross - 0xF000 - len(code)))
    code.extend([0xAD, 0x84, 0x02, 0xD0, 0xFB, 0x85, 0x84])
    if long_waits:  # 256 times: one TIM8T poll through each load (LDA $85, ORA #bit, STA TIM8T, poll)
        for load, bit in ((0xAD, 0x10), (0xAE, 0x08), (0xAC, 0x04)):
            code.extend([0xA5, 0x85, 0x09, bit, 0x8D, TIM8T & 0xFF, TIM8T >> 8, load, 0x84, 0x02, 0xD0, 0xFB])
        code.extend([0xC6, 0x85, 0xD0, 0xD8])  # DEC $85, BNE back to the first poll
    code.extend([0x4C, frame & 0xFF, frame >> 8])
    rom = bytearray(b"\xEA" * 4096)
    rom[: len(code)] = code
    rom[0xFFC:0xFFE] = bytes([0x00, 0xF0])  # reset vector $F000
    return bytes(rom)


def _assert_same_machine(batch: ConsoleBatch, ale: Any, what: str) -> None:
    ours, theirs = batch.export_ale(0), parse_ale_state(ale.cloneState())
    assert ours["cycles"] == [theirs.cycles], what
    assert ours["cpu"] == theirs.cpu, what
    assert ours["riot"] == theirs.riot, what
    assert ours["ram"] == theirs.ram, what
    colours = range(13, 17)  # ALE stores colours as the byte repeated four times
    assert [v for i, v in enumerate(ours["tia"]) if i not in colours] == [
        v for i, v in enumerate(theirs.tia) if i not in colours
    ], what


@pytest.mark.parametrize(("long_waits", "frames"), [(False, 700), (True, 150)])
def test_poll_program_every_frame(long_waits: bool, frames: int, tmp_path: Path) -> None:
    path = tmp_path / "earthworld.bin"  # run under a known game's settings (as test_tia_reference_roms does)
    path.write_bytes(_poll_program(long_waits))
    ale = make_ale(path)
    batch = ConsoleBatch(path, 1, props=ConsoleProps(height=int(ale.getScreen().shape[0])))
    batch.load_ale_state(0, ale.cloneState(), ale.getScreen())
    noop = np.zeros(1, dtype=np.int64)
    counters, partial = set(), 0
    for frame in range(frames):
        ale.act(0)
        batch.step_frames(noop)
        _assert_same_machine(batch, ale, f"frame {frame}")
        counters.add(int(ale.getRAM()[0]))
        # A frame cut by the instruction limit does not rewind the cycle counter: it passes a frame's.
        partial += parse_ale_state(ale.cloneState()).cycles > 40_000
    if long_waits:
        assert partial > frames // 2
    else:
        assert len(counters) == 256  # every timer value was polled


@pytest.mark.parametrize(
    "game", ["breakout", "seaquest", "ms_pacman", "crossbow", "darkchambers", "montezuma_revenge", "robotank"]
)
def test_games_every_frame(game: str) -> None:
    ale = make_ale(game, warmup=10)
    batch = ConsoleBatch(game, 1)
    batch.load_ale_state(0, ale.cloneState(), ale.getScreen())
    actions = ale.getMinimalActionSet()
    rng = np.random.default_rng(1)
    for frame in range(1000):
        action = actions[int(rng.integers(len(actions)))]
        ale.act(action)
        batch.step_frames(np.array([action.value]))
        _assert_same_machine(batch, ale, f"{game} frame {frame}")
        if ale.game_over():
            break
