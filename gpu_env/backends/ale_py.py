"""The ``"ale_py"`` backend of :class:`gpu_env.AtariBatch`: the reference itself.

One ``ale_py.ALEInterface`` per environment behind the backend protocol: env ``i`` is
``ALEInterface`` with ``random_seed = seeds[i]`` and the batch's ``repeat_action_probability``,
``frame_skip`` and ``max_num_frames_per_episode``, then ``loadROM``; a mode or difficulty is set
with ``setMode``/``setDifficulty`` after it. The one ale-py wrapper of the project: the conformance
engine (:mod:`conformance.ale_side`) and ``AtariBatch(backend="ale_py")`` both use it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from gpu_env.backends.preprocessing import step_observe_by_loop
from gpu_env.backends.protocol import AleSettings, BoolArray, IntArray, U8Array

if TYPE_CHECKING:
    from gpu_env.preprocess_cpu import CpuObservation


class AlePyBackend:
    """The reference: one ``ale_py.ALEInterface`` per environment (``ales``, in env order)."""

    def __init__(self, rom: Path, num_envs: int, seeds: npt.NDArray[np.uint32], settings: AleSettings) -> None:
        import ale_py

        ale_py.ALEInterface.setLoggerMode(ale_py.LoggerMode.Error)
        self._rom = rom
        self._settings = settings
        self.ales: list[Any] = [ale_py.ALEInterface() for _ in range(num_envs)]
        self._modes: list[int | None] = [None] * num_envs
        self._difficulties: list[int | None] = [None] * num_envs
        for i in range(num_envs):
            self._load(i, int(seeds[i]))
        self.screen_height = int(self.ales[0].getScreenDims()[0])

    def _load(self, i: int, seed: int) -> None:
        ale = self.ales[i]
        ale.setInt("random_seed", int(np.uint32(seed).view(np.int32)))
        ale.setFloat("repeat_action_probability", float(self._settings.repeat_action_probability))
        ale.setInt("frame_skip", int(self._settings.frameskip))
        ale.setInt("max_num_frames_per_episode", int(self._settings.max_num_frames_per_episode))
        ale.loadROM(str(self._rom))
        mode, difficulty = self._modes[i], self._difficulties[i]
        if mode is not None:
            ale.setMode(mode)
        if difficulty is not None:
            ale.setDifficulty(difficulty)

    def act(self, actions: npt.NDArray[np.int64], strength: npt.NDArray[np.float32], mask: BoolArray) -> IntArray:
        """See :meth:`gpu_env.backends.protocol.AtariBackend.act`."""
        import ale_py

        out = np.zeros(len(self.ales), dtype=np.int32)
        for i in np.flatnonzero(mask):
            out[i] = self.ales[i].act(ale_py.Action(int(actions[i])), float(strength[i]))
        return out

    def step_observe(self, actions: npt.NDArray[np.int64], mask: BoolArray, reset: BoolArray,
                     noops: npt.NDArray[np.int32], frame_skip: int, terminal_on_life_loss: bool, lives: IntArray,
                     grayscale: bool, buf0: U8Array, buf1: U8Array, observation: CpuObservation | None,
                     stack: U8Array | None) -> tuple[IntArray, BoolArray, BoolArray, U8Array | None]:
        """See :meth:`gpu_env.backends.protocol.AtariBackend.step_observe`."""
        return step_observe_by_loop(self, actions, mask, reset, noops, frame_skip, terminal_on_life_loss, lives,
                                    grayscale, buf0, buf1, observation, stack)

    def reset_game(self, mask: BoolArray) -> None:
        """See :meth:`gpu_env.backends.protocol.AtariBackend.reset_game`."""
        for i in np.flatnonzero(mask):
            self.ales[i].reset_game()

    def load_rom(self, mask: BoolArray, seeds: npt.NDArray[np.uint32]) -> None:
        """See :meth:`gpu_env.backends.protocol.AtariBackend.load_rom`."""
        for i in np.flatnonzero(mask):
            self._load(int(i), int(seeds[i]))

    def set_mode(self, mask: BoolArray, mode: int) -> None:
        """See :meth:`gpu_env.backends.protocol.AtariBackend.set_mode`."""
        for i in np.flatnonzero(mask):
            self._modes[i] = mode
            self.ales[i].setMode(mode)

    def set_difficulty(self, mask: BoolArray, difficulty: int) -> None:
        """See :meth:`gpu_env.backends.protocol.AtariBackend.set_difficulty`."""
        for i in np.flatnonzero(mask):
            self._difficulties[i] = difficulty
            self.ales[i].setDifficulty(difficulty)

    def game_over(self, with_truncation: bool) -> BoolArray:
        """See :meth:`gpu_env.backends.protocol.AtariBackend.game_over`."""
        return np.array([a.game_over(with_truncation=with_truncation) for a in self.ales], dtype=np.bool_)

    def game_truncated(self) -> BoolArray:
        """See :meth:`gpu_env.backends.protocol.AtariBackend.game_truncated`."""
        return np.array([a.game_truncated() for a in self.ales], dtype=np.bool_)

    def lives(self) -> IntArray:
        """See :meth:`gpu_env.backends.protocol.AtariBackend.lives`."""
        return np.array([a.lives() for a in self.ales], dtype=np.int32)

    def frame_numbers(self) -> tuple[IntArray, IntArray]:
        """See :meth:`gpu_env.backends.protocol.AtariBackend.frame_numbers`."""
        total = np.array([a.getFrameNumber() for a in self.ales], dtype=np.int32)
        episode = np.array([a.getEpisodeFrameNumber() for a in self.ales], dtype=np.int32)
        return total, episode

    def get_ram(self) -> U8Array:
        """See :meth:`gpu_env.backends.protocol.AtariBackend.get_ram`."""
        return np.stack([a.getRAM() for a in self.ales])

    def _screens(self, channels: tuple[int, ...], out: U8Array | None, fetch: Callable[[Any, U8Array], Any]
                 ) -> U8Array:
        """Each ALE's screen written in place into ``out[i]`` (ale-py's ``getScreen*(array)`` form)."""
        if out is None:
            out = np.empty((len(self.ales), self.screen_height, 160, *channels), dtype=np.uint8)
        for ale, row in zip(self.ales, out, strict=True):
            fetch(ale, row)
        return out

    def get_screen(self, out: U8Array | None = None) -> U8Array:
        """See :meth:`gpu_env.backends.protocol.AtariBackend.get_screen`."""
        return self._screens((), out, lambda ale, row: ale.getScreen(row))

    def get_screen_rgb(self, out: U8Array | None = None) -> U8Array:
        """See :meth:`gpu_env.backends.protocol.AtariBackend.get_screen_rgb`."""
        return self._screens((3,), out, lambda ale, row: ale.getScreenRGB(row))

    def get_screen_grayscale(self, out: U8Array | None = None) -> U8Array:
        """See :meth:`gpu_env.backends.protocol.AtariBackend.get_screen_grayscale`."""
        return self._screens((), out, lambda ale, row: ale.getScreenGrayscale(row))

    def clone_state(self) -> list[bytes]:
        """See :meth:`gpu_env.backends.protocol.AtariBackend.clone_state`."""
        return [bytes(a.cloneState(include_rng=True).serialize()) for a in self.ales]

    def restore_state(self, states: Sequence[bytes]) -> None:
        """See :meth:`gpu_env.backends.protocol.AtariBackend.restore_state`."""
        import ale_py

        for ale, blob in zip(self.ales, states, strict=True):
            ale.restoreState(ale_py.ALEState(blob))

    def load_ale_state(self, i: int, blob: bytes, screen: U8Array | None, previous: U8Array | None) -> None:
        """See :meth:`gpu_env.backends.protocol.AtariBackend.load_ale_state`."""
        import ale_py

        self.ales[i].restoreState(ale_py.ALEState(blob))

    def minimal_action_set(self) -> npt.NDArray[np.int64]:
        """See :meth:`gpu_env.backends.protocol.AtariBackend.minimal_action_set`."""
        return np.array([a.value for a in self.ales[0].getMinimalActionSet()], dtype=np.int64)

    def available_modes(self) -> list[int]:
        """See :meth:`gpu_env.backends.protocol.AtariBackend.available_modes`."""
        return [int(m) for m in self.ales[0].getAvailableModes()]

    def available_difficulties(self) -> list[int]:
        """See :meth:`gpu_env.backends.protocol.AtariBackend.available_difficulties`."""
        return [int(d) for d in self.ales[0].getAvailableDifficulties()]
