"""Other players in ViZDoom's labels buffer: what the built-in scripted agent aims from, as a pixel mask.

ViZDoom labels every visible object with a value in ``GameState.labels_buffer`` (``uint8[H, W]`` at the render
resolution) and lists them in ``GameState.labels``. Other players (agents and bots) are labelled
:data:`PLAYER_LABEL`; the player's own weapon sprite is labelled the same, with the value
:data:`SELF_LABEL_VALUE`, and is not an enemy.
"""

from __future__ import annotations

from typing import Any

import numpy as np

#: Label object name of a player (agents and bots).
PLAYER_LABEL = "DoomPlayer"
#: Labels-buffer value of the player's own weapon sprite (labelled :data:`PLAYER_LABEL`; not an enemy).
SELF_LABEL_VALUE = 255
#: The colour (RGB) other players' pixels are painted in a marked observation (pure magenta, chosen to stand out).
MARK_RGB = (255, 0, 255)
#: Rows and columns of :func:`players_grid`, the players-position target of a pixel-only student's auxiliary head.
PLAYERS_GRID = (6, 16)


def visible_labels(labels: Any) -> list[tuple[str, int, int, int, int]]:
    """Return ``(object_name, x, y, width, height)`` of every label in ``labels`` but the player's own weapon."""
    return [(str(lab.object_name), int(lab.x), int(lab.y), int(lab.width), int(lab.height)) for lab in labels or ()
            if not (lab.object_name == PLAYER_LABEL and lab.value == SELF_LABEL_VALUE)]


def enemy_values(labels: Any) -> list[int]:
    """Return the labels-buffer values of the other players among ``labels`` (ViZDoom ``Label`` objects)."""
    return [int(lab.value) for lab in labels if lab.object_name == PLAYER_LABEL and lab.value != SELF_LABEL_VALUE]


def enemy_mask(state: Any) -> np.ndarray | None:
    """Return ``bool[H, W]`` (render resolution): the pixels of other players in ``state``, or None without a buffer."""
    buffer = state.labels_buffer
    if buffer is None:
        return None
    values = enemy_values(state.labels)
    if not values:
        return np.zeros(buffer.shape, dtype=bool)
    return np.isin(buffer, values)


def players_grid(mask: np.ndarray, grid: tuple[int, int] = PLAYERS_GRID, *, out: np.ndarray | None = None
                 ) -> np.ndarray:
    """Return ``uint8[rows * cols]``, row-major: 1 where a cell of the frame holds a pixel of ``mask``, else 0.

    ``mask`` is :func:`enemy_mask`'s ``bool[H, W]``; the frame is cut into ``grid = (rows, cols)`` cells of equal
    size (pixel ``(y, x)`` falls in cell ``(y * rows // H, x * cols // W)``). ``out``, if given, is filled and returned.
    """
    rows, cols = grid
    if out is None:
        out = np.empty(rows * cols, dtype=np.uint8)
    out[:] = 0
    ys, xs = np.nonzero(mask)
    if ys.size:
        height, width = mask.shape
        out[(ys * rows // height) * cols + xs * cols // width] = 1
    return out
