"""``AleBatch``: a batch of Atari environments with ALE's full semantics (DESIGN.md §2).

Environment ``i`` with seed ``s`` behaves as ``ale_py.ALEInterface`` with ``random_seed=s``, the
same settings (``repeat_action_probability``, ``frame_skip``, ``max_num_frames_per_episode``) and
``loadROM``: the power-on probe, ``reset_game`` (60 NOOPs, RESET presses, mode selection, starting
actions), sticky actions from ALE's mt19937 (two draws per frame), the terminal check before each
frame, reward summed over ``frameskip`` frames, paddles, difficulty switches. ``docs/ale_semantics.md``
lists every rule with its source.

Backends:
- ``"cpu"``: gpu_env's C++ core (``gpu_env/core/ale/environment.h``), threads across environments.
- ``"ale_py"``: one ``ale_py.ALEInterface`` per environment — the reference itself, behind the same
  API, used by the conformance tests and as a baseline.
- ``"cuda"``: the same core compiled by CuPy/NVRTC (:mod:`gpu_env.cuda`); without CuPy or a GPU it raises
  :class:`~gpu_env.errors.BackendError` naming what is missing. Not yet run on a GPU (none was lent).

Arrays are numpy on the host backends: rewards int32[N], game_over bool[N], lives int32[N],
RAM uint8[N, 128], screens uint8[N, H, 160] (palette indices), RGB uint8[N, H, 160, 3],
grayscale uint8[N, H, 160].
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from gpu_env.errors import BackendError, GpuEnvError, NotImplementedYetError, RomError

NUM_ACTIONS = 18  # ALE's full (legal) action set: NOOP .. DOWNLEFTFIRE
ACTION_NAMES: tuple[str, ...] = (
    "NOOP", "FIRE", "UP", "RIGHT", "LEFT", "DOWN", "UPRIGHT", "UPLEFT", "DOWNRIGHT", "DOWNLEFT",
    "UPFIRE", "RIGHTFIRE", "LEFTFIRE", "DOWNFIRE", "UPRIGHTFIRE", "UPLEFTFIRE", "DOWNRIGHTFIRE", "DOWNLEFTFIRE",
)
BACKENDS: tuple[str, ...] = ("cpu", "cuda", "ale_py")

BoolArray = npt.NDArray[np.bool_]
IntArray = npt.NDArray[np.int32]
U8Array = npt.NDArray[np.uint8]


class _AleBackend(Protocol):
    """What a backend implements; every method works on the whole batch or on ``mask``ed envs."""

    screen_height: int

    def act(self, actions: npt.NDArray[np.int64], strength: npt.NDArray[np.float32], mask: BoolArray) -> IntArray: ...
    def reset_game(self, mask: BoolArray) -> None: ...
    def load_rom(self, mask: BoolArray, seeds: npt.NDArray[np.uint32]) -> None: ...
    def set_mode(self, mask: BoolArray, mode: int) -> None: ...
    def set_difficulty(self, mask: BoolArray, difficulty: int) -> None: ...
    def game_over(self, with_truncation: bool) -> BoolArray: ...
    def game_truncated(self) -> BoolArray: ...
    def lives(self) -> IntArray: ...
    def frame_numbers(self) -> tuple[IntArray, IntArray]: ...
    def get_ram(self) -> U8Array: ...
    def get_screen(self) -> U8Array: ...
    def get_screen_rgb(self) -> U8Array: ...
    def get_screen_grayscale(self) -> U8Array: ...
    def clone_state(self) -> list[bytes]: ...
    def restore_state(self, states: Sequence[bytes]) -> None: ...
    def load_ale_state(self, i: int, blob: bytes, screen: U8Array | None, previous: U8Array | None) -> None: ...
    def minimal_action_set(self) -> npt.NDArray[np.int64]: ...
    def available_modes(self) -> list[int]: ...
    def available_difficulties(self) -> list[int]: ...


def resolve_rom_path(game: str | os.PathLike[str]) -> Path:
    """Resolve an ale-py ROM id ("pong", "space_invaders") or a path to the ROM file; RomError if neither."""
    text = os.fspath(game)
    candidate = Path(text)
    if candidate.suffix == ".bin" or os.sep in text:
        if not candidate.is_file():
            raise RomError(f"ROM file {text!r} does not exist: pass an existing .bin path or an ale-py ROM id")
        return candidate
    from ale_py import roms

    try:
        path = roms.get_rom_path(text)
    except Exception as exc:  # ale_py raises a bare Exception for unknown ids
        path = None
        reason = str(exc)
    else:
        reason = ""
    if path is None:
        raise RomError(f"unknown ROM id {text!r} ({reason or 'not bundled with ale-py'}): use a snake_case id "
                       "from ale_py.roms.get_all_rom_ids(), e.g. 'space_invaders', or a .bin path")
    return Path(path)


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

    def get_screen(self) -> U8Array:
        return np.stack([a.getScreen() for a in self._ales])

    def get_screen_rgb(self) -> U8Array:
        return np.stack([a.getScreenRGB() for a in self._ales])

    def get_screen_grayscale(self) -> U8Array:
        return np.stack([a.getScreenGrayscale() for a in self._ales])

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


PADDLE_MIN = 27450  # ALE's default paddle_min (ale_state.hpp PADDLE_MIN)
_PROGRAM_OPS = {"select": 1, "select_until": 2, "soft_reset": 3, "hook_begin": 4, "hook_end": 5, "act": 6,
                "act_until": 7, "act_until_changed": 8, "select_random_until": 9}


def _encode_condition(until: dict[str, Any]) -> list[int]:
    words = [len(until["any"])]
    for clause in until["any"]:
        words.append(len(clause))
        for term in clause:
            words += [int(term["addr"]), int(term["mask"]), int(term["value"]), int(bool(term["decimal"]))]
    return words


def encode_set_mode_program(ops: Sequence[dict[str, Any]]) -> list[int]:
    """Encode a setMode program of :mod:`gpu_env.games` as the int32 stream environment.h runs (kOp*)."""
    words: list[int] = []
    for op in ops:
        kind = op["op"]
        if kind not in _PROGRAM_OPS:
            raise NotImplementedYetError(f"setMode op {kind!r} is not implemented by gpu_env/core/ale/environment.h")
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


class _NativeBackend:
    """gpu_env's C++ environment (core/ale/environment.h) through native/ale_batch.cpp."""

    def __init__(self, rom_path: Path, num_envs: int, seeds: npt.NDArray[np.uint32], settings: dict[str, Any],
                 num_threads: int | None) -> None:
        import ctypes

        from gpu_env import games, roms
        from gpu_env._lib import native

        rom = roms.load_rom(rom_path)
        self._info = self._game_for(rom.md5, rom.rom_id, games)
        info = self._info
        self._lib = native()
        self._ct = ctypes
        self._threads = num_threads if num_threads is not None else (os.cpu_count() or 1)
        self.num_envs = num_envs
        self._programs: list[int] = []
        self._program_of: dict[int, int] = {}
        for mode in info.modes:
            ops = info.set_mode_program(mode)
            if ops:
                self._program_of[mode] = len(self._programs)
                self._programs += encode_set_mode_program([dict(o) for o in ops])
        controllers = info.controllers
        params = np.array([
            info.game_id, int(rom.scheme), info.ystart, info.height_prop, int(info.hmove_blanks),
            int(controllers[0] == "PADDLES"), int(controllers[1] == "PADDLES"), int(info.swap_ports),
            int(info.swap_paddles),
            int(info.difficulty_props[0] == "A") | (int(info.difficulty_props[1] == "A") << 1),
            PADDLE_MIN, info.paddle_max, info.default_mode, int(settings["frameskip"]),
            int(settings["max_num_frames_per_episode"]),
        ], dtype=np.int32)
        if len(params) != self._lib.gpu_env_ale_param_count():
            raise BackendError(
                "gpu_env's CPU library is older than gpu_env/ale_batch.py: rebuild it (pip install -e .)"
            )
        starting = np.array(info.starting_actions or [0], dtype=np.int32)
        programs = np.array(self._programs or [0], dtype=np.int32)
        image = np.frombuffer(rom.data, dtype=np.uint8)
        self._lib.gpu_env_ale_rom_new.restype = ctypes.c_void_p
        self._handle = ctypes.c_void_p(self._lib.gpu_env_ale_rom_new(
            self._p(params), ctypes.c_float(settings["repeat_action_probability"]), self._p(image),
            ctypes.c_uint32(len(rom.data)), self._p(starting), ctypes.c_int32(len(info.starting_actions)),
            self._p(programs), ctypes.c_int32(len(self._programs)),
        ))
        self._env_size = int(self._lib.gpu_env_ale_env_size())
        self._envs = np.zeros((num_envs, self._env_size), dtype=np.uint8)
        self._max_height = max(250, info.height_prop)
        self._stride = 2 * 160 * self._max_height
        self._buffers = np.zeros((num_envs, self._stride), dtype=np.uint8)
        self._modes = np.full(num_envs, info.default_mode, dtype=np.int64)
        self._difficulties = np.zeros(num_envs, dtype=np.int64)
        everyone = np.ones(num_envs, dtype=np.bool_)
        self._load(everyone, seeds)
        self.screen_height = int(info.screen_height)

    @staticmethod
    def _game_for(md5: str, rom_id: str | None, games: Any) -> Any:
        if rom_id is not None:
            return games.game_info(rom_id)
        for info in games.games().values():
            if info.md5 == md5:
                return info
        raise RomError(f"no ALE game rules for a ROM with md5 {md5}: gpu_env plays the 104 ROMs ale-py plays")

    def _p(self, array: npt.NDArray[Any]) -> Any:
        return array.ctypes.data_as(self._ct.c_void_p)

    def _program(self, mode: int) -> int:
        return self._program_of.get(int(mode), -1)

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
        ct = self._ct
        out = np.zeros(self.num_envs, dtype=np.int32)
        self._lib.gpu_env_ale_act(
            self._handle, self._p(self._envs), ct.c_int32(self.num_envs), self._p(self._buffers),
            ct.c_uint64(self._stride), self._p(actions.astype(np.int32)), self._p(strength.astype(np.float32)),
            self._p(mask.astype(np.uint8)), self._p(out), ct.c_int32(self._threads),
        )
        return out

    def step_preprocessed(self, actions: npt.NDArray[np.int64], mask: BoolArray, frame_skip: int,
                          terminal_on_life_loss: bool, lives: IntArray, grayscale: bool, buf0: U8Array,
                          buf1: U8Array) -> tuple[IntArray, BoolArray, BoolArray]:
        from gpu_env import palettes

        ct = self._ct
        pal = bool(self._query()[0, 5])
        table = np.ascontiguousarray(palettes.gray_table(pal) if grayscale else palettes.rgb_table(pal))
        rewards = np.zeros(self.num_envs, dtype=np.int32)
        term = np.zeros(self.num_envs, dtype=np.uint8)
        trunc = np.zeros(self.num_envs, dtype=np.uint8)
        if not (buf0.flags.c_contiguous and buf1.flags.c_contiguous and lives.flags.c_contiguous):
            raise GpuEnvError("step_preprocessed needs C-contiguous buffers and lives")
        self._lib.gpu_env_ale_step_preprocessed(
            self._handle, self._p(self._envs), ct.c_int32(self.num_envs), self._p(self._buffers),
            ct.c_uint64(self._stride), self._p(actions.astype(np.int32)), self._p(mask.astype(np.uint8)),
            ct.c_int32(frame_skip), ct.c_int32(int(terminal_on_life_loss)), self._p(lives), self._p(table),
            ct.c_int32(1 if grayscale else 3), ct.c_int32(self.screen_height), self._p(buf0), self._p(buf1),
            self._p(rewards), self._p(term), self._p(trunc), ct.c_int32(self._threads),
        )
        return rewards, term.astype(np.bool_), trunc.astype(np.bool_)

    def reset_game(self, mask: BoolArray) -> None:
        ct = self._ct
        self._lib.gpu_env_ale_reset(
            self._handle, self._p(self._envs), ct.c_int32(self.num_envs), self._p(self._buffers),
            ct.c_uint64(self._stride), self._p(mask.astype(np.uint8)), ct.c_int32(self._threads),
        )

    def load_rom(self, mask: BoolArray, seeds: npt.NDArray[np.uint32]) -> None:
        self._load(mask, seeds)

    def set_mode(self, mask: BoolArray, mode: int) -> None:
        self._modes[mask] = mode
        self._lib.gpu_env_ale_set_mode(self._p(self._envs), self._ct.c_int32(self.num_envs),
                                       self._p(mask.astype(np.uint8)), self._ct.c_int32(mode),
                                       self._ct.c_int32(self._program(mode)))

    def set_difficulty(self, mask: BoolArray, difficulty: int) -> None:
        self._difficulties[mask] = difficulty
        self._lib.gpu_env_ale_set_difficulty(self._p(self._envs), self._ct.c_int32(self.num_envs),
                                             self._p(mask.astype(np.uint8)), self._ct.c_int32(difficulty))

    def _query(self) -> npt.NDArray[np.int32]:
        out = np.zeros((self.num_envs, 6), dtype=np.int32)
        self._lib.gpu_env_ale_query(self._handle, self._p(self._envs), self._ct.c_int32(self.num_envs), self._p(out))
        return out

    def game_over(self, with_truncation: bool) -> BoolArray:
        q = self._query()
        over = q[:, 0] != 0
        if with_truncation:
            over |= q[:, 1] != 0
        return np.asarray(over, dtype=np.bool_)

    def game_truncated(self) -> BoolArray:
        return np.asarray(self._query()[:, 1] != 0, dtype=np.bool_)

    def lives(self) -> IntArray:
        return self._query()[:, 2].copy()

    def frame_numbers(self) -> tuple[IntArray, IntArray]:
        q = self._query()
        return q[:, 3].copy(), q[:, 4].copy()

    def get_ram(self) -> U8Array:
        out = np.zeros((self.num_envs, 128), dtype=np.uint8)
        self._lib.gpu_env_ale_ram(self._p(self._envs), self._ct.c_int32(self.num_envs), self._p(out))
        return out

    def get_screen(self) -> U8Array:
        out = np.zeros((self.num_envs, self.screen_height, 160), dtype=np.uint8)
        self._lib.gpu_env_ale_screens(self._p(self._envs), self._ct.c_int32(self.num_envs), self._p(self._buffers),
                                      self._ct.c_uint64(self._stride), self._ct.c_int32(self.screen_height),
                                      self._p(out))
        return out

    def _apply_palette(self, tables: tuple[U8Array, U8Array]) -> U8Array:
        screens = self.get_screen()
        pal = self._query()[:, 5] != 0
        if pal.all() or not pal.any():
            return tables[int(pal[0])][screens]
        return np.stack([tables[int(p)][s] for p, s in zip(pal, screens, strict=True)])

    def get_screen_rgb(self) -> U8Array:
        from gpu_env import palettes

        return self._apply_palette((palettes.rgb_table(False), palettes.rgb_table(True)))

    def get_screen_grayscale(self) -> U8Array:
        from gpu_env import palettes

        return self._apply_palette((palettes.gray_table(False), palettes.gray_table(True)))

    def clone_state(self) -> list[bytes]:
        return [self._envs[i].tobytes() + self._buffers[i].tobytes() for i in range(self.num_envs)]

    def restore_state(self, states: Sequence[bytes]) -> None:
        for i, blob in enumerate(states):
            if len(blob) != self._env_size + self._stride:
                raise GpuEnvError(f"state {i} has {len(blob)} bytes, expected {self._env_size + self._stride}: "
                                  "pass clone_state() output of a cpu-backend AleBatch of the same ROM")
            self._envs[i] = np.frombuffer(blob, dtype=np.uint8, count=self._env_size)
            self._buffers[i] = np.frombuffer(blob, dtype=np.uint8, offset=self._env_size)

    def load_ale_state(self, i: int, blob: bytes, screen: U8Array | None, previous: U8Array | None) -> None:
        from gpu_env import games
        from gpu_env.ale_state import parse_ale_state

        ct = self._ct
        parsed = parse_ale_state(blob)
        if parsed.md5 != self._info.md5:
            raise GpuEnvError(f"the state is for ROM md5 {parsed.md5}, this batch runs {self._info.md5}: load that ROM")
        sys_words, sys_index = _system_rng(blob)
        words = games.settings_from_ale_state(self._info.rom_id, blob)
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
        return np.array(self._info.minimal_actions, dtype=np.int64)

    def available_modes(self) -> list[int]:
        return list(self._info.modes)

    def available_difficulties(self) -> list[int]:
        return list(self._info.difficulties)

    def __del__(self) -> None:
        handle = getattr(self, "_handle", None)
        if handle is not None:
            self._lib.gpu_env_ale_rom_free(handle)


