"""Measure ale-py's NTSC and PAL palettes with a 4K test program of our own.

The program (hand-assembled below) shows COLUBK = 2*y on scanline y, so one screen holds all 128
even palette indices; optional extra scanlines make ale-py autodetect PAL (>285 lines per frame)
and an odd line count turns on PAL colour loss (every index odd). ale-py loads unknown ROMs only
under a known file name, so the image is written as ``earthworld.bin`` (whose RomSettings only read
RAM). ``measure_palettes`` returns, per format, index -> (RGB, grayscale) as ale-py renders it.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import numpy.typing as npt

_RESET_VECTOR = 0xF000
# SEI; CLD; LDX #$FF; TXS
_INIT = bytes([0x78, 0xD8, 0xA2, 0xFF, 0x9A])
# frame: LDA #2; STA VSYNC; STA WSYNC x3; LDA #0; STA VSYNC; STA VBLANK; LDY #0
_FRAME = bytes([0xA9, 0x02, 0x85, 0x00, 0x85, 0x02, 0x85, 0x02, 0x85, 0x02, 0xA9, 0x00, 0x85, 0x00, 0x85, 0x01])
_FRAME += bytes([0xA0, 0x00])
# loop: STA WSYNC; TYA; ASL A; STA COLUBK; INY; CPY #0; BNE loop   (256 lines)
_LOOP = bytes([0x85, 0x02, 0x98, 0x0A, 0x85, 0x09, 0xC8, 0xC0, 0x00, 0xD0, 0xF5])
_JMP_FRAME = bytes([0x4C, 0x05, 0xF0])


def probe_rom(extra_lines: int) -> bytes:
    """Build the 4K probe image, with ``extra_lines`` (0..255) blank scanlines added to each frame."""
    if not 0 <= extra_lines <= 255:
        raise ValueError(f"extra_lines={extra_lines} must be in 0..255")
    code = _INIT + _FRAME + _LOOP
    if extra_lines:
        # LDY #n; loop2: STA WSYNC; DEY; BNE loop2
        code += bytes([0xA0, extra_lines, 0x85, 0x02, 0x88, 0xD0, 0xFB])
    code += _JMP_FRAME
    image = bytearray([0xEA] * 4096)
    image[: len(code)] = code
    image[0xFFC:0xFFE] = _RESET_VECTOR.to_bytes(2, "little")
    image[0xFFE:0x1000] = _RESET_VECTOR.to_bytes(2, "little")
    return bytes(image)


def _render(extra_lines: int) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.uint8], npt.NDArray[np.uint8]]:
    import ale_py

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "earthworld.bin"
        path.write_bytes(probe_rom(extra_lines))
        ale = ale_py.ALEInterface()
        ale.setLoggerMode(ale_py.LoggerMode.Error)
        ale.setInt("random_seed", 0)
        ale.setFloat("repeat_action_probability", 0.0)
        ale.loadROM(str(path))
        for _ in range(3):
            ale.act(ale_py.Action.NOOP)
        return ale.getScreen(), ale.getScreenRGB(), ale.getScreenGrayscale()


def _table(extra_lines: int) -> dict[int, tuple[tuple[int, int, int], int]]:
    screen, rgb, gray = _render(extra_lines)
    out: dict[int, tuple[tuple[int, int, int], int]] = {}
    for idx in np.unique(screen).tolist():
        ys, xs = np.nonzero(screen == idx)
        r, g, b = (int(v) for v in rgb[ys[0], xs[0]])
        out[int(idx)] = ((r, g, b), int(gray[ys[0], xs[0]]))
    return out


def measure_palettes() -> dict[str, dict[int, tuple[tuple[int, int, int], int]]]:
    """Index -> ((R, G, B), gray) as ale-py shows it: "ntsc" (even indices), "pal" (all 256)."""
    ntsc = _table(0)  # 259-line frames
    pal = _table(53)  # 312 lines: even indices
    pal.update(_table(54))  # 313 lines: colour loss, odd indices
    return {"ntsc": ntsc, "pal": pal}
