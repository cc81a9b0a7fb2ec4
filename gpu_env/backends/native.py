"""The ``"cpu"`` backend of :class:`gpu_env.AtariBatch`: gpu_env's C++ environment.

``gpu_env/core/ale/environment.h`` (loadROM, reset_game, sticky actions, frame skip, per-game rules)
run through ``gpu_env/native/ale_batch.cpp`` on threads across environments, configured with the
ROM-parameter block and setMode programs of :mod:`gpu_env.rom_params`, plus the import of ale-py
``cloneState()`` blobs (with the game words ALE does not serialize derived by
:func:`derive_unserialized`).
"""

from __future__ import annotations

import ctypes
import functools
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from gpu_env import mt19937
from gpu_env.backends.preprocessing import observe
from gpu_env.backends.protocol import NOOP, AleSettings, BoolArray, IntArray, U8Array
from gpu_env.binding import pointer
from gpu_env.console_native import export_ale_layout
from gpu_env.errors import BackendError, GpuEnvError
from gpu_env.rom_params import PARAM_COUNT, rom_params, set_mode_programs

if TYPE_CHECKING:
    from gpu_env.preprocess_cpu import CpuObservation

# gpu_env_ale_step_observe's pool and resize arguments when no observation is wanted (out = NULL).
_NO_OBSERVATION = (ctypes.c_int32(0), ctypes.c_int32(0), ctypes.c_int32(0), ctypes.c_int32(1), None, None,
                   ctypes.c_int32(0), None, None, ctypes.c_int32(0), None)
# ... and its frame-stack arguments without a stack (stack = NULL).
_NO_STACK = (None, ctypes.c_int32(0), None)


