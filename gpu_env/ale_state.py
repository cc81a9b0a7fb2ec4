"""Parse the bytes of ale-py 0.12's ``ALEInterface.cloneState()`` into plain Python values.

The layout (ALE ``ALEState::serialize``, ``System::saveState`` and each device's ``save``) is recorded
in the project's reference notes: ints are 4-byte little-endian, strings are an int length plus
bytes, bools are the magic ints 0xFAB1FAB2 / 0xBAD1BAD2. Only the machine state is decoded; the
game-specific RomSettings block and the optional environment RNG that follow the cartridge are
skipped (they are not emulator state).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

from gpu_env.errors import GpuEnvError

_TRUE = 0xFAB1FAB2
_FALSE = 0xBAD1BAD2

# Each device block of the blob opens with a string naming it; these are the names found in ale-py
# 0.12's bytes (a fact of the format: a block is found by its name).
_SECTION_NAMES: dict[str, bytes] = {
    "system": b"System", "cpu": b"M6502Low", "riot": b"M6532", "tia": b"TIA", "sound": b"TIASound",
}


class AleStateError(GpuEnvError):
    """The bytes are not an ale-py 0.12 ``cloneState()`` blob this version can read."""


class _Reader:
    def __init__(self, data: bytes) -> None:
        self.data = data
        self.pos = 0

    def int32(self) -> int:
        if self.pos + 4 > len(self.data):
            raise AleStateError(
                f"state ends early at byte {self.pos} of {len(self.data)}: pass the bytes of ale.cloneState()"
            )
        (value,) = struct.unpack_from("<i", self.data, self.pos)
        self.pos += 4
        return int(value)

    def bool(self) -> bool:
        raw = self.int32() & 0xFFFFFFFF
        if raw == _TRUE:
            return True
        if raw == _FALSE:
            return False
        raise AleStateError(f"expected a serialized bool at byte {self.pos - 4}, found 0x{raw:08X}")

    def string(self) -> bytes:
        n = self.int32()
        if n < 0 or self.pos + n > len(self.data):
            raise AleStateError(f"bad string length {n} at byte {self.pos - 4}")
        s = self.data[self.pos : self.pos + n]
        self.pos += n
        return s

    def section(self, device: str) -> None:
        """Read the name string that opens ``device``'s block and check it (see :data:`_SECTION_NAMES`)."""
        expected = _SECTION_NAMES[device]
        got = self.string()
        if got != expected:
            raise AleStateError(f"expected the {device} block ({expected!r}), found {got[:40]!r}")

    def ints(self, expected_count: int) -> list[int]:
        n = self.int32()
        if n != expected_count:
            raise AleStateError(f"expected an array of {expected_count} ints, found length {n}")
        return [self.int32() for _ in range(n)]


@dataclass
class AleMachineState:
    """The emulator part of an ale-py state (field names follow ALE's C++ members)."""

    left_paddle: int
    right_paddle: int
    frame_number: int
    episode_frame_number: int
    mode: int
    difficulty: int
    paddle_min: int
    paddle_max: int
    md5: str
    cycles: int
    cpu: list[int]  # A, X, Y, SP, IR, PC, N, V, B, D, I, notZ, C, executionStatus
    ram: list[int]
    riot: list[int]  # timer, intervalShift, cyclesWhenTimerSet, cyclesWhenInterruptReset, readAfterInt, DDRA, DDRB
    tia: list[int]  # TIA::save order, bools as 0/1, colours as their low byte
    cart_name: str
    cart: list[int] = field(default_factory=list)  # scheme-specific, see _parse_cart
    system_rng: bytes = b""  # the System RNG as text: a std::mt19937's 624 words and index
    has_env_rng: bool = False  # the blob ends with the sticky-action RNG (cloneState(include_rng=True))


