"""A public flat-memory harness for gpu_env's 6502 core (the exact CPU the emulator runs).

The core (``gpu_env/core/m6502.h``) is run on a plain 64 KiB RAM: all 16 address bits decode, there
is no TIA, RIOT or cartridge. This is how single-instruction conformance vectors (Tom Harte's format)
and whole-program tests (Klaus Dormann's) exercise it.

Register dicts use the vectors' names: ``pc, s, a, x, y, p`` (ints). ``p`` reads back with bits 4
and 5 set, as ale-py's status register always does.
"""

from __future__ import annotations

import ctypes
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from gpu_env.binding import native
from gpu_env.errors import GpuEnvError

MEMORY_SIZE = 65536
REGISTER_NAMES: tuple[str, ...] = ("pc", "s", "a", "x", "y", "p")

_U8P = ctypes.POINTER(ctypes.c_uint8)
_I32P = ctypes.POINTER(ctypes.c_int32)
_U64P = ctypes.POINTER(ctypes.c_uint64)


def _ptr(array: npt.NDArray[Any], ctype: Any) -> Any:
    return array.ctypes.data_as(ctypes.POINTER(ctype))


def _registers_in(initial: Mapping[str, Any]) -> npt.NDArray[np.int32]:
    missing = [name for name in REGISTER_NAMES if name not in initial]
    if missing:
        raise GpuEnvError(f"initial state lacks register(s) {missing}: give all of {list(REGISTER_NAMES)} as ints")
    regs = np.array([int(initial[name]) for name in REGISTER_NAMES], dtype=np.int32)
    limits = np.array([0xFFFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF], dtype=np.int32)
    bad = [(n, int(v)) for n, v, lim in zip(REGISTER_NAMES, regs, limits, strict=True) if not 0 <= v <= lim]
    if bad:
        raise GpuEnvError(f"register value(s) out of range: {bad}; pc is 16-bit, the others 8-bit")
    return regs


def _ram_pairs(pairs: Iterable[Sequence[int]]) -> npt.NDArray[np.int32]:
    array = np.asarray([[int(a), int(v)] for a, v in pairs], dtype=np.int64).reshape(-1, 2)
    if array.size and (array[:, 0].min() < 0 or array[:, 0].max() > 0xFFFF):
        raise GpuEnvError("ram addresses must be in 0..65535: give `ram` as [address, value] pairs")
    if array.size and (array[:, 1].min() < 0 or array[:, 1].max() > 0xFF):
        raise GpuEnvError("ram values must be bytes (0..255): give `ram` as [address, value] pairs")
    return array.astype(np.int32)


def _registers_out(regs: npt.NDArray[np.int32]) -> dict[str, int]:
    return {name: int(value) for name, value in zip(REGISTER_NAMES, regs, strict=True)}


def execute_one(initial: Mapping[str, Any]) -> dict[str, Any]:
    """Execute one instruction from ``initial`` on a zeroed flat 64 KiB memory.

    ``initial`` is in the single-step vector format: ``pc, s, a, x, y, p`` and ``ram`` as
    ``[address, value]`` pairs (cells not listed are 0). Returns ``pc, s, a, x, y, p`` (ints),
    ``memory`` (bytes, 65,536), ``cycles`` (int, as ale-py charges them), ``fatal`` (bool: a JAM
    opcode stopped the CPU) and ``bus`` (list of ``[address, value, "read"|"write"]`` in order).
    """
    regs = _registers_in(initial)
    memory = np.zeros(MEMORY_SIZE, dtype=np.uint8)
    pairs = _ram_pairs(initial.get("ram", []))
    if pairs.size:
        memory[pairs[:, 0]] = pairs[:, 1].astype(np.uint8)
    lib = native()
    capacity = lib.gpu_env_harness_log_capacity()
    log = np.zeros(capacity * 3, dtype=np.int32)
    log_len = np.zeros(1, dtype=np.int32)
    cycles = np.zeros(1, dtype=np.uint64)
    fatal = np.zeros(1, dtype=np.uint8)
    lib.gpu_env_harness_step(
        _ptr(memory, ctypes.c_uint8),
        _ptr(regs, ctypes.c_int32),
        _ptr(cycles, ctypes.c_uint64),
        _ptr(fatal, ctypes.c_uint8),
        _ptr(log, ctypes.c_int32),
        _ptr(log_len, ctypes.c_int32),
    )
    entries = log.reshape(-1, 3)[: min(int(log_len[0]), capacity)]
    result: dict[str, Any] = _registers_out(regs)
    result["memory"] = memory.tobytes()
    result["cycles"] = int(cycles[0])
    result["fatal"] = bool(fatal[0])
    result["bus"] = [[int(a), int(v), "write" if k else "read"] for a, v, k in entries]
    return result


@dataclass(frozen=True)
class VectorBatchResult:
    """Results of :func:`execute_batch` for ``n`` vectors.

    regs: int32[n, 6] (pc, s, a, x, y, p after the instruction); cycles: uint64[n]; fatal: bool[n];
    check_values: uint8[m] (memory at the requested check addresses, concatenated per vector);
    bus: int32[n, capacity, 3] (address, value, 0=read/1=write); bus_len: int32[n].
    """

    regs: npt.NDArray[np.int32]
    cycles: npt.NDArray[np.uint64]
    fatal: npt.NDArray[np.bool_]
    check_values: npt.NDArray[np.uint8]
    bus: npt.NDArray[np.int32]
    bus_len: npt.NDArray[np.int32]