class NativeBackend:
    """gpu_env's C++ environment (core/ale/environment.h) through native/ale_batch.cpp."""

    def __init__(self, rom_path: Path, num_envs: int, seeds: npt.NDArray[np.uint32], settings: AleSettings,
                 num_threads: int | None) -> None:
        from gpu_env import game_lookup, roms
        from gpu_env.binding import native

        rom = roms.load_rom(rom_path)
        self._info = game_lookup.game_for_rom(rom)
        info = self._info
        self._lib = native()
        self._ct = ctypes
        self._threads = num_threads if num_threads is not None else (os.cpu_count() or 1)
        self.num_envs = num_envs
        self._programs = set_mode_programs(info)
        params = rom_params(info, int(rom.scheme), settings.frameskip, settings.max_num_frames_per_episode)
        if self._lib.gpu_env_ale_param_count() != PARAM_COUNT:
            raise BackendError(
                "gpu_env's CPU library is older than gpu_env/rom_params.py: rebuild it (pip install -e .)"
            )
        starting = np.array(info.starting_actions or [0], dtype=np.int32)
        programs = self._programs.array()
        image = np.frombuffer(rom.data, dtype=np.uint8)
        self._handle = ctypes.c_void_p(self._lib.gpu_env_ale_rom_new(
            self._p(params), ctypes.c_float(settings.repeat_action_probability), self._p(image),
            ctypes.c_uint32(len(rom.data)), self._p(starting), ctypes.c_int32(len(info.starting_actions)),
            self._p(programs), ctypes.c_int32(len(self._programs.words)),
        ))
        self._env_size = int(self._lib.gpu_env_ale_env_size())
        self._envs = np.zeros((num_envs, self._env_size), dtype=np.uint8)
        self._max_height = max(250, info.height_prop)
        self._stride = 2 * 160 * self._max_height
        self._buffers = np.zeros((num_envs, self._stride), dtype=np.uint8)
        self._modes = np.full(num_envs, info.default_mode, dtype=np.int64)
        self._difficulties = np.zeros(num_envs, dtype=np.int64)
        # Arguments every hot call passes, built once: the arrays above are never reallocated
        # (restore_state and load_ale_state write into them), so their addresses stay valid.
        self._envs_p = pointer(self._envs)
        self._buffers_p = pointer(self._buffers)
        self._n_c = ctypes.c_int32(num_envs)
        self._stride_c = ctypes.c_uint64(self._stride)
        self._threads_c = ctypes.c_int32(self._threads)
        self._everyone_u8 = np.ones(num_envs, dtype=np.uint8)
        self._status = np.zeros((num_envs, 6), dtype=np.int32)
        self._status_p = pointer(self._status)
        self._tables = _screen_tables()
        everyone = np.ones(num_envs, dtype=np.bool_)
        self._load(everyone, seeds)
        # A ROM run through ALE's name fallback gets its display format from the power-on probe.
        self._info = info = game_lookup.with_probed_display(info, pal=bool(self._query()[0, 5]))
        self.screen_height = int(info.screen_height)
        self._height_c = ctypes.c_int32(self.screen_height)

    def _p(self, array: npt.NDArray[Any]) -> Any:
        return pointer(array)

    def _mask_p(self, mask: BoolArray) -> Any:
        """``mask`` as a uint8 pointer: the cached all-ones array, or the bool array's own bytes."""
        if mask.all():
            return self._p(self._everyone_u8)
        return self._p(np.ascontiguousarray(mask).view(np.uint8))

    def _program(self, mode: int) -> int:
        return self._programs.offset(mode)

    def _load(self, mask: BoolArray, seeds: npt.NDArray[np.uint32]) -> None:
        ct = self._ct
        self._lib.gpu_env_ale_load(
            self._handle, self._p(self._envs), ct.c_int32(self.num_envs), self._p(self._buffers),
            ct.c_uint64(self._stride), self._p(mask.astype(np.uint8)), self._p(seeds.astype(np.uint32)),
            ct.c_int32(self._program(self._info.default_mode)),
            ct.c_int32(self._threads),
        )
        # ALE's setMode / setDifficulty after loadROM: remembered for the next reset_game.
        for mode in np.unique(self._modes[mask]):
            self.set_mode(mask & (self._modes == mode), int(mode))
        for diff in np.unique(self._difficulties[mask]):
            self.set_difficulty(mask & (self._difficulties == diff), int(diff))

    def act(self, actions: npt.NDArray[np.int64], strength: npt.NDArray[np.float32], mask: BoolArray) -> IntArray:
        """See :meth:`gpu_env.backends.protocol.AtariBackend.act`."""
        out = np.empty(self.num_envs, dtype=np.int32)
        acts = np.ascontiguousarray(actions, dtype=np.int32)
        strengths = np.ascontiguousarray(strength, dtype=np.float32)
        self._lib.gpu_env_ale_act(
            self._handle, self._envs_p, self._n_c, self._buffers_p, self._stride_c, self._p(acts),
            self._p(strengths), self._mask_p(mask), self._p(out), self._threads_c,
        )
        return out

    def step_observe(self, actions: npt.NDArray[np.int64], mask: BoolArray, reset: BoolArray,
                     noops: npt.NDArray[np.int32], frame_skip: int, terminal_on_life_loss: bool, lives: IntArray,
                     grayscale: bool, buf0: U8Array, buf1: U8Array, observation: CpuObservation | None,
                     stack: U8Array | None) -> tuple[IntArray, BoolArray, BoolArray, U8Array | None]:
        """See :meth:`gpu_env.AtariBatch.step_preprocessed`.

        The step, the reset and (for a ``observation`` that resizes natively, every size but an
        upscale) the observation and the frame stack run in the CPU library, one thread per env at a time.
        """
        if observation is not None and not observation.native:
            total, term, trunc, _ = self.step_observe(actions, mask, reset, noops, frame_skip, terminal_on_life_loss,
                                                      lives, grayscale, buf0, buf1, None, None)
            return total, term, trunc, observe(observation, stack, buf0, buf1, frame_skip, reset)
        rewards = np.empty(self.num_envs, dtype=np.int32)
        term = np.empty(self.num_envs, dtype=np.bool_)
        trunc = np.empty(self.num_envs, dtype=np.bool_)
        if not (buf0.flags.c_contiguous and buf1.flags.c_contiguous and lives.flags.c_contiguous):
            raise GpuEnvError("step_preprocessed needs C-contiguous buffers and lives")
        modes = mask.astype(np.uint8) + 2 * reset.astype(np.uint8)
        ct = self._ct
        frames = None
        stacking = _NO_STACK
        if observation is not None:
            frames = observation.new_output()
            resize = (ct.c_int32(int(frame_skip > 1)), *observation.resize_args(), self._p(frames))
            if stack is not None:
                _check_stack(stack, frames)
                stacked = np.empty_like(stack)
                stacking = (self._p(stack), ct.c_int32(stack.shape[1]), self._p(stacked))
        elif stack is not None:
            raise GpuEnvError("step_preprocessed: a frame stack needs the observation")
        else:
            resize = _NO_OBSERVATION
        self._lib.gpu_env_ale_step_observe(
            self._handle, self._envs_p, self._n_c, self._buffers_p, self._stride_c, self._p(modes),
            self._p(np.ascontiguousarray(actions, dtype=np.int32)), self._p(np.ascontiguousarray(noops, np.int32)),
            ct.c_int32(NOOP), ct.c_int32(frame_skip), ct.c_int32(int(terminal_on_life_loss)), self._p(lives),
            self._tables[_GRAYSCALE if grayscale else _RGB], ct.c_int32(1 if grayscale else 3), self._height_c,
            self._p(buf0), self._p(buf1), self._p(rewards), self._p(term), self._p(trunc), *resize, *stacking,
            self._threads_c,
        )
        return rewards, term, trunc, (stacked if stack is not None else frames)

    @property
    def library(self) -> Any:
        """The loaded CPU library."""
        return self._lib

    def pool_arguments(self) -> tuple[Any, ...]:
        """Return the ROM handle, envs, env count, frame buffers and stride, as the library takes them."""
        return self._handle, self._envs_p, self._n_c, self._buffers_p, self._stride_c

    def default_program(self) -> int:
        """Return the offset of the setMode program a ``loadROM`` runs (the game's default mode)."""
        return self._program(self._info.default_mode)

    def reset_game(self, mask: BoolArray) -> None:
        """See :meth:`gpu_env.backends.protocol.AtariBackend.reset_game`."""
        self._lib.gpu_env_ale_reset(self._handle, self._envs_p, self._n_c, self._buffers_p, self._stride_c,
                                    self._mask_p(mask), self._threads_c)

    def load_rom(self, mask: BoolArray, seeds: npt.NDArray[np.uint32]) -> None:
        """See :meth:`gpu_env.backends.protocol.AtariBackend.load_rom`."""
        self._load(mask, seeds)

    def set_mode(self, mask: BoolArray, mode: int) -> None:
        """See :meth:`gpu_env.backends.protocol.AtariBackend.set_mode`."""
        self._modes[mask] = mode
        self._lib.gpu_env_ale_set_mode(self._p(self._envs), self._ct.c_int32(self.num_envs),
                                       self._p(mask.astype(np.uint8)), self._ct.c_int32(mode),
                                       self._ct.c_int32(self._program(mode)))

    def set_difficulty(self, mask: BoolArray, difficulty: int) -> None:
        """See :meth:`gpu_env.backends.protocol.AtariBackend.set_difficulty`."""
        self._difficulties[mask] = difficulty
        self._lib.gpu_env_ale_set_difficulty(self._p(self._envs), self._ct.c_int32(self.num_envs),
                                             self._p(mask.astype(np.uint8)), self._ct.c_int32(difficulty))

    def _query(self) -> npt.NDArray[np.int32]:
        """int32[N, 6] per env: terminal, truncated, lives, frame number, episode frame number, pal.

        The array is reused by the next call: read it, or copy what you keep.
        """
        self._lib.gpu_env_ale_query(self._handle, self._envs_p, self._n_c, self._status_p)
        return self._status

    def game_over(self, with_truncation: bool) -> BoolArray:
        """See :meth:`gpu_env.backends.protocol.AtariBackend.game_over`."""
        q = self._query()
        over = q[:, 0] != 0
        if with_truncation:
            over |= q[:, 1] != 0
        return np.asarray(over, dtype=np.bool_)

    def game_truncated(self) -> BoolArray:
        """See :meth:`gpu_env.backends.protocol.AtariBackend.game_truncated`."""
        return np.asarray(self._query()[:, 1] != 0, dtype=np.bool_)

    def lives(self) -> IntArray:
        """See :meth:`gpu_env.backends.protocol.AtariBackend.lives`."""
        return self._query()[:, 2].copy()

    def frame_numbers(self) -> tuple[IntArray, IntArray]:
        """See :meth:`gpu_env.backends.protocol.AtariBackend.frame_numbers`."""
        q = self._query()
        return q[:, 3].copy(), q[:, 4].copy()

    def get_ram(self) -> U8Array:
        """See :meth:`gpu_env.backends.protocol.AtariBackend.get_ram`."""
        out = np.zeros((self.num_envs, 128), dtype=np.uint8)
        self._lib.gpu_env_ale_ram(self._p(self._envs), self._ct.c_int32(self.num_envs), self._p(out))
        return out

    def frame_counts(self) -> npt.NDArray[np.uint32]:
        """Per env, the TIA updates of ``core/frames.h`` counted since the env's memory was zeroed: uint32[n, 5].

        Columns: updates run drawing their picture, run without drawing it (nobody observed them), and frames
        drawn again from their start because their picture was read, for the part of the buffer a shorter
        frame left, and because they were interrupted.
        """
        out = np.zeros((self.num_envs, 5), dtype=np.uint32)
        self._lib.gpu_env_ale_frame_counts(self._envs_p, self._n_c, self._p(out))
        return out

    def export_console(self, i: int) -> dict[str, list[int]]:
        """Env ``i``'s CPU, RAM, RIOT and TIA in ale-py's cloneState layout (``gpu_env_console_export_ale``)."""
        return export_ale_layout(self._lib, self._envs[i:].ctypes.data)

    def _screens(self, fmt: int, channels: tuple[int, ...], out: U8Array | None) -> U8Array:
        """Every env's screen in format ``fmt`` (native/screen_format.h), written into ``out`` (or a new array)."""
        if out is None:
            out = np.empty((self.num_envs, self.screen_height, 160, *channels), dtype=np.uint8)
        self._lib.gpu_env_ale_screens_format(
            self._envs_p, self._n_c, self._buffers_p, self._stride_c, self._height_c, _FORMAT_C[fmt],
            self._tables[fmt], self._p(out), self._threads_c,
        )
        return out

    def get_screen(self, out: U8Array | None = None) -> U8Array:
        """See :meth:`gpu_env.backends.protocol.AtariBackend.get_screen`."""
        return self._screens(_INDICES, (), out)

    def get_screen_rgb(self, out: U8Array | None = None) -> U8Array:
        """See :meth:`gpu_env.backends.protocol.AtariBackend.get_screen_rgb`."""
        return self._screens(_RGB, (3,), out)

    def get_screen_grayscale(self, out: U8Array | None = None) -> U8Array:
        """See :meth:`gpu_env.backends.protocol.AtariBackend.get_screen_grayscale`."""
        return self._screens(_GRAYSCALE, (), out)

    def clone_state(self) -> list[bytes]:
        """See :meth:`gpu_env.backends.protocol.AtariBackend.clone_state`."""
        return [self._envs[i].tobytes() + self._buffers[i].tobytes() for i in range(self.num_envs)]

    def restore_state(self, states: Sequence[bytes]) -> None:
        """See :meth:`gpu_env.backends.protocol.AtariBackend.restore_state`."""
        for i, blob in enumerate(states):
            if len(blob) != self._env_size + self._stride:
                raise GpuEnvError(f"state {i} has {len(blob)} bytes, expected {self._env_size + self._stride}: "
                                  "pass clone_state() output of a cpu-backend AtariBatch of the same ROM")
            self._envs[i] = np.frombuffer(blob, dtype=np.uint8, count=self._env_size)
            self._buffers[i] = np.frombuffer(blob, dtype=np.uint8, offset=self._env_size)

    def load_ale_state(self, i: int, blob: bytes, screen: U8Array | None, previous: U8Array | None) -> None:
        """See :meth:`gpu_env.backends.protocol.AtariBackend.load_ale_state`."""
        from gpu_env import games
        from gpu_env.ale_state import parse_ale_state

        ct = self._ct
        parsed = parse_ale_state(blob)
        if parsed.md5 != self._info.md5:
            raise GpuEnvError(f"the state is for ROM md5 {parsed.md5}, this batch runs {self._info.md5}: load that ROM")
        if parsed.has_env_rng:
            raise GpuEnvError("the state carries the sticky-action RNG: "
                              "clone it with ale.cloneState(include_rng=False)")
        sys_words, sys_index = mt19937.from_text(parsed.system_rng)
        words = games.settings_from_ale_state(self._info.rom_id, blob)
        derive_unserialized(self._info, words, np.asarray(parsed.ram, dtype=np.uint8), parsed.mode)
        env_ptr = self._envs[i:].ctypes.data_as(ct.c_void_p)
        head = np.array([parsed.cycles, parsed.left_paddle, parsed.right_paddle, parsed.paddle_min,
                         parsed.paddle_max, parsed.difficulty], dtype=np.int32)
        arrays = [np.array(v, dtype=np.int64).astype(np.int32) for v in (parsed.cpu, parsed.ram, parsed.riot,
                                                                            parsed.tia, parsed.cart or [0])]
        self._buffers[i] = 0
        rc = self._lib.gpu_env_console_import_ale(env_ptr, self._p(head), *(self._p(a) for a in arrays),
                                                  ct.c_int32(len(parsed.cart)))
        if rc != 0:
            raise GpuEnvError(f"the state's cartridge block ({parsed.cart_name}) does not fit this ROM")
        self._modes[i] = parsed.mode
        self._difficulties[i] = parsed.difficulty
        self._lib.gpu_env_ale_import_extra(
            env_ptr, ct.c_int32(0), self._p(words.astype(np.int32)), ct.c_int32(len(words)),
            ct.c_int32(parsed.frame_number), ct.c_int32(parsed.episode_frame_number), ct.c_int32(parsed.mode),
            ct.c_int32(self._program(parsed.mode)), ct.c_int32(parsed.difficulty), self._p(sys_words),
            ct.c_int32(sys_index), None, ct.c_int32(0),
        )
        if screen is not None:
            current = np.asarray(screen, dtype=np.uint8)
            other = current if previous is None else np.asarray(previous, dtype=np.uint8)
            if current.shape != (self.screen_height, 160) or other.shape != current.shape:
                raise GpuEnvError(f"screen must be uint8[{self.screen_height}, 160] (ale.getScreen()), "
                                  f"got {current.shape}")
            which = int(self._lib.gpu_env_ale_current_buffer(self._p(self._envs), ct.c_int32(i)))
            frames = self._buffers[i, : 2 * 160 * self.screen_height].reshape(2, self.screen_height, 160)
            frames[which] = current
            frames[1 - which] = other

    def minimal_action_set(self) -> npt.NDArray[np.int64]:
        """See :meth:`gpu_env.backends.protocol.AtariBackend.minimal_action_set`."""
        return np.array(self._info.minimal_actions, dtype=np.int64)

    def available_modes(self) -> list[int]:
        """See :meth:`gpu_env.backends.protocol.AtariBackend.available_modes`."""
        return list(self._info.modes)

    def available_difficulties(self) -> list[int]:
        """See :meth:`gpu_env.backends.protocol.AtariBackend.available_difficulties`."""
        return list(self._info.difficulties)

    def __del__(self) -> None:
        handle = getattr(self, "_handle", None)
        if handle is not None:
            self._lib.gpu_env_ale_rom_free(handle)


