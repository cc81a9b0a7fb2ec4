"""Versioned emulator traces: record a run of ale-py once, replay it against any backend.

A trace is one ``.npz`` file (loaded with ``allow_pickle=False``; nothing in it is pickled):

* ``header``: UTF-8 JSON as ``uint8[n]`` — format name and version, ale-py version, ROM id and md5,
  settings (``repeat_action_probability``, ``frameskip`` = 1, ``mode``, ``difficulty``), seed, how actions
  were drawn, and the reset rule (``reset_game`` after every game over).
* per frame ``t`` (arrays of length ``T``): ``action`` int16 (ALE action index, full set), ``reward`` int32,
  ``game_over`` bool, ``lives`` int16, ``reset`` bool (``reset_game`` was called after this frame),
  ``ram`` uint8[T, 128], ``screen_md5`` uint8[T, 16] (md5 of ``getScreen()``, the palette-index image).

:func:`record_ale` makes one from ale-py; :func:`replay` steps any :class:`TraceBackend` through the
same actions and stops at the first frame where anything differs.
"""

from __future__ import annotations

import hashlib
import io
import json
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from evaltk.atomic import write_bytes_atomic
from evaltk.errors import SuiteError

FORMAT = "evaltk-trace"
VERSION = 1
_FRAME_FIELDS = ("action", "reward", "game_over", "lives", "reset", "ram", "screen_md5")


class TraceError(SuiteError):
    """A trace file is missing, corrupt or of an unknown format version."""


@dataclass(frozen=True)
class Trace:
    """A recorded run. Arrays are frame-major (``[T, ...]``)."""

    header: dict[str, Any]
    action: np.ndarray  # int16[T]
    reward: np.ndarray  # int32[T]
    game_over: np.ndarray  # bool[T]
    lives: np.ndarray  # int16[T]
    reset: np.ndarray  # bool[T]
    ram: np.ndarray  # uint8[T, 128]
    screen_md5: np.ndarray  # uint8[T, 16]

    @property
    def frames(self) -> int:
        """Number of recorded frames."""
        return int(self.action.shape[0])

    def save(self, path: str | Path) -> Path:
        """Write the trace atomically (temp file in the same folder, then rename)."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        header = np.frombuffer(json.dumps(self.header, sort_keys=True).encode(), dtype=np.uint8)
        arrays = {name: getattr(self, name) for name in _FRAME_FIELDS}
        buffer = io.BytesIO()
        np.savez_compressed(buffer, header=header, **arrays)
        write_bytes_atomic(path, buffer.getvalue())
        return path


def load(path: str | Path) -> Trace:
    """Read a trace written by :meth:`Trace.save`; :class:`TraceError` names what is wrong."""
    path = Path(path)
    if not path.is_file():
        raise TraceError(f"trace file {path} does not exist: record one with conformance.trace.record_ale")
    try:
        with np.load(path, allow_pickle=False) as data:
            header = json.loads(bytes(data["header"]).decode())
            arrays = {name: np.asarray(data[name]) for name in _FRAME_FIELDS}
    except (OSError, ValueError, KeyError, json.JSONDecodeError) as exc:
        raise TraceError(f"trace file {path} is corrupt or not a trace ({exc}); record it again") from exc
    if header.get("format") != FORMAT or header.get("version") != VERSION:
        raise TraceError(
            f"trace file {path} has format {header.get('format')!r} version {header.get('version')!r}; "
            f"this evaltk reads {FORMAT!r} version {VERSION}: record it again"
        )
    lengths = {name: arr.shape[0] for name, arr in arrays.items()}
    if len(set(lengths.values())) != 1:
        raise TraceError(f"trace file {path} has arrays of different lengths {lengths}; record it again")
    return Trace(header=header, **arrays)


class TraceBackend(Protocol):
    """One emulator instance that can be stepped frame by frame like ``ale_py.ALEInterface``."""

    def act(self, action: int) -> int:
        """Emulate one frame with ``action`` (full-set index); return the reward."""

    def reset_game(self) -> None:
        """ALE's ``reset_game`` sequence."""

    def game_over(self) -> bool:
        """ALE's ``game_over()``."""

    def lives(self) -> int:
        """ALE's ``lives()``."""

    def ram(self) -> np.ndarray:
        """uint8[128] RIOT RAM."""

    def screen(self) -> np.ndarray:
        """uint8[H, 160] palette indices."""


