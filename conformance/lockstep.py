"""Lockstep comparison of gpu_env against ale-py: same start, same actions, compared every frame.

``run_lockstep`` starts ale-py (``repeat_action_probability=0``), plays a random number of random
frames, imports the state into a one-environment :class:`gpu_env.batch.FrameBatch`
(``load_ale_state``), then plays ``frames`` random actions on both, comparing after every frame:
RAM (128 bytes), screen (palette indices), and, where gpu_env has the game's logic, reward, lives
and game over. It stops at the first divergence and can write a PNG (reference | ours | difference).
When ale-py's game ends, ale-py runs ``reset_game``, plays ``REIMPORT_WARMUP_FRAMES`` random frames
alone and its state is imported again (gpu_env's own reset sequence is the next issue), so long runs
keep comparing. With ``start="boot"`` both sides start from their own ``loadROM`` instead (gpu_env's
power-on and ``reset_game`` in ``gpu_env.ale_batch.AleBatch``), and both run ``reset_game`` at game
over; frame 0 is the state right after ``loadROM``.

Why warm-up frames: ALE does not serialize its two frame buffers, yet a frame that ends before the
bottom of the picture (common right after ``reset_game``) shows the older buffer. The import passes
``getScreen()`` before and after the last warm-up frame, which restores both buffers exactly when
that frame started a new TIA frame; the warm-up is extended until it did.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from gpu_env.batch import FrameBatch
from gpu_env.console_native import ConsoleProps
from gpu_env.errors import NotImplementedYetError

START_MODES = ("ale-state", "boot")
MAX_WARMUP_FRAMES = 300
MIN_WARMUP_FRAMES = 2
REIMPORT_WARMUP_FRAMES = 2


@dataclass(frozen=True)
class LockstepResult:
    """Outcome of one lockstep run; ``divergence_frame`` is 1-based (frames after the import)."""

    game: str
    seed: int
    start: str
    frames_requested: int
    frames_compared: int
    warmup_frames: int
    reimports: int  # ale-state: imports after game over; boot: reset_game calls on both sides
    divergence_frame: int | None = None
    fields: tuple[str, ...] = ()
    ram_diffs: tuple[tuple[int, int, int], ...] = ()  # (RAM index, ale-py value, gpu_env value)
    pixel_diffs: int = 0
    png: str | None = None
    compared: tuple[str, ...] = ("ram", "screen")

    @property
    def diverged(self) -> bool:
        """True when a compared quantity differed."""
        return self.divergence_frame is not None

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready summary."""
        return {
            "game": self.game, "seed": self.seed, "start": self.start, "frames_requested": self.frames_requested,
            "frames_compared": self.frames_compared, "warmup_frames": self.warmup_frames,
            "reimports": self.reimports, "diverged": self.diverged, "divergence_frame": self.divergence_frame,
            "fields": list(self.fields), "ram_diffs": [list(d) for d in self.ram_diffs],
            "pixel_diffs": self.pixel_diffs, "png": self.png, "compared": list(self.compared),
        }


def _ale(rom_path: str, seed: int) -> Any:
    import ale_py

    ale = ale_py.ALEInterface()
    ale.setLoggerMode(ale_py.LoggerMode.Error)
    ale.setInt("random_seed", seed)
    ale.setFloat("repeat_action_probability", 0.0)
    ale.loadROM(rom_path)
    return ale


def write_diff_png(path: Path, ref_rgb: npt.NDArray[np.uint8], ours_rgb: npt.NDArray[np.uint8]) -> Path:
    """Write reference | ours | difference (white where pixels differ), each scaled 2x, as a PNG."""
    import cv2

    diff = np.zeros_like(ref_rgb)
    diff[(ref_rgb != ours_rgb).any(axis=-1)] = 255
    gap = np.full((ref_rgb.shape[0], 4, 3), 128, dtype=np.uint8)
    image = np.concatenate([ref_rgb, gap, ours_rgb, gap, diff], axis=1)
    image = np.repeat(np.repeat(image, 2, axis=0), 2, axis=1)
    path.parent.mkdir(parents=True, exist_ok=True)
    cv2.imwrite(str(path), image[..., ::-1])
    return path


