"""What one side of a lockstep shows after a step, and the comparison of two such frames.

A :class:`Frame` holds, for every environment of a batch, the quantities ALE exposes: reward, RAM,
screen (palette indices, or only its md5 where a trace stored the hash), lives, game over,
truncation and the frame counters. A field is ``None`` where that side does not know it (a trace
records no frame counters); :func:`first_difference` compares every field both sides know.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

U8 = npt.NDArray[np.uint8]
I32 = npt.NDArray[np.int32]
Bool = npt.NDArray[np.bool_]

# Every field a frame can carry, in the order a divergence lists them.
FIELDS = ("reward", "ram", "screen", "screen_md5", "lives", "game_over", "truncated", "frame_number",
          "episode_frame_number", "screen_rgb", "screen_grayscale")
SCALAR_FIELDS = ("reward", "lives", "game_over", "truncated", "frame_number", "episode_frame_number")


@dataclass(frozen=True)
class Frame:
    """One side's view of a batch after a step (arrays have a leading env axis ``N``).

    reward int32[N] (None at a start or after a reset), ram uint8[N, 128], screen uint8[N, H, 160],
    screen_md5 uint8[N, 16] (md5 of the palette-index screen), lives int32[N], game_over bool[N]
    (ALE's ``game_over()``, truncation included), truncated bool[N], frame_number /
    episode_frame_number int32[N], screen_rgb uint8[N, H, 160, 3], screen_grayscale uint8[N, H, 160].
    """

    ram: U8
    lives: I32
    game_over: Bool
    reward: I32 | None = None
    screen: U8 | None = None
    screen_md5: U8 | None = None
    truncated: Bool | None = None
    frame_number: I32 | None = None
    episode_frame_number: I32 | None = None
    screen_rgb: U8 | None = None
    screen_grayscale: U8 | None = None

    def known(self) -> tuple[str, ...]:
        """Return the names of the fields this frame carries."""
        return tuple(name for name in FIELDS if getattr(self, name) is not None)


def screen_md5(screens: U8) -> U8:
    """uint8[N, 16]: the md5 of each palette-index screen (the trace format's screen field)."""
    return np.stack([np.frombuffer(hashlib.md5(np.ascontiguousarray(s).tobytes()).digest(), dtype=np.uint8)
                     for s in screens])


def observe_batch(batch: Any, reward: npt.ArrayLike | None, fields: Sequence[str]) -> Frame:
    """Read ``fields`` (names of :data:`FIELDS`) of a :class:`gpu_env.AtariBatch` into a Frame."""
    want = set(fields)
    screen = np.asarray(batch.get_screen()) if want & {"screen", "screen_md5"} else None
    return Frame(
        ram=np.asarray(batch.get_ram()),
        lives=np.asarray(batch.lives()),
        game_over=np.asarray(batch.game_over()),
        reward=None if reward is None else np.asarray(reward, dtype=np.int32),
        screen=screen if "screen" in want else None,
        screen_md5=screen_md5(screen) if "screen_md5" in want and screen is not None else None,
        truncated=np.asarray(batch.game_truncated()) if "truncated" in want else None,
        frame_number=np.asarray(batch.frame_number()) if "frame_number" in want else None,
        episode_frame_number=np.asarray(batch.episode_frame_number()) if "episode_frame_number" in want else None,
        screen_rgb=np.asarray(batch.get_screen_rgb()) if "screen_rgb" in want else None,
        screen_grayscale=np.asarray(batch.get_screen_grayscale()) if "screen_grayscale" in want else None,
    )


@dataclass(frozen=True)
class Difference:
    """Where two frames differ: the first env that differs and everything that differs in it."""

    env: int
    fields: tuple[str, ...]
    values: tuple[tuple[str, str, str], ...]  # (field, reference, ours) of the scalar fields
    ram_diffs: tuple[tuple[int, int, int], ...]  # (RAM index 0..127 = address 0x80 + i, reference, ours)
    pixel_diffs: int  # screen pixels that differ (every pixel when the shapes differ)


def _differs(a: Any, b: Any) -> bool:
    return bool(np.shape(a) != np.shape(b) or not np.array_equal(a, b))


def first_difference(expected: Frame, actual: Frame) -> Difference | None:
    """Compare every field ``expected`` carries with ``actual``; None when all are equal in every env."""
    names = [n for n in expected.known() if n != "reward" or actual.reward is not None]
    if not any(_differs(getattr(expected, n), getattr(actual, n)) for n in names):
        return None
    bad_envs = [i for i in range(len(expected.ram))
                if any(_differs(getattr(expected, n)[i], getattr(actual, n)[i]) for n in names)]
    if not bad_envs:
        return None
    i = bad_envs[0]
    fields = tuple(n for n in names if _differs(getattr(expected, n)[i], getattr(actual, n)[i]))
    values = tuple((n, str(getattr(expected, n)[i].tolist()), str(getattr(actual, n)[i].tolist()))
                   for n in fields if n in SCALAR_FIELDS)
    ram_ref, ram_ours = expected.ram[i], actual.ram[i]
    ram = tuple((int(k), int(ram_ref[k]), int(ram_ours[k])) for k in np.flatnonzero(ram_ref != ram_ours))
    pixels = 0
    if expected.screen is not None and actual.screen is not None:
        a, b = expected.screen[i], actual.screen[i]
        pixels = int(a.size) if a.shape != b.shape else int((a != b).sum())
    return Difference(env=i, fields=fields, values=values, ram_diffs=ram, pixel_diffs=pixels)


def write_diff_png(path: Path, ref_rgb: U8, ours_rgb: U8) -> Path:
    """Write reference | ours | difference (white where pixels differ), each scaled 2x, as a PNG."""
    import cv2

    if ref_rgb.shape != ours_rgb.shape:  # different heights (NTSC vs PAL window): pad the shorter one
        rows = max(ref_rgb.shape[0], ours_rgb.shape[0])
        ref_rgb, ours_rgb = (np.pad(x, ((0, rows - x.shape[0]), (0, 0), (0, 0))) for x in (ref_rgb, ours_rgb))
    diff = np.zeros_like(ref_rgb)
    diff[(ref_rgb != ours_rgb).any(axis=-1)] = 255
    gap = np.full((ref_rgb.shape[0], 4, 3), 128, dtype=np.uint8)
    image = np.concatenate([ref_rgb, gap, ours_rgb, gap, diff], axis=1)
    image = np.repeat(np.repeat(image, 2, axis=0), 2, axis=1)
    path.parent.mkdir(parents=True, exist_ok=True)
    if not cv2.imwrite(str(path), image[..., ::-1]):
        raise OSError(f"could not write the difference image {path}: check that the folder is writable")
    return path
