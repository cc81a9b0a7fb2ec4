"""The one builder of what the C++ environment layer is told about a ROM, for every backend.

``gpu_env/core/ale/params.h`` reads an int32 block of :data:`PARAM_COUNT` words (``kParam*``, in the
order of :func:`rom_params`) plus the ``setMode`` programs of :mod:`gpu_env.games` encoded as one
int32 stream (``kOp*`` of ``core/ale/environment.h``). The CPU backend (:mod:`gpu_env.backends.native`)
and the CUDA backend (:mod:`gpu_env.backends.cuda.backend`) both build them here.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from gpu_env.errors import GpuEnvError
from gpu_env.games import GameInfo

PADDLE_MIN = 27450  # ALE's default paddle_min (ale_state.hpp PADDLE_MIN)
PARAM_COUNT = 16  # core/ale/params.h kParamCount
DRAW_EVERY_FRAME_VARIABLE = "GPU_ENV_DRAW_EVERY_FRAME"  # "1": draw the frames nobody observes too
_PROGRAM_OPS = {"select": 1, "select_until": 2, "soft_reset": 3, "hook_begin": 4, "hook_end": 5, "act": 6,
                "act_until": 7, "act_until_changed": 8, "select_random_until": 9}


def rom_params(info: GameInfo, scheme: int, frameskip: int, max_frames: int) -> npt.NDArray[np.int32]:
    """Return the int32[PARAM_COUNT] block of ``core/ale/params.h`` for one ROM and its settings.

    ``scheme`` is the detected :class:`gpu_env.roms.CartScheme`; ``frameskip`` ALE's ``frame_skip``
    (>= 1); ``max_frames`` ALE's ``max_num_frames_per_episode`` (0 disables truncation). The last word
    is 1 when the environment variable ``GPU_ENV_DRAW_EVERY_FRAME`` is ``1`` at the call: the core then
    draws the pictures of frames nobody observes too (``core/frames.h``; the same observations, slower),
    for comparisons.
    """
    if frameskip < 1:
        raise GpuEnvError(f"frameskip={frameskip} must be >= 1")
    if max_frames < 0:
        raise GpuEnvError(f"max_frames={max_frames} must be >= 0 (0 disables truncation)")
    left, right = info.controllers
    a_props = int(info.difficulty_props[0] == "A") | (int(info.difficulty_props[1] == "A") << 1)
    words = [
        info.game_id, int(scheme), info.ystart, info.height_prop, int(info.hmove_blanks),
        int(left == "PADDLES"), int(right == "PADDLES"), int(info.swap_ports), int(info.swap_paddles),
        a_props, PADDLE_MIN, info.paddle_max, info.default_mode, int(frameskip), int(max_frames),
        int(os.environ.get(DRAW_EVERY_FRAME_VARIABLE, "") == "1"),
    ]
    if len(words) != PARAM_COUNT:
        raise GpuEnvError(f"rom_params built {len(words)} words, core/ale/params.h reads {PARAM_COUNT}")
    return np.array(words, dtype=np.int32)


def _encode_condition(until: Mapping[str, Any]) -> list[int]:
    words = [len(until["any"])]
    for clause in until["any"]:
        words.append(len(clause))
        for term in clause:
            words += [int(term["addr"]), int(term["mask"]), int(term["value"]), int(bool(term["decimal"]))]
    return words


def encode_set_mode_program(ops: Sequence[Mapping[str, Any]]) -> list[int]:
    """Encode one setMode program of :mod:`gpu_env.games` as the int32 stream environment.h runs (kOp*)."""
    words: list[int] = []
    for op in ops:
        kind = op["op"]
        if kind not in _PROGRAM_OPS:
            raise GpuEnvError(f"setMode op {kind!r} is not one gpu_env/core/ale/environment.h runs: "
                              f"regenerate gpu_env/data/games.json with gpu_env.tools.build_games_data")
        words.append(_PROGRAM_OPS[kind])
        if kind == "select":
            words.append(int(op["frames"]))
        elif kind == "select_until":
            max_presses = op["max_presses"]
            words += [int(op["frames"]), -1 if max_presses is None else int(max_presses)]
            words += _encode_condition(op["until"])
        elif kind == "act":
            words.append(int(op["action"]))
        elif kind == "act_until":
            words += [len(op["actions"]), *map(int, op["actions"]), *_encode_condition(op["until"])]
        elif kind == "act_until_changed":
            words += [int(op["addr"]), len(op["actions"]), *map(int, op["actions"])]
        elif kind == "select_random_until":
            words += [int(op["base"]), int(op["modulo"]), int(op["then_act"]), *_encode_condition(op["until"])]
    words.append(0)
    return words


@dataclass(frozen=True)
class SetModePrograms:
    """Every mode's setMode program of one game in one int32 stream.

    words: the concatenated programs (each ends with 0); offsets: mode -> index of its program in
    ``words`` (modes without an overridden setMode are absent and run none).
    """

    words: tuple[int, ...]
    offsets: Mapping[int, int]

    def offset(self, mode: int) -> int:
        """Return the index of ``mode``'s program in :attr:`words`, or -1 when it runs none."""
        return self.offsets.get(int(mode), -1)

    def array(self) -> npt.NDArray[np.int32]:
        """Return :attr:`words` as int32 (one 0 word when empty, so that the buffer is never null)."""
        return np.array(self.words or (0,), dtype=np.int32)


def set_mode_programs(info: GameInfo) -> SetModePrograms:
    """Encode the setMode programs of every mode of ``info`` (see :class:`SetModePrograms`)."""
    words: list[int] = []
    offsets: dict[int, int] = {}
    for mode in info.modes:
        ops = info.set_mode_program(mode)
        if ops:
            offsets[mode] = len(words)
            words += encode_set_mode_program([dict(o) for o in ops])
    return SetModePrograms(words=tuple(words), offsets=offsets)
