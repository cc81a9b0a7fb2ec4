"""``CudaAleBackend``: the :class:`~gpu_env.backends.protocol.AtariBackend` protocol over a CUDA batch.

``AtariBatch(backend="cuda")`` drives it: every call goes to a
:class:`~gpu_env.backends.cuda.backend.CudaAtariBatch` and every result is read back to the host as
numpy (``.get()``), the arrays the protocol promises. ``make_vec(..., backend="cuda")`` does not use it:
its engine (:mod:`gpu_env.backends.cuda.vec`) keeps the batch's device arrays.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from gpu_env.backends.cuda.backend import CudaAtariBatch
from gpu_env.backends.preprocessing import step_observe_by_loop
from gpu_env.backends.protocol import AleSettings
from gpu_env.errors import NotImplementedYetError

if TYPE_CHECKING:
    from gpu_env.preprocess_cpu import CpuObservation


def _into(screens: npt.NDArray[np.uint8], out: npt.NDArray[np.uint8] | None) -> npt.NDArray[np.uint8]:
    """``screens`` copied into ``out`` (already checked by ``AtariBatch``) and ``out`` returned, or ``screens``."""
    if out is None:
        return screens
    out[...] = screens
    return out


class CudaAleBackend:
    """The :class:`~gpu_env.backends.protocol.AtariBackend` protocol over :class:`CudaAtariBatch` (host numpy results).

    Every result is read back to the host (``.get()``); its ``step_observe`` is the loop of batch calls
    of :mod:`gpu_env.backends.preprocessing` (the device's own preprocessed step is make_vec's,
    :mod:`gpu_env.backends.cuda.vec`).
    """

    def __init__(self, rom: Path, num_envs: int, seeds: npt.NDArray[np.uint32], settings: AleSettings) -> None:
        self.batch = CudaAtariBatch(
            rom, num_envs, seeds=seeds, repeat_action_probability=settings.repeat_action_probability,
            frameskip=settings.frameskip, max_num_frames_per_episode=settings.max_num_frames_per_episode,
        )
        self.screen_height = self.batch.screen_height

    def act(self, actions: npt.NDArray[np.int64], strength: npt.NDArray[np.float32],
            mask: npt.NDArray[np.bool_]) -> npt.NDArray[np.int32]:
        """See ``AtariBatch.act``."""
        return np.asarray(self.batch.act(actions, strength, None if mask.all() else mask, check=False).get())

    def step_observe(self, actions: npt.NDArray[np.int64], mask: npt.NDArray[np.bool_], reset: npt.NDArray[np.bool_],
                     noops: npt.NDArray[np.int32], frame_skip: int, terminal_on_life_loss: bool,
                     lives: npt.NDArray[np.int32], grayscale: bool, buf0: npt.NDArray[np.uint8],
                     buf1: npt.NDArray[np.uint8], observation: CpuObservation | None,
                     stack: npt.NDArray[np.uint8] | None
                     ) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.bool_], npt.NDArray[np.bool_],
                                npt.NDArray[np.uint8] | None]:
        """See ``AtariBatch.step_preprocessed``."""
        return step_observe_by_loop(self, actions, mask, reset, noops, frame_skip, terminal_on_life_loss, lives,
                                    grayscale, buf0, buf1, observation, stack)

    def reset_game(self, mask: npt.NDArray[np.bool_]) -> None:
        """See ``AtariBatch.reset_game``."""
        self.batch.reset_game(None if mask.all() else mask)

    def load_rom(self, mask: npt.NDArray[np.bool_], seeds: npt.NDArray[np.uint32]) -> None:
        """See ``AtariBatch.load_rom``."""
        self.batch.load_rom(mask, seeds)

    def set_mode(self, mask: npt.NDArray[np.bool_], mode: int) -> None:
        """See ``AtariBatch.set_mode``."""
        self.batch.set_mode(mode, mask)

    def set_difficulty(self, mask: npt.NDArray[np.bool_], difficulty: int) -> None:
        """See ``AtariBatch.set_difficulty``."""
        self.batch.set_difficulty(difficulty, mask)

    def game_over(self, with_truncation: bool) -> npt.NDArray[np.bool_]:
        """See ``AtariBatch.game_over``."""
        return np.asarray(self.batch.game_over(with_truncation).get())

    def game_truncated(self) -> npt.NDArray[np.bool_]:
        """See ``AtariBatch.game_truncated``."""
        return np.asarray(self.batch.game_truncated().get())

    def lives(self) -> npt.NDArray[np.int32]:
        """See ``AtariBatch.lives``."""
        return np.asarray(self.batch.lives().get())

    def frame_numbers(self) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.int32]]:
        """(frame number, episode frame number), int32[N] each."""
        return np.asarray(self.batch.frame_number().get()), np.asarray(self.batch.episode_frame_number().get())

    def get_ram(self) -> npt.NDArray[np.uint8]:
        """See ``AtariBatch.get_ram``."""
        return np.asarray(self.batch.get_ram().get())

    def get_screen(self, out: npt.NDArray[np.uint8] | None = None) -> npt.NDArray[np.uint8]:
        """See ``AtariBatch.get_screen`` (copied from the device, then into ``out`` when given)."""
        return _into(np.asarray(self.batch.get_screen().get()), out)

    def get_screen_rgb(self, out: npt.NDArray[np.uint8] | None = None) -> npt.NDArray[np.uint8]:
        """See ``AtariBatch.get_screen_rgb``."""
        return _into(np.asarray(self.batch.get_screen_rgb().get()), out)

    def get_screen_grayscale(self, out: npt.NDArray[np.uint8] | None = None) -> npt.NDArray[np.uint8]:
        """See ``AtariBatch.get_screen_grayscale``."""
        return _into(np.asarray(self.batch.get_screen_grayscale().get()), out)

    def clone_state(self) -> list[bytes]:
        """See ``AtariBatch.clone_state``."""
        return self.batch.clone_state()

    def restore_state(self, states: Sequence[bytes]) -> None:
        """See ``AtariBatch.restore_state``."""
        self.batch.restore_state(states)

    def load_ale_state(self, i: int, blob: bytes, screen: npt.NDArray[np.uint8] | None,
                       previous: npt.NDArray[np.uint8] | None) -> None:
        """Not on the device yet: import on ``backend="cpu"``, then move it with clone/restore_state."""
        raise NotImplementedYetError(
            "load_ale_state is not implemented for backend='cuda' yet: import the state into an "
            "AtariBatch(backend='cpu'), then restore_state(cpu_batch.clone_state()) on the cuda batch")

    def minimal_action_set(self) -> npt.NDArray[np.int64]:
        """See ``AtariBatch.minimal_action_set``."""
        return self.batch.minimal_action_set()

    def available_modes(self) -> list[int]:
        """See ``AtariBatch.available_modes``."""
        return self.batch.available_modes()

    def available_difficulties(self) -> list[int]:
        """See ``AtariBatch.available_difficulties``."""
        return self.batch.available_difficulties()
