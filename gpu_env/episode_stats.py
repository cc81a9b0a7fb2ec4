"""gymnasium ``RecordEpisodeStatistics``' numbers for every env of a batch, as numpy arrays or torch tensors."""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import torch

Mask = Any  # bool[N] of an engine: a numpy array (host engine) or a torch tensor (device engine)


def where(mask: Mask, a: Any, b: Any) -> Any:
    """``np.where`` or ``torch.where`` after the kind of ``mask`` (no host read either way)."""
    return torch.where(mask, a, b) if isinstance(mask, torch.Tensor) else np.where(mask, a, b)


class EpisodeStats:
    """``RecordEpisodeStatistics``' return, length and start time of every env: numpy (host) or torch (device).

    Each update replaces the arrays (never writes them), so the values an info holds stay as they were.
    """

    def __init__(self, num_envs: int, device: torch.device | None) -> None:
        start = np.full(num_envs, time.perf_counter())
        arrays: tuple[Any, ...] = (np.zeros(num_envs), np.zeros(num_envs, dtype=np.int64), start)
        if device is not None:
            arrays = tuple(torch.from_numpy(a).to(device) for a in arrays)
        self.ret, self.length, self.start_time = arrays

    def start(self, mask: Mask, now: float) -> None:
        """Start new episodes for the envs in ``mask`` (just reset)."""
        self.ret = where(mask, 0.0, self.ret)
        self.length = where(mask, 0, self.length)
        self.start_time = where(mask, now, self.start_time)

    def add(self, reward: Any, stepped: Mask) -> None:
        """Count one step with ``reward`` for the envs in ``stepped``."""
        self.ret = self.ret + where(stepped, reward, 0.0)
        self.length = self.length + stepped

    def values(self, now: float) -> dict[str, Any]:
        """``r``: return, ``l``: length in steps, ``t``: seconds since the episode started (rounded to µs)."""
        seconds = now - self.start_time
        rounded = np.round(seconds, 6) if isinstance(seconds, np.ndarray) else torch.round(seconds, decimals=6)
        return {"r": self.ret, "l": self.length, "t": rounded}