def execute_batch(initials: Sequence[Mapping[str, Any]], check_addresses: Sequence[Sequence[int]]) -> VectorBatchResult:
    """Execute one instruction for each initial state (each on its own zeroed memory) in one C call.

    ``check_addresses[i]`` lists the addresses whose final memory value is returned for vector i.
    """
    if len(initials) != len(check_addresses):
        raise GpuEnvError(
            f"{len(initials)} initial states but {len(check_addresses)} check-address lists: give one per state"
        )
    n = len(initials)
    regs = np.zeros((n, 6), dtype=np.int32)
    ram_chunks: list[npt.NDArray[np.int32]] = []
    ram_offsets = np.zeros(n + 1, dtype=np.int32)
    check_offsets = np.zeros(n + 1, dtype=np.int32)
    for i, initial in enumerate(initials):
        regs[i] = _registers_in(initial)
        pairs = _ram_pairs(initial.get("ram", []))
        ram_chunks.append(pairs)
        ram_offsets[i + 1] = ram_offsets[i] + len(pairs)
        check_offsets[i + 1] = check_offsets[i] + len(check_addresses[i])
    ram = np.concatenate(ram_chunks).astype(np.int32) if ram_chunks else np.zeros((0, 2), np.int32)
    ram = np.ascontiguousarray(ram.reshape(-1))
    checks = np.asarray([a for addrs in check_addresses for a in addrs], dtype=np.int32)
    if checks.size and (checks.min() < 0 or checks.max() > 0xFFFF):
        raise GpuEnvError("check addresses must be in 0..65535")
    lib = native()
    capacity = lib.gpu_env_harness_log_capacity()
    check_values = np.zeros(max(1, checks.size), dtype=np.uint8)
    cycles = np.zeros(n, dtype=np.uint64)
    fatal = np.zeros(n, dtype=np.uint8)
    bus = np.zeros((n, capacity, 3), dtype=np.int32)
    bus_len = np.zeros(n, dtype=np.int32)
    checks_arg = checks if checks.size else np.zeros(1, dtype=np.int32)
    ram_arg = ram if ram.size else np.zeros(2, dtype=np.int32)
    lib.gpu_env_harness_run_vectors(
        n,
        _ptr(regs, ctypes.c_int32),
        _ptr(ram_offsets, ctypes.c_int32),
        _ptr(ram_arg, ctypes.c_int32),
        _ptr(check_offsets, ctypes.c_int32),
        _ptr(checks_arg, ctypes.c_int32),
        _ptr(check_values, ctypes.c_uint8),
        _ptr(cycles, ctypes.c_uint64),
        _ptr(fatal, ctypes.c_uint8),
        _ptr(bus, ctypes.c_int32),
        _ptr(bus_len, ctypes.c_int32),
    )
    return VectorBatchResult(
        regs=regs,
        cycles=cycles,
        fatal=fatal.astype(bool),
        check_values=check_values[: checks.size],
        bus=bus,
        bus_len=bus_len,
    )


def run_program(
    image: bytes,
    load_address: int,
    start_pc: int,
    success_pc: int,
    max_instructions: int,
) -> dict[str, Any]:
    """Run a whole program on a flat 64 KiB memory until it traps in a ``JMP *`` loop.

    ``image`` is copied to ``load_address`` (the rest of memory is 0); registers start as after a
    6502 reset (A=X=Y=0, S=$FF, flags clear) with PC = ``start_pc``. Execution stops when an
    instruction leaves the PC unchanged (a self-loop trap), on a JAM opcode, or after
    ``max_instructions``. Returns the registers, ``instructions`` and ``cycles`` (ints, the trap
    instruction included), ``fatal`` (bool), ``success`` (the PC equals ``success_pc``) and
    ``memory`` (bytes, 65,536).
    """
    if not 0 <= load_address <= 0xFFFF or load_address + len(image) > MEMORY_SIZE:
        raise GpuEnvError(f"image of {len(image)} bytes at load_address {load_address:#x} does not fit in 64 KiB")
    for name, value in (("start_pc", start_pc), ("success_pc", success_pc)):
        if not 0 <= value <= 0xFFFF:
            raise GpuEnvError(f"{name}={value} is not a 16-bit address")
    if max_instructions < 1:
        raise GpuEnvError(f"max_instructions={max_instructions} must be at least 1")
    memory = np.zeros(MEMORY_SIZE, dtype=np.uint8)
    memory[load_address : load_address + len(image)] = np.frombuffer(image, dtype=np.uint8)
    regs = np.array([start_pc, 0xFF, 0, 0, 0, 0x20], dtype=np.int32)
    instructions = np.zeros(1, dtype=np.uint64)
    cycles = np.zeros(1, dtype=np.uint64)
    fatal = np.zeros(1, dtype=np.uint8)
    native().gpu_env_harness_run_program(
        _ptr(memory, ctypes.c_uint8),
        _ptr(regs, ctypes.c_int32),
        max_instructions,
        _ptr(instructions, ctypes.c_uint64),
        _ptr(cycles, ctypes.c_uint64),
        _ptr(fatal, ctypes.c_uint8),
    )
    result: dict[str, Any] = _registers_out(regs)
    result["instructions"] = int(instructions[0])
    result["cycles"] = int(cycles[0])
    result["fatal"] = bool(fatal[0])
    result["success"] = int(regs[0]) == success_pc
    result["memory"] = memory.tobytes()
    return result