_INDICES, _GRAYSCALE, _RGB = 0, 1, 2  # ScreenFormat of native/screen_format.h
_FORMAT_C = tuple(ctypes.c_int32(f) for f in (_INDICES, _GRAYSCALE, _RGB))


def palette_table(grayscale: bool) -> Any:
    """Return the grayscale or RGB palette tables (NTSC then PAL) as the library's screen calls take them."""
    return _screen_tables()[_GRAYSCALE if grayscale else _RGB]


def _screen_tables() -> tuple[Any, Any, Any]:
    """Per screen format, the palette tables gpu_env_ale_screens_format reads (NTSC then PAL), as pointers.

    The tables are :mod:`gpu_env.palettes`' (their one source); the arrays stay alive in the
    module-level cache, so the pointers do too.
    """
    gray, rgb = _palette_arrays()
    return (pointer(gray), pointer(gray), pointer(rgb))


@functools.cache
def _palette_arrays() -> tuple[U8Array, U8Array]:
    """uint8[2, 256] grayscale and uint8[2, 256, 3] RGB tables of :mod:`gpu_env.palettes`, NTSC then PAL."""
    from gpu_env import palettes

    gray = np.ascontiguousarray(np.stack([palettes.gray_table(False), palettes.gray_table(True)]))
    rgb = np.ascontiguousarray(np.stack([palettes.rgb_table(False), palettes.rgb_table(True)]))
    return gray, rgb


