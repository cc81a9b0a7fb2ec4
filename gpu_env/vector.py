""":class:`AtariVecEnv`: the gymnasium ``VectorEnv`` of ``gpu_env.make_vec`` on a host :class:`~gpu_env.AtariBatch`.

``gpu_env.make_vec(env_id, n, backend="cpu", **kwargs)`` (:mod:`gpu_env.make`) returns it; it behaves as
``gymnasium.make_vec(env_id, n, vectorization_mode="sync", wrappers=[...], **kwargs)`` with, per
sub-environment, ale-py's ``AtariEnv`` with the settings ale-py registers for ``env_id`` (every
``ALE/…-v5``, ``…-v4``, ``…NoFrameskip-v4``, ``…-v0``, ``…NoFrameskip-v0`` id, read from
``gymnasium.registry``, and each id's ``-ram`` form: ``obs_type="ram"``), ``kwargs`` overriding them,
then — if any preprocessing option is given — gymnasium's ``AtariPreprocessing``, then — if
``stack_size`` is given — ``FrameStackObservation``, then gymnasium's (per-env)
``RecordEpisodeStatistics``. ``autoreset_mode`` (declared in ``metadata["autoreset_mode"]``) is
gymnasium's: ``NEXT_STEP`` (default: the step after an episode ends resets that env and returns its
first observation with reward 0), ``SAME_STEP`` (the env is reset in the step that ends its episode;
the final observation and info — with ``episode`` — are in ``info["final_obs"]`` /
``info["final_info"]`` with masks ``_final_obs`` / ``_final_info``) or ``DISABLED`` (the caller resets
ended envs with ``reset(options={"reset_mask": mask})``; stepping an ended env raises
:class:`~gpu_env.errors.GpuEnvError`). Seeding is gymnasium's: ``reset(seed=s)`` gives env ``i`` the
seed ``s + i``, derives ``(np_seed, ale_seed) = SeedSequence(s + i).generate_state(2)`` and reloads the
ROM (``loadROM``) with ``random_seed = ale_seed``; ``reset()`` without a seed only calls
``reset_game``. The no-op counts of ``noop_max`` come from the same per-env numpy generator as in
gymnasium (``np_random.integers(1, noop_max + 1)``).

The info dict is gymnasium's, key for key: ``lives``, ``episode_frame_number``, ``frame_number``, each
with its ``_key`` mask (the envs that reported it: all on a step, the reset ones on ``reset``); where
episodes ended, ``episode`` = {``r``: return, ``l``: length in steps of this env, ``t``: seconds, each
with its ``_r``/``_l``/``_t`` mask} and ``_episode`` — at the top level with ``NEXT_STEP`` and
``DISABLED``, inside ``final_info`` with ``SAME_STEP`` (where CleanRL-style scripts read
``infos["final_info"]["episode"]``). A seeded ``reset`` adds ``info["seeds"]``: a numpy object array of
each seeded env's ``(np_seed, ale_seed)`` (``None`` elsewhere), with the mask ``_seeds``.

``obs_format="numpy"`` returns exactly gymnasium's types: numpy observations, float64 rewards, bool
flags, int64/float64 info arrays, ``final_obs`` as an object array. ``obs_format="torch"`` (default)
returns torch tensors on ``device`` (default: the backend's device): observations (uint8, or float32
with ``scale_obs``), rewards float32[N], flags bool[N], info int32[N] (``lives``, frame numbers),
``episode`` with an extra ``frames`` (ALE's episode frame number at the end), and ``final_obs`` as one
tensor ``[N, *single_observation_shape]`` (zeros where the mask is false) for batched code.
``render_mode="rgb_array"`` makes ``render()`` return each env's RGB screen, as ``SyncVectorEnv``
does, so ``gymnasium.wrappers.vector.RecordVideo`` records. ``num_threads`` defaults to
:func:`default_num_threads` (the cores this process may run on).
"""

from __future__ import annotations

import enum
import os
import time
from collections.abc import Mapping
from typing import Any

import numpy as np
import numpy.typing as npt
import torch
from gymnasium import spaces
from gymnasium.utils import seeding
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from gpu_env.ale_batch import ACTION_NAMES, AtariBatch
from gpu_env.backends.preprocessing import reset_loop, step_loop
from gpu_env.env_ids import EnvIdSettings, env_id_settings, rom_id_from_env_id
from gpu_env.errors import GpuEnvError
from gpu_env.preprocess import FrameStack
from gpu_env.preprocess_cpu import CpuObservation

