"""Cartridge bank switching, on reads and on writes, with real ROM images bundled with ale-py.

Accesses are replayed through ``gpu_env_test_cart_replay`` (tests/gpu_env/native/cart_test.cpp, compiled
by the tests), which runs the same ``cart/*.h`` code the emulator uses; expected bytes are taken from
the ROM image at the offsets the scheme's documented layout names.
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpu_env.roms import CartScheme, load_rom
from tests.gpu_env.native_test_lib import cart_test_library

READ, WRITE, CYCLES_RESET = 0, 1, 2
BANK_SIZE = 4096


@dataclass(frozen=True)
class Replay:
    """What a replay returned.

    results: uint8[n]; states: int32[n, 12] (bank, slices[4], DPC random, DPC counters[0..2],
    DPC flags[0], DPC system cycles, DPC music-mode bits); sc_ram: uint8[128].
    """

    results: npt.NDArray[np.uint8]
    states: npt.NDArray[np.int32]
    sc_ram: npt.NDArray[np.uint8]

    @property
    def banks(self) -> list[int]:
        return [int(s[0]) for s in self.states]


def replay(
    scheme: CartScheme,
    rom: bytes,
    accesses: list[tuple[int, int, int, int]],
    *,
    random_values: list[int] | None = None,
    reset_cycles: int = 0,
) -> Replay:
    lib = cart_test_library()
    width = int(lib.gpu_env_test_cart_state_ints())
    n = len(accesses)
    image = np.frombuffer(rom, dtype=np.uint8).copy()
    randoms = np.asarray(random_values if random_values is not None else [0] * 128, dtype=np.uint32)
    ops = np.asarray(accesses, dtype=np.int32).reshape(-1) if n else np.zeros(4, dtype=np.int32)
    results = np.zeros(max(n, 1), dtype=np.uint8)
    states = np.zeros((max(n, 1), width), dtype=np.int32)
    sc_ram = np.zeros(128, dtype=np.uint8)
    lib.gpu_env_test_cart_replay(
        ctypes.c_int32(int(scheme)),
        image.ctypes.data_as(ctypes.POINTER(ctypes.c_uint8)),
        ctypes.c_uint32(len(rom)),
        randoms.ctypes.data_as(ctypes.POINTER(ctypes.c_uint32)),
        ctypes.c_uint32(reset_cycles),
        ctypes.c_int32(n),
        ops.ctypes.data_as(ctypes.POINTER(ctypes.c_int32)),
        results.ctypes.data_as(ctypes.POINTER(ctypes.c_uint8)),
        states.ctypes.data_as(ctypes.POINTER(ctypes.c_int32)),
        sc_ram.ctypes.data_as(ctypes.POINTER(ctypes.c_uint8)),
    )
    return Replay(results[:n], states[:n], sc_ram)


def reads(addresses: list[int], cycles: int = 0) -> list[tuple[int, int, int, int]]:
    return [(READ, a, 0, cycles) for a in addresses]


# Offsets inside the 4K window that are not hot spots of any scheme and not SC/DPC registers.
PLAIN_OFFSETS = [0x100, 0x345, 0x800, 0xABC, 0xF00, 0xFD0]

BANKED = [
    # scheme, ROM, first hot spot, banks, reset bank
    (CartScheme.F8, "asteroids", 0xFF8, 2, 1),
    (CartScheme.F6, "road_runner", 0xFF6, 4, 0),
    (CartScheme.F8SC, "elevator_action", 0xFF8, 2, 1),
    (CartScheme.F6SC, "darkchambers", 0xFF6, 4, 0),
    (CartScheme.DPC, "pitfall2", 0xFF8, 2, 1),
]


@pytest.mark.parametrize(("scheme", "rom_id", "first", "count", "reset_bank"), BANKED)
def test_reset_bank(scheme: CartScheme, rom_id: str, first: int, count: int, reset_bank: int) -> None:
    rom = load_rom(rom_id)
    assert rom.scheme == scheme
    out = replay(scheme, rom.data, reads([0x1000 + o for o in PLAIN_OFFSETS]))
    assert out.banks == [reset_bank] * len(PLAIN_OFFSETS)
    assert list(out.results) == [rom.data[reset_bank * BANK_SIZE + o] for o in PLAIN_OFFSETS]


@pytest.mark.parametrize(("scheme", "rom_id", "first", "count", "reset_bank"), BANKED)
@pytest.mark.parametrize("kind", [READ, WRITE])
@pytest.mark.parametrize("mirror", [0x1000, 0x3000, 0xF000])
def test_hotspots_switch_on_read_and_write(
    scheme: CartScheme, rom_id: str, first: int, count: int, reset_bank: int, kind: int, mirror: int
) -> None:
    rom = load_rom(rom_id).data
    for bank in range(count):
        hotspot = mirror | first + bank
        out = replay(scheme, rom, [(kind, hotspot, 0, 0), *reads([0x1000 + o for o in PLAIN_OFFSETS])])
        assert out.banks == [bank] * (1 + len(PLAIN_OFFSETS))
        assert list(out.results[1:]) == [rom[bank * BANK_SIZE + o] for o in PLAIN_OFFSETS]
        if kind == READ:  # the hot-spot read itself returns the newly selected bank's byte
            assert out.results[0] == rom[bank * BANK_SIZE + first + bank]


@pytest.mark.parametrize(("scheme", "rom_id", "first", "count", "reset_bank"), BANKED)
def test_other_addresses_do_not_switch(
    scheme: CartScheme, rom_id: str, first: int, count: int, reset_bank: int
) -> None:
    rom = load_rom(rom_id).data
    addresses = [0x1000 | o for o in (0x0FF4, 0x0FF5, first - 1, first + count, 0x0FFC, 0x0FFF, 0x0800)]
    out = replay(scheme, rom, [(kind, a, 0x55, 0) for a in addresses for kind in (READ, WRITE)])
    assert set(out.banks) == {reset_bank}


@pytest.mark.parametrize("rom_id", ["pong", "basic_math", "adventure", "alien"])
def test_2k_and_4k_are_plain_rom(rom_id: str) -> None:
    rom = load_rom(rom_id)
    mask = 0x7FF if rom.scheme == CartScheme.CART_2K else 0xFFF
    addresses = [0x1000, 0x17FF, 0x1800, 0x1FF8, 0x1FFF, 0xF123, 0x3FFC]
    out = replay(rom.scheme, rom.data, [(WRITE, 0x1FF8, 1, 0), *reads(addresses)])
    assert list(out.results[1:]) == [rom.data[a & mask] for a in addresses]


@pytest.mark.parametrize(("scheme", "rom_id"), [(CartScheme.F8SC, "elevator_action"), (CartScheme.F6SC, "klax")])
def test_superchip_ram_ports(scheme: CartScheme, rom_id: str) -> None:
    rom = load_rom(rom_id)
    assert rom.scheme == scheme
    randoms = [0x1234_5600 + i for i in range(128)]  # only the low byte of each draw is kept
    accesses = [
        (READ, 0x1080, 0, 0),  # read port right after reset: random fill
        (READ, 0x10FF, 0, 0),
        (WRITE, 0x1000, 0xA5, 0),  # write port
        (WRITE, 0x107F, 0x5A, 0),
        (READ, 0x1080, 0, 0),
        (READ, 0x10FF, 0, 0),
        (READ, 0x1000, 0, 0),  # reading the write port returns the current bank's ROM byte
        (WRITE, 0x1085, 0xEE, 0),  # writing the read port is dropped
        (READ, 0x1085, 0, 0),
        (READ, 0x1FF8 if scheme == CartScheme.F8SC else 0x1FF9, 0, 0),  # switch bank: RAM stays
        (READ, 0x1080, 0, 0),
    ]
    out = replay(scheme, rom.data, accesses, random_values=randoms)
    reset_bank = 1 if scheme == CartScheme.F8SC else 0
    assert list(out.results[:2]) == [0x00, 0x7F]
    assert list(out.results[4:6]) == [0xA5, 0x5A]
    assert out.results[6] == rom.data[reset_bank * BANK_SIZE + 0x000]
    assert out.results[8] == 0x05
    assert out.results[10] == 0xA5
    assert (out.sc_ram[0], out.sc_ram[0x7F], out.sc_ram[5]) == (0xA5, 0x5A, 0x05)


@pytest.mark.parametrize("rom_id", ["jamesbond", "montezuma_revenge", "tutankham"])
@pytest.mark.parametrize("kind", [READ, WRITE])
def test_e0_slices(rom_id: str, kind: int) -> None:
    rom = load_rom(rom_id)
    assert rom.scheme == CartScheme.E0
    data = rom.data
    quarter_probe = [0x1000 + q * 0x400 + 0x123 for q in range(4)]
    out = replay(CartScheme.E0, data, reads(quarter_probe))
    assert [int(v) for v in out.states[0][1:5]] == [4, 5, 6, 7]
    assert list(out.results) == [data[s * 1024 + 0x123] for s in (4, 5, 6, 7)]
    for segment in range(3):
        for slice_ in range(8):
            hotspot = 0x1FE0 + segment * 8 + slice_
            out = replay(CartScheme.E0, data, [(kind, hotspot, 0, 0), *reads(quarter_probe)])
            expected = [4, 5, 6, 7]
            expected[segment] = slice_
            assert [int(v) for v in out.states[0][1:5]] == expected
            assert list(out.results[1:]) == [data[s * 1024 + 0x123] for s in expected]
    # $xFF8-$xFFF are outside the hot-spot range.
    out = replay(CartScheme.E0, data, [(kind, 0x1FF8, 0, 0), (kind, 0x1FDF, 0, 0)])
    assert [int(v) for v in out.states[1][1:5]] == [4, 5, 6, 7]


def test_fe_bank_follows_address_line_13() -> None:
    rom = load_rom("robotank")
    assert rom.scheme == CartScheme.FE
    data = rom.data
    addresses = [0xF000, 0xFFFC, 0xD000, 0xDFFC, 0x1ABC, 0x3ABC, 0x5ABC, 0x7ABC]
    out = replay(CartScheme.FE, data, [(WRITE, 0xFFF8, 0, 0), *reads(addresses)])
    expected = [data[(a & 0xFFF) + (0 if a & 0x2000 else 4096)] for a in addresses]
    assert list(out.results[1:]) == expected


def _dpc_random_sequence(n: int) -> list[int]:
    """Read the DPC random register n times (each read also clocks it first)."""
    rom = load_rom("pitfall2").data
    return [int(v) for v in replay(CartScheme.DPC, rom, reads([0x1000] * n)).results]


def test_dpc_random_number_generator_is_a_maximal_8bit_lfsr() -> None:
    """XNOR feedback from bits 7, 5, 4, 3: every byte but the lock-up value $FF, period 255."""
    values = _dpc_random_sequence(256)
    assert len(set(values[:255])) == 255
    assert 0xFF not in values
    assert values[255] == values[0]


def test_dpc_rng_clocked_only_by_device_accesses() -> None:
    rom = load_rom("pitfall2").data
    # ROM reads at $x080-$xFBF go through Stella's direct page table: no clock.
    out = replay(CartScheme.DPC, rom, [*reads([0x1080, 0x1500, 0x1FBF]), (READ, 0x1FC0, 0, 0), (WRITE, 0x1500, 0, 0)])
    randoms = [int(s[5]) for s in out.states]
    assert randoms[:3] == [1, 1, 1]
    assert randoms[3] != 1
    assert randoms[4] != randoms[3]
    # A write to $x070-$x077 (function 6) resets the generator to 1, after clocking it.
    reset = replay(CartScheme.DPC, rom, [(READ, 0x1000, 0, 0), (WRITE, 0x1070, 0, 0)])
    assert int(reset.states[1][5]) == 1


@given(counter=st.integers(0, 0x7FF), top=st.integers(0, 255), bottom=st.integers(0, 255), index=st.integers(0, 4))
def test_dpc_display_fetcher(counter: int, top: int, bottom: int, index: int) -> None:
    """Program a display data fetcher, then read its data, masked data and flags.

    Fetcher `index`: top, bottom and the 11-bit counter, then display data ($x008+i), masked data
    ($x010+i) and flags ($x038+i); each data read steps the counter down.
    """
    rom = load_rom("pitfall2").data
    display = rom[8192 : 8192 + 2048]
    setup = [
        (WRITE, 0x1040 + index, top, 0),
        (WRITE, 0x1048 + index, bottom, 0),
        (WRITE, 0x1050 + index, counter & 0xFF, 0),
        (WRITE, 0x1058 + index, counter >> 8, 0),
    ]
    out = replay(CartScheme.DPC, rom, [*setup, (READ, 0x1008 + index, 0, 0), (READ, 0x1008 + index, 0, 0)])
    assert out.results[4] == display[2047 - counter]
    assert out.results[5] == display[2047 - ((counter - 1) & 0x7FF)]
    assert index >= 3 or int(out.states[5][6 + index]) == (counter - 2) & 0x7FF
    flags = replay(CartScheme.DPC, rom, [*setup, (READ, 0x1038 + index, 0, 0), (READ, 0x1010 + index, 0, 0)])
    low = counter & 0xFF
    expected_flag = 0xFF if low == top else 0x00  # the top write cleared the flag
    assert flags.results[4] == expected_flag
    masked = display[2047 - ((counter - 1) & 0x7FF)]
    low2 = (counter - 1) & 0xFF
    flag2 = 0xFF if low2 == top else (0x00 if low2 == bottom else expected_flag)
    assert flags.results[5] == masked & flag2


def test_dpc_music_mode_amplitude_toggles_with_time() -> None:
    """Fetcher 5 in music mode makes the amplitude register alternate between 0 and 4.

    With top 9 and bottom 4 its flag (amplitude 4) follows the 15.75 kHz music clock, so reading
    $x005 over time gives both 0 and 4 and nothing else.
    """
    rom = load_rom("pitfall2").data
    setup = [(WRITE, 0x1045, 9, 0), (WRITE, 0x104D, 4, 0), (WRITE, 0x105D, 0x10, 0), (WRITE, 0x1055, 0, 0)]
    probes = [(READ, 0x1005, 0, 100 + 40 * k) for k in range(200)]
    out = replay(CartScheme.DPC, rom, [*setup, *probes])
    assert int(out.states[3][11]) & 1 == 1
    assert set(int(v) for v in out.results[4:]) == {0, 4}


def test_dpc_cycles_reset_rewinds_the_music_clock() -> None:
    rom = load_rom("pitfall2").data
    out = replay(CartScheme.DPC, rom, [(CYCLES_RESET, 0, 500, 0)], reset_cycles=700)
    assert int(out.states[0][10]) == 200


def test_reset_draw_counts() -> None:
    lib = cart_test_library()
    draws = {scheme: int(lib.gpu_env_test_cart_reset_draws(int(scheme))) for scheme in CartScheme}
    assert draws == {s: (128 if s in (CartScheme.F6SC, CartScheme.F8SC) else 0) for s in CartScheme}
