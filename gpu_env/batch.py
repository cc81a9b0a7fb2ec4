"""``FrameBatch``: a batch of Atari 2600 consoles emulated frame-exactly as ale-py 0.12 runs them.

Environment ``i`` reproduces ``ale_py.ALEInterface`` RAM and screen frame for frame, starting from a
state imported with :meth:`FrameBatch.load_ale_state` (an ale-py ``cloneState()``). What this class
does not do yet raises :class:`~gpu_env.errors.NotImplementedYetError`: ALE's power-on and
``reset_game`` sequence and sticky actions (``gpu_env.ale_batch.AleBatch`` builds those on the same
console), and the CUDA backend.

Arrays (numpy): actions int[N] (ALE's 18 joystick actions, 0..17), rewards int32[N], RAM uint8[N, 128],
screens uint8[N, H, 160] (palette indices), RGB uint8[N, H, 160, 3], grayscale uint8[N, H, 160].
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from gpu_env import games, palettes
from gpu_env.ale_state import parse_ale_state, state_bytes
from gpu_env.console_native import ConsoleProps, NativeConsoles
from gpu_env.errors import BackendError, GpuEnvError, NotImplementedYetError
from gpu_env.roms import load_rom

_NUM_JOYSTICK_ACTIONS = 18


@dataclass(frozen=True)
class BatchState:
    """A copy of every environment of a batch (see :meth:`FrameBatch.clone_state`)."""

    consoles: npt.NDArray[np.uint8]  # uint8[N, console bytes]
    screens: npt.NDArray[np.uint8]  # uint8[N, 2, H, 160]: both frame buffers
    game_words: npt.NDArray[np.int32]  # int32[N, games.STATE_WORDS]
    started: npt.NDArray[np.bool_]  # bool[N]


def _props_for(rom_id: str | None) -> tuple[ConsoleProps, games.GameInfo | None]:
    if rom_id is None:
        return ConsoleProps(), None
    try:
        info = games.game_info(rom_id)
    except games.GameError:
        return ConsoleProps(), None
    props = ConsoleProps(
        ystart=info.ystart,
        height=info.screen_height,
        pal=info.display_format == "PAL",
        hmove_blanks=info.hmove_blanks,
        left_paddles=info.controllers[0] == "PADDLES",
        right_paddles=info.controllers[1] == "PADDLES",
        swap_ports=info.swap_ports,
        swap_paddles=info.swap_paddles,
        paddle_max=info.paddle_max,
    )
    return props, info


class FrameBatch:
    """``num_envs`` Atari consoles running one ROM, stepped together.

    Args:
        game: ale-py ROM id (``"pong"``) or a path to a ROM image.
        num_envs: number of environments.
        backend: ``"cpu"`` (threads across environments); ``"cuda"`` is not implemented yet.
        seeds: ALE ``random_seed`` per environment (kept for the sticky-action RNG).
        repeat_action_probability: ALE's sticky-action probability; only 0 is implemented here.
        frameskip: frames emulated per :meth:`act` (rewards summed, as ALE's ``frame_skip``).
        mode, difficulty: ALE mode / difficulty (their selection is part of ``reset_game``).
        num_threads: CPU threads (default: ``os.cpu_count()``).
        props: console properties for a ROM ale-py does not know (display window, controllers).

    """

    def __init__(
        self,
        game: str | os.PathLike[str],
        num_envs: int = 1,
        backend: str = "cpu",
        seeds: Sequence[int] | None = None,
        repeat_action_probability: float = 0.25,
        frameskip: int = 1,
        mode: int | None = None,
        difficulty: int | None = None,
        *,
        num_threads: int | None = None,
        props: ConsoleProps | None = None,
    ) -> None:
        if backend == "cuda":
            raise NotImplementedYetError("backend='cuda' is not implemented yet: use backend='cpu'")
        if backend != "cpu":
            raise BackendError(f"unknown backend {backend!r}: use 'cpu'")
        if not isinstance(num_envs, int) or num_envs < 1:
            raise GpuEnvError(f"num_envs={num_envs!r} must be a positive int")
        if not isinstance(frameskip, int) or frameskip < 1:
            raise GpuEnvError(f"frameskip={frameskip!r} must be a positive int")
        if not 0.0 <= repeat_action_probability <= 1.0:
            raise GpuEnvError(f"repeat_action_probability={repeat_action_probability} must be in [0, 1]")
        self.rom = load_rom(game)
        found_props, self.info = _props_for(self.rom.rom_id)
        self.props = props if props is not None else found_props
        self.num_envs = num_envs
        self.frameskip = frameskip
        self.repeat_action_probability = float(repeat_action_probability)
        self.seeds = np.asarray(seeds if seeds is not None else np.zeros(num_envs), dtype=np.int64)
        if self.seeds.shape != (num_envs,):
            raise GpuEnvError(f"seeds has shape {self.seeds.shape}: pass one seed per environment ({num_envs})")
        self.mode, self.difficulty = mode, difficulty
        self.num_threads = num_threads if num_threads is not None else (os.cpu_count() or 1)
        self._native = NativeConsoles(self.rom.data, int(self.rom.scheme), self.props, num_envs)
        self._words = np.zeros((num_envs, games.STATE_WORDS), dtype=np.int32)
        self._started = np.zeros(num_envs, dtype=bool)

    # ---------------------------------------------------------------- starting states
    def reset_game(self, mask: npt.ArrayLike | None = None) -> None:
        """ALE's ``reset_game``: not implemented in this class yet."""
        raise NotImplementedYetError(
            "FrameBatch.reset_game (ALE's power-on probe and reset_game sequence) is not implemented yet: "
            "start environments from ale-py states with load_ale_state(i, ale.cloneState())"
        )

    def load_ale_state(
        self,
        i: int,
        state: object,
        screen: npt.ArrayLike | None = None,
        previous_screen: npt.ArrayLike | None = None,
    ) -> None:
        """Import ``ale.cloneState()`` (an ``ALEState`` or its bytes) into environment ``i``.

        ALE does not serialize its two frame buffers, yet rows that a short frame does not redraw
        show them. ``screen`` (uint8[H, 160], ``ale.getScreen()`` at the time of the clone) and
        ``previous_screen`` (``getScreen()`` one frame earlier; default: ``screen``) restore them.
        A state cloned in the middle of an interrupted frame (Q*bert and Tetris right after
        ``reset_game``) continues that frame, as ale-py itself does.
        """
        if not 0 <= i < self.num_envs:
            raise GpuEnvError(f"environment index {i} is out of range for a batch of {self.num_envs}")
        parsed = parse_ale_state(state)
        if parsed.md5 != self.rom.md5:
            raise GpuEnvError(f"the state is for ROM md5 {parsed.md5}, this batch runs {self.rom.md5}: load that ROM")
        self._native.import_ale(i, parsed)
        if screen is not None:
            current = np.asarray(screen, dtype=np.uint8)
            previous = current if previous_screen is None else np.asarray(previous_screen, dtype=np.uint8)
            self._native.set_screens(i, current, previous)
        if self.info is not None:
            self._words[i] = games.settings_from_ale_state(self.info.rom_id, state_bytes(state))
        self._started[i] = True

    # ---------------------------------------------------------------- stepping
    def _check_actions(self, actions: npt.ArrayLike) -> npt.NDArray[np.int32]:
        acts = np.asarray(actions)
        if acts.shape != (self.num_envs,):
            raise GpuEnvError(f"actions has shape {acts.shape}, expected ({self.num_envs},)")
        if acts.dtype.kind not in "iu" or (acts < 0).any() or (acts >= _NUM_JOYSTICK_ACTIONS).any():
            raise GpuEnvError(f"actions must be ints in 0..17 (ALE's joystick actions), got {acts!r}")
        if not self._started.all():
            missing = np.flatnonzero(~self._started).tolist()
            raise NotImplementedYetError(
                f"environments {missing} have no state: ALE's power-on/reset_game sequence is not implemented "
                "in FrameBatch yet; import one with load_ale_state(i, ale.cloneState())"
            )
        if self.repeat_action_probability != 0.0:
            raise NotImplementedYetError(
                f"sticky actions (repeat_action_probability={self.repeat_action_probability}) are not implemented "
                "in FrameBatch yet: pass repeat_action_probability=0.0"
            )
        return np.ascontiguousarray(acts, dtype=np.int32)

    def act(self, actions: npt.ArrayLike) -> npt.NDArray[np.int32]:
        """ALE ``act`` on every environment: ``frameskip`` frames each; returns int32[N] rewards.

        As in ALE, an environment whose game is over emulates nothing and gets reward 0, and
        illegal actions are played as NOOP.
        """
        acts = self._check_actions(actions)
        if self.info is None:
            raise NotImplementedYetError(
                f"{self.rom.path.name} has no game logic (rewards, game over): use step_frames for emulation only"
            )
        return self._native.act(acts, self._words, self.info.game_id, self.frameskip, self.num_threads)

    def step_frames(self, actions: npt.ArrayLike, frames: int = 1) -> None:
        """Emulate ``frames`` frames per environment without game logic (no rewards, no game-over stop)."""
        acts = self._check_actions(actions)
        self._native.emulate(acts, frames, self.num_threads)

    # ---------------------------------------------------------------- observations
    def get_ram(self) -> npt.NDArray[np.uint8]:
        """uint8[N, 128]: RIOT RAM, as ``ALEInterface.getRAM()``."""
        return self._native.ram()

    def get_screen(self) -> npt.NDArray[np.uint8]:
        """uint8[N, H, 160]: palette indices, as ``ALEInterface.getScreen()``."""
        return self._native.screens()

    def get_screen_rgb(self) -> npt.NDArray[np.uint8]:
        """uint8[N, H, 160, 3], as ``ALEInterface.getScreenRGB()``."""
        return palettes.rgb_table(self.props.pal)[self.get_screen()]

    def get_screen_grayscale(self) -> npt.NDArray[np.uint8]:
        """uint8[N, H, 160], as ``ALEInterface.getScreenGrayscale()``."""
        return palettes.gray_table(self.props.pal)[self.get_screen()]

    def _require_game(self, what: str) -> games.GameInfo:
        if self.info is None:
            raise NotImplementedYetError(f"{what} needs game logic, which {self.rom.path.name} does not have")
        return self.info

    def lives(self) -> npt.NDArray[np.int32]:
        """int32[N]: ALE's ``lives()``."""
        info = self._require_game("lives()")
        return self._native.game_status(self._words, info.game_id)[0]

    def game_over(self) -> npt.NDArray[np.bool_]:
        """bool[N]: ALE's ``game_over()`` (the game's terminal flag; no truncation here)."""
        info = self._require_game("game_over()")
        return self._native.game_status(self._words, info.game_id)[1]

    def minimal_action_set(self) -> npt.NDArray[np.int64]:
        """ALE's minimal action set of this ROM (int64[k])."""
        return np.asarray(self._require_game("minimal_action_set()").minimal_actions, dtype=np.int64)

    def legal_action_set(self) -> npt.NDArray[np.int64]:
        """ALE's legal action set of this ROM (int64[k])."""
        return np.asarray(self._require_game("legal_action_set()").legal_actions, dtype=np.int64)

    # ---------------------------------------------------------------- states
    def clone_state(self) -> BatchState:
        """Return a deep copy of every environment (restore it with :meth:`restore_state`)."""
        consoles, screens = self._native.snapshot()
        return BatchState(consoles, screens, self._words.copy(), self._started.copy())

    def restore_state(self, state: BatchState) -> None:
        """Put every environment back to ``state`` (from :meth:`clone_state` of a batch like this one)."""
        self._native.restore(state.consoles, state.screens)
        if state.game_words.shape != self._words.shape:
            raise GpuEnvError(f"state holds {state.game_words.shape[0]} environments, this batch {self.num_envs}")
        self._words[...] = state.game_words
        self._started[...] = state.started