def _at_frame_boundary(ale: Any) -> bool:
    # ALE's executionStatus bit 0: the last update ended a frame (0 = an interrupted frame).
    from gpu_env.ale_state import parse_ale_state

    return bool(parse_ale_state(ale.cloneState()).cpu[-1] & 1)


def _warm_up(ale: Any, rng: np.random.Generator, actions: list[Any], frames: int) -> Any:
    """Play ``frames`` random frames on ale-py alone; return getScreen() before the last one (or None).

    When ``frames`` > 0 the warm-up continues until its last frame started a new TIA frame, so
    that the returned picture is the frame buffer ale-py reuses next.
    """
    previous = None
    for i in range(frames):
        fresh = _at_frame_boundary(ale) if i == frames - 1 else False
        previous = ale.getScreen()
        ale.act(actions[int(rng.integers(len(actions)))])
    while frames > 0 and not fresh:
        fresh = _at_frame_boundary(ale)
        previous = ale.getScreen()
        ale.act(actions[int(rng.integers(len(actions)))])
    return previous


def _bundled_rom(game: str) -> str:
    import warnings

    from ale_py import roms

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        found = roms.get_rom_path(game)
    if found is None:
        raise ValueError(f"unknown ROM id {game!r}: use an ale-py ROM id such as pong or space_invaders")
    return str(found)


def _props_from_screen(ale: Any) -> ConsoleProps:
    # For ROMs ale-py knows only by file name: the window comes from ALE's screen (250 rows = PAL).
    rows = int(ale.getScreen().shape[0])
    return ConsoleProps(height=rows, pal=rows == 250)


def run_lockstep(
    game: str,
    frames: int,
    seed: int,
    *,
    start: str = "ale-state",
    warmup_frames: int | None = None,
    png_dir: str | Path | None = None,
    rom_path: str | None = None,
) -> LockstepResult:
    """Step gpu_env and ale-py side by side for ``frames`` frames (see the module docstring).

    game: ale-py ROM id; rom_path: a ROM file to use instead (ale-py must accept its name).
    warmup_frames: random frames ale-py plays before the import (default: drawn from ``seed``, at
    least ``MIN_WARMUP_FRAMES``); with 0 the hidden frame buffer starts as a copy of the screen.
    """
    if start not in START_MODES:
        raise ValueError(f"start={start!r}: use one of {', '.join(START_MODES)}")
    if frames < 1:
        raise ValueError(f"frames={frames} must be >= 1")
    if start == "boot":
        return _run_from_boot(game, frames, seed, png_dir, rom_path)
    path = rom_path if rom_path is not None else _bundled_rom(game)
    rng = np.random.default_rng(seed)
    ale = _ale(path, seed)
    batch = FrameBatch(path if rom_path is not None else game, 1, repeat_action_probability=0.0)
    if batch.info is None:
        batch = FrameBatch(path, 1, repeat_action_probability=0.0, props=_props_from_screen(ale))
    with_logic = batch.info is not None
    compared = ("ram", "screen", "reward", "lives", "game_over") if with_logic else ("ram", "screen")
    actions = [a for a in ale.getMinimalActionSet()]
    warm = int(rng.integers(MIN_WARMUP_FRAMES, MAX_WARMUP_FRAMES)) if warmup_frames is None else warmup_frames
    previous = _warm_up(ale, rng, actions, warm)
    batch.load_ale_state(0, ale.cloneState(), ale.getScreen(), previous)
    reimports = 0
    for f in range(1, frames + 1):
        if with_logic and ale.game_over():
            ale.reset_game()
            previous = _warm_up(ale, rng, actions, REIMPORT_WARMUP_FRAMES)
            batch.load_ale_state(0, ale.cloneState(), ale.getScreen(), previous)
            reimports += 1
        action = actions[int(rng.integers(len(actions)))]
        ref_reward = int(ale.act(action))
        act = np.array([int(action.value)], dtype=np.int64)
        bad: list[str] = []
        if with_logic:
            ours_reward = int(batch.act(act)[0])
            if ours_reward != ref_reward:
                bad.append(f"reward (ale-py {ref_reward}, gpu_env {ours_reward})")
            if int(batch.lives()[0]) != int(ale.lives()):
                bad.append(f"lives (ale-py {ale.lives()}, gpu_env {int(batch.lives()[0])})")
            if bool(batch.game_over()[0]) != bool(ale.game_over()):
                bad.append(f"game_over (ale-py {ale.game_over()}, gpu_env {bool(batch.game_over()[0])})")
        else:
            batch.step_frames(act)
        ram_ref, ram = ale.getRAM(), batch.get_ram()[0]
        scr_ref, scr = ale.getScreen(), batch.get_screen()[0]
        ram_idx = np.flatnonzero(ram_ref != ram)
        pixels = int((scr_ref != scr).sum())
        if len(ram_idx):
            bad.append("ram")
        if pixels:
            bad.append("screen")
        if bad:
            png = None
            if png_dir is not None:
                out = Path(png_dir) / f"lockstep_{game}_seed{seed}_frame{f}.png"
                png = str(write_diff_png(out, ale.getScreenRGB(), batch.get_screen_rgb()[0]))
            return LockstepResult(
                game, seed, start, frames, f - 1, warm, reimports, f, tuple(bad),
                tuple((int(i), int(ram_ref[i]), int(ram[i])) for i in ram_idx), pixels, png, compared,
            )
    return LockstepResult(game, seed, start, frames, frames, warm, reimports, compared=compared)