_BOOL_FALSE = 0xBAD1BAD2


def _mt_text(text: bytes) -> tuple[npt.NDArray[np.uint32], int]:
    """libstdc++'s text form of a std::mt19937 (624 words, then the index) as (words, index)."""
    values = [int(v) for v in text.split()]
    if len(values) != 625:
        raise GpuEnvError(f"an mt19937 state has 625 numbers, found {len(values)}: not an ale-py cloneState()")
    return np.array(values[:624], dtype=np.uint32), values[624]


def _system_rng(blob: bytes) -> tuple[npt.NDArray[np.uint32], int]:
    """Read the System RNG of an ale-py ``cloneState()`` (include_rng=False); GpuEnvError otherwise."""
    import struct

    if len(blob) < 32:
        raise GpuEnvError(f"{len(blob)} bytes are not an ale-py cloneState(): pass ale.cloneState()")
    (inner_len,) = struct.unpack_from("<i", blob, 24)
    inner = blob[28 : 28 + inner_len]
    (flag,) = struct.unpack_from("<I", inner, inner_len - 4)
    if flag != _BOOL_FALSE:
        raise GpuEnvError("the state carries the sticky-action RNG: clone it with ale.cloneState(include_rng=False)")
    pos = 0

    def string() -> bytes:
        nonlocal pos
        (n,) = struct.unpack_from("<i", inner, pos)
        pos += 4 + n
        return inner[pos - n : pos]

    string()  # md5
    if string() != b"System":
        raise GpuEnvError("not an ale-py cloneState(): the System block is missing")
    pos += 4  # cycles
    return _mt_text(string())


