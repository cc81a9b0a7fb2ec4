"""``AtariBatch``: a batch of Atari environments with ALE's full semantics (docs/ale_semantics.md).

Environment ``i`` with seed ``s`` behaves as ``ale_py.ALEInterface`` with ``random_seed=s``, the
same settings (``repeat_action_probability``, ``frame_skip``, ``max_num_frames_per_episode``) and
``loadROM``: the power-on probe, ``reset_game`` (60 NOOPs, RESET presses, mode selection, starting
actions), sticky actions from ALE's mt19937 (two draws per frame), the terminal check before each
frame, reward summed over ``frameskip`` frames, paddles, difficulty switches. ``docs/ale_semantics.md``
lists every rule with its source.

``AtariBatch`` (also ``gpu_env.AtariBatch``) is gpu_env's one public batch class. It checks its
arguments and hands the work to a backend (:class:`gpu_env.backends.protocol.AtariBackend`):
- ``"cpu"``: gpu_env's C++ core (``gpu_env/core``) through the CPU library, threads across
  environments (:mod:`gpu_env.backends.native`);
- ``"ale_py"``: one ``ale_py.ALEInterface`` per environment — the reference itself, behind the same
  API, used by the conformance engine and as a baseline (:mod:`gpu_env.backends.ale_py`);
- ``"cuda"``: the same core compiled by CuPy/NVRTC (:mod:`gpu_env.backends.cuda`), host arrays in and out;
  without CuPy or a GPU it raises :class:`~gpu_env.errors.BackendError` naming what is missing.

:meth:`AtariBatch.step_preprocessed` is gymnasium's ``AtariPreprocessing`` step: on ``"cpu"`` in the
CPU library (``gpu_env/core/ale/preprocessing.h``, the source the CUDA kernels run too), on the
other backends as loops of batch calls (:mod:`gpu_env.backends.preprocessing`).

Arrays are numpy: rewards int32[N], game_over bool[N], lives int32[N], RAM uint8[N, 128], screens
uint8[N, H, 160] (palette indices), RGB uint8[N, H, 160, 3], grayscale uint8[N, H, 160].
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from gpu_env.backends.protocol import (
    ACTION_NAMES,
    NOOP,
    NUM_ACTIONS,
    AleSettings,
    AtariBackend,
    BoolArray,
    IntArray,
    U8Array,
    check_num_envs,
    seeds_array,
)
from gpu_env.errors import BackendError, GpuEnvError
from gpu_env.roms import resolve_rom_path

if TYPE_CHECKING:
    from gpu_env.backends.native import NativeBackend
    from gpu_env.preprocess_cpu import CpuObservation

__all__ = ["ACTION_NAMES", "BACKENDS", "NOOP", "NUM_ACTIONS", "AtariBatch", "seeds_array"]

BACKENDS: tuple[str, ...] = ("cpu", "cuda", "ale_py")


class AtariBatch:
    """A batch of ``num_envs`` Atari games with ALE's semantics (see the module docstring).

    Args:
        game: ale-py ROM id (``"pong"``) or a path to a ``.bin`` file.
        num_envs: number of environments.
        backend: ``"cpu"``, ``"cuda"`` or ``"ale_py"`` (the reference, one ``ALEInterface`` per env).
        seeds: per-env ``random_seed`` (uint32) of ALE's sticky-action RNG; one int is broadcast;
            ``None`` draws them from OS entropy (kept in :attr:`seeds`).
        repeat_action_probability: ALE's sticky-action probability (0.25 as ALE's default).
        frameskip: ALE's ``frame_skip``: frames per :meth:`act`, rewards summed.
        mode: ALE ``setMode`` (``None``: the ROM's default). Takes effect through one extra
            ``reset_game`` after ``loadROM``, as in gymnasium's AtariEnv.
        difficulty: ALE ``setDifficulty`` (``None``: the ROM's default), applied the same way as ``mode``.
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
        check_num_envs(num_envs)
        settings = AleSettings(float(repeat_action_probability), frameskip, mode, difficulty,
                               int(max_num_frames_per_episode))
        if backend not in BACKENDS:
            raise BackendError(f"unknown backend {backend!r}: use one of {', '.join(BACKENDS)}")
        self.rom_path = resolve_rom_path(game)
        self.num_envs = num_envs
        self.backend = backend
        self.seeds = seeds_array(seeds, num_envs)
        self.repeat_action_probability = settings.repeat_action_probability
        self.frameskip = settings.frameskip
        self.max_num_frames_per_episode = settings.max_num_frames_per_episode
        self._impl: AtariBackend
        if backend == "ale_py":
            from gpu_env.backends.ale_py import AlePyBackend

            self._impl = AlePyBackend(self.rom_path, num_envs, self.seeds, settings)
        elif backend == "cpu":
            from gpu_env.backends.native import NativeBackend

            self._impl = NativeBackend(self.rom_path, num_envs, self.seeds, settings, num_threads)
        else:  # "cuda": the same core on the device (gpu_env.backends.cuda); raises BackendError where it cannot run
            from gpu_env.backends.cuda.host import CudaAleBackend

            self._impl = CudaAleBackend(self.rom_path, num_envs, self.seeds, settings)
        self.mode: int | None = None
        self.difficulty: int | None = None
        # The default mask and paddle strengths, shared by every call (read-only, so no backend can change them).
        self._all_envs: BoolArray = np.ones(num_envs, dtype=np.bool_)
        self._all_envs.flags.writeable = False
        self._full_strength = np.ones(num_envs, dtype=np.float32)
        self._full_strength.flags.writeable = False
        all_envs = self._all_envs
        if mode is not None:
            self.set_mode(mode)
        if difficulty is not None:
            self.set_difficulty(difficulty)
        if mode is not None or difficulty is not None:
            self._impl.reset_game(all_envs)

    # ----------------------------------------------------------------------------- helpers

    def native_backend(self) -> NativeBackend:
        """Return the ``"cpu"`` backend's implementation (for the native steps that run over its envs)."""
        from gpu_env.backends.native import NativeBackend

        if not isinstance(self._impl, NativeBackend):
            raise BackendError(f"this step runs on the 'cpu' backend, not {self.backend!r}")
        return self._impl
    def _mask(self, mask: npt.ArrayLike | None) -> BoolArray:
        if mask is None:
            return self._all_envs
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
        if a.min() < 0 or a.max() >= NUM_ACTIONS:
            raise ValueError(f"actions must be in [0, {NUM_ACTIONS}) (ALE's full action set), got {a!r}")
        if paddle_strength is None:
            s = self._full_strength
        else:
            s = np.asarray(paddle_strength, dtype=np.float32)
            if s.shape != (self.num_envs,):
                raise ValueError(f"paddle_strength must be float[{self.num_envs}], got shape {s.shape}")
        return self._impl.act(a.astype(np.int64, copy=False), s, self._mask(mask))

    def step_preprocessed(self, actions: npt.ArrayLike, mask: npt.ArrayLike | None, frame_skip: int,
                          terminal_on_life_loss: bool, lives: IntArray, grayscale: bool, buf0: U8Array,
                          buf1: U8Array, *, reset: npt.ArrayLike | None = None, noops: npt.ArrayLike | None = None,
                          observation: CpuObservation | None = None, stack: U8Array | None = None
                          ) -> tuple[IntArray, BoolArray, BoolArray, U8Array | None]:
        """One vector step of gymnasium's ``AtariPreprocessing`` (over ``AtariEnv(frameskip=1)``).

        Envs in ``mask`` step: up to ``frame_skip`` :meth:`act` calls, stopping at game over, truncation
        or (with ``terminal_on_life_loss``) a life loss; ``lives`` (int32[N], in/out) is the wrapper's
        last seen lives. The screen after act ``frame_skip-2`` is written to ``buf1[i]`` and after act
        ``frame_skip-1`` to ``buf0[i]`` (uint8[N, H, 160] grayscale or [N, H, 160, 3] RGB), only when
        reached, as the wrapper does.

        Envs in ``reset`` (bool[N], none also in ``mask``) do the wrapper's unseeded reset instead:
        ``reset_game``, then ``noops[i]`` NOOP acts (``reset_game`` again whenever the game ends or is
        truncated), ``lives[i]`` = their lives, ``buf0[i]`` = their screen, ``buf1[i]`` = 0.

        With ``observation``, every env's observation follows (``buf0`` max-pooled with ``buf1`` when
        ``frame_skip > 1``, then resized), computed on the ``"cpu"`` backend by the thread that just
        stepped or reset the env. Returns rewards int32[N], terminated bool[N], truncated bool[N] and
        the observations (``None`` without ``observation``).

        ``stack`` (uint8 ``[N, S, *observation]``, with ``observation`` only): a frame stack, newest frame
        last (:class:`gpu_env.preprocess.FrameStack`'s ``obs``), updated in place with the new
        observations (the envs in ``reset`` get it in every slot, the others push it); the returned
        observations are then a copy of the whole stack. The ``"cpu"`` backend does this in the
        threads that stepped the envs.
        """
        a = np.asarray(actions, dtype=np.int64)
        m = self._mask(mask)
        r = np.zeros(self.num_envs, dtype=np.bool_) if reset is None else self._mask(reset)
        if (m & r).any():
            raise ValueError(f"envs {np.flatnonzero(m & r).tolist()} are in both mask and reset")
        n = np.zeros(self.num_envs, dtype=np.int32) if noops is None else np.asarray(noops, dtype=np.int32)
        if n.shape != (self.num_envs,) or (n < 0).any():
            raise ValueError(f"noops must be int[{self.num_envs}] >= 0, got shape {n.shape}")
        if observation is not None:
            want = (self.num_envs, self.screen_shape[0], 160, 1 if grayscale else 3)
            got = (observation.num_envs, observation.src_h, observation.src_w, observation.channels)
            if got != want:
                raise ValueError(f"observation is for (envs, height, width, channels) {got}, the screens are {want}")
        if stack is not None and observation is None:
            raise ValueError("step_preprocessed: a frame stack needs the observation")
        return self._impl.step_observe(a, m, r, n, frame_skip, terminal_on_life_loss, lives, grayscale, buf0, buf1,
                                       observation, stack)

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
            new = seeds_array(seeds, self.num_envs)
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

    def _check_out(self, name: str, out: npt.NDArray[np.uint8] | None, channels: tuple[int, ...]) -> U8Array | None:
        """Return ``out`` if it can take screens (uint8[N, H, 160, *channels], C-contiguous, writeable), else raise."""
        if out is None:
            return None
        shape = (self.num_envs, self._impl.screen_height, 160, *channels)
        if not isinstance(out, np.ndarray) or out.shape != shape or out.dtype != np.uint8 \
                or not out.flags.c_contiguous or not out.flags.writeable:
            got = (f"{type(out).__name__} {out.dtype} {out.shape}, c_contiguous={out.flags.c_contiguous}, "
                   f"writeable={out.flags.writeable}") if isinstance(out, np.ndarray) else type(out).__name__
            raise ValueError(f"{name}(out=...) needs a writeable C-contiguous numpy uint8 array of shape {shape}, "
                             f"got {got}: allocate it with np.empty({shape}, dtype=np.uint8)")
        return out

    def get_screen(self, out: npt.NDArray[np.uint8] | None = None) -> U8Array:
        """uint8[N, H, 160]: ALE ``getScreen()`` (palette indices).

        ``out``: an array of that shape (uint8, C-contiguous) to write into and return instead of a new one.
        """
        return self._impl.get_screen(self._check_out("get_screen", out, ()))

    def get_screen_rgb(self, out: npt.NDArray[np.uint8] | None = None) -> U8Array:
        """uint8[N, H, 160, 3]: ALE ``getScreenRGB()``; ``out`` as for :meth:`get_screen`."""
        return self._impl.get_screen_rgb(self._check_out("get_screen_rgb", out, (3,)))

    def get_screen_grayscale(self, out: npt.NDArray[np.uint8] | None = None) -> U8Array:
        """uint8[N, H, 160]: ALE ``getScreenGrayscale()``; ``out`` as for :meth:`get_screen`."""
        return self._impl.get_screen_grayscale(self._check_out("get_screen_grayscale", out, ()))

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

