"""ROM loading and Stella's bank-switching auto-detection (gpu_env.roms)."""

from __future__ import annotations

import csv
import ctypes
import hashlib
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpu_env.errors import RomError
from gpu_env.roms import SUPPORTED_SCHEMES, CartScheme, Rom, detect_scheme, load_rom
from tests.data_paths import data_path
from tests.gpu_env.native_test_lib import cart_test_library


def _roms_csv() -> list[dict[str, str]]:
    with data_path("reference/atari_roms.csv").open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


@pytest.fixture(scope="module")
def bundled() -> list[tuple[dict[str, str], Rom]]:
    return [(row, load_rom(row["rom_id"])) for row in _roms_csv()]


def test_all_bundled_roms_detected_as_ale(bundled: list[tuple[dict[str, str], Rom]]) -> None:
    assert len(bundled) == 108
    wrong = [
        (row["rom_id"], row["bankswitch"], rom.scheme.stella_name)
        for row, rom in bundled
        if rom.scheme.stella_name != row["bankswitch"]
    ]
    assert not wrong
    for row, rom in bundled:
        assert rom.md5 == row["md5"]
        assert rom.size == int(row["size_bytes"])
        assert rom.rom_id == row["rom_id"]
    assert {rom.scheme.stella_name for _, rom in bundled} == set(SUPPORTED_SCHEMES)


def test_load_by_path_equals_load_by_id(bundled: list[tuple[dict[str, str], Rom]]) -> None:
    _, by_id = bundled[0]
    by_path = load_rom(by_id.path)
    assert (by_path.data, by_path.md5, by_path.scheme, by_path.rom_id) == (by_id.data, by_id.md5, by_id.scheme, None)
    assert by_path.md5 == hashlib.md5(by_path.data).hexdigest()


def test_every_bundled_rom_boots_without_a_jam(bundled: list[tuple[dict[str, str], Rom]]) -> None:
    """Boot every ROM on CPU + RIOT + cartridge (no TIA: its reads return 0), 100,000 instructions.

    A wrong bank layout sends the CPU into data and, soon, a JAM opcode. Every banked scheme except
    FE (stateless: A13 is the bank) must also switch banks.
    """
    lib = cart_test_library()
    for row, rom in bundled:
        image = np.frombuffer(rom.data, dtype=np.uint8).copy()
        instructions, fatal = ctypes.c_uint64(), ctypes.c_uint8()
        bank_changes, pc = ctypes.c_uint32(), ctypes.c_uint32()
        lib.gpu_env_test_mini_console_run(
            ctypes.c_int32(int(rom.scheme)),
            image.ctypes.data_as(ctypes.POINTER(ctypes.c_uint8)),
            ctypes.c_uint32(rom.size),
            ctypes.c_uint64(100_000),
            ctypes.byref(instructions),
            ctypes.byref(fatal),
            ctypes.byref(bank_changes),
            ctypes.byref(pc),
        )
        assert fatal.value == 0, f"{row['rom_id']} hit a JAM at pc={pc.value:#06x}"
        assert instructions.value == 100_000
        if rom.scheme not in (CartScheme.CART_2K, CartScheme.CART_4K, CartScheme.FE):
            assert bank_changes.value > 0, row["rom_id"]


def _image(size: int) -> bytearray:
    """Return a fixed pseudo-random image (halves and banks differ, no bank starts uniform)."""
    return bytearray(np.random.default_rng(size).integers(0, 256, size, dtype=np.uint8).tobytes())