def _native_backend(rom: Path, num_envs: int, seeds: npt.NDArray[np.uint32], settings: dict[str, Any],
                    num_threads: int | None) -> _AleBackend:
    return _NativeBackend(rom, num_envs, seeds, settings, num_threads)


def _seeds_array(seeds: Sequence[int] | npt.ArrayLike | None, num_envs: int) -> npt.NDArray[np.uint32]:
    if seeds is None:
        return np.random.SeedSequence().generate_state(num_envs).astype(np.uint32)
    arr = np.asarray(seeds)
    if arr.ndim == 0:
        arr = np.full(num_envs, int(arr))
    if arr.shape != (num_envs,):
        raise ValueError(f"seeds has shape {arr.shape}; pass one seed per environment (shape ({num_envs},)) or one int")
    if arr.dtype.kind not in "iu" or (arr < 0).any() or (arr > 0xFFFFFFFF).any():
        raise ValueError(f"seeds must be integers in [0, 2**32), got {arr!r}")
    return arr.astype(np.uint32)


class AleBatch:
    """A batch of ``num_envs`` Atari games with ALE's semantics (see the module docstring).

    Args:
        game: ale-py ROM id (``"pong"``) or a path to a ``.bin`` file.
        num_envs: number of environments.
        backend: ``"cpu"``, ``"ale_py"`` (reference) or ``"cuda"`` (not implemented yet).
        seeds: per-env ``random_seed`` (uint32) of ALE's sticky-action RNG; one int is broadcast;
            ``None`` draws them from OS entropy (kept in :attr:`seeds`).
        repeat_action_probability: ALE's sticky-action probability (0.25 as ALE's default).
        frameskip: ALE's ``frame_skip``: frames per :meth:`act`, rewards summed.
        mode, difficulty: ALE ``setMode`` / ``setDifficulty`` (``None``: the ROM's default). They
            take effect through one extra ``reset_game`` after ``loadROM``, as in gymnasium's AtariEnv.
        max_num_frames_per_episode: truncation (``game_over(with_truncation=True)``); 0 disables.
        num_threads: CPU threads of the ``"cpu"`` backend (default: all cores).

    """

    def __init__(
        self,
        game: str | os.PathLike[str],
        num_envs: int,
        *,
        backend: str = "cpu",
        seeds: Sequence[int] | npt.ArrayLike | None = None,
        repeat_action_probability: float = 0.25,
        frameskip: int = 1,
        mode: int | None = None,
        difficulty: int | None = None,
        max_num_frames_per_episode: int = 0,
        num_threads: int | None = None,
    ) -> None:
        if not isinstance(num_envs, int) or num_envs <= 0:
            raise ValueError(f"num_envs={num_envs!r} must be a positive int")
        if backend not in BACKENDS:
            raise BackendError(f"unknown backend {backend!r}: use one of {', '.join(BACKENDS)}")
        if not 0.0 <= repeat_action_probability <= 1.0:
            raise ValueError(f"repeat_action_probability={repeat_action_probability} must be in [0, 1]")
        if not isinstance(frameskip, int) or frameskip <= 0:
            raise ValueError(f"frameskip={frameskip!r} must be a positive int")
        if max_num_frames_per_episode < 0:
            raise ValueError(f"max_num_frames_per_episode={max_num_frames_per_episode} must be >= 0 (0 disables)")
        self.rom_path = resolve_rom_path(game)
        self.num_envs = num_envs
        self.backend = backend
        self.seeds = _seeds_array(seeds, num_envs)
        self.repeat_action_probability = float(repeat_action_probability)
        self.frameskip = frameskip
        self.max_num_frames_per_episode = int(max_num_frames_per_episode)
        settings = {
            "repeat_action_probability": self.repeat_action_probability,
            "frameskip": frameskip,
            "max_num_frames_per_episode": self.max_num_frames_per_episode,
        }
        self._impl: _AleBackend
        if backend == "ale_py":
            self._impl = _AlePyBackend(self.rom_path, num_envs, self.seeds, settings)
        elif backend == "cpu":
            self._impl = _native_backend(self.rom_path, num_envs, self.seeds, settings, num_threads)
        else:  # "cuda": the same core on the device (gpu_env.cuda); raises BackendError where it cannot run
            from gpu_env.cuda.backend import CudaAleBackend

            self._impl = CudaAleBackend(self.rom_path, num_envs, self.seeds, settings)
        self.mode: int | None = None
        self.difficulty: int | None = None
        all_envs = np.ones(num_envs, dtype=np.bool_)
        if mode is not None:
            self.set_mode(mode)
        if difficulty is not None:
            self.set_difficulty(difficulty)
        if mode is not None or difficulty is not None:
            self._impl.reset_game(all_envs)

    # ----------------------------------------------------------------------------- helpers
    def _mask(self, mask: npt.ArrayLike | None) -> BoolArray:
        if mask is None:
            return np.ones(self.num_envs, dtype=np.bool_)
        m = np.asarray(mask)
        if m.dtype != np.bool_ or m.shape != (self.num_envs,):
            raise ValueError(f"mask must be bool[{self.num_envs}], got dtype {m.dtype} and shape {m.shape}")
        return m

    # ----------------------------------------------------------------------------- acting
    def act(self, actions: npt.ArrayLike, paddle_strength: npt.ArrayLike | None = None,
            mask: npt.ArrayLike | None = None) -> IntArray:
        """One ALE ``act`` per env (``frameskip`` frames); returns the summed rewards int32[N].

        ``actions``: int[N], indices into ALE's full 18-action set (``ACTION_NAMES``).
        ``paddle_strength``: float[N] (ALE's ``act(action, paddle_strength)``, default 1.0).
        ``mask``: bool[N]; envs outside it are not touched at all (no frame, no RNG draw); reward 0.
        """
        a = np.asarray(actions)
        if a.shape != (self.num_envs,) or a.dtype.kind not in "iu":
            raise ValueError(f"actions must be int[{self.num_envs}], got dtype {a.dtype} and shape {a.shape}")
        if (a < 0).any() or (a >= NUM_ACTIONS).any():
            raise ValueError(f"actions must be in [0, {NUM_ACTIONS}) (ALE's full action set), got {a!r}")
        if paddle_strength is None:
            s = np.ones(self.num_envs, dtype=np.float32)
        else:
            s = np.asarray(paddle_strength, dtype=np.float32)
            if s.shape != (self.num_envs,):
                raise ValueError(f"paddle_strength must be float[{self.num_envs}], got shape {s.shape}")
        return self._impl.act(a.astype(np.int64), s, self._mask(mask))

    def step_preprocessed(self, actions: npt.ArrayLike, mask: npt.ArrayLike | None, frame_skip: int,
                          terminal_on_life_loss: bool, lives: IntArray, grayscale: bool, buf0: U8Array,
                          buf1: U8Array) -> tuple[IntArray, BoolArray, BoolArray]:
        """Run gymnasium's ``AtariPreprocessing.step`` (over ``AtariEnv(frameskip=1)``) on the masked envs.

        Up to ``frame_skip`` :meth:`act` calls per env, stopping at game over, truncation or (with
        ``terminal_on_life_loss``) a life loss; ``lives`` (int32[N], in/out) is the wrapper's last seen
        lives. The screen after act ``frame_skip-2`` is written to ``buf1[i]`` and after act
        ``frame_skip-1`` to ``buf0[i]`` (uint8[N, H, 160] grayscale or [N, H, 160, 3] RGB), only when
        reached, as the wrapper does. Returns rewards int32[N], terminated bool[N], truncated bool[N].
        """
        a = np.asarray(actions, dtype=np.int64)
        m = self._mask(mask)
        fast = getattr(self._impl, "step_preprocessed", None)
        if fast is not None:
            result: tuple[IntArray, BoolArray, BoolArray] = fast(a, m, frame_skip, terminal_on_life_loss, lives,
                                                                  grayscale, buf0, buf1)
            return result
        total = np.zeros(self.num_envs, dtype=np.int32)
        term = np.zeros(self.num_envs, dtype=np.bool_)
        trunc = np.zeros(self.num_envs, dtype=np.bool_)
        active = m.copy()
        for t in range(frame_skip):
            if not active.any():
                break
            total += self.act(a, mask=active)
            te, tr = self.game_over(with_truncation=False), self.game_truncated()
            term[active], trunc[active] = te[active], tr[active]
            if terminal_on_life_loss:
                now = self.lives()
                term[active] |= now[active] < lives[active]
                lives[active] = now[active]
            active &= ~(term | trunc)
            if t in (frame_skip - 2, frame_skip - 1) and active.any():
                screen = self.get_screen_grayscale() if grayscale else self.get_screen_rgb()
                target = buf1 if t == frame_skip - 2 else buf0
                target[active] = screen[active]
        return total, term, trunc

    def reset_game(self, mask: npt.ArrayLike | None = None) -> None:
        """ALE ``reset_game()`` on every env in ``mask`` (default: all)."""
        self._impl.reset_game(self._mask(mask))

    def load_rom(self, mask: npt.ArrayLike | None = None, seeds: npt.ArrayLike | None = None) -> None:
        """ALE ``setInt('random_seed', s); loadROM()`` (a fresh power-on) on the envs in ``mask``.

        ``seeds``: uint32[N] (entries outside the mask are ignored); default: each env's current seed.
        The env's mode and difficulty are re-applied (``setMode``/``setDifficulty``, no extra reset).
        """
        m = self._mask(mask)
        if seeds is not None:
            new = _seeds_array(seeds, self.num_envs)
            self.seeds = np.where(m, new, self.seeds).astype(np.uint32)
        self._impl.load_rom(m, self.seeds)

    def set_mode(self, mode: int, mask: npt.ArrayLike | None = None) -> None:
        """ALE ``setMode``: takes effect at the next :meth:`reset_game`; ValueError for a mode the ROM lacks."""
        modes = self.available_modes()
        if mode not in modes:
            raise ValueError(f"mode {mode} is not available for {self.rom_path.stem}: choose one of {modes}")
        self._impl.set_mode(self._mask(mask), int(mode))
        self.mode = int(mode)

    def set_difficulty(self, difficulty: int, mask: npt.ArrayLike | None = None) -> None:
        """ALE ``setDifficulty``: the switches are re-asserted every frame from now on."""
        diffs = self.available_difficulties()
        if difficulty not in diffs:
            raise ValueError(
                f"difficulty {difficulty} is not available for {self.rom_path.stem}: choose one of {diffs}"
            )
        self._impl.set_difficulty(self._mask(mask), int(difficulty))
        self.difficulty = int(difficulty)

    # ----------------------------------------------------------------------------- queries
    def game_over(self, with_truncation: bool = True) -> BoolArray:
        """bool[N]: ALE ``game_over(with_truncation)`` (terminal, or truncated when asked)."""
        return self._impl.game_over(with_truncation)

    def game_truncated(self) -> BoolArray:
        """bool[N]: the episode reached ``max_num_frames_per_episode``."""
        return self._impl.game_truncated()

    def lives(self) -> IntArray:
        """int32[N]: ALE ``lives()``."""
        return self._impl.lives()

    def frame_number(self) -> IntArray:
        """int32[N]: ALE ``getFrameNumber()`` (frames since ``loadROM``)."""
        return self._impl.frame_numbers()[0]

    def episode_frame_number(self) -> IntArray:
        """int32[N]: ALE ``getEpisodeFrameNumber()``."""
        return self._impl.frame_numbers()[1]

    def get_ram(self) -> U8Array:
        """uint8[N, 128]: ALE ``getRAM()``."""
        return self._impl.get_ram()

    def get_screen(self) -> U8Array:
        """uint8[N, H, 160]: ALE ``getScreen()`` (palette indices)."""
        return self._impl.get_screen()

    def get_screen_rgb(self) -> U8Array:
        """uint8[N, H, 160, 3]: ALE ``getScreenRGB()``."""
        return self._impl.get_screen_rgb()

    def get_screen_grayscale(self) -> U8Array:
        """uint8[N, H, 160]: ALE ``getScreenGrayscale()``."""
        return self._impl.get_screen_grayscale()

    @property
    def screen_shape(self) -> tuple[int, int]:
        """(H, W) of one screen: (210, 160) for NTSC ROMs, (250, 160) for PAL-detected ones."""
        return (self._impl.screen_height, 160)

    def minimal_action_set(self) -> npt.NDArray[np.int64]:
        """int64[k]: ALE ``getMinimalActionSet()`` (indices into the full action set)."""
        return self._impl.minimal_action_set()

    def legal_action_set(self) -> npt.NDArray[np.int64]:
        """int64[18]: ALE ``getLegalActionSet()`` (all 18 actions, in order)."""
        return np.arange(NUM_ACTIONS, dtype=np.int64)

    def available_modes(self) -> list[int]:
        """ALE ``getAvailableModes()``."""
        return self._impl.available_modes()

    def available_difficulties(self) -> list[int]:
        """ALE ``getAvailableDifficulties()``."""
        return self._impl.available_difficulties()

    # ----------------------------------------------------------------------------- states
    def clone_state(self) -> list[bytes]:
        """One opaque state per env (including the sticky-action RNG); pass to :meth:`restore_state`."""
        return self._impl.clone_state()

    def load_ale_state(self, i: int, state: object, screen: npt.ArrayLike | None = None,
                       previous_screen: npt.ArrayLike | None = None) -> None:
        """Import ``ale.cloneState()`` (include_rng=False; an ``ALEState`` or its bytes) into env ``i``.

        As ``ALEInterface.restoreState``: the console, RAM, frame counters, mode, difficulty, the
        game's reward/score/lives bookkeeping and the System RNG come from the state; env ``i`` keeps
        its own sticky-action RNG and last actions (ALE does not save them). ALE does not save its two
        frame buffers either: ``screen`` (``ale.getScreen()`` at the clone) and ``previous_screen``
        (one frame earlier; default ``screen``) restore the rows a short frame does not redraw.
        """
        from gpu_env.ale_state import state_bytes

        if not 0 <= i < self.num_envs:
            raise GpuEnvError(f"environment index {i} is out of range for a batch of {self.num_envs}")
        blob = state_bytes(state)
        scr = None if screen is None else np.asarray(screen, dtype=np.uint8)
        prev = None if previous_screen is None else np.asarray(previous_screen, dtype=np.uint8)
        self._impl.load_ale_state(i, blob, scr, prev)

    def restore_state(self, states: Sequence[bytes]) -> None:
        """Restore every env from :meth:`clone_state` output of a batch of the same ROM and size."""
        if len(states) != self.num_envs:
            raise GpuEnvError(f"restore_state got {len(states)} states for {self.num_envs} environments")
        self._impl.restore_state(states)