__all__ = ["OBS_FORMATS", "AtariVecEnv", "EnvIdSettings", "default_num_threads", "env_id_settings",
           "rom_id_from_env_id"]

_PREPROCESSING_DEFAULTS: dict[str, Any] = {
    "noop_max": 30, "frame_skip": 4, "screen_size": 84, "terminal_on_life_loss": False,
    "grayscale_obs": True, "grayscale_newaxis": False, "scale_obs": False,
}
OBS_FORMATS = ("torch", "numpy")


class _Unset(enum.Enum):
    """Marks a keyword argument left out (``None`` is a value of ``max_num_frames_per_episode``)."""

    UNSET = "unset"


_UNSET = _Unset.UNSET


def default_num_threads() -> int:
    """Return the CPU threads ``num_threads=None`` stands for: the cores this process may run on, at least 1.

    ``len(os.sched_getaffinity(0))`` where the platform has it, else ``os.cpu_count()``. It does not
    depend on the machine's load: on a shared machine pass ``num_threads`` (e.g. 1) to leave cores to others.
    """
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


def _render_fps() -> int:
    """``AtariEnv.metadata["render_fps"]``, which gymnasium's video recorder reads."""
    from ale_py.env import AtariEnv

    return int(AtariEnv.metadata["render_fps"])


def _default_device(backend: str) -> torch.device:
    return torch.device("cuda" if backend == "cuda" else "cpu")


