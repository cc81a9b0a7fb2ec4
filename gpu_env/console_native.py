"""The console entry points of ``gpu_env/native/batch.cpp`` (emulation only) over numpy storage.

``NativeConsoles`` owns, for N environments of one ROM, the console structs (uint8[N, size]) and
two frame buffers each (uint8[N, 2, H, 160]); every call runs the whole batch in C++. It is the
storage of :class:`gpu_env.console_batch.ConsoleBatch`; ALE's environment layer (game rules,
frame skip, sticky actions) is ``native/ale_batch.cpp``, run by :mod:`gpu_env.backends.native`;
both call the library through :mod:`gpu_env.binding`.
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from gpu_env.ale_state import AleMachineState
from gpu_env.binding import native
from gpu_env.errors import GpuEnvError

PADDLE_MIN = 27450  # ALE's default paddle bounds (ale_state.hpp PADDLE_MIN / PADDLE_MAX)
PADDLE_MAX = 790196


@dataclass(frozen=True)
class ConsoleProps:
    """Per-ROM console properties (Stella's DefProps as ALE applies them)."""

    ystart: int = 34
    height: int = 210  # rows of the picture (250 for a PAL ROM with the default height)
    pal: bool = False  # autodetected display format: palette, colour loss, 342-line cap
    hmove_blanks: bool = True
    left_paddles: bool = False
    right_paddles: bool = False
    swap_ports: bool = False
    swap_paddles: bool = False
    paddle_min: int = PADDLE_MIN
    paddle_max: int = PADDLE_MAX


def _ptr(a: npt.NDArray[np.generic]) -> int:
    return int(a.ctypes.data)


def _ints(values: list[int]) -> ctypes.Array[ctypes.c_int32]:
    return (ctypes.c_int32 * max(1, len(values)))(*[int(v) & 0xFFFFFFFF if v > 0x7FFFFFFF else v for v in values])


class NativeConsoles:
    """N consoles of one ROM in host memory, stepped by the C++ core."""

    def __init__(self, rom: bytes, scheme: int, props: ConsoleProps, num_envs: int) -> None:
        self.lib = native()
        self.props = props
        self.num_envs = num_envs
        self.rom = np.frombuffer(rom, dtype=np.uint8).copy()
        size = int(self.lib.gpu_env_console_size())
        self.consoles = np.zeros((num_envs, size), dtype=np.uint8)
        self.buffers = np.zeros((num_envs, 2, props.height, 160), dtype=np.uint8)
        self._stride = self.buffers[0].nbytes
        self._ram_offset = int(self.lib.gpu_env_console_ram_offset())
        self._scheme = scheme
        for i in range(num_envs):
            self.configure(i)

    def _env(self, i: int) -> int:
        return _ptr(self.consoles) + i * self.consoles.shape[1]

    def configure(self, i: int) -> None:
        """Zero environment ``i`` and give it the ROM's properties."""
        p = self.props
        self.lib.gpu_env_console_configure(
            self._env(i), self._scheme, p.ystart, p.height, int(p.pal), int(p.hmove_blanks), int(p.left_paddles),
            int(p.right_paddles), int(p.swap_ports), int(p.swap_paddles), p.paddle_min, p.paddle_max,
        )

    def import_ale(self, i: int, s: AleMachineState) -> None:
        """Load a parsed ale-py state into environment ``i``."""
        self.configure(i)
        self.buffers[i] = 0
        head = [s.cycles, s.left_paddle, s.right_paddle, s.paddle_min, s.paddle_max, s.difficulty]
        rc = self.lib.gpu_env_console_import_ale(
            self._env(i), _ints(head), _ints(s.cpu), _ints(s.ram), _ints(s.riot), _ints(s.tia), _ints(s.cart),
            len(s.cart),
        )
        if rc != 0:
            raise GpuEnvError(
                f"the state's cartridge block ({s.cart_name}, {len(s.cart)} values) does not fit this ROM"
            )

    def set_screens(self, i: int, current: npt.NDArray[np.uint8], previous: npt.NDArray[np.uint8]) -> None:
        """Set the frame buffers of environment ``i``: the one shown now and the other (uint8[H, 160] each)."""
        for name, pic in (("screen", current), ("previous_screen", previous)):
            if pic.shape != (self.props.height, 160):
                raise GpuEnvError(f"{name} has shape {pic.shape}, expected ({self.props.height}, 160)")
        current, previous = np.ascontiguousarray(current), np.ascontiguousarray(previous)  # alive for the call
        self.lib.gpu_env_console_set_screens(
            self._env(i), _ptr(self.buffers) + i * self._stride, _ptr(current), _ptr(previous),
        )

    def emulate(self, actions: npt.NDArray[np.int32], frames: int, num_threads: int) -> None:
        """``frames`` frames per environment with player-A actions ``actions`` (no game logic)."""
        self.lib.gpu_env_batch_emulate(
            _ptr(self.consoles), self.num_envs, _ptr(self.rom), len(self.rom), _ptr(self.buffers), self._stride,
            _ptr(actions), frames, num_threads,
        )

    def ram(self) -> npt.NDArray[np.uint8]:
        """uint8[N, 128] copy of each console's RIOT RAM."""
        return self.consoles[:, self._ram_offset : self._ram_offset + 128].copy()

    def screens(self) -> npt.NDArray[np.uint8]:
        """uint8[N, H, 160]: each console's current picture."""
        out = np.empty((self.num_envs, self.props.height, 160), dtype=np.uint8)
        self.lib.gpu_env_batch_screens(_ptr(self.consoles), self.num_envs, _ptr(self.buffers), self._stride, _ptr(out))
        return out

    def snapshot(self) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.uint8]]:
        """Return copies of the console structs and frame buffers."""
        return self.consoles.copy(), self.buffers.copy()

    def restore(self, consoles: npt.NDArray[np.uint8], buffers: npt.NDArray[np.uint8]) -> None:
        """Overwrite every console and frame buffer (shapes must match)."""
        if consoles.shape != self.consoles.shape or buffers.shape != self.buffers.shape:
            raise GpuEnvError(
                f"state shapes {consoles.shape}/{buffers.shape} do not match this batch "
                f"({self.consoles.shape}/{self.buffers.shape}): restore into a batch of the same ROM and size"
            )
        self.consoles[...] = consoles
        self.buffers[...] = buffers

    def export_ale(self, i: int) -> dict[str, list[int]]:
        """Environment ``i``'s CPU, RAM, RIOT and TIA in ale-py's cloneState layout (for diagnostics)."""
        return export_ale_layout(self.lib, self._env(i))


def export_ale_layout(lib: ctypes.CDLL, console_address: int) -> dict[str, list[int]]:
    """Return the console at ``console_address`` (CPU, RAM, RIOT, TIA) in ale-py's cloneState layout.

    ``gpu_env_console_export_ale``: the one reader of a console struct for :meth:`NativeConsoles.export_ale` and
    :meth:`gpu_env.backends.native.NativeBackend.export_console` (``AleEnv``'s first member is its ``Console``).
    """
    cycles = ctypes.c_int32()
    cpu, ram = (ctypes.c_int32 * 14)(), (ctypes.c_int32 * 128)()
    riot, tia = (ctypes.c_int32 * 7)(), (ctypes.c_int32 * 54)()
    lib.gpu_env_console_export_ale(ctypes.c_void_p(console_address), ctypes.addressof(cycles), cpu, ram, riot, tia)
    return {"cycles": [cycles.value], "cpu": list(cpu), "ram": list(ram), "riot": list(riot), "tia": list(tia)}