def derive_unserialized(info: Any, words: npt.NDArray[np.int32], ram: npt.NDArray[np.uint8], mode: int) -> None:
    """Set, in place, the game words ALE keeps but ``cloneState()`` does not save, from the RAM and the mode.

    Exact at any frame: atlantis2's lives are the lives byte of the last step (its step reads
    them every frame); video_checkers' reversed rules follow the mode; the two-frame timers of
    hangman and video_cube keep the current byte (the next step moves it to the previous one);
    the other words listed in ``GameInfo.not_serialized`` are constant or cleared by every step.
    """
    w = info.state_words
    if info.rom_id == "atlantis2":
        words[w["lives"]] = ram[0xF1 - 0x80]
    elif info.rom_id == "video_checkers":
        words[w["reverse_checkers"]] = int(mode >= 11)
    elif info.rom_id == "hangman":
        words[w["timer_now"]] = words[w["timer_before"]] = ram[0xF1 - 0x80]
    elif info.rom_id == "video_cube":
        words[w["timer_now"]] = words[w["timer_before"]] = ram[0xDB - 0x80]


def _check_stack(stack: U8Array, frames: U8Array) -> None:
    """Refuse a frame stack the native step cannot write: uint8 ``[N, S, *frame]``, C-contiguous, writeable."""
    n = frames.shape[0]
    frame_bytes = frames[0].nbytes
    ok = (stack.dtype == np.uint8 and stack.flags.c_contiguous and stack.flags.writeable and stack.ndim >= 2
          and stack.shape[0] == n and stack.shape[1] >= 1 and stack[0, 0].nbytes == frame_bytes)
    if not ok:
        raise GpuEnvError(f"the frame stack must be a writeable C-contiguous uint8 array [{n}, S, ...] of "
                          f"{frame_bytes}-byte frames, got {stack.dtype} {stack.shape}")
