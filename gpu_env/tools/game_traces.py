"""Check the per-game logic (core/games) against ale-py on recorded RAM, without the emulator.

This is a unit check of the game rules, not a lockstep harness: it feeds ale-py's own RAM to the C++
logic, so it can poke RAM (``fuzz``, ``pokes``) to reach endings random play never does and compare
the serialized RomSettings words, which the emulator-level lockstep engine
(``conformance/lockstep.py``, which compares rewards, lives and game over every frame) cannot.

ale-py plays random actions (frameskip 1, no sticky actions, ``reset_game`` at every game over);
every frame its RAM (plus SC cartridge RAM, from ``cloneState()``), reward, ``lives()``,
``game_over()`` and serialized RomSettings are recorded. The C++ logic then runs over the RAM through
``gpu_env_games_run_trace`` and both are compared frame by frame.

Resets: ALE runs ``RomSettings::step`` on frames inside ``reset_game`` whose RAM is not observable
from Python, so after each reset the recorded state is *loaded* from ALE's ``cloneState()``
(the serialized words, plus the few unserialized ones derived by
:func:`gpu_env.backends.native.derive_unserialized`, as the ale-py state import does).
"""

from __future__ import annotations

import ctypes
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from gpu_env.backends.native import derive_unserialized
from gpu_env.binding import native
from gpu_env.errors import BackendError, GpuEnvError
from gpu_env.games import STATE_WORDS, cart_ram_from_ale_state, game_info, settings_from_ale_state
from gpu_env.roms import resolve_rom_path

MEM_BYTES = 256
OP_LOAD, OP_RESET, OP_STEP = 1, 2, 4

_I32P = ctypes.POINTER(ctypes.c_int32)
_U8P = ctypes.POINTER(ctypes.c_uint8)


def _i32(a: np.ndarray) -> ctypes._Pointer[ctypes.c_int32]:
    return a.ctypes.data_as(_I32P)


def _u8(a: np.ndarray) -> ctypes._Pointer[ctypes.c_uint8]:
    return a.ctypes.data_as(_U8P)


def initial_state(rom_id: str) -> np.ndarray:
    """Return a freshly constructed RomSettings of the game as GameState words ``int32[12]``."""
    state = np.zeros(STATE_WORDS, dtype=np.int32)
    if native().gpu_env_games_init(game_info(rom_id).game_id, _i32(state)) != 0:
        raise BackendError(f"gpu_env_games_init rejected {rom_id!r}: rebuild the native library")
    return state


