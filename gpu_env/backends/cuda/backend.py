"""``CudaAtariBatch``: ``AtariBatch``'s API with every environment on a CUDA device.

Environment ``i`` with seed ``s`` runs the same C++ code as the CPU backend
(``core/ale/environment.h``: loadROM's probe, ``reset_game``, sticky actions, frameskip, truncation),
one GPU thread per environment, its state (``AleEnv``) and both TIA frame buffers in device memory.
Resets run on the device (the full ALE sequence, re-emulated as ALE does, not a cached state).

Arrays returned are CuPy device arrays; :func:`to_torch` hands one to torch through DLPack without
a copy. Shapes and dtypes as ``AtariBatch``: rewards int32[N], game_over / truncated bool[N],
lives / frame numbers int32[N], RAM uint8[N, 128], screens uint8[N, H, 160] (palette indices),
grayscale uint8[N, H, 160], RGB uint8[N, H, 160, 3]. Inputs (actions, masks, strengths) may be
numpy arrays, CuPy arrays or torch tensors (CUDA tensors are read in place).

Masked calls launch over the compacted list of selected envs, so warps hold only envs that run.
:class:`gpu_env.backends.cuda.host.CudaAleBackend` adapts the class to the ``AtariBackend`` protocol
(host numpy arrays) for ``AtariBatch(backend="cuda")``; ``make_vec(..., backend="cuda")``
(:mod:`gpu_env.backends.cuda.vec`) uses the class itself.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from gpu_env.backends.cuda.errors import require_cuda
from gpu_env.backends.cuda.module import KernelOptions, load_module
from gpu_env.backends.protocol import NUM_ACTIONS, AleSettings, check_num_envs, seeds_array
from gpu_env.errors import GpuEnvError
from gpu_env.rom_params import PARAM_COUNT, rom_params, set_mode_programs
from gpu_env.roms import resolve_rom_path

STATUS_WORDS = 6  # core/cuda/kernels.h kStatus*: terminal, truncated, lives, frame, episode frame, pal
_NULL = np.uint64(0)


def to_torch(array: Any) -> Any:
    """Return a torch tensor sharing ``array``'s device memory (DLPack, no copy)."""
    import torch

    return torch.utils.dlpack.from_dlpack(array)


