"""A :class:`conformance.trace.TraceBackend` over one gpu_env environment (batch of 1)."""

from __future__ import annotations

import importlib
from typing import Any

import numpy as np


class GpuEnvBackend:
    """Step ``gpu_env.AtariBatch`` (one env) as if it were ``ale_py.ALEInterface``."""

    def __init__(self, rom: str, *, seed: int, repeat_action_probability: float = 0.25,
                 backend: str = "cpu") -> None:
        gpu_env = importlib.import_module("gpu_env")
        self.batch: Any = gpu_env.AtariBatch(rom, num_envs=1, backend=backend, seeds=[seed],
                                             repeat_action_probability=repeat_action_probability)
        self._action = np.zeros(1, dtype=np.int64)

    def act(self, action: int) -> int:
        """Emulate one frame."""
        self._action[0] = action
        return int(np.asarray(self.batch.act(self._action))[0])

    def reset_game(self) -> None:
        """ALE's reset_game on the one env."""
        self.batch.reset_game()

    def game_over(self) -> bool:
        """Whether the episode ended."""
        return bool(np.asarray(self.batch.game_over())[0])

    def lives(self) -> int:
        """Remaining lives."""
        return int(np.asarray(self.batch.lives())[0])

    def ram(self) -> np.ndarray:
        """uint8[128] RIOT RAM."""
        ram: np.ndarray = np.asarray(self.batch.get_ram())[0]
        return ram

    def screen(self) -> np.ndarray:
        """uint8[H, 160] palette indices."""
        screen: np.ndarray = np.asarray(self.batch.get_screen())[0]
        return screen