class AtariVecEnv(VectorEnv):
    """gymnasium ``VectorEnv`` of the Atari games of ale-py's gymnasium ids on gpu_env (see the module docstring)."""

    def __init__(
        self,
        env_id: str,
        num_envs: int,
        *,
        backend: str = "cpu",
        device: str | torch.device | None = None,
        frameskip: int | tuple[int, int] | None = None,
        repeat_action_probability: float | None = None,
        full_action_space: bool | None = None,
        mode: int | None = None,
        difficulty: int | None = None,
        obs_type: str | None = None,
        max_num_frames_per_episode: int | _Unset | None = _UNSET,
        noop_max: int | None = None,
        frame_skip: int | None = None,
        screen_size: int | tuple[int, int] | None = None,
        terminal_on_life_loss: bool | None = None,
        grayscale_obs: bool | None = None,
        grayscale_newaxis: bool | None = None,
        scale_obs: bool | None = None,
        stack_size: int | None = None,
        autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP,
        num_threads: int | None = None,
        obs_format: str = "torch",
        render_mode: str | None = None,
    ) -> None:
        id_settings = env_id_settings(env_id)
        given_env: dict[str, Any] = {"frameskip": frameskip, "repeat_action_probability": repeat_action_probability,
                     "full_action_space": full_action_space, "mode": mode, "difficulty": difficulty,
                     "obs_type": obs_type}
        env: dict[str, Any] = {k: (v if v is not None else id_settings.settings[k]) for k, v in given_env.items()}
        frameskip, obs_type = env["frameskip"], str(env["obs_type"])
        max_frames: int | None = (id_settings.settings["max_num_frames_per_episode"]
                                  if isinstance(max_num_frames_per_episode, _Unset) else max_num_frames_per_episode)
        self._check_output_options(obs_format, render_mode, num_threads)
        self.obs_format = obs_format
        self.render_mode = render_mode
        try:
            self._autoreset_mode = AutoresetMode(autoreset_mode)
        except ValueError:
            modes = ", ".join(m.value for m in AutoresetMode)
            raise GpuEnvError(f"autoreset_mode={autoreset_mode!r}: use one of {modes}") from None
        if obs_type not in ("rgb", "grayscale", "ram"):
            raise GpuEnvError(f"obs_type={obs_type!r}: use 'rgb', 'grayscale' or 'ram'")
        if isinstance(frameskip, tuple):
            if len(frameskip) != 2 or not 0 < frameskip[0] < frameskip[1]:
                raise GpuEnvError(f"frameskip={frameskip}: a stochastic frameskip is (low, high) with 0 < low < high")
        elif not isinstance(frameskip, int) or frameskip <= 0:
            raise GpuEnvError(f"frameskip={frameskip!r} must be a positive int or a (low, high) tuple")
        self.env_id = env_id
        self.rom_id = id_settings.rom_id
        self.num_envs = num_envs
        self.device = torch.device(device) if device is not None else _default_device(backend)
        if obs_format == "numpy" and self.device.type != "cpu":
            raise GpuEnvError(f"obs_format='numpy' returns host arrays: drop device={device!r}, or use "
                              "obs_format='torch'")
        self._frameskip = frameskip
        self._obs_type = obs_type
        self._num_threads = num_threads if num_threads is not None else default_num_threads()
        given: dict[str, Any] = {"noop_max": noop_max, "frame_skip": frame_skip, "screen_size": screen_size,
                 "terminal_on_life_loss": terminal_on_life_loss, "grayscale_obs": grayscale_obs,
                 "grayscale_newaxis": grayscale_newaxis, "scale_obs": scale_obs}
        self._preprocess = any(v is not None for v in given.values())
        pp = {k: (v if v is not None else _PREPROCESSING_DEFAULTS[k]) for k, v in given.items()}
        self._pp = pp
        if self._preprocess:
            self._check_preprocessing(pp)
        inner_skip = frameskip if isinstance(frameskip, int) and not self._preprocess else 1
        self.batch: AtariBatch = self._make_batch(backend, float(env["repeat_action_probability"]), inner_skip,
                                                  max_frames or 0, self._num_threads)
        self._inner_loops: int = 1 if inner_skip == frameskip or isinstance(frameskip, tuple) else frameskip
        if env["mode"] is not None:
            self.batch.set_mode(int(env["mode"]))
        if env["difficulty"] is not None:
            self.batch.set_difficulty(int(env["difficulty"]))
        self._action_set = (np.arange(len(ACTION_NAMES), dtype=np.int64) if env["full_action_space"]
                            else self.batch.minimal_action_set())
        self._env_rngs = [seeding.np_random(int(s))[0]
                           for s in np.random.SeedSequence().generate_state(num_envs)]
        self._setup_spaces(stack_size)
        self._autoreset = np.zeros(num_envs, dtype=np.bool_)
        self._ep_return = np.zeros(num_envs, dtype=np.float64)
        self._ep_length = np.zeros(num_envs, dtype=np.int64)
        self._ep_start = np.full(num_envs, time.perf_counter())
        self._seeded_with: list[tuple[np.uint32, np.uint32] | None] = [None] * num_envs
        self.metadata = {"autoreset_mode": self._autoreset_mode, "render_modes": ["rgb_array"],
                         "render_fps": _render_fps()}

    def _check_output_options(self, obs_format: str, render_mode: str | None, num_threads: int | None) -> None:
        if obs_format not in OBS_FORMATS:
            raise GpuEnvError(f"obs_format={obs_format!r}: use 'torch' (tensors on device) or 'numpy' (numpy arrays)")
        if render_mode not in (None, "rgb_array"):
            raise GpuEnvError(f"render_mode={render_mode!r}: gpu_env renders 'rgb_array' only (or None)")
        if num_threads is not None and (not isinstance(num_threads, int) or num_threads <= 0):
            raise GpuEnvError(f"num_threads={num_threads!r} must be a positive int, or None for default_num_threads()")

    # ----------------------------------------------------------------------------- setup
    def _make_batch(self, backend: str, repeat_action_probability: float, frameskip: int, max_frames: int,
                    num_threads: int | None) -> AtariBatch:
        """Build the batch the env steps: an :class:`AtariBatch` (``make_vec`` builds the device env for ``cuda``)."""
        if backend == "cuda":
            raise GpuEnvError("AtariVecEnv steps host batches: for backend='cuda' use gpu_env.make_vec(..., "
                              "backend='cuda'), which keeps every step on the device")
        return AtariBatch(
            self.rom_id, self.num_envs, backend=backend, seeds=None,
            repeat_action_probability=repeat_action_probability, frameskip=frameskip,
            max_num_frames_per_episode=max_frames, num_threads=num_threads,
        )

    def _check_preprocessing(self, pp: dict[str, Any]) -> None:
        if pp["frame_skip"] <= 0:
            raise GpuEnvError(f"frame_skip={pp['frame_skip']} must be positive")
        if pp["frame_skip"] > 1 and self._frameskip != 1:
            raise GpuEnvError(
                f"frame_skip={pp['frame_skip']} with frameskip={self._frameskip}: disable the env's frame skipping "
                "(frameskip=1) when AtariPreprocessing skips frames, as gymnasium requires"
            )
        if pp["noop_max"] < 0:
            raise GpuEnvError(f"noop_max={pp['noop_max']} must be >= 0")
        if self._obs_type == "ram":
            raise GpuEnvError("AtariPreprocessing options need screen observations: use obs_type='rgb' or 'grayscale'")
        size = pp["screen_size"]
        if isinstance(size, int):
            size = (size, size)
        if len(size) != 2 or min(size) <= 0:
            raise GpuEnvError(f"screen_size={pp['screen_size']} must be a positive int or (width, height)")
        self._pp_size: tuple[int, int] = (int(size[0]), int(size[1]))

    def _setup_spaces(self, stack_size: int | None) -> None:
        n = self.num_envs
        h, w = self.batch.screen_shape
        self._buf0: npt.NDArray[np.uint8] | None = None
        self._buf1: npt.NDArray[np.uint8] | None = None
        if self._preprocess:
            gray = bool(self._pp["grayscale_obs"])
            width, height = self._pp_size
            frame_shape: tuple[int, ...] = (height, width) if gray else (height, width, 3)
            if gray and self._pp["grayscale_newaxis"]:
                frame_shape = (*frame_shape, 1)
            dtype: type[np.generic] = np.float32 if self._pp["scale_obs"] else np.uint8
            single: spaces.Space[Any] = (spaces.Box(0.0, 1.0, frame_shape, np.float32) if self._pp["scale_obs"]
                                  else spaces.Box(0, 255, frame_shape, np.uint8))
        else:
            frame_shape = {"rgb": (h, w, 3), "grayscale": (h, w), "ram": (128,)}[self._obs_type]
            dtype = np.uint8
            single = spaces.Box(0, 255, frame_shape, np.uint8)
        self._setup_buffers(frame_shape, dtype, stack_size)
        if stack_size is not None:
            single = batch_space(single, stack_size)
        self.single_observation_space = single
        self.observation_space = batch_space(single, n)
        self.single_action_space = spaces.Discrete(len(self._action_set))
        self.action_space = batch_space(self.single_action_space, n)

    def _setup_buffers(self, frame_shape: tuple[int, ...], dtype: type[np.generic], stack_size: int | None) -> None:
        """Host buffers: AtariPreprocessing's two screens and its observation pipeline, the frame stack."""
        n = self.num_envs
        h, w = self.batch.screen_shape
        if self._preprocess:
            gray = bool(self._pp["grayscale_obs"])
            width, height = self._pp_size
            raw_shape: tuple[int, ...] = (h, w) if gray else (h, w, 3)
            self._buf0 = np.zeros((n, *raw_shape), dtype=np.uint8)
            self._buf1 = np.zeros_like(self._buf0)
            self._pp_lives = np.zeros(n, dtype=np.int32)
            self._observation = CpuObservation(n, (h, w), (height, width), 1 if gray else 3,
                                               num_threads=self._num_threads)
            # The screen AtariPreprocessing reads at a reset, written natively in place each time.
            self._pp_scratch = np.empty((n, *raw_shape), dtype=np.uint8)
        self._stack = (FrameStack(n, stack_size, frame_shape, dtype)
                       if stack_size is not None else None)
        # Raw screens that go into a frame stack are written natively into one preallocated frame;
        # without a stack each observation is a new array the caller owns (written once, never copied).
        self._frame_buf = (np.empty((n, *frame_shape), dtype=np.uint8)
                           if stack_size is not None and not self._preprocess and self._obs_type != "ram" else None)

    # ----------------------------------------------------------------------------- frames
    def _tensor(self, array: npt.NDArray[Any]) -> torch.Tensor:
        return torch.from_numpy(np.ascontiguousarray(array)).to(self.device)

    def _raw_obs(self) -> npt.NDArray[np.uint8]:
        """Return the ALE observation of every env (native screens, into ``_frame_buf`` when a stack follows)."""
        if self._obs_type == "rgb":
            return self.batch.get_screen_rgb(out=self._frame_buf)
        if self._obs_type == "grayscale":
            return self.batch.get_screen_grayscale(out=self._frame_buf)
        return self.batch.get_ram()

    def _pp_screen(self) -> npt.NDArray[np.uint8]:
        """Return AtariPreprocessing's screen of every env, in a scratch buffer the next call overwrites."""
        if self._pp["grayscale_obs"]:
            return self.batch.get_screen_grayscale(out=self._pp_scratch)
        return self.batch.get_screen_rgb(out=self._pp_scratch)

    def _env_step(self, actions: npt.NDArray[np.int64], mask: npt.NDArray[np.bool_]
                  ) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.bool_], npt.NDArray[np.bool_]]:
        """``AtariEnv.step`` on the envs in ``mask``: reward, terminated, truncated (host arrays)."""
        reward = np.zeros(self.num_envs, dtype=np.float64)
        if isinstance(self._frameskip, tuple):
            low, high = self._frameskip
            skips = np.array(
                [int(g.integers(low, high)) if m else 0 for g, m in zip(self._env_rngs, mask, strict=True)]
            )
            for t in range(int(skips.max(initial=0))):
                reward += self.batch.act(actions, mask=mask & (t < skips))
        else:
            for _ in range(self._inner_loops):
                reward += self.batch.act(actions, mask=mask)
        return reward, self.batch.game_over(with_truncation=False), self.batch.game_truncated()

    # ----------------------------------------------------------------------------- reset
    def _reseed(self, mask: npt.NDArray[np.bool_], seeds: list[int | None]) -> npt.NDArray[np.bool_]:
        """Apply gymnasium's seeding to the seeded envs in ``mask``; returns the mask of reloaded envs."""
        batch = self._seeded_batch()
        reload = np.zeros(self.num_envs, dtype=np.bool_)
        ale_seeds = batch.seeds.copy()
        for i in np.flatnonzero(mask):
            if seeds[i] is None:
                continue
            np_seed, ale_seed = np.random.SeedSequence(seeds[i]).generate_state(2)
            self._seeded_with[i] = (np_seed, ale_seed)
            self._env_rngs[i] = seeding.np_random(int(np_seed))[0]
            ale_seeds[i] = ale_seed
            reload[i] = True
        if reload.any():
            batch.load_rom(reload, ale_seeds)
        return reload

    def _seeded_batch(self) -> Any:
        """Return the batch whose ROMs ``_reseed`` reloads (the device batch in ``gpu_env.cuda.vec``)."""
        return self.batch

    def _base_reset(self, mask: npt.NDArray[np.bool_], seeds: list[int | None]) -> None:
        """``AtariEnv.reset(seed)``: reload where seeded, then ``reset_game``."""
        self._reseed(mask, seeds)
        self.batch.reset_game(mask)

    def _draw_noops(self, mask: npt.NDArray[np.bool_]) -> npt.NDArray[np.int32]:
        """AtariPreprocessing.reset's no-op counts (1..noop_max from each env's np_random) for the envs in ``mask``."""
        noop_max = int(self._pp["noop_max"])
        noops = np.zeros(self.num_envs, dtype=np.int32)
        if noop_max > 0:
            for i in np.flatnonzero(mask):
                noops[i] = int(self._env_rngs[i].integers(1, noop_max + 1))
        return noops

    def _reset_envs(self, mask: npt.NDArray[np.bool_], seeds: list[int | None]) -> None:
        """``reset`` of the envs in ``mask``, as loops of batch calls.

        An unseeded autoreset under preprocessing with one act per frame runs inside the step instead
        (:meth:`_preprocessed_step`).
        """
        if self._preprocess:
            buf0, buf1 = self._buffers()
            noop_actions = np.full(self.num_envs, self._action_set[0], dtype=np.int64)
            reset_loop(lambda m: self._base_reset(m, seeds), lambda m: self._env_step(noop_actions, m),
                       self.batch.lives, self._pp_screen, mask, self._draw_noops, self._pp_lives, buf0, buf1)
        else:
            self._base_reset(mask, seeds)
        self._start_episode_stats(mask)

    def _start_episode_stats(self, mask: npt.NDArray[np.bool_]) -> None:
        """Start the episode statistics of the envs in ``mask`` (just reset)."""
        self._ep_return[mask] = 0.0
        self._ep_length[mask] = 0
        self._ep_start[mask] = time.perf_counter()
        self._autoreset[mask] = False

    def reset(self, *, seed: int | list[int | None] | None = None, options: dict[str, Any] | None = None
              ) -> tuple[Any, dict[str, Any]]:
        """Reset all envs (or ``options["reset_mask"]``); ``seed`` as gymnasium's sync vector env takes it.

        The info holds the reset envs' ``AtariEnv`` info (masks: the reset envs), as gymnasium's.
        """
        mask = np.ones(self.num_envs, dtype=np.bool_)
        if options is not None and "reset_mask" in options:
            mask = np.asarray(options["reset_mask"])
            if mask.dtype != np.bool_ or mask.shape != (self.num_envs,) or not mask.any():
                raise GpuEnvError(f"options['reset_mask'] must be a bool[{self.num_envs}] array with a True entry")
        seeds = self._seed_list(seed)
        self._seeded_with = [None] * self.num_envs
        self._reset_envs(mask, seeds)
        obs = self._observe(mask, reset=mask)
        info = self._batched(self._env_info(), mask)
        self._add_seeds_info(info, mask, seeds)
        return self._out_obs(obs), info

    def _seed_list(self, seed: int | list[int | None] | None) -> list[int | None]:
        """One seed (or None) per env from ``reset``'s ``seed``, as gymnasium's sync vector env spreads it."""
        if seed is None:
            return [None] * self.num_envs
        if isinstance(seed, int):
            return [seed + i for i in range(self.num_envs)]
        seeds = list(seed)
        if len(seeds) != self.num_envs:
            raise GpuEnvError(f"got {len(seeds)} seeds for {self.num_envs} environments")
        return seeds

    def _add_seeds_info(self, info: dict[str, Any], mask: npt.NDArray[np.bool_], seeds: list[int | None]) -> None:
        """Add gymnasium's ``info["seeds"]`` / ``info["_seeds"]`` for the envs just reset with a seed."""
        seeded = np.array([mask[i] and seeds[i] is not None for i in range(self.num_envs)])
        if seeded.any():
            # AtariEnv.reset(seed) reports (np_seed, ale_seed); gymnasium batches it as an object array.
            seeds_info = np.empty(self.num_envs, dtype=object)
            for i, pair in enumerate(self._seeded_with):
                seeds_info[i] = pair
            info["seeds"] = seeds_info
            info["_seeds"] = self._out(seeded)

    # ----------------------------------------------------------------------------- step
    def step(self, actions: Any) -> tuple[Any, Any, Any, Any, dict[str, Any]]:
        """One vector step (autoreset as ``metadata["autoreset_mode"]``); ``actions``: int[N] action indices.

        Returns ``(obs, rewards, terminated, truncated, info)`` as gymnasium's sync vector env over
        ``RecordEpisodeStatistics`` (see the module docstring for ``info``).
        """
        a = actions.detach().cpu().numpy() if isinstance(actions, torch.Tensor) else np.asarray(actions)
        if a.shape != (self.num_envs,) or a.dtype.kind not in "iu":
            raise GpuEnvError(f"actions must be int[{self.num_envs}], got dtype {a.dtype} and shape {a.shape}")
        if (a < 0).any() or (a >= len(self._action_set)).any():
            raise GpuEnvError(f"actions must be in [0, {len(self._action_set)}), got {a!r}")
        ale_actions = self._action_set[a]
        mode = self._autoreset_mode
        if mode == AutoresetMode.DISABLED and self._autoreset.any():
            ended = np.flatnonzero(self._autoreset).tolist()
            raise GpuEnvError(
                f"envs {ended} ended and autoreset_mode is DISABLED: reset them first with "
                "reset(options={'reset_mask': mask}) before the next step"
            )
        resetting = self._autoreset.copy() if mode == AutoresetMode.NEXT_STEP else np.zeros(self.num_envs, np.bool_)
        stepping = ~resetting
        frame: npt.NDArray[np.uint8] | None = None
        stacked = False
        if self._preprocess and self._one_act_per_frame:
            reward, term, trunc, frame, stacked = self._preprocessed_step(ale_actions, stepping, resetting)
        elif self._preprocess:  # several acts per frame (a stochastic or inner frame skip): the loop of env steps
            buf0, buf1 = self._buffers()
            total, term, trunc = step_loop(
                lambda m: self._env_step(ale_actions, m), self.batch.lives, self._pp_screen, stepping,
                int(self._pp["frame_skip"]), bool(self._pp["terminal_on_life_loss"]), self._pp_lives, buf0, buf1)
            reward = total.astype(np.float64)
        else:
            reward, term, trunc = self._env_step(ale_actions, stepping)
        reward[resetting] = 0.0
        term[resetting] = False
        trunc[resetting] = False
        if resetting.any() and frame is None:
            self._reset_envs(resetting, [None] * self.num_envs)
        everyone = np.ones(self.num_envs, dtype=np.bool_)
        if stacked and frame is not None:  # the step pushed the frame stack itself: `frame` is its copy
            obs = torch.from_numpy(frame).to(self.device)
        else:
            obs = self._observe(everyone, reset=resetting, frame=frame)
        self._ep_return[stepping] += reward[stepping]
        self._ep_length[stepping] += 1
        done = term | trunc
        if mode == AutoresetMode.SAME_STEP and done.any():
            # As gymnasium's SAME_STEP: the ended envs' last observation and info (with "episode") go
            # under "final_obs" / "final_info"; the returned observation and info are the reset ones.
            final_info = self._batched(self._env_info(), done)
            final_info.update(self._episode_entry(done))
            info: dict[str, Any] = {"final_obs": self._final_obs(obs, done), "_final_obs": self._out(done),
                                    "final_info": final_info, "_final_info": self._out(done)}
            self._reset_envs(done, [None] * self.num_envs)
            obs = self._observe(done, reset=done)
            info.update(self._batched(self._env_info(), everyone))
        else:
            info = self._batched(self._env_info(), everyone)
            if done.any():
                info.update(self._episode_entry(done))
        self._autoreset = done if mode != AutoresetMode.SAME_STEP else np.zeros(self.num_envs, dtype=np.bool_)
        if self.obs_format == "numpy":
            return self._out_obs(obs), reward, term, trunc, info
        return (obs, torch.from_numpy(reward.astype(np.float32)).to(self.device),
                torch.from_numpy(term).to(self.device), torch.from_numpy(trunc).to(self.device), info)

    def _final_obs(self, obs: Any, done: npt.NDArray[np.bool_]) -> Any:
        """``info["final_obs"]``: gymnasium's object array (numpy), or one tensor with zeros where not ``done``."""
        if self.obs_format == "numpy":
            host = self._out_obs(obs)
            final = np.full(self.num_envs, None, dtype=object)
            for i in np.flatnonzero(done):
                final[i] = host[i].copy()
            return final
        return torch.where(self._expand(done, obs), obs, torch.zeros_like(obs))

    def _expand(self, mask: npt.NDArray[np.bool_], like: torch.Tensor) -> torch.Tensor:
        """``mask`` (bool[N]) as a tensor broadcastable against ``like`` ([N, ...])."""
        return torch.from_numpy(mask).to(like.device).view(-1, *([1] * (like.dim() - 1)))

    @property
    def _one_act_per_frame(self) -> bool:
        """Whether each of AtariPreprocessing's frames is one ``act`` (no inner loop, no stochastic frame skip)."""
        return self._inner_loops == 1 and not isinstance(self._frameskip, tuple)

    def _preprocessed_step(self, actions: npt.NDArray[np.int64], mask: npt.NDArray[np.bool_],
                           resetting: npt.NDArray[np.bool_]
                           ) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.bool_], npt.NDArray[np.bool_],
                                      npt.NDArray[np.uint8], bool]:
        """One batch call (one act per frame): ``AtariPreprocessing.step`` of the envs in ``mask``.

        Also the unseeded ``reset`` of the envs in ``resetting``, and every env's new observation
        (max-pool, resize). With a uint8 frame stack (no ``scale_obs``) the same call pushes the new
        observations onto it (refills it for ``resetting``) and the last value is True: the observation
        returned is then a copy of the stack.
        """
        buf0, buf1 = self._buffers()
        stack = self._stack.obs if self._stack is not None and not self._pp["scale_obs"] else None
        rewards, term, trunc, frame = self.batch.step_preprocessed(
            actions, mask, int(self._pp["frame_skip"]), bool(self._pp["terminal_on_life_loss"]), self._pp_lives,
            bool(self._pp["grayscale_obs"]), buf0, buf1, reset=resetting, noops=self._draw_noops(resetting),
            observation=self._observation, stack=stack)
        if frame is None:
            raise GpuEnvError("internal: step_preprocessed returned no observation")
        self._start_episode_stats(resetting)
        return rewards.astype(np.float64), term, trunc, frame, stack is not None

    def _buffers(self) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.uint8]]:
        """AtariPreprocessing's two screen buffers (only with preprocessing)."""
        if self._buf0 is None or self._buf1 is None:
            raise GpuEnvError("internal: the preprocessing buffers exist only when preprocessing is on")
        return self._buf0, self._buf1

    def _observe(self, mask: npt.NDArray[np.bool_], reset: npt.NDArray[np.bool_],
                 frame: npt.NDArray[Any] | None = None) -> torch.Tensor:
        """Return every env's observation; frame stacks are pushed (``mask``) or refilled (``reset``).

        ``frame``: the preprocessed observations when the step already computed them (max-pool, resize).
        """
        if self._preprocess:
            if frame is None:
                buf0, buf1 = self._buffers()
                frame = self._observation(buf0, buf1 if self._pp["frame_skip"] > 1 else None, mask)
            if self._pp["scale_obs"]:
                frame = np.asarray(frame, dtype=np.float32) / 255.0
            if self._pp["grayscale_obs"] and self._pp["grayscale_newaxis"]:
                frame = frame[..., None]
        else:
            frame = self._raw_obs()
        if self._stack is not None:
            self._stack.push(frame, mask & ~reset)
            self._stack.reset(frame, reset)
            frame = np.array(self._stack.obs, copy=True)  # the stack lives on; the caller gets its own copy
        # Otherwise `frame` is already a new array (native screens, the resize's output): no copy.
        return torch.from_numpy(np.ascontiguousarray(frame)).to(self.device)

    # ----------------------------------------------------------------------------- info
    def _out(self, array: npt.NDArray[Any]) -> Any:
        """Return a host array as ``obs_format`` wants it: itself (numpy) or a tensor on ``device`` (torch)."""
        if self.obs_format == "numpy":
            return array
        return self._tensor(array)

    def _out_obs(self, obs: Any) -> Any:
        """Return an observation batch as ``obs_format`` wants it (``_observe`` may give a tensor or an array)."""
        if self.obs_format == "numpy":
            return obs.numpy() if isinstance(obs, torch.Tensor) else np.asarray(obs)
        return obs if isinstance(obs, torch.Tensor) else self._tensor(obs)

    def _batched(self, values: Mapping[str, Any], mask: npt.NDArray[np.bool_]) -> dict[str, Any]:
        """Batch per-env ``values`` given by the envs in ``mask`` as gymnasium does: ``key``, ``_key`` pairs.

        Values of envs outside ``mask`` are 0; a nested dict is batched the same way (``VectorEnv._add_info``).
        """
        out: dict[str, Any] = {}
        for key, value in values.items():
            if isinstance(value, Mapping):
                out[key] = self._batched(value, mask)
            else:
                out[key] = self._out(value if mask.all() else np.where(mask, value, np.zeros_like(value)))
            out[f"_{key}"] = self._out(mask.copy())
        return out

    def _env_info(self) -> dict[str, npt.NDArray[Any]]:
        """``AtariEnv``'s info of every env: ``lives``, ``episode_frame_number``, ``frame_number``.

        int64 (gymnasium's batch of Python ints) with ``obs_format="numpy"``, int32 tensors with ``"torch"``.
        """
        info = {"lives": self.batch.lives(), "episode_frame_number": self.batch.episode_frame_number(),
                "frame_number": self.batch.frame_number()}
        if self.obs_format == "numpy":
            return {k: np.asarray(v, dtype=np.int64) for k, v in info.items()}
        return info

    def _episode_entry(self, done: npt.NDArray[np.bool_]) -> dict[str, Any]:
        """``RecordEpisodeStatistics``' ``episode`` / ``_episode`` for the envs whose episode ended (``done``).

        ``r``: float64 return, ``l``: int64 length in steps of this env, ``t``: float64 seconds (rounded to
        µs), each with its ``_r``/``_l``/``_t`` mask; with ``obs_format="torch"`` also ``frames`` (ALE's
        episode frame number at the end, gpu_env's addition).
        """
        values: dict[str, npt.NDArray[Any]] = {
            "r": self._ep_return.copy(), "l": self._ep_length.copy(),
            "t": np.round(time.perf_counter() - self._ep_start, 6),
        }
        if self.obs_format == "torch":
            values["frames"] = np.asarray(self.batch.episode_frame_number())
        return {"episode": self._batched(values, done), "_episode": self._out(done.copy())}

    # ----------------------------------------------------------------------------- render
    def render(self) -> tuple[npt.NDArray[np.uint8], ...]:
        """Every env's current screen, uint8[210, 160, 3] each, as ``SyncVectorEnv.render`` of ``AtariEnv``s."""
        if self.render_mode != "rgb_array":
            raise GpuEnvError("render() needs an env made with render_mode='rgb_array'")
        screens = np.array(self.batch.get_screen_rgb(), copy=True)
        return tuple(screens[i] for i in range(self.num_envs))

    def close_extras(self, **kwargs: Any) -> None:
        """Nothing to release: the batch frees its memory when collected."""
