"""The 6502 core against every committed single-step vector (tests/data/6502), as ale-py's default CPU executes them.

Expected result per vector: ``ale.final`` when present (ale-py differs from the chip), else
``final``; cycles ``ale.ncycles``; the bus accesses ``ale.bus``; JAM opcodes -> fatal. P is
compared as ``p | 0x30``. Vectors whose ale-py run touched memory outside the listed cells
(``unlisted_access``: the (zp,X)/(zp),Y pointer at $FF reading $0100, a flat-memory artefact) are
counted separately but must match too.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpu_env.cpu_harness import REGISTER_NAMES, VectorBatchResult, execute_batch, execute_one
from tests.gpu_env.m6502_testdata import load_vectors

CATEGORIES = ("documented", "undocumented", "undocumented_unstable", "undocumented_jam")


def _expected(vector: dict[str, Any]) -> dict[str, Any]:
    ale = vector["ale"]
    final: dict[str, Any] = ale.get("final", vector["final"])
    return final


def _mismatches(vectors: list[dict[str, Any]], result: VectorBatchResult) -> Counter[tuple[int, str]]:
    """(opcode, field) -> number of vectors where that field differs from ale-py."""
    bad: Counter[tuple[int, str]] = Counter()
    offset = 0
    for i, vector in enumerate(vectors):
        ale = vector["ale"]
        expected = _expected(vector)
        ram = expected["ram"]
        opcode = vector["opcode"]
        if ale.get("fatal"):
            if not result.fatal[i]:
                bad[(opcode, "fatal")] += 1
        else:
            if result.fatal[i]:
                bad[(opcode, "fatal")] += 1
            for k, name in enumerate(REGISTER_NAMES):
                mask = 0x30 if name == "p" else 0
                if (int(result.regs[i, k]) | mask) != (expected[name] | mask):
                    bad[(opcode, name)] += 1
            got = result.check_values[offset : offset + len(ram)]
            if any(int(g) != value for g, (_, value) in zip(got, ram, strict=True)):
                bad[(opcode, "ram")] += 1
            if int(result.cycles[i]) != ale["ncycles"]:
                bad[(opcode, "cycles")] += 1
            n = int(result.bus_len[i])
            bus = [[int(a), int(v), "write" if kind else "read"] for a, v, kind in result.bus[i, :n]]
            if bus != ale["bus"]:
                bad[(opcode, "bus")] += 1
        offset += len(ram)
    return bad


@pytest.fixture(scope="module")
def results() -> dict[str, tuple[list[dict[str, Any]], VectorBatchResult]]:
    out: dict[str, tuple[list[dict[str, Any]], VectorBatchResult]] = {}
    for category in CATEGORIES:
        vectors = load_vectors(category)
        checks = [[address for address, _ in _expected(v)["ram"]] for v in vectors]
        out[category] = (vectors, execute_batch([v["initial"] for v in vectors], checks))
    return out


@pytest.mark.parametrize("category", CATEGORIES)
def test_all_vectors_match_ale(
    category: str, results: dict[str, tuple[list[dict[str, Any]], VectorBatchResult]]
) -> None:
    vectors, result = results[category]
    assert len(vectors) > 0
    bad = _mismatches(vectors, result)
    assert not bad, f"{sum(bad.values())} field mismatches in {category}: {sorted(bad.items())[:20]}"


def test_vector_counts(results: dict[str, tuple[list[dict[str, Any]], VectorBatchResult]]) -> None:
    opcodes = {v["opcode"] for vectors, _ in results.values() for v in vectors}
    assert opcodes == set(range(256))
    assert sum(len(vectors) for vectors, _ in results.values()) == 256 * 200


def test_unlisted_access_vectors_match(
    results: dict[str, tuple[list[dict[str, Any]], VectorBatchResult]],
) -> None:
    """The flat-memory artefact vectors, reported on their own: they must match like the rest."""
    for category, (vectors, _) in results.items():
        flagged = [i for i, v in enumerate(vectors) if v["ale"].get("unlisted_access")]
        if not flagged:
            continue
        subset = [vectors[i] for i in flagged]
        checks = [[a for a, _ in _expected(v)["ram"]] for v in subset]
        sub_result = execute_batch([v["initial"] for v in subset], checks)
        assert not _mismatches(subset, sub_result), category


def test_jam_is_fatal_and_stays_fatal(
    results: dict[str, tuple[list[dict[str, Any]], VectorBatchResult]],
) -> None:
    vectors, result = results["undocumented_jam"]
    assert bool(result.fatal.all())
    assert {v["opcode"] for v in vectors} == {0x02, 0x12, 0x22, 0x32, 0x42, 0x52, 0x62, 0x72, 0x92, 0xB2, 0xD2, 0xF2}


def test_execute_one_agrees_with_the_vectors(
    results: dict[str, tuple[list[dict[str, Any]], VectorBatchResult]],
) -> None:
    """The public single-vector entry point, on the first vector of every opcode."""
    seen: set[int] = set()
    for vectors, _ in results.values():
        for vector in vectors:
            if vector["opcode"] in seen:
                continue
            seen.add(vector["opcode"])
            out = execute_one(vector["initial"])
            assert set(out) >= {"pc", "s", "a", "x", "y", "p", "memory", "cycles", "fatal"}
            assert len(out["memory"]) == 65536
            if vector["ale"].get("fatal"):
                assert out["fatal"] is True
                continue
            expected = _expected(vector)
            assert out["fatal"] is False
            assert out["cycles"] == vector["ale"]["ncycles"]
            for name in REGISTER_NAMES:
                mask = 0x30 if name == "p" else 0
                assert out[name] | mask == expected[name] | mask, (vector["name"], name)
            for address, value in expected["ram"]:
                assert out["memory"][address] == value, (vector["name"], address)
            assert out["bus"] == vector["ale"]["bus"]
    assert len(seen) == 256


_byte = st.integers(0, 255)


@given(
    opcode=_byte,
    operands=st.lists(_byte, min_size=2, max_size=2),
    pc=st.integers(0, 0xFFFF),
    s=_byte,
    a=_byte,
    x=_byte,
    y=_byte,
    p=_byte,
)
def test_execute_one_invariants(
    opcode: int, operands: list[int], pc: int, s: int, a: int, x: int, y: int, p: int
) -> None:
    """Check invariants of any instruction from any state.

    Deterministic, P reads with bits 4 and 5 set, 2 to 8 cycles (8: read-modify-write through
    (zp,X) / (zp),Y), memory changes only where the bus log wrote.
    """
    ram = [[pc, opcode], [(pc + 1) & 0xFFFF, operands[0]], [(pc + 2) & 0xFFFF, operands[1]]]
    initial = {"pc": pc, "s": s, "a": a, "x": x, "y": y, "p": p, "ram": ram}
    first = execute_one(initial)
    assert first == execute_one(initial)
    assert first["p"] & 0x30 == 0x30
    assert 2 <= first["cycles"] <= 8
    before = np.zeros(65536, dtype=np.uint8)
    for address, value in ram:
        before[address] = value
    after = np.frombuffer(first["memory"], dtype=np.uint8)
    written = {address for address, _, kind in first["bus"] if kind == "write"}
    changed = {int(i) for i in np.flatnonzero(before != after)}
    assert changed <= written