def run_trace(
    rom_id: str, mem: np.ndarray, ops: np.ndarray, loads: np.ndarray, state: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Run the C++ logic over a trace.

    mem: uint8[n, 256] (RIOT RAM then SC cart RAM); ops: int32[n] (OP_* bits); loads: int32[n, 12];
    state: int32[12], updated in place. Returns out int32[n, 3] (reward, terminal, lives) and the
    states int32[n, 12] after each frame.
    """
    n = len(ops)
    mem = np.ascontiguousarray(mem, dtype=np.uint8)
    ops = np.ascontiguousarray(ops, dtype=np.int32)
    loads = np.ascontiguousarray(loads, dtype=np.int32)
    if mem.shape != (n, MEM_BYTES) or loads.shape != (n, STATE_WORDS) or state.shape != (STATE_WORDS,):
        raise GpuEnvError(f"trace shapes mem {mem.shape}, ops {ops.shape}, loads {loads.shape} do not agree")
    out = np.zeros((n, 3), dtype=np.int32)
    states = np.zeros((n, STATE_WORDS), dtype=np.int32)
    rc = native().gpu_env_games_run_trace(
        game_info(rom_id).game_id,
        n,
        _u8(mem),
        _i32(ops),
        _i32(loads),
        _i32(state),
        _i32(out),
        _i32(states),
    )
    if rc != 0:
        raise BackendError(f"gpu_env_games_run_trace failed for {rom_id!r} (rc {rc})")
    return out, states


@dataclass
class AleTrace:
    """What ale-py did, frame by frame (row 0 and every row after a game over are reset rows)."""

    rom_id: str
    mode: int
    mem: np.ndarray  # uint8[n, 256]
    ops: np.ndarray  # int32[n]
    loads: np.ndarray  # int32[n, 12]: ALE's settings words after each frame
    reward: np.ndarray  # int32[n]
    terminal: np.ndarray  # int32[n]
    lives: np.ndarray  # int32[n]
    episodes: int = 0


CORE_GAMES = Path(__file__).resolve().parent.parent / "core" / "games"
_ADDRESS = re.compile(r"constexpr uint16_t k\w+ = 0x([0-9A-Fa-f]+);")
_VALUE = re.compile(r"constexpr int32_t k\w+ = (0x[0-9A-Fa-f]+|\d+);")


def fuzz_targets(rom_id: str) -> tuple[list[int], list[int]]:
    """Return the RIOT RAM offsets and the byte values named in the game's header (for RAM fuzzing)."""
    text = (CORE_GAMES / f"{rom_id}.h").read_text()
    addrs = sorted({int(a, 16) - 0x80 for a in _ADDRESS.findall(text) if 0x80 <= int(a, 16) <= 0xFF})
    values = sorted({int(v, 0) for v in _VALUE.findall(text) if 0 <= int(v, 0) <= 0xFF} | {0, 1, 2, 0x80, 0xFF})
    return addrs, values


def record_ale_trace(
    rom_id: str,
    frames: int,
    seed: int,
    mode: int | None = None,
    fuzz: float = 0.0,
    pokes: Mapping[int, Sequence[tuple[int, int]]] | None = None,
) -> AleTrace:
    """Play ``frames`` random minimal actions with ale-py and record everything the check needs.

    With ``fuzz`` > 0, before that fraction of the frames one RAM byte the game's logic reads is
    overwritten (``ale.setRAM``) with a value its header names or a random byte, to reach rare
    branches (game over, wrap-arounds); the check stays exact because both sides read the RAM left
    after the frame. ``pokes`` maps a row index (1 = the first act) to ``(ram offset, value)`` pairs
    written before that act, to stage a scenario (e.g. a won game).
    """
    import ale_py

    info = game_info(rom_id)
    m = info.default_mode if mode is None else mode
    info.set_mode_program(m)  # checks the mode
    ale = ale_py.ALEInterface()
    ale.setLoggerMode(ale_py.LoggerMode.Error)
    ale.setFloat("repeat_action_probability", 0.0)
    ale.setInt("random_seed", seed)
    ale.loadROM(resolve_rom_path(rom_id))
    ale.setMode(m)
    ale.reset_game()
    rng = np.random.default_rng(seed)
    actions = np.array(info.minimal_actions)
    n = frames + 1
    t = AleTrace(
        rom_id=rom_id,
        mode=m,
        mem=np.zeros((n, MEM_BYTES), dtype=np.uint8),
        ops=np.zeros(n, dtype=np.int32),
        loads=np.zeros((n, STATE_WORDS), dtype=np.int32),
        reward=np.zeros(n, dtype=np.int32),
        terminal=np.zeros(n, dtype=np.int32),
        lives=np.zeros(n, dtype=np.int32),
    )
    targets, values = fuzz_targets(rom_id)
    reset_row = True
    for i in range(n):
        if i > 0:
            if reset_row:
                ale.reset_game()
                t.episodes += 1
            else:
                for offset, value in (pokes or {}).get(i, ()):
                    ale.setRAM(offset, value)
                if fuzz > 0 and targets and rng.random() < fuzz:
                    value = int(rng.choice(values)) if rng.random() < 0.7 else int(rng.integers(256))
                    ale.setRAM(int(rng.choice(targets)), value)
                t.reward[i] = ale.act(int(rng.choice(actions)))
        state = ale.cloneState()
        ram = ale.getRAM()
        t.mem[i, :128] = ram
        if info.reads_cart_ram:
            t.mem[i, 128:] = cart_ram_from_ale_state(rom_id, state)
        t.loads[i] = settings_from_ale_state(rom_id, state)
        t.terminal[i] = int(ale.game_over())
        t.lives[i] = ale.lives()
        if reset_row:
            derive_unserialized(info, t.loads[i], ram, m)
            t.ops[i] = OP_LOAD
        else:
            t.ops[i] = OP_STEP
        reset_row = bool(t.terminal[i])
    return t


@dataclass
class TraceReport:
    """Frame-by-frame comparison of the C++ logic with ale-py for one trace."""

    rom_id: str
    mode: int
    frames: int  # act() frames compared
    episodes_ended: int
    reward_mismatches: int
    terminal_mismatches: int
    lives_mismatches: int
    word_mismatches: int  # frames where a serialized RomSettings word differs
    first_mismatch: str = ""
    nonzero_rewards: int = 0
    lives_changes: int = 0
    extra: dict[str, int] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        """True when nothing differed."""
        return not (self.reward_mismatches or self.terminal_mismatches or self.lives_mismatches or self.word_mismatches)


def compare(trace: AleTrace) -> TraceReport:
    """Run the C++ logic over ``trace`` and count the frames where it differs from ale-py."""
    info = game_info(trace.rom_id)
    state = initial_state(trace.rom_id)
    out, states = run_trace(trace.rom_id, trace.mem, trace.ops, trace.loads, state)
    step = trace.ops == OP_STEP
    ints = [info.state_words[name] for name, kind in info.ale_state_fields if kind == "i"]
    bools = [info.state_words[name] for name, kind in info.ale_state_fields if kind == "b"]
    bad_r = step & (out[:, 0] != trace.reward)
    bad_t = out[:, 1] != trace.terminal
    bad_l = out[:, 2] != trace.lives
    # A bool field compares as a bool (Miniature Golf saves its int counters with putBool).
    bad_w = step & (
        np.any(states[:, ints] != trace.loads[:, ints], axis=1)
        | np.any((states[:, bools] != 0) != (trace.loads[:, bools] != 0), axis=1)
    )
    first = ""
    any_bad = bad_r | bad_t | bad_l | bad_w
    if any_bad.any():
        i = int(np.argmax(any_bad))
        first = (
            f"frame {i}: ours reward/terminal/lives {out[i].tolist()} words {states[i].tolist()}; "
            f"ale {[int(trace.reward[i]), int(trace.terminal[i]), int(trace.lives[i])]} words {trace.loads[i].tolist()}"
        )
    return TraceReport(
        rom_id=trace.rom_id,
        mode=trace.mode,
        frames=int(step.sum()),
        episodes_ended=int(trace.terminal[step].sum()),
        reward_mismatches=int(bad_r.sum()),
        terminal_mismatches=int(bad_t.sum()),
        lives_mismatches=int(bad_l.sum()),
        word_mismatches=int(bad_w.sum()),
        first_mismatch=first,
        nonzero_rewards=int(np.count_nonzero(trace.reward[step])),
        lives_changes=int(np.count_nonzero(np.diff(trace.lives))),
    )
