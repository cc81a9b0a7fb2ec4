"""Versioned emulator traces: record a run of ale-py once, replay it through the lockstep engine.

A trace is one ``.npz`` file (a zip of ``.npy`` arrays, loaded with ``allow_pickle=False``):

* ``header``: UTF-8 JSON as ``uint8[n]`` — format name and version, ale-py version, ROM id and md5,
  settings (``repeat_action_probability``, ``frameskip`` = 1, ``mode``, ``difficulty``), seed, how
  actions were drawn, the reset rule (``reset_game`` after every game over), ``frames`` (the number
  of recorded frames) and ``digest`` (``"sha256:<hex>"`` of the header without it and of every
  frame array, see :func:`content_digest`).
* per frame ``t`` (arrays of length ``T``): ``action`` int16 (ALE action index, full set), ``reward`` int32,
  ``game_over`` bool, ``lives`` int16, ``reset`` bool (``reset_game`` was called after this frame),
  ``ram`` uint8[T, 128], ``screen_md5`` uint8[T, 16] (md5 of ``getScreen()``, the palette-index image).

:func:`load` checks everything before returning (the zip, every array's dtype and shape, the frame
count and the digest) and names the file and the problem otherwise. :func:`record_ale` makes a
trace from ale-py; :func:`replay` steps a :class:`gpu_env.AtariBatch` of any backend through it
with :func:`conformance.lockstep.lockstep` and returns the first divergence.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from conformance import trace_file
from conformance.ale_side import AleSide
from conformance.frames import Frame
from conformance.lockstep import Divergence, lockstep
from evaltk.registry import did_you_mean

FORMAT = "evaltk-trace"
VERSION = 2
# name -> (dtype, shape after the frame axis)
_FRAME_FIELDS: dict[str, tuple[str, tuple[int, ...]]] = {
    "action": ("int16", ()), "reward": ("int32", ()), "game_over": ("bool", ()), "lives": ("int16", ()),
    "reset": ("bool", ()), "ram": ("uint8", (128,)), "screen_md5": ("uint8", (16,)),
}
LAYOUT = trace_file.Layout(FORMAT, VERSION, "frames", _FRAME_FIELDS,
                           "record it again with conformance.trace.record_ale or evaltk conformance record")
TraceError = trace_file.TraceError


@dataclass(frozen=True)
class Trace:
    """A recorded run. Arrays are frame-major (``[T, ...]``); ``header["frames"] == T``."""

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

    def arrays(self) -> dict[str, np.ndarray]:
        """Return the per-frame arrays by name."""
        return {name: getattr(self, name) for name in _FRAME_FIELDS}

    def save(self, path: str | Path) -> Path:
        """Write the trace atomically with its frame count and digest in the header."""
        return trace_file.save(path, LAYOUT, self.header, self.arrays())


def content_digest(header: dict[str, Any], arrays: dict[str, np.ndarray]) -> str:
    """Return ``"sha256:<hex>"`` of the header (sorted JSON, no ``digest``) and of every frame array."""
    return trace_file.content_digest(header, arrays, _FRAME_FIELDS)


def load(path: str | Path) -> Trace:
    """Read and check a trace written by :meth:`Trace.save`; :class:`TraceError` names the file and the problem."""
    header, arrays = trace_file.read(path, LAYOUT)
    return Trace(header=header, **arrays)


def cached(path: Path, record: Callable[[], Trace]) -> Trace:
    """Return the trace saved at ``path``; record and save it when the file is missing or damaged."""
    if path.is_file():
        try:
            return load(path)
        except TraceError:
            pass  # a damaged cache is recorded again
    trace = record()
    trace.save(path)
    return trace


def rom_path(rom: str) -> Path:
    """Path of an ale-py ROM id (``"pong"``) or of an existing ROM file; TraceError if neither (with close ids)."""
    from gpu_env.errors import RomError
    from gpu_env.roms import resolve_rom_path

    try:
        return resolve_rom_path(rom)
    except RomError as exc:
        from ale_py import roms

        ids = roms.get_all_rom_ids()
        if Path(rom).suffix or "/" in rom or rom in ids:  # a path, or an id ale-py has: its own message
            raise TraceError(str(exc)) from exc
        raise TraceError(f"unknown ROM id {rom!r}: {did_you_mean(rom, ids)}use an ale-py ROM id (e.g. pong, "
                         "space_invaders) or a .bin path") from exc


def rom_problem(rom: str) -> str | None:
    """Return why ``rom`` names no ROM (:func:`rom_path`'s message), or None: a case's ``rom`` checked at load."""
    try:
        rom_path(rom)
    except TraceError as exc:
        return str(exc)
    return None


def rom_md5(rom: str) -> str:
    """Hex md5 of the ROM file ``rom`` names."""
    return hashlib.md5(rom_path(rom).read_bytes()).hexdigest()


def trace_header(rom: str, *, seed: int, frames: int, settings: dict[str, Any], actions: dict[str, Any],
                 reset_rule: str, **extra: Any) -> dict[str, Any]:
    """Return the header every Atari trace starts with: format, version, ale-py version, ROM id and md5, then the rest.

    ``settings``: ``repeat_action_probability``, ``frameskip``, ``mode``, ``difficulty``; ``actions``: how actions
    were drawn (``kind`` first); ``extra``: fields of one recorder (a policy trace's ``initial_reset``).
    """
    import ale_py

    return {"format": FORMAT, "version": VERSION, "ale_py_version": str(ale_py.__version__), "rom": rom,
            "rom_md5": rom_md5(rom), "seed": int(seed), "frames": frames, **extra, "settings": settings,
            "actions": actions, "reset_rule": reset_rule}


def record_ale(rom: str, *, frames: int, seed: int, repeat_action_probability: float = 0.25,
               action_seed: int | None = None, mode: int | None = None, difficulty: int | None = None) -> Trace:
    """Record ``frames`` frames of uniformly random full-set actions on ale-py, resetting at every game over."""
    if isinstance(frames, bool) or not isinstance(frames, int) or frames < 1:
        raise TraceError(f"frames={frames!r}: record at least one frame")
    path = rom_path(rom)
    side = AleSide(path, [seed], repeat_action_probability=repeat_action_probability, mode=mode,
                   difficulty=difficulty)
    rng = np.random.default_rng(seed if action_seed is None else action_seed)
    actions = rng.integers(0, 18, size=frames, dtype=np.int16)
    out = {name: np.zeros((frames, *tail), dtype=dtype) for name, (dtype, tail) in _FRAME_FIELDS.items()}
    out["action"] = actions
    fields = ("ram", "screen_md5", "lives", "game_over")
    for t in range(frames):
        shown = side.observe(side.act(actions[t : t + 1].astype(np.int64)), fields)
        out["reward"][t] = shown.reward[0]  # type: ignore[index]
        out["ram"][t], out["lives"][t], out["game_over"][t] = shown.ram[0], shown.lives[0], shown.game_over[0]
        out["screen_md5"][t] = shown.screen_md5[0]  # type: ignore[index]
        if shown.game_over[0]:
            side.reset_game(np.ones(1, dtype=np.bool_))
            out["reset"][t] = True
    header = trace_header(
        rom, seed=seed, frames=frames,
        settings={"repeat_action_probability": float(repeat_action_probability), "frameskip": 1, "mode": mode,
                  "difficulty": difficulty},
        actions={"kind": "uniform-full-set", "seed": int(seed if action_seed is None else action_seed)},
        reset_rule="reset_game after every game over")
    return Trace(header=header, **out)


class TraceReference:
    """A recorded trace as the reference of :func:`conformance.lockstep.lockstep` (one env)."""

    num_envs = 1

    def __init__(self, trace: Trace) -> None:
        self.trace = trace

    def start(self, ours: Any) -> Frame | None:
        """Return None: a trace records nothing before its first act."""
        return None

    def step(self, frame: int) -> tuple[npt.NDArray[np.int64], Frame]:
        """Return the recorded action of ``frame`` (1-based) and what ale-py showed after it."""
        t, tr = frame - 1, self.trace
        shown = Frame(ram=tr.ram[t : t + 1], lives=tr.lives[t : t + 1].astype(np.int32),
                      game_over=tr.game_over[t : t + 1], reward=tr.reward[t : t + 1],
                      screen_md5=tr.screen_md5[t : t + 1])
        return tr.action[t : t + 1].astype(np.int64), shown

    def episode_ends(self, frame: int, shown: Frame | None) -> npt.NDArray[np.bool_]:
        """Return the recorded ``reset`` flag of ``frame``."""
        return np.array([frame > 0 and bool(self.trace.reset[frame - 1])], dtype=np.bool_)

    def reset(self, mask: npt.NDArray[np.bool_], ours: Any) -> Frame | None:
        """``reset_game`` on ours (the trace recorded no frame after its own reset)."""
        ours.reset_game(mask)
        return None

    def rgb(self, env: int) -> npt.NDArray[np.uint8] | None:
        """Return None: a trace holds a screen hash, not a picture, so there is no difference image."""
        return None


def batch_for(trace: Trace, backend: str) -> Any:
    """Return a one-env :class:`gpu_env.AtariBatch` on ``backend`` with the trace's ROM, seed and settings."""
    from gpu_env import AtariBatch

    h, s = trace.header, trace.header["settings"]
    return AtariBatch(str(h["rom"]), 1, backend=backend, seeds=[int(h["seed"])],
                      repeat_action_probability=float(s["repeat_action_probability"]),
                      frameskip=int(s.get("frameskip", 1)), mode=s.get("mode"), difficulty=s.get("difficulty"))


def replay(trace: Trace, batch: Any, frames: int | None = None) -> Divergence | None:
    """Step ``batch`` (one env) through the first ``frames`` (default: all) frames; return the first divergence."""
    count = trace.frames if frames is None else frames
    if count > trace.frames:
        raise TraceError(f"replay of {count} frames asked of a trace that holds {trace.frames}")
    for _ in range(int(trace.header.get("initial_reset", 0))):  # a policy trace: gymnasium's seeded reset
        batch.reset_game(np.ones(1, dtype=np.bool_))
    return lockstep(TraceReference(trace), batch, count, colours=False).divergence