_TIA_LAYOUT = (
    "iiiiiiii"  # clocks and scanline counters
    "iiiii"  # enabled objects, VSYNC, VBLANK, NUSIZ0, NUSIZ1
    "iiii"  # COLUP0, COLUP1, COLUPF, COLUBK
    "ii"  # CTRLPF, priority/score
    "bb"  # REFP0, REFP1
    "iiiii"  # PF, GRP0, GRP1, DGRP0, DGRP1
    "bbbb"  # ENAM0, ENAM1, ENABL, DENABL
    "iiiii"  # HMP0 .. HMBL
    "bbbbb"  # VDELP0, VDELP1, VDELBL, RESMP0, RESMP1
    "iiiiii"  # collision, POSP0, POSP1, POSM0, POSM1, POSBL
    "iii"  # current GRP0, GRP1, last HMOVE clock
    "bbi"  # HMOVE blank enabled, Cosmic Ark enabled, Cosmic Ark counter
    "bi"  # dump enabled, dump disabled cycle
)


def _parse_cart(r: _Reader, name: str) -> list[int]:
    if name in ("Cartridge2K", "Cartridge4K", "CartridgeFE"):
        return []
    if name in ("CartridgeF8", "CartridgeF6"):
        return [r.int32()]
    if name in ("CartridgeF8SC", "CartridgeF6SC"):
        return [r.int32(), *r.ints(128)]
    if name == "CartridgeE0":
        return r.ints(4)
    if name == "CartridgeDPC":
        out = [r.int32()]
        for _ in range(4):
            out += r.ints(8)
        n = r.int32()
        if n != 3:
            raise AleStateError(f"DPC music-mode array has length {n}, expected 3")
        out += [int(r.bool()) for _ in range(3)]
        out += [r.int32(), r.int32(), r.int32() & 0xFFFFFFFF]
        return out
    raise AleStateError(
        f"cartridge type {name!r} is not one gpu_env emulates (2K, 4K, F8, F6, F6SC, F8SC, E0, FE, DPC)"
    )


def state_bytes(state: object) -> bytes:
    """Return the serialized bytes of an ``ale_py.ALEState`` (``.serialize()``) or of bytes-like input."""
    if isinstance(state, bytes | bytearray | memoryview):
        return bytes(state)
    serialize = getattr(state, "serialize", None)
    if callable(serialize):
        raw = serialize()
        if isinstance(raw, str):
            return raw.encode("latin-1")
        if isinstance(raw, bytes | bytearray):
            return bytes(raw)
    raise AleStateError(f"expected ale.cloneState() or its serialize() bytes, got {type(state).__name__}")


def parse_ale_state(data: object) -> AleMachineState:
    """Decode ``ale.cloneState()`` (or its ``bytes(...)``) into an :class:`AleMachineState`."""
    outer = _Reader(state_bytes(data))
    head = [outer.int32() for _ in range(6)]
    inner_bytes = outer.string()
    inner = _Reader(inner_bytes)
    paddle_min, paddle_max = outer.int32(), outer.int32()
    md5 = inner.string().decode("ascii", "replace")
    inner.section("system")
    cycles = inner.int32() & 0xFFFFFFFF
    system_rng = inner.string()
    inner.section("cpu")
    cpu = [inner.int32() for _ in range(6)] + [int(inner.bool()) for _ in range(7)] + [inner.int32()]
    inner.section("riot")
    ram = [v & 0xFF for v in inner.ints(128)]
    riot = [inner.int32(), inner.int32(), inner.int32(), inner.int32(), int(inner.bool()), inner.int32(), inner.int32()]
    inner.section("tia")
    tia = [int(inner.bool()) if kind == "b" else inner.int32() for kind in _TIA_LAYOUT]
    inner.section("sound")
    for _ in range(7):
        inner.int32()
    cart_name = inner.string().decode("ascii", "replace")
    cart = _parse_cart(inner, cart_name)
    return AleMachineState(
        left_paddle=head[0],
        right_paddle=head[1],
        frame_number=head[2],
        episode_frame_number=head[3],
        mode=head[4],
        difficulty=head[5],
        paddle_min=paddle_min,
        paddle_max=paddle_max,
        md5=md5,
        cycles=cycles,
        cpu=cpu,
        ram=ram,
        riot=riot,
        tia=tia,
        cart_name=cart_name,
        cart=cart,
        system_rng=system_rng,
        # The inner block's last word is the bool "the sticky-action RNG follows" (absent: _FALSE).
        has_env_rng=len(inner_bytes) >= 4 and struct.unpack_from("<I", inner_bytes, len(inner_bytes) - 4)[0] != _FALSE,
    )
