"""``ConsoleBatch``: the console layer under :class:`gpu_env.AtariBatch` — emulation only, no ALE.

``N`` Atari 2600 consoles (CPU, RIOT, TIA, cartridge) running one ROM, each started from an
ale-py state (:meth:`ConsoleBatch.load_ale_state`) and stepped ``frames`` frames at a time with the
same console code ale-py's frames are compared against. There is no ALE environment here: no
``loadROM`` power-on, no ``reset_game``, no sticky actions, no rewards, lives or game over — those
are :class:`gpu_env.AtariBatch`'s. This layer exists for what has no game rules: the TIA test ROMs
and raw console checks (any ROM whose scheme the core implements, with its display window given as
:class:`ConsoleProps` when ALE's game table does not know it).

Arrays (numpy): actions int[N] (player A's joystick, ALE's 18 actions 0..17), RAM uint8[N, 128],
screens uint8[N, H, 160] (palette indices), RGB uint8[N, H, 160, 3], grayscale uint8[N, H, 160].
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from gpu_env import games, palettes
from gpu_env.ale_state import parse_ale_state
from gpu_env.console_native import ConsoleProps, NativeConsoles
from gpu_env.errors import GpuEnvError
from gpu_env.roms import Rom, load_rom

_NUM_JOYSTICK_ACTIONS = 18


@dataclass(frozen=True)
class ConsoleState:
    """A copy of every console of a batch (see :meth:`ConsoleBatch.clone_state`)."""

    consoles: npt.NDArray[np.uint8]  # uint8[N, console bytes]
    screens: npt.NDArray[np.uint8]  # uint8[N, 2, H, 160]: both frame buffers
    started: npt.NDArray[np.bool_]  # bool[N]


def props_for(rom: Rom) -> ConsoleProps | None:
    """ALE's console properties of a ROM its game table knows (display window, controllers), else None."""
    if rom.rom_id is None:
        return None
    try:
        info = games.game_info(rom.rom_id)
    except games.GameError:
        return None
    return ConsoleProps(
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


class ConsoleBatch:
    """``num_envs`` consoles running one ROM, stepped together (see the module docstring).

    Args:
        rom: ale-py ROM id (``"pong"``) or a path to a ROM image.
        num_envs: number of consoles.
        props: console properties; default: ALE's for a ROM its game table knows. Required for
            any other ROM (a GpuEnvError says so).
        num_threads: CPU threads (default: ``os.cpu_count()``).

    """

    def __init__(self, rom: str | os.PathLike[str], num_envs: int = 1, *, props: ConsoleProps | None = None,
                 num_threads: int | None = None) -> None:
        if not isinstance(num_envs, int) or num_envs < 1:
            raise GpuEnvError(f"num_envs={num_envs!r} must be a positive int")
        if num_threads is not None and (not isinstance(num_threads, int) or num_threads < 1):
            raise GpuEnvError(f"num_threads={num_threads!r} must be a positive int or None")
        self.rom = load_rom(rom)
        known = props_for(self.rom)
        if props is None and known is None:
            raise GpuEnvError(f"{self.rom.path.name} is not in ALE's game table: pass props=ConsoleProps(...) "
                              "with its display window (height 250 and pal=True for a PAL ROM)")
        self.props: ConsoleProps = props if props is not None else known  # type: ignore[assignment]
        self.num_envs = num_envs
        self.num_threads = num_threads if num_threads is not None else (os.cpu_count() or 1)
        self._native = NativeConsoles(self.rom.data, int(self.rom.scheme), self.props, num_envs)
        self._started = np.zeros(num_envs, dtype=np.bool_)

    def load_ale_state(self, i: int, state: object, screen: npt.ArrayLike | None = None,
                       previous_screen: npt.ArrayLike | None = None) -> None:
        """Import ``ale.cloneState()`` (an ``ALEState`` or its bytes) into console ``i``.

        ALE does not serialize its two frame buffers, yet rows that a short frame does not redraw
        show them. ``screen`` (uint8[H, 160], ``ale.getScreen()`` at the time of the clone) and
        ``previous_screen`` (``getScreen()`` one frame earlier; default: ``screen``) restore them.
        A state cloned in the middle of an interrupted frame continues that frame, as ale-py does.
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
        self._started[i] = True

    def step_frames(self, actions: npt.ArrayLike, frames: int = 1) -> None:
        """Emulate ``frames`` frames on every console with player A's joystick at ``actions`` (int[N], 0..17)."""
        acts = np.asarray(actions)
        if acts.shape != (self.num_envs,):
            raise GpuEnvError(f"actions has shape {acts.shape}, expected ({self.num_envs},)")
        if acts.dtype.kind not in "iu" or (acts < 0).any() or (acts >= _NUM_JOYSTICK_ACTIONS).any():
            raise GpuEnvError(f"actions must be ints in 0..17 (ALE's joystick actions), got {acts!r}")
        if not isinstance(frames, int) or frames < 1:
            raise GpuEnvError(f"frames={frames!r} must be a positive int")
        if not self._started.all():
            missing = np.flatnonzero(~self._started).tolist()
            raise GpuEnvError(f"consoles {missing} have no state: import one with load_ale_state(i, ale.cloneState()) "
                              "(a console batch has no power-on; gpu_env.AtariBatch runs loadROM)")
        self._native.emulate(np.ascontiguousarray(acts, dtype=np.int32), frames, self.num_threads)

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

    def export_ale(self, i: int) -> dict[str, list[int]]:
        """Console ``i``'s CPU, RAM, RIOT and TIA in ale-py's cloneState layout (for diagnostics)."""
        if not 0 <= i < self.num_envs:
            raise GpuEnvError(f"environment index {i} is out of range for a batch of {self.num_envs}")
        return self._native.export_ale(i)

    def clone_state(self) -> ConsoleState:
        """Return a deep copy of every console (restore it with :meth:`restore_state`)."""
        consoles, screens = self._native.snapshot()
        return ConsoleState(consoles, screens, self._started.copy())

    def restore_state(self, state: ConsoleState) -> None:
        """Put every console back to ``state`` (from :meth:`clone_state` of a batch of the same ROM and size)."""
        self._native.restore(state.consoles, state.screens)
        self._started[...] = state.started
