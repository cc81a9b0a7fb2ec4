"""The ``"ale_py"`` backend of :class:`~gpu_env.ale_batch.AtariBatch`: the reference itself.

One ``ale_py.ALEInterface`` per environment behind the same backend API, used by the conformance
tests and as a baseline.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from gpu_env.ale_batch import BoolArray, IntArray, U8Array


class _AlePyBackend:
    """The reference: one ``ale_py.ALEInterface`` per environment."""

    def __init__(self, rom: Path, num_envs: int, seeds: npt.NDArray[np.uint32], settings: dict[str, Any]) -> None:
        import ale_py

        self._rom = rom
        self._settings = settings
        self._ales = [ale_py.ALEInterface() for _ in range(num_envs)]
        self._modes: list[int | None] = [None] * num_envs
        self._difficulties: list[int | None] = [None] * num_envs
        for i, ale in enumerate(self._ales):
            ale.setLoggerMode(ale_py.LoggerMode.Error)
            self._load(i, int(seeds[i]))
        self.screen_height = int(self._ales[0].getScreenDims()[0])

    def _load(self, i: int, seed: int) -> None:
        ale = self._ales[i]
        ale.setInt("random_seed", int(np.int32(np.uint32(seed).view(np.int32))))
        ale.setFloat("repeat_action_probability", float(self._settings["repeat_action_probability"]))
        ale.setInt("frame_skip", int(self._settings["frameskip"]))
        ale.setInt("max_num_frames_per_episode", int(self._settings["max_num_frames_per_episode"]))
        ale.loadROM(str(self._rom))
        mode, difficulty = self._modes[i], self._difficulties[i]
        if mode is not None:
            ale.setMode(mode)
        if difficulty is not None:
            ale.setDifficulty(difficulty)

    def act(self, actions: npt.NDArray[np.int64], strength: npt.NDArray[np.float32], mask: BoolArray) -> IntArray:
        import ale_py

        out = np.zeros(len(self._ales), dtype=np.int32)
        for i in np.flatnonzero(mask):
            out[i] = self._ales[i].act(ale_py.Action(int(actions[i])), float(strength[i]))
        return out

    def reset_game(self, mask: BoolArray) -> None:
        for i in np.flatnonzero(mask):
            self._ales[i].reset_game()

    def load_rom(self, mask: BoolArray, seeds: npt.NDArray[np.uint32]) -> None:
        for i in np.flatnonzero(mask):
            self._load(int(i), int(seeds[i]))

    def set_mode(self, mask: BoolArray, mode: int) -> None:
        for i in np.flatnonzero(mask):
            self._modes[i] = mode
            self._ales[i].setMode(mode)

    def set_difficulty(self, mask: BoolArray, difficulty: int) -> None:
        for i in np.flatnonzero(mask):
            self._difficulties[i] = difficulty
            self._ales[i].setDifficulty(difficulty)

    def game_over(self, with_truncation: bool) -> BoolArray:
        return np.array([a.game_over(with_truncation=with_truncation) for a in self._ales], dtype=np.bool_)

    def game_truncated(self) -> BoolArray:
        return np.array([a.game_truncated() for a in self._ales], dtype=np.bool_)

    def lives(self) -> IntArray:
        return np.array([a.lives() for a in self._ales], dtype=np.int32)

    def frame_numbers(self) -> tuple[IntArray, IntArray]:
        total = np.array([a.getFrameNumber() for a in self._ales], dtype=np.int32)
        episode = np.array([a.getEpisodeFrameNumber() for a in self._ales], dtype=np.int32)
        return total, episode

    def get_ram(self) -> U8Array:
        return np.stack([a.getRAM() for a in self._ales])

    def _screens(self, channels: tuple[int, ...], out: U8Array | None, fetch: Callable[[Any, U8Array], Any]
                 ) -> U8Array:
        """Each ALE's screen written in place into ``out[i]`` (ale-py's ``getScreen*(array)`` form)."""
        if out is None:
            out = np.empty((len(self._ales), self.screen_height, 160, *channels), dtype=np.uint8)
        for ale, row in zip(self._ales, out, strict=True):
            fetch(ale, row)
        return out

    def get_screen(self, out: U8Array | None = None) -> U8Array:
        return self._screens((), out, lambda ale, row: ale.getScreen(row))

    def get_screen_rgb(self, out: U8Array | None = None) -> U8Array:
        return self._screens((3,), out, lambda ale, row: ale.getScreenRGB(row))

    def get_screen_grayscale(self, out: U8Array | None = None) -> U8Array:
        return self._screens((), out, lambda ale, row: ale.getScreenGrayscale(row))

    def clone_state(self) -> list[bytes]:
        return [bytes(a.cloneState(include_rng=True).serialize()) for a in self._ales]

    def restore_state(self, states: Sequence[bytes]) -> None:
        import ale_py

        for ale, blob in zip(self._ales, states, strict=True):
            ale.restoreState(ale_py.ALEState(blob))

    def load_ale_state(self, i: int, blob: bytes, screen: U8Array | None, previous: U8Array | None) -> None:
        import ale_py

        self._ales[i].restoreState(ale_py.ALEState(blob))

    def minimal_action_set(self) -> npt.NDArray[np.int64]:
        return np.array([a.value for a in self._ales[0].getMinimalActionSet()], dtype=np.int64)

    def available_modes(self) -> list[int]:
        return [int(m) for m in self._ales[0].getAvailableModes()]

    def available_difficulties(self) -> list[int]:
        return [int(d) for d in self._ales[0].getAvailableDifficulties()]
