"""The reference for the INTER_AREA resize tests: OpenCV itself, and the size pairs they cover."""

from __future__ import annotations

import cv2
import numpy as np

# (src_h, src_w, h, w): general factors (incl. 250-row PAL frames), 2x2, other integer factors, identity.
DOWNSCALE_SIZES = [(210, 160, 84, 84), (250, 160, 84, 84), (210, 160, 105, 80), (210, 160, 70, 80),
                   (210, 160, 42, 40), (210, 160, 64, 48), (210, 160, 100, 50), (210, 160, 210, 160),
                   (210, 160, 96, 72)]


def cv2_area(frames: np.ndarray, height: int, width: int) -> np.ndarray:
    """``cv2.resize(f, (width, height), interpolation=cv2.INTER_AREA)`` of every frame, stacked."""
    return np.stack([cv2.resize(f, (width, height), interpolation=cv2.INTER_AREA) for f in frames])