def _boot_batch(game: str, seed: int) -> Any:
    try:
        from gpu_env.ale_batch import AleBatch
    except ImportError as exc:
        raise NotImplementedYetError(
            "--start boot needs gpu_env's loadROM/reset_game sequence (gpu_env.ale_batch.AleBatch), which is not "
            "available in this build: use --start ale-state"
        ) from exc
    return AleBatch(game, 1, backend="cpu", seeds=[seed], repeat_action_probability=0.0)


def _run_from_boot(
    game: str, frames: int, seed: int, png_dir: str | Path | None, rom_path: str | None
) -> LockstepResult:
    """Both sides start from their own loadROM (gpu_env: ``AleBatch``'s power-on and reset_game)."""
    path = rom_path if rom_path is not None else _bundled_rom(game)
    rng = np.random.default_rng(seed)
    ale = _ale(path, seed)
    ours = _boot_batch(path if rom_path is not None else game, seed)
    actions = list(ale.getMinimalActionSet())
    compared = ("ram", "screen", "reward", "lives", "game_over")
    resets = 0
    for f in range(0, frames + 1):
        bad: list[str] = []
        if f > 0:
            if ale.game_over():
                ale.reset_game()
                ours.reset_game()
                resets += 1
            action = actions[int(rng.integers(len(actions)))]
            ref_reward = int(ale.act(action))
            our_reward = int(ours.act(np.array([int(action.value)], dtype=np.int64))[0])
            if our_reward != ref_reward:
                bad.append(f"reward (ale-py {ref_reward}, gpu_env {our_reward})")
        if int(ours.lives()[0]) != int(ale.lives()):
            bad.append(f"lives (ale-py {ale.lives()}, gpu_env {int(ours.lives()[0])})")
        if bool(ours.game_over()[0]) != bool(ale.game_over()):
            bad.append("game_over")
        ram_ref, ram = ale.getRAM(), ours.get_ram()[0]
        scr_ref, scr = ale.getScreen(), ours.get_screen()[0]
        ram_idx = np.flatnonzero(ram_ref != ram)
        pixels = int((scr_ref != scr).sum()) if scr_ref.shape == scr.shape else int(scr_ref.size)
        if len(ram_idx):
            bad.append("ram")
        if pixels:
            bad.append("screen")
        if bad:
            png = None
            if png_dir is not None and scr_ref.shape == scr.shape:
                out = Path(png_dir) / f"lockstep_boot_{game}_seed{seed}_frame{f}.png"
                png = str(write_diff_png(out, ale.getScreenRGB(), ours.get_screen_rgb()[0]))
            return LockstepResult(
                game, seed, "boot", frames, max(f - 1, 0), 0, resets, f, tuple(bad),
                tuple((int(i), int(ram_ref[i]), int(ram[i])) for i in ram_idx), pixels, png, compared,
            )
    return LockstepResult(game, seed, "boot", frames, frames, 0, resets, compared=compared)


def default_png_dir() -> Path:
    """Where the CLI writes difference images unless told otherwise."""
    return Path(tempfile.gettempdir()) / "evaltk_lockstep"