def test_synthetic_detection() -> None:
    assert detect_scheme(bytes(_image(2048))) == "2K"
    assert detect_scheme(bytes(_image(2048) * 2)) == "2K"  # 4K with identical halves
    assert detect_scheme(bytes(_image(4096))) == "4K"
    assert detect_scheme(bytes(_image(4096) * 2)) == "4K"  # 8K with identical halves
    assert detect_scheme(bytes(_image(8192))) == "F8"
    assert detect_scheme(bytes(_image(16384))) == "F6"
    assert detect_scheme(bytes(_image(10495))) == "DPC"
    sc8 = _image(8192)
    sc8[0:256] = b"\x00" * 256
    sc8[4096 : 4096 + 256] = b"\xff" * 256
    assert detect_scheme(bytes(sc8)) == "F8SC"
    sc16 = _image(16384)
    for bank in range(4):
        sc16[bank * 4096 : bank * 4096 + 256] = bytes([bank]) * 256
    assert detect_scheme(bytes(sc16)) == "F6SC"
    e0 = _image(8192)
    e0[5000:5003] = bytes([0xAD, 0xE9, 0xFF])  # LDA $FFE9
    assert detect_scheme(bytes(e0)) == "E0"
    fe = _image(8192)
    fe[3000:3005] = bytes([0x20, 0x00, 0xF0, 0x84, 0xD6])  # JSR $F000; STY $D6
    assert detect_scheme(bytes(fe)) == "FE"
    cv = _image(2048)
    cv[100:103] = bytes([0x9D, 0xFF, 0xF3])
    assert detect_scheme(bytes(cv)) == "CV"
    assert detect_scheme(bytes(_image(32768))) == "F4"
    assert detect_scheme(bytes(_image(8448))) == "AR"
    assert detect_scheme(bytes(_image(12288))) == "FASC"
    assert detect_scheme(bytes(_image(3000))) is None
    assert detect_scheme(bytes(_image(8192)), md5="bc24440b59092559a1ec26055fd1270e") == "F8 swapped"


def test_signature_search_reproduces_stella_skips() -> None:
    """Stella resumes one byte late after a hit and never tests the last start position."""
    adjacent = _image(8192)
    adjacent[100:104] = bytes([0x85, 0x3F, 0x85, 0x3F])  # second STA $3F is skipped over
    assert detect_scheme(bytes(adjacent)) == "F8"
    apart = _image(8192)
    apart[100:105] = bytes([0x85, 0x3F, 0x00, 0x85, 0x3F])
    assert detect_scheme(bytes(apart)) == "3F"
    at_end = _image(8192)
    at_end[8189:8192] = bytes([0xAD, 0xE9, 0xFF])  # E0 signature in the last possible position
    assert detect_scheme(bytes(at_end)) == "F8"


@given(st.binary(min_size=1, max_size=600))
def test_unknown_sizes_are_rejected(blob: bytes) -> None:
    """Below 2K nothing is recognised except by the 3E/3F signatures Stella also tries."""
    assert detect_scheme(blob) in (None, "3E", "3F")


def _write(tmp_path: Path, name: str, data: bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


@pytest.mark.parametrize(
    ("size", "needle"),
    [(0, "empty"), (4095, "4095 bytes"), (1, "1 bytes"), (8191, "8191 bytes"), (32768, "'F4'")],
)
def test_bad_files_name_file_size_and_what_is_supported(tmp_path: Path, size: int, needle: str) -> None:
    path = _write(tmp_path, f"bad_{size}.bin", bytes(_image(size)) if size else b"")
    with pytest.raises(RomError) as info:
        load_rom(path)
    message = str(info.value)
    assert str(path) in message
    assert needle in message
    assert "2048" in message
    assert "F6SC" in message


def test_missing_file_and_unknown_id(tmp_path: Path) -> None:
    with pytest.raises(RomError, match="does not exist"):
        load_rom(tmp_path / "nope.bin")
    with pytest.raises(RomError, match="get_all_rom_ids"):
        load_rom("not_a_real_game")
    with pytest.raises(RomError, match="not a regular file"):
        load_rom(tmp_path)


def test_unsupported_scheme_of_a_supported_size(tmp_path: Path) -> None:
    image = _image(8192)
    image[10:14] = bytes([0x85, 0x3E, 0xA9, 0x00])  # STA $3E; LDA #$00 -> 3E
    path = _write(tmp_path, "three_e.bin", bytes(image))
    with pytest.raises(RomError, match=r"'3E'.*does not implement"):
        load_rom(path)


def test_scheme_names() -> None:
    assert CartScheme.from_stella_name("F8SC") is CartScheme.F8SC
    assert CartScheme.F6SC.stella_class == "CartridgeF6SC"
    assert [s.stella_name for s in CartScheme] == list(SUPPORTED_SCHEMES)
    with pytest.raises(RomError, match="not implemented"):
        CartScheme.from_stella_name("E7")
