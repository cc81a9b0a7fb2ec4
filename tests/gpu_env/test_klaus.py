"""Whole-program CPU tests on the flat-memory harness.

Klaus Dormann's functional test and Bruce Clark's decimal test, with the counts and outcome
ale-py's default core produces (see the README next to the test data).
"""

from __future__ import annotations

import pytest

from gpu_env.cpu_harness import run_program
from gpu_env.errors import GpuEnvError
from tests.gpu_env.m6502_testdata import conformance_data_dir

FUNCTIONAL_SUCCESS_PC = 0x3469
DECIMAL_DONE_PC = 0x044B
DECIMAL_ERROR = 0x0B


def test_klaus_functional_test_reaches_success() -> None:
    image = (conformance_data_dir() / "klaus" / "6502_functional_test.bin").read_bytes()
    result = run_program(image, 0x0000, 0x0400, FUNCTIONAL_SUCCESS_PC, 100_000_000)
    assert result["fatal"] is False
    assert result["pc"] == FUNCTIONAL_SUCCESS_PC, f"trapped at {result['pc']:#06x}, test {result['memory'][0x200]}"
    assert result["success"] is True
    # Measured on ale-py's core (README): the trap's JMP * is the last instruction counted.
    assert result["instructions"] == 30_646_177
    assert result["cycles"] == 96_241_367
    assert (result["a"], result["x"], result["y"], result["s"]) == (0xF0, 0x0E, 0xFF, 0xFF)


def test_bruce_clark_decimal_test_fails_like_ale() -> None:
    """ale-py's table-driven BCD fails this NMOS test on SBC $0A - $00 (C=1): $10 instead of $0A."""
    image = (conformance_data_dir() / "klaus" / "6502_decimal_test.bin").read_bytes()
    result = run_program(image, 0x0400, 0x0400, DECIMAL_DONE_PC, 100_000_000)
    assert result["pc"] == DECIMAL_DONE_PC
    assert result["memory"][DECIMAL_ERROR] == 1
    assert result["instructions"] == 1_413
    assert result["cycles"] == 4_418
    expected_zero_page = bytes.fromhex("0A 00 0A 31 10 39 0A 31 31 31 31 01 0A 00 00 00")
    assert result["memory"][:16] == expected_zero_page


def test_run_program_stops_at_max_instructions() -> None:
    # LDA #$01; CLC; ADC #$01; JMP $0400 (a loop that never traps on itself)
    program = bytes([0xA9, 0x01, 0x18, 0x69, 0x01, 0x4C, 0x00, 0x04])
    result = run_program(program, 0x0400, 0x0400, 0x0000, 10)
    assert result["instructions"] == 10
    assert result["success"] is False
    assert result["cycles"] == 2 + 2 + 2 + 3 + 2 + 2 + 2 + 3 + 2 + 2


def test_run_program_stops_on_jam() -> None:
    result = run_program(bytes([0xEA, 0x02]), 0x0400, 0x0400, 0x0000, 100)
    assert result["fatal"] is True
    assert result["instructions"] == 2


@pytest.mark.parametrize(
    ("image", "load", "start", "success", "limit"),
    [(b"\x00" * 16, 0xFFF8, 0, 0, 1), (b"\xea", 0, 0x10000, 0, 1), (b"\xea", 0, 0, 0, 0)],
)
def test_run_program_rejects_bad_arguments(image: bytes, load: int, start: int, success: int, limit: int) -> None:
    with pytest.raises(GpuEnvError):
        run_program(image, load, start, success, limit)