class CudaAtariBatch:
    """``num_envs`` Atari games with ALE's semantics on CUDA device ``device`` (see the module docstring).

    Arguments as :class:`gpu_env.AtariBatch` (the ALE settings as keywords, checked by
    :class:`~gpu_env.backends.protocol.AleSettings`), plus ``device`` (CUDA ordinal), ``block_size``
    (threads per block of the per-env kernels) and ``options`` (a :class:`KernelOptions` variant).
    Raises :class:`~gpu_env.errors.BackendError` when CuPy, a GPU or NVRTC is missing.
    """

    def __init__(self, game: str | os.PathLike[str], num_envs: int, *,
                 seeds: Sequence[int] | npt.ArrayLike | None = None, device: int = 0, block_size: int = 128,
                 options: KernelOptions | None = None, **settings: Any) -> None:
        from gpu_env import game_lookup, palettes, roms

        check_num_envs(num_envs)
        ale = AleSettings(**settings)
        mode, difficulty = ale.mode, ale.difficulty
        if block_size <= 0 or block_size > 1024 or block_size % 32:
            raise ValueError(f"block_size={block_size} must be a multiple of 32 in [32, 1024]")
        self.rom_path: Path = resolve_rom_path(game)
        rom = roms.load_rom(self.rom_path)
        self._info = game_lookup.game_for_rom(rom)
        cp = require_cuda(device)
        self.cp = cp  # the CuPy module this batch's arrays belong to
        self.device = device
        self.num_envs = num_envs
        self.backend = "cuda"
        self.block_size = block_size
        self.options = options if options is not None else KernelOptions()
        self.seeds = seeds_array(seeds, num_envs)
        self.repeat_action_probability = float(ale.repeat_action_probability)
        self.frameskip = ale.frameskip
        self.max_num_frames_per_episode = ale.max_num_frames_per_episode
        self.mode: int | None = None
        self.difficulty: int | None = None
        info = self._info
        self._programs = set_mode_programs(info)
        with cp.cuda.Device(device):
            self._module = load_module(cp, self.options, device)
            self._k = {name: self._module.get_function(name) for name in (
                "gpu_env_env_size", "gpu_env_load", "gpu_env_reset", "gpu_env_act",
                "gpu_env_vec_step", "gpu_env_set_mode", "gpu_env_status", "gpu_env_ram", "gpu_env_screen",
                "gpu_env_max_pool")}
            limit = min(int(self._k[name].max_threads_per_block) for name in (
                "gpu_env_load", "gpu_env_reset", "gpu_env_act",
                "gpu_env_vec_step"))
            if block_size > limit:
                raise ValueError(f"block_size={block_size} exceeds what the kernels can launch ({limit} threads per "
                                 f"block with their register use): pass block_size <= {limit}")
            sizes = cp.zeros(3, dtype=cp.uint32)
            self._k["gpu_env_env_size"]((1,), (1,), (sizes,))
            env_size, _, param_count = (int(v) for v in sizes.get())
            if param_count != PARAM_COUNT:
                raise GpuEnvError(f"kernels.h has {param_count} ROM parameters, backend.py {PARAM_COUNT}")
            self.env_size = env_size
            params = rom_params(info, int(rom.scheme), self.frameskip, self.max_num_frames_per_episode)
            self._params = cp.asarray(params)
            self._rom = cp.asarray(np.frombuffer(rom.data, dtype=np.uint8))
            self._rom_size = np.uint32(len(rom.data))
            self._starting = cp.asarray(np.array(info.starting_actions or [0], dtype=np.int32))
            self._num_starting = np.int32(len(info.starting_actions))
            self._program_words = cp.asarray(np.array([*self._programs.words, 0], dtype=np.int32))
            self._rap = np.float32(self.repeat_action_probability)
            self.max_height = max(250, int(info.height_prop))
            self.stride = 2 * 160 * self.max_height
            self.screen_height = int(info.screen_height)
            self._envs = cp.zeros((num_envs, env_size), dtype=cp.uint8)
            self._buffers = cp.zeros((num_envs, self.stride), dtype=cp.uint8)
            self._status = cp.zeros((STATUS_WORDS, num_envs), dtype=cp.int32)
            self._ones = cp.ones(num_envs, dtype=cp.float32)
            self._gray = cp.asarray(np.stack([palettes.gray_table(False), palettes.gray_table(True)]))
            self._rgb = cp.asarray(np.stack([palettes.rgb_table(False), palettes.rgb_table(True)]))
            self._modes = np.full(num_envs, info.default_mode, dtype=np.int64)
            self._difficulties = np.zeros(num_envs, dtype=np.int64)
            self._load(None, self.seeds)
            # A ROM run through ALE's name fallback gets its display format from the power-on probe.
            self._refresh_status()
            self._info = info = game_lookup.with_probed_display(info, pal=bool(int(self._status[5, :1].get()[0])))
            self.screen_height = int(info.screen_height)
        if mode is not None:
            self.set_mode(mode)
        if difficulty is not None:
            self.set_difficulty(difficulty)
        if mode is not None or difficulty is not None:
            self.reset_game()

    # ----------------------------------------------------------------------------- plumbing
    def _device_array(self, x: Any, dtype: Any, name: str) -> Any:
        cp = self.cp
        if hasattr(x, "__cuda_array_interface__") or isinstance(x, cp.ndarray):
            arr = cp.asarray(x)
        elif hasattr(x, "detach"):  # a torch tensor on the CPU
            arr = cp.asarray(x.detach().cpu().numpy())
        else:
            arr = cp.asarray(np.asarray(x))
        if arr.shape != (self.num_envs,):
            raise ValueError(f"{name} must have shape ({self.num_envs},), got {arr.shape}")
        return cp.ascontiguousarray(arr.astype(dtype, copy=False))

    def _indices(self, mask: Any) -> tuple[Any, int]:
        """(index array or null pointer, count) of the envs a launch runs."""
        if mask is None:
            return _NULL, self.num_envs
        m = self._device_array(mask, self.cp.bool_, "mask")
        idx = self.cp.flatnonzero(m).astype(self.cp.int32)
        return idx, int(idx.size)

    def _grid(self, count: int) -> tuple[int]:
        return ((count + self.block_size - 1) // self.block_size,)

    def _rom_args(self) -> tuple[Any, ...]:
        return (self._params, self._rom, self._rom_size, self._starting, self._num_starting, self._program_words,
                self._rap, self._envs, self._buffers, np.uint64(self.stride), self._status)

    def _env_launch(self, name: str, idx: Any, count: int, *extra: Any) -> None:
        if count == 0:
            return
        with self.cp.cuda.Device(self.device):
            self._k[name](self._grid(count), (self.block_size,),
                          (*self._rom_args(), idx, np.int32(count), np.int32(self.num_envs), *extra))

    def elementwise_grid(self, total: int) -> tuple[tuple[int], tuple[int]]:
        """(grid, block) of a grid-stride kernel over ``total`` elements."""
        return (min((total + 255) // 256, 1 << 20),), (256,)

    def _program(self, mode: int) -> int:
        return self._programs.offset(int(mode))

    def _load(self, mask: Any, seeds: npt.NDArray[np.uint32]) -> None:
        idx, count = self._indices(mask)
        seeds_d = self.cp.asarray(seeds.astype(np.uint32))
        self._env_launch("gpu_env_load", idx, count, seeds_d, np.int32(self._program(self._info.default_mode)))
        host_mask = np.ones(self.num_envs, dtype=np.bool_) if mask is None else np.asarray(self._host(mask))
        for m in np.unique(self._modes[host_mask]):
            self._set(host_mask & (self._modes == m), mode=int(m))
        for d in np.unique(self._difficulties[host_mask]):
            self._set(host_mask & (self._difficulties == d), difficulty=int(d))

    def _host(self, x: Any) -> Any:
        if isinstance(x, self.cp.ndarray):
            return x.get()
        if hasattr(x, "detach"):
            return x.detach().cpu().numpy()
        return np.asarray(x)

    def _set(self, mask: npt.NDArray[np.bool_], mode: int | None = None, difficulty: int | None = None) -> None:
        idx, count = self._indices(mask)
        if count == 0:
            return
        with self.cp.cuda.Device(self.device):
            self._k["gpu_env_set_mode"](self._grid(count), (self.block_size,), (
                self._envs, idx, np.int32(count), np.int32(mode if mode is not None else 0),
                np.int32(self._program(mode) if mode is not None else -1), np.int32(mode is not None),
                np.int32(difficulty if difficulty is not None else 0), np.int32(difficulty is not None)))

    def kernel(self, name: str) -> Any:
        """Kernel ``name`` of ``core/cuda/kernels.h`` from this batch's compiled module."""
        return self._module.get_function(name)

    def vec_step(self, actions: Any, resetting: Any, preprocessor: Any, noop_table: Any, noop_depth: int,
                 noop_cursor: Any, noop_action: int, rewards: Any, terminated: Any, truncated: Any) -> None:
        """One launch of ``gpu_env_vec_step``: make_vec's env step and autoreset on every env (see kernels.h).

        ``actions``: int32[N] ALE actions (device) or ``None`` (no env steps); ``resetting``: uint8[N]
        (device) or ``None``; ``preprocessor``: a :class:`~gpu_env.backends.cuda.preprocess.CudaPreprocessor`
        (AtariPreprocessing's step into its buffers) or ``None`` (one ALE act); ``noop_table``
        int32[N, noop_depth] with ``noop_cursor`` int32[N] (``None``: no no-ops); outputs float32[N]
        rewards and uint8[N] flags. Nothing is read back to the host.
        """
        pre = preprocessor
        if pre is not None:
            pp = (np.int32(1), np.int32(pre.frame_skip), np.int32(pre.terminal_on_life_loss), self._gray, pre.obs0,
                  pre.obs1, np.uint64(self.screen_height * 160), pre.lives)
        else:
            pp = (np.int32(0), np.int32(1), np.int32(0), _NULL, _NULL, _NULL, np.uint64(0), _NULL)
        table = _NULL if noop_table is None else noop_table
        with self.cp.cuda.Device(self.device):
            self._k["gpu_env_vec_step"](self._grid(self.num_envs), (self.block_size,), (
                *self._rom_args(), np.int32(self.num_envs), _NULL if actions is None else actions,
                _NULL if resetting is None else resetting, *pp, table, np.int32(noop_depth), noop_cursor,
                np.int32(noop_action), rewards, terminated, truncated))

    # ----------------------------------------------------------------------------- acting
    def act(self, actions: Any, paddle_strength: Any = None, mask: Any = None, *, check: bool = True) -> Any:
        """One ALE ``act`` per env (``frameskip`` frames); returns the summed rewards int32[N] (device).

        ``check``: verify actions are in [0, 18) (one device-to-host sync for device inputs).
        """
        cp = self.cp
        with cp.cuda.Device(self.device):
            a = self._device_array(actions, cp.int32, "actions")
            if check and bool(((a < 0) | (a >= NUM_ACTIONS)).any()):
                raise ValueError(f"actions must be in [0, {NUM_ACTIONS}) (ALE's full action set), got {a.get()!r}")
            s = self._ones if paddle_strength is None else self._device_array(paddle_strength, cp.float32,
                                                                              "paddle_strength")
            idx, count = self._indices(mask)
            rewards = cp.zeros(self.num_envs, dtype=cp.int32) if mask is not None else cp.empty(
                self.num_envs, dtype=cp.int32)
            self._env_launch("gpu_env_act", idx, count, a, s, rewards)
            return rewards

    def reset_game(self, mask: Any = None) -> None:
        """ALE ``reset_game()`` on the envs in ``mask`` (default: all), on the device."""
        idx, count = self._indices(mask)
        self._env_launch("gpu_env_reset", idx, count)

    def load_rom(self, mask: Any = None, seeds: Any = None) -> None:
        """ALE ``setInt('random_seed', s); loadROM()`` on the envs in ``mask`` (see ``AtariBatch.load_rom``)."""
        host_mask = np.ones(self.num_envs, dtype=np.bool_) if mask is None else np.asarray(self._host(mask), bool)
        if seeds is not None:
            new = seeds_array(self._host(seeds), self.num_envs)
            self.seeds = np.where(host_mask, new, self.seeds).astype(np.uint32)
        self._load(host_mask, self.seeds)

    def set_mode(self, mode: int, mask: Any = None) -> None:
        """ALE ``setMode``: takes effect at the next :meth:`reset_game`."""
        if mode not in self._info.modes:
            raise ValueError(f"mode {mode} is not available for {self.rom_path.stem}: choose one of "
                             f"{list(self._info.modes)}")
        m = np.ones(self.num_envs, dtype=np.bool_) if mask is None else np.asarray(self._host(mask), bool)
        self._modes[m] = mode
        self._set(m, mode=int(mode))
        self.mode = int(mode)

    def set_difficulty(self, difficulty: int, mask: Any = None) -> None:
        """ALE ``setDifficulty``."""
        if difficulty not in self._info.difficulties:
            raise ValueError(f"difficulty {difficulty} is not available for {self.rom_path.stem}: choose one of "
                             f"{list(self._info.difficulties)}")
        m = np.ones(self.num_envs, dtype=np.bool_) if mask is None else np.asarray(self._host(mask), bool)
        self._difficulties[m] = difficulty
        self._set(m, difficulty=int(difficulty))
        self.difficulty = int(difficulty)

    # ----------------------------------------------------------------------------- queries (device arrays)
    def game_over(self, with_truncation: bool = True) -> Any:
        """bool[N]: ALE ``game_over(with_truncation)``."""
        over = self._status[0] != 0
        return over | (self._status[1] != 0) if with_truncation else over

    def game_truncated(self) -> Any:
        """bool[N]: the episode reached ``max_num_frames_per_episode``."""
        return self._status[1] != 0

    def lives(self) -> Any:
        """int32[N]: ALE ``lives()``."""
        return self._status[2].copy()

    def frame_number(self) -> Any:
        """int32[N]: ALE ``getFrameNumber()``."""
        return self._status[3].copy()

    def episode_frame_number(self) -> Any:
        """int32[N]: ALE ``getEpisodeFrameNumber()``."""
        return self._status[4].copy()

    def pal(self) -> Any:
        """bool[N]: the power-on probe decided PAL."""
        return self._status[5] != 0

    def get_ram(self) -> Any:
        """uint8[N, 128]: ALE ``getRAM()``."""
        cp = self.cp
        with cp.cuda.Device(self.device):
            out = cp.empty((self.num_envs, 128), dtype=cp.uint8)
            grid, block = self.elementwise_grid(out.size)
            self._module.get_function("gpu_env_ram")(grid, block, (self._envs, np.int32(self.num_envs), out))
            return out

    def _screen(self, table: Any, channels: int) -> Any:
        cp = self.cp
        with cp.cuda.Device(self.device):
            shape = (self.num_envs, self.screen_height, 160) + ((3,) if channels == 3 else ())
            out = cp.empty(shape, dtype=cp.uint8)
            grid, block = self.elementwise_grid(self.num_envs * self.screen_height * 160)
            self._k["gpu_env_screen"](grid, block, (
                self._envs, np.int32(self.num_envs), self._buffers, np.uint64(self.stride),
                np.int32(self.screen_height), table, np.int32(channels), out))
            return out

    def get_screen(self) -> Any:
        """uint8[N, H, 160]: ALE ``getScreen()`` (palette indices)."""
        return self._screen(_NULL, 1)

    def get_screen_grayscale(self) -> Any:
        """uint8[N, H, 160]: ALE ``getScreenGrayscale()``."""
        return self._screen(self._gray, 1)

    def get_screen_rgb(self) -> Any:
        """uint8[N, H, 160, 3]: ALE ``getScreenRGB()``."""
        return self._screen(self._rgb, 3)

    @property
    def screen_shape(self) -> tuple[int, int]:
        """(H, W) of one screen."""
        return (self.screen_height, 160)

    def minimal_action_set(self) -> npt.NDArray[np.int64]:
        """int64[k] (host): ALE ``getMinimalActionSet()``."""
        return np.array(self._info.minimal_actions, dtype=np.int64)

    def legal_action_set(self) -> npt.NDArray[np.int64]:
        """int64[18] (host): ALE ``getLegalActionSet()``."""
        return np.arange(NUM_ACTIONS, dtype=np.int64)

    def available_modes(self) -> list[int]:
        """ALE ``getAvailableModes()``."""
        return list(self._info.modes)

    def available_difficulties(self) -> list[int]:
        """ALE ``getAvailableDifficulties()``."""
        return list(self._info.difficulties)

    # ----------------------------------------------------------------------------- states
    def clone_state(self) -> list[bytes]:
        """Per env: its ``AleEnv`` bytes + both frame buffers (the CPU backend's format when layouts match)."""
        envs, buffers = self._envs.get(), self._buffers.get()
        return [envs[i].tobytes() + buffers[i].tobytes() for i in range(self.num_envs)]

    def restore_state(self, states: Sequence[bytes]) -> None:
        """Restore every env from :meth:`clone_state` output (or a CPU ``AtariBatch``'s, same ROM and layout)."""
        if len(states) != self.num_envs:
            raise GpuEnvError(f"restore_state got {len(states)} states for {self.num_envs} environments")
        envs = np.empty((self.num_envs, self.env_size), dtype=np.uint8)
        buffers = np.empty((self.num_envs, self.stride), dtype=np.uint8)
        for i, blob in enumerate(states):
            if len(blob) != self.env_size + self.stride:
                raise GpuEnvError(f"state {i} has {len(blob)} bytes, expected {self.env_size + self.stride}: pass "
                                  "clone_state() output of a batch of the same ROM")
            envs[i] = np.frombuffer(blob, dtype=np.uint8, count=self.env_size)
            buffers[i] = np.frombuffer(blob, dtype=np.uint8, offset=self.env_size)
        self._envs.set(envs)
        self._buffers.set(buffers)
        self._refresh_status()

    def _refresh_status(self) -> None:
        self._env_launch("gpu_env_status", _NULL, self.num_envs)

    def memory_bytes_per_env(self) -> int:
        """Device bytes this batch holds per environment (state, frame buffers, status)."""
        return int(self.env_size + self.stride + 4 * STATUS_WORDS)