class AleBackend:
    """:class:`TraceBackend` over ``ale_py.ALEInterface`` (the reference)."""

    def __init__(self, rom: str, *, seed: int, repeat_action_probability: float = 0.25,
                 mode: int | None = None, difficulty: int | None = None) -> None:
        import ale_py

        ale_py.ALEInterface.setLoggerMode(ale_py.LoggerMode.Error)
        self.ale = ale_py.ALEInterface()
        self.ale.setInt("random_seed", int(seed))
        self.ale.setFloat("repeat_action_probability", float(repeat_action_probability))
        self.ale.loadROM(str(rom_path(rom)))
        if mode is not None:
            self.ale.setMode(int(mode))
        if difficulty is not None:
            self.ale.setDifficulty(int(difficulty))
        if mode is not None or difficulty is not None:
            self.ale.reset_game()
        self._actions = list(self.ale.getLegalActionSet())

    def act(self, action: int) -> int:
        """Emulate one frame."""
        return int(self.ale.act(self._actions[action]))

    def reset_game(self) -> None:
        """Reset as ALE does."""
        self.ale.reset_game()

    def game_over(self) -> bool:
        """Whether the episode ended."""
        return bool(self.ale.game_over())

    def lives(self) -> int:
        """Remaining lives."""
        return int(self.ale.lives())

    def ram(self) -> np.ndarray:
        """uint8[128] RIOT RAM."""
        return np.asarray(self.ale.getRAM(), dtype=np.uint8)

    def screen(self) -> np.ndarray:
        """uint8[H, 160] palette indices."""
        return np.asarray(self.ale.getScreen(), dtype=np.uint8)


def rom_path(rom: str) -> Path:
    """Path of an ale-py ROM id (``"pong"``) or of an existing ROM file."""
    candidate = Path(rom)
    if candidate.suffix == ".bin" and candidate.is_file():
        return candidate
    from ale_py import roms

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            found = roms.get_rom_path(rom)
    except Exception:  # ale-py raises several types for unknown ids
        found = None
    if found is None:
        raise TraceError(f"unknown ROM {rom!r}: use an ale-py ROM id (ale_py.roms.get_all_rom_ids()) or a .bin path")
    return Path(found)


def record_ale(rom: str, *, frames: int, seed: int, repeat_action_probability: float = 0.25,
               action_seed: int | None = None, mode: int | None = None, difficulty: int | None = None) -> Trace:
    """Record ``frames`` frames of uniformly random full-set actions on ale-py, resetting at every game over."""
    import ale_py

    backend = AleBackend(rom, seed=seed, repeat_action_probability=repeat_action_probability, mode=mode,
                         difficulty=difficulty)
    rng = np.random.default_rng(seed if action_seed is None else action_seed)
    actions = rng.integers(0, 18, size=frames, dtype=np.int16)
    out = _empty(frames)
    for t in range(frames):
        out["reward"][t] = backend.act(int(actions[t]))
        _observe(backend, out, t)
        if out["game_over"][t]:
            backend.reset_game()
            out["reset"][t] = True
    header = {
        "format": FORMAT, "version": VERSION, "ale_py_version": ale_py.__version__, "rom": rom,
        "rom_md5": hashlib.md5(rom_path(rom).read_bytes()).hexdigest(), "seed": int(seed),
        "settings": {"repeat_action_probability": float(repeat_action_probability), "frameskip": 1,
                     "mode": mode, "difficulty": difficulty},
        "actions": {"kind": "uniform-full-set", "seed": int(seed if action_seed is None else action_seed)},
        "reset_rule": "reset_game after every game over",
    }
    return Trace(header=header, action=actions, **out)


def _empty(frames: int) -> dict[str, np.ndarray]:
    return {
        "reward": np.zeros(frames, np.int32), "game_over": np.zeros(frames, bool), "lives": np.zeros(frames, np.int16),
        "reset": np.zeros(frames, bool), "ram": np.zeros((frames, 128), np.uint8),
        "screen_md5": np.zeros((frames, 16), np.uint8),
    }


def _observe(backend: TraceBackend, out: dict[str, np.ndarray], t: int) -> None:
    out["game_over"][t] = backend.game_over()
    out["lives"][t] = backend.lives()
    out["ram"][t] = backend.ram()
    out["screen_md5"][t] = np.frombuffer(hashlib.md5(np.ascontiguousarray(backend.screen()).tobytes()).digest(),
                                         dtype=np.uint8)


@dataclass(frozen=True)
class Divergence:
    """The first frame at which a replay differed from its trace."""

    frame: int
    fields: tuple[str, ...]
    ram_bytes: tuple[int, ...]  # indices 0..127 (address 0x80 + i) that differ

    def summary(self) -> str:
        """One line for logs and reports."""
        ram = f"; RAM bytes {', '.join(f'0x{0x80 + i:02X}' for i in self.ram_bytes)}" if self.ram_bytes else ""
        return f"first divergence at frame {self.frame}: {', '.join(self.fields)}{ram}"


def replay(trace: Trace, backend: TraceBackend) -> Divergence | None:
    """Step ``backend`` through the trace's actions and resets; return the first divergence or ``None``."""
    out = _empty(1)
    for t in range(trace.frames):
        out["reward"][0] = backend.act(int(trace.action[t]))
        _observe(backend, out, 0)
        fields = [name for name in ("reward", "game_over", "lives", "ram", "screen_md5")
                  if not np.array_equal(out[name][0], getattr(trace, name)[t])]
        if fields:
            ram_bytes = tuple(int(i) for i in np.flatnonzero(out["ram"][0] != trace.ram[t]))
            return Divergence(frame=t + 1, fields=tuple(fields), ram_bytes=ram_bytes)
        if trace.reset[t]:
            backend.reset_game()
    return None
