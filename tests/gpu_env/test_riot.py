"""The RIOT (6532) model: RAM, ports, and ale-py's interval-timer arithmetic.

Accesses are replayed through ``gpu_env_test_riot_replay`` (tests/gpu_env/native/cart_test.cpp, compiled
by the tests), which runs the same ``riot.h`` the emulator uses.
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from hypothesis import given
from hypothesis import strategies as st

from tests.gpu_env.native_test_lib import cart_test_library

READ, WRITE, CYCLES_RESET = 0, 1, 2
SWCHA, SWACNT, SWCHB, SWBCNT, INTIM, TIMINT = 0x280, 0x281, 0x282, 0x283, 0x284, 0x285
TIM1T, TIM8T, TIM64T, T1024T = 0x294, 0x295, 0x296, 0x297


@dataclass(frozen=True)
class Replay:
    """What a replay returned.

    results: uint8[n] (reads); states: int32[n, 7] (timer, shift, cycles_when_timer_set,
    cycles_when_interrupt_reset, read_after_interrupt, ddra, ddrb); ram: uint8[128].
    """

    results: npt.NDArray[np.uint8]
    states: npt.NDArray[np.int32]
    ram: npt.NDArray[np.uint8]


def replay(
    accesses: list[tuple[int, int, int, int]],
    *,
    ram: bytes = bytes(128),
    random_value: int = 0,
    swcha: int = 0xFF,
    swchb: int = 0xFF,
) -> Replay:
    lib = cart_test_library()
    width = int(lib.gpu_env_test_riot_state_ints())
    n = len(accesses)
    ops = np.asarray(accesses, dtype=np.int32).reshape(-1)
    ram_in = np.frombuffer(ram, dtype=np.uint8).copy()
    results = np.zeros(max(n, 1), dtype=np.uint8)
    states = np.zeros((max(n, 1), width), dtype=np.int32)
    ram_out = np.zeros(128, dtype=np.uint8)
    lib.gpu_env_test_riot_replay(
        ram_in.ctypes.data_as(ctypes.POINTER(ctypes.c_uint8)),
        ctypes.c_uint32(random_value),
        ctypes.c_uint8(swcha),
        ctypes.c_uint8(swchb),
        ctypes.c_int32(n),
        (ops if n else np.zeros(4, np.int32)).ctypes.data_as(ctypes.POINTER(ctypes.c_int32)),
        results.ctypes.data_as(ctypes.POINTER(ctypes.c_uint8)),
        states.ctypes.data_as(ctypes.POINTER(ctypes.c_int32)),
        ram_out.ctypes.data_as(ctypes.POINTER(ctypes.c_uint8)),
    )
    return Replay(results[:n], states[:n], ram_out)


def test_reset_state_follows_ale() -> None:
    out = replay([(READ, INTIM, 0, 1)], random_value=1000)
    timer, shift, set_at, reset_at, latched, ddra, ddrb = (int(v) for v in out.states[0])
    assert timer == 25 + 1000 % 75
    assert (shift, set_at, reset_at, latched, ddra, ddrb) == (6, 0, 0, 0, 0, 0)
    # At system cycle 1 (cycles - 1 = 0): timer - 0 - 1.
    assert out.results[0] == timer - 1


def test_ram_and_its_mirrors() -> None:
    initial = bytes(range(128))
    out = replay(
        [(READ, 0x80, 0, 5), (READ, 0xFF, 0, 5), (WRITE, 0x0180, 0xAB, 5), (READ, 0x0080, 0, 5), (READ, 0x1D80, 0, 5)],
        ram=initial,
    )
    assert list(out.results) == [0, 127, 0, 0xAB, 0xAB]
    assert out.ram[0] == 0xAB
    assert bytes(out.ram[1:]) == initial[1:]


def test_ports() -> None:
    out = replay(
        [
            (READ, SWCHA, 0, 3),
            (READ, SWCHB, 0, 3),
            (WRITE, SWACNT, 0x5A, 3),
            (READ, SWACNT, 0, 3),
            (WRITE, SWBCNT, 0xFF, 3),
            (READ, SWBCNT, 0, 3),
            (WRITE, SWCHB, 0x00, 3),
            (READ, SWCHB, 0, 3),
            (WRITE, SWCHA, 0x00, 3),
            (READ, SWCHA, 0, 3),
        ],
        swcha=0xEF,
        swchb=0x0B,
    )
    # SWCHA/SWCHB read the inputs unmasked; DDRA is kept, DDRB and SWCHB writes are ignored.
    assert list(out.results[[0, 1, 3, 5, 7, 9]]) == [0xEF, 0x0B, 0x5A, 0x00, 0x0B, 0xEF]


def test_timer_write_addresses_select_the_interval() -> None:
    accesses = [(WRITE, address, 7, 100) for address in (TIM1T, TIM8T, TIM64T, T1024T)]
    out = replay(accesses)
    assert [int(s[1]) for s in out.states] == [0, 3, 6, 10]
    assert all(int(s[0]) == 7 and int(s[2]) == 100 for s in out.states)
    # $284 with A4 clear is the edge-detect control on writes: no timer change.
    edge = replay([(WRITE, 0x284, 9, 50)], random_value=0)
    assert (int(edge.states[0][0]), int(edge.states[0][1])) == (25, 6)


def test_timer_counts_down_once_per_interval() -> None:
    set_at = 1000
    reads = [(READ, INTIM, 0, set_at + 1 + k) for k in range(0, 64 * 10, 7)]
    out = replay([(WRITE, TIM64T, 10, set_at), *reads])
    for (_, _, _, cycles), value in zip(reads, out.results[1:], strict=True):
        assert value == 10 - (cycles - 1 - set_at) // 64 - 1


def test_underflow_interrupt_flag_and_latch() -> None:
    """Check the underflow arithmetic on a worked example.

    TIM1T=2 at cycle 100 reads 1, 0, then $FF (one cycle past), then latches at the first read two
    cycles past underflow, after which it counts down one per cycle; TIMINT shows the underflow
    only until that read.
    """
    out = replay(
        [
            (WRITE, TIM1T, 2, 100),
            (READ, INTIM, 0, 101),
            (READ, INTIM, 0, 102),
            (READ, TIMINT, 0, 103),
            (READ, INTIM, 0, 103),
            (READ, TIMINT, 0, 104),
            (READ, INTIM, 0, 104),
            (READ, TIMINT, 0, 105),
            (READ, INTIM, 0, 105),
            (READ, INTIM, 0, 200),
        ]
    )
    assert list(out.results[1:]) == [1, 0, 0x80, 0xFF, 0x80, 0xFD, 0x00, 0xFC, (2 - 99 - 2) & 0xFF]
    assert int(out.states[6][4]) == 1
    assert int(out.states[6][3]) == 104
    # Writing the timer again clears the latch.
    again = replay([(WRITE, TIM1T, 2, 100), (READ, INTIM, 0, 110), (WRITE, TIM8T, 3, 120)])
    assert int(again.states[1][4]) == 1
    assert int(again.states[2][4]) == 0


@given(
    value=st.integers(0, 255),
    address=st.sampled_from([TIM1T, TIM8T, TIM64T, T1024T]),
    set_at=st.integers(1, 30_000),
    rewind=st.integers(1, 30_000),
    later=st.integers(1, 300_000),
    probe_twice=st.booleans(),
)
def test_rewinding_the_cycle_counter_changes_nothing(
    value: int, address: int, set_at: int, rewind: int, later: int, probe_twice: bool
) -> None:
    """The console zeroes its cycle counter every frame: reads at the same absolute time agree."""
    rewind = min(rewind, set_at + later - 1)
    read_at = set_at + later
    probes = [(READ, INTIM, 0, read_at - 1)] if probe_twice else []
    straight = replay([(WRITE, address, value, set_at), *probes, (READ, INTIM, 0, read_at), (READ, TIMINT, 0, read_at)])
    rewound_probes = [(READ, INTIM, 0, read_at - 1 - rewind)] if probe_twice and read_at - 1 > rewind else []
    if probe_twice and not rewound_probes:
        return
    rewound = replay(
        [
            (WRITE, address, value, set_at),
            (CYCLES_RESET, 0, rewind, 0),
            *rewound_probes,
            (READ, INTIM, 0, read_at - rewind),
            (READ, TIMINT, 0, read_at - rewind),
        ]
    )
    assert list(straight.results[-2:]) == list(rewound.results[-2:])


@given(value=st.integers(1, 255), shift=st.sampled_from([(TIM1T, 1), (TIM8T, 8), (TIM64T, 64), (T1024T, 1024)]))
def test_timer_is_monotonic_until_underflow(value: int, shift: tuple[int, int]) -> None:
    address, divider = shift
    times = [10 + 1 + k * max(1, divider // 2) for k in range(2 * value + 2)]
    out = replay([(WRITE, address, value, 10), *[(READ, INTIM, 0, t) for t in times]])
    seen = [int(v) for v, t in zip(out.results[1:], times, strict=True) if (t - 1 - 10) // divider < value]
    assert seen == sorted(seen, reverse=True)
    assert seen[0] == value - 1
