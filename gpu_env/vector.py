""":class:`AtariVecEnv`: the gymnasium ``VectorEnv`` of ``gpu_env.make_vec``, on every backend.

``gpu_env.make_vec(env_id, n, backend, **kwargs)`` (:mod:`gpu_env.make`) returns it; it behaves as
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

``obs_format`` picks the type of everything ``reset`` and ``step`` return. ``"numpy"`` (the default)
returns exactly gymnasium's types: numpy observations, float64 rewards, bool flags, int64/float64 info
arrays, ``final_obs`` as an object array. ``"torch"`` (asked for explicitly; the only one of backend
``"cuda"``, whose frames stay on the device) returns torch tensors on ``device`` (default: the backend's
device): observations (uint8, or float32 with ``scale_obs``), rewards float32[N], flags bool[N], info
int32[N] (``lives``, frame numbers), ``episode`` with an extra ``frames`` (ALE's episode frame number at
the end), and ``final_obs`` as one tensor ``[N, *single_observation_shape]`` (zeros where the mask is
false) for batched code.
``render_mode="rgb_array"`` makes ``render()`` return each env's RGB screen, as ``SyncVectorEnv``
does, so ``gymnasium.wrappers.vector.RecordVideo`` records. ``num_threads`` defaults to
:func:`default_num_threads` (the cores this process may run on); on ``"cpu"`` it counts the calling thread,
which runs requests too while it waits (the pool starts ``num_threads - 1`` workers; 1: all in the caller).

The env checks the options (:class:`VecOptions`), builds the spaces, seeds the per-env generators,
batches the infos and keeps the episode statistics (:class:`EpisodeStats`); an engine steps the
emulators: on ``"cpu"`` the native thread pool (:mod:`gpu_env.backends.pool_vec` over
:mod:`gpu_env.backends.native_pool`: every env's AtariEnv, AtariPreprocessing and frame stack in the pool's
worker threads), on ``"cuda"`` the device engine (:mod:`gpu_env.backends.cuda.vec`, imported only then;
its options ``cuda_device``, ``block_size``, ``noop_table_depth`` are refused elsewhere; what differs on
the device is listed there). Backend ``"ale_py"`` is refused: its reference is gymnasium's own
``gymnasium.make_vec(env_id, n, vectorization_mode="sync", ...)`` over ale-py.
"""


from __future__ import annotations

import enum
import os
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt
import torch
from gymnasium import spaces
from gymnasium.utils import seeding
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from gpu_env.atari_batch import ACTION_NAMES
from gpu_env.autoreset import autoreset_mode as parse_autoreset_mode
from gpu_env.autoreset import checked_actions, final_obs_array, refuse_ended
from gpu_env.backends.options import VecOptions
from gpu_env.backends.pool_vec import PoolEngine
from gpu_env.env_ids import EnvIdSettings, check_frameskip, env_id_settings, rom_id_from_env_id
from gpu_env.episode_stats import EpisodeStats, Mask, where
from gpu_env.errors import GpuEnvError

if TYPE_CHECKING:
    from gpu_env.backends.cuda.vec import CudaEngine

__all__ = ["OBS_FORMATS", "AtariVecEnv", "EnvIdSettings", "EpisodeStats", "VecOptions", "default_num_threads",
           "env_id_settings", "rom_id_from_env_id"]

_PREPROCESSING_DEFAULTS: dict[str, Any] = {
    "noop_max": 30, "frame_skip": 4, "screen_size": 84, "terminal_on_life_loss": False,
    "grayscale_obs": True, "grayscale_newaxis": False, "scale_obs": False,
}
_CUDA_DEFAULTS: dict[str, int] = {"cuda_device": 0, "block_size": 128, "noop_table_depth": 64}
OBS_FORMATS = ("torch", "numpy")



def spread_seeds(seed: int | list[int | None] | None, num_envs: int) -> list[int | None]:
    """One seed (or None) per env from ``reset``'s ``seed``, as gymnasium's sync vector env spreads it."""
    if seed is None:
        return [None] * num_envs
    if isinstance(seed, int):
        return [seed + i for i in range(num_envs)]
    seeds = list(seed)
    if len(seeds) != num_envs:
        raise GpuEnvError(f"got {len(seeds)} seeds for {num_envs} environments: pass one per env")
    return seeds

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
        obs_format: str = "numpy",
        render_mode: str | None = None,
        cuda_device: int | None = None,
        block_size: int | None = None,
        noop_table_depth: int | None = None,
    ) -> None:
        id_settings = env_id_settings(env_id)
        given_env: dict[str, Any] = {"frameskip": frameskip, "repeat_action_probability": repeat_action_probability,
                     "full_action_space": full_action_space, "mode": mode, "difficulty": difficulty,
                     "obs_type": obs_type}
        env: dict[str, Any] = {k: (v if v is not None else id_settings.settings[k]) for k, v in given_env.items()}
        frameskip, obs_type = env["frameskip"], str(env["obs_type"])
        max_frames: int | None = (id_settings.settings["max_num_frames_per_episode"]
                                  if isinstance(max_num_frames_per_episode, _Unset) else max_num_frames_per_episode)
        cuda = {"cuda_device": cuda_device, "block_size": block_size, "noop_table_depth": noop_table_depth}
        self._check_output_options(backend, cuda, obs_format, render_mode, device, num_threads)
        self.obs_format = obs_format
        self.render_mode = render_mode
        self._autoreset_mode = parse_autoreset_mode(autoreset_mode)
        if obs_type not in ("rgb", "grayscale", "ram"):
            raise GpuEnvError(f"obs_type={obs_type!r}: use 'rgb', 'grayscale' or 'ram'")
        check_frameskip(frameskip)
        self.env_id = env_id
        self.rom_id = id_settings.rom_id
        self.num_envs = num_envs
        given: dict[str, Any] = {"noop_max": noop_max, "frame_skip": frame_skip, "screen_size": screen_size,
                 "terminal_on_life_loss": terminal_on_life_loss, "grayscale_obs": grayscale_obs,
                 "grayscale_newaxis": grayscale_newaxis, "scale_obs": scale_obs}
        preprocess = any(v is not None for v in given.values())
        pp = {k: (v if v is not None else _PREPROCESSING_DEFAULTS[k]) for k, v in given.items()}
        pp_size = self._check_preprocessing(pp, frameskip, obs_type) if preprocess else (0, 0)
        batch_frameskip = frameskip if isinstance(frameskip, int) and not preprocess else 1
        self._opts = VecOptions(
            num_envs=num_envs, rom_id=self.rom_id, obs_type=obs_type, frameskip=frameskip,
            batch_frameskip=batch_frameskip,
            inner_loops=1 if batch_frameskip == frameskip or isinstance(frameskip, tuple) else int(frameskip),
            repeat_action_probability=float(env["repeat_action_probability"]), max_frames=max_frames or 0,
            num_threads=num_threads if num_threads is not None else default_num_threads(), preprocess=preprocess,
            pp=pp, pp_size=pp_size, stack_size=stack_size, device=torch.device(device) if device is not None else None,
            cuda={k: int(v if v is not None else _CUDA_DEFAULTS[k]) for k, v in cuda.items()})
        self._env_rngs = [seeding.np_random(int(s))[0] for s in np.random.SeedSequence().generate_state(num_envs)]
        self._engine = self._make_engine(backend)
        self.batch = self._engine.batch
        if env["mode"] is not None:
            self.batch.set_mode(int(env["mode"]))
        if env["difficulty"] is not None:
            self.batch.set_difficulty(int(env["difficulty"]))
        self._action_set = (np.arange(len(ACTION_NAMES), dtype=np.int64) if env["full_action_space"]
                            else self.batch.minimal_action_set())
        self._setup_spaces()
        self.device = self._engine.device
        self._ended: Mask = ~self._engine.everyone()
        self._stats = EpisodeStats(num_envs, self.device if self._engine.on_device else None)
        self._seeded_with: list[tuple[np.uint32, np.uint32] | None] = [None] * num_envs
        self.metadata = {"autoreset_mode": self._autoreset_mode, "render_modes": ["rgb_array"],
                         "render_fps": _render_fps()}

    # ----------------------------------------------------------------------------- setup
    @staticmethod
    def _check_output_options(backend: str, cuda: dict[str, int | None], obs_format: str, render_mode: str | None,
                              device: str | torch.device | None, num_threads: int | None) -> None:
        if backend not in ("cpu", "cuda"):
            raise GpuEnvError(f"backend={backend!r}: make_vec runs on the native pool of backend 'cpu' or on "
                              "'cuda'; for ale-py itself use gymnasium.make_vec(env_id, n, "
                              "vectorization_mode='sync', ...)")
        if backend != "cuda":
            if any(v is not None for v in cuda.values()):
                named = ", ".join(f"{k}={v!r}" for k, v in cuda.items() if v is not None)
                raise GpuEnvError(f"{named}: options of backend='cuda'; backend={backend!r} has no use for them")
            if obs_format == "numpy" and device is not None and torch.device(device).type != "cpu":
                raise GpuEnvError(f"obs_format='numpy' returns host arrays: drop device={device!r}, or use "
                                  "obs_format='torch'")
        elif obs_format != "torch" or render_mode is not None:
            raise GpuEnvError(f"backend='cuda' returns CUDA tensors and does not render: pass obs_format='torch' "
                              f"(got {obs_format!r}) and render_mode=None, or use backend='cpu'")
        if obs_format not in OBS_FORMATS:
            raise GpuEnvError(f"obs_format={obs_format!r}: use 'torch' (tensors on device) or 'numpy' (numpy arrays)")
        if render_mode not in (None, "rgb_array"):
            raise GpuEnvError(f"render_mode={render_mode!r}: gpu_env renders 'rgb_array' only (or None)")
        if num_threads is not None and (not isinstance(num_threads, int) or num_threads <= 0):
            raise GpuEnvError(f"num_threads={num_threads!r} must be a positive int, or None for default_num_threads()")

    @staticmethod
    def _check_preprocessing(pp: dict[str, Any], frameskip: int | tuple[int, int], obs_type: str) -> tuple[int, int]:
        """Check AtariPreprocessing's options; return its (width, height)."""
        if pp["frame_skip"] <= 0:
            raise GpuEnvError(f"frame_skip={pp['frame_skip']} must be positive")
        if pp["frame_skip"] > 1 and frameskip != 1:
            raise GpuEnvError(f"frame_skip={pp['frame_skip']} with frameskip={frameskip}: disable the env's frame "
                              "skipping (frameskip=1) when AtariPreprocessing skips frames, as gymnasium requires")
        if pp["noop_max"] < 0:
            raise GpuEnvError(f"noop_max={pp['noop_max']} must be >= 0")
        if obs_type == "ram":
            raise GpuEnvError("AtariPreprocessing options need screen observations: use obs_type='rgb' or 'grayscale'")
        size = (pp["screen_size"],) * 2 if isinstance(pp["screen_size"], int) else pp["screen_size"]
        if len(size) != 2 or min(size) <= 0:
            raise GpuEnvError(f"screen_size={pp['screen_size']} must be a positive int or (width, height)")
        return int(size[0]), int(size[1])

    def _make_engine(self, backend: str) -> PoolEngine | CudaEngine:
        """Build the engine of ``backend``: the native pool's, or for ``"cuda"`` the device's (imported only then)."""
        if backend != "cuda":
            return PoolEngine(self._opts, self._env_rngs)
        from gpu_env.backends.cuda.vec import CudaEngine

        return CudaEngine(self._opts, self._env_rngs)

    def _setup_spaces(self) -> None:
        o = self._opts
        if o.preprocess:
            gray = bool(o.pp["grayscale_obs"])
            width, height = o.pp_size
            frame_shape: tuple[int, ...] = (height, width) if gray else (height, width, 3)
            if gray and o.pp["grayscale_newaxis"]:
                frame_shape = (*frame_shape, 1)
            dtype: type[np.generic] = np.float32 if o.pp["scale_obs"] else np.uint8
            single: spaces.Space[Any] = (spaces.Box(0.0, 1.0, frame_shape, np.float32) if o.pp["scale_obs"]
                                         else spaces.Box(0, 255, frame_shape, np.uint8))
        else:
            h, w = self.batch.screen_shape
            frame_shape = {"rgb": (h, w, 3), "grayscale": (h, w), "ram": (128,)}[o.obs_type]
            dtype = np.uint8
            single = spaces.Box(0, 255, frame_shape, np.uint8)
        self._engine.allocate(frame_shape, dtype, self._action_set)
        if o.stack_size is not None:
            single = batch_space(single, o.stack_size)
        self.single_observation_space = single
        self.observation_space = batch_space(single, self.num_envs)
        self.single_action_space = spaces.Discrete(len(self._action_set))
        self.action_space = batch_space(self.single_action_space, self.num_envs)

    def memory_bytes_per_env(self) -> int:
        """Device bytes per env of backend ``"cuda"`` (batch, preprocessing, stack, no-op table, step outputs)."""
        return self._engine.memory_bytes_per_env()

    # ----------------------------------------------------------------------------- reset
    def _reseed(self, mask: npt.NDArray[np.bool_], seeds: list[int | None]) -> npt.NDArray[np.bool_]:
        """Apply gymnasium's seeding to the seeded envs in ``mask``; returns the mask of reloaded envs."""
        reload = np.zeros(self.num_envs, dtype=np.bool_)
        ale_seeds = self.batch.seeds.copy()
        for i in np.flatnonzero(mask):
            if seeds[i] is None:
                continue
            np_seed, ale_seed = np.random.SeedSequence(seeds[i]).generate_state(2)
            self._seeded_with[i] = (np_seed, ale_seed)
            self._env_rngs[i] = seeding.np_random(int(np_seed))[0]
            ale_seeds[i] = ale_seed
            reload[i] = True
        if reload.any():
            self._engine.load_rom(reload, ale_seeds)
        return reload

    def reset(self, *, seed: int | list[int | None] | None = None, options: dict[str, Any] | None = None
              ) -> tuple[Any, dict[str, Any]]:
        """Reset all envs (or ``options["reset_mask"]``, bool[N]); ``seed`` as gymnasium's sync vector env takes it.

        The info holds the reset envs' ``AtariEnv`` info (masks: the reset envs), as gymnasium's.
        """
        mask = np.ones(self.num_envs, dtype=np.bool_)
        if options is not None and "reset_mask" in options:
            given = options["reset_mask"]
            mask = given.detach().cpu().numpy() if isinstance(given, torch.Tensor) else np.asarray(given)
            if mask.dtype != np.bool_ or mask.shape != (self.num_envs,) or not mask.any():
                raise GpuEnvError(f"options['reset_mask'] must be a bool[{self.num_envs}] array with a True entry")
        seeds = spread_seeds(seed, self.num_envs)
        self._seeded_with = [None] * self.num_envs
        obs = self._engine.reset(mask, lambda m: self._reseed(m, seeds))
        reset = self._engine.mask(mask)
        self._stats.start(reset, time.perf_counter())
        self._ended = self._ended & ~reset
        info = self._batched(self._env_info(), reset, all_true=bool(mask.all()))
        self._add_seeds_info(info, mask, seeds)
        return self._out(obs), info

    def _add_seeds_info(self, info: dict[str, Any], mask: npt.NDArray[np.bool_], seeds: list[int | None]) -> None:
        """Add gymnasium's ``info["seeds"]`` / ``info["_seeds"]`` for the envs just reset with a seed."""
        seeded = np.array([mask[i] and seeds[i] is not None for i in range(self.num_envs)])
        if seeded.any():
            # AtariEnv.reset(seed) reports (np_seed, ale_seed); gymnasium batches it as an object array.
            info["seeds"] = np.fromiter(self._seeded_with, dtype=object, count=self.num_envs)
            info["_seeds"] = self._out(seeded)

    # ----------------------------------------------------------------------------- step
    def step(self, actions: Any) -> tuple[Any, Any, Any, Any, dict[str, Any]]:
        """One vector step (autoreset as ``metadata["autoreset_mode"]``); ``actions``: int[N] action indices.

        Returns ``(obs, rewards, terminated, truncated, info)`` as gymnasium's sync vector env over
        ``RecordEpisodeStatistics`` (see the module docstring for ``info``).
        """
        engine, mode = self._engine, self._autoreset_mode
        on_device = engine.on_device
        a = actions
        if not (on_device and isinstance(actions, torch.Tensor)):  # a device tensor is read where it is
            host = actions.detach().cpu().numpy() if isinstance(actions, torch.Tensor) else actions
            a = checked_actions(host, self.num_envs, len(self._action_set))
        engine_actions = engine.actions(a)
        if not on_device:
            refuse_ended(mode, self._ended)
        resetting = self._ended if mode == AutoresetMode.NEXT_STEP else None
        obs, reward, term, trunc = engine.step(engine_actions, resetting)
        now = time.perf_counter()
        if resetting is not None:
            self._stats.start(resetting, now)
        everyone = engine.everyone()
        self._stats.add(reward, ~resetting if resetting is not None else everyone)
        done: Mask = term | trunc
        values = self._env_info()
        if mode == AutoresetMode.SAME_STEP and (on_device or done.any()):
            # As gymnasium's SAME_STEP: the ended envs' last observation and info (with "episode") go
            # under "final_obs" / "final_info"; the returned observation and info are the reset ones.
            final_info = {**self._batched(values, done), **self._episode_entry(done, now, values)}
            info: dict[str, Any] = {"final_obs": self._final_obs(obs, done), "_final_obs": self._out_mask(done),
                                    "final_info": final_info, "_final_info": self._out_mask(done)}
            obs = engine.reset_ended(done, obs)
            self._stats.start(done, now)
            info.update(self._batched(self._env_info(), everyone, all_true=True))
        else:
            info = self._batched(values, everyone, all_true=True)
            if on_device or done.any():  # the device env reports "episode" on every step: no host read
                info.update(self._episode_entry(done, now, values))
        self._ended = done if mode != AutoresetMode.SAME_STEP else ~everyone
        if self.obs_format == "numpy":
            return self._out(obs), reward, term, trunc, info
        return self._out(obs), self._out(reward).float(), self._out(term), self._out(trunc), info

    def _final_obs(self, obs: torch.Tensor, done: Mask) -> Any:
        """``info["final_obs"]``: gymnasium's object array (numpy), or one tensor with zeros where not ``done``."""
        if self.obs_format == "numpy":
            return final_obs_array(self._out(obs), done)
        expanded = torch.as_tensor(done, device=obs.device).view(-1, *([1] * (obs.dim() - 1)))
        return torch.where(expanded, obs, torch.zeros_like(obs))

    # ----------------------------------------------------------------------------- info
    def _out(self, array: Any) -> Any:
        """Return a host array or a tensor as ``obs_format`` wants it: a numpy array, or a tensor on ``device``."""
        if self.obs_format == "numpy":
            return array.numpy() if isinstance(array, torch.Tensor) else array
        if isinstance(array, torch.Tensor):
            return array
        return torch.from_numpy(np.ascontiguousarray(array)).to(self.device)

    def _out_mask(self, mask: Mask) -> Any:
        """Return a ``_key`` mask of an info, the caller's own (host masks are copied)."""
        return self._out(mask.copy() if isinstance(mask, np.ndarray) else mask)

    def _batched(self, values: Mapping[str, Any], mask: Mask, *, all_true: bool = False) -> dict[str, Any]:
        """Batch per-env ``values`` given by the envs in ``mask`` as gymnasium does: ``key``, ``_key`` pairs.

        Values of envs outside ``mask`` are 0 (``all_true``: ``mask`` is every env, the values are kept);
        a nested dict is batched the same way (``VectorEnv._add_info``).
        """
        out: dict[str, Any] = {}
        for key, value in values.items():
            if isinstance(value, Mapping):
                out[key] = self._batched(value, mask, all_true=all_true)
            else:
                out[key] = self._out(value if all_true else where(mask, value, 0))
            out[f"_{key}"] = self._out_mask(mask)
        return out

    def _env_info(self) -> dict[str, Any]:
        """``AtariEnv``'s info of every env: ``lives``, ``episode_frame_number``, ``frame_number``.

        int64 (gymnasium's batch of Python ints) with ``obs_format="numpy"``, int32 tensors with ``"torch"``.
        """
        info = self._engine.info_values()
        if self.obs_format == "numpy":
            return {k: np.asarray(v, dtype=np.int64) for k, v in info.items()}
        return info

    def _episode_entry(self, done: Mask, now: float, values: dict[str, Any]) -> dict[str, Any]:
        """``RecordEpisodeStatistics``' ``episode`` / ``_episode`` for the envs whose episode ended (``done``).

        ``r``: float64 return, ``l``: int64 length in steps of this env, ``t``: float64 seconds (rounded to
        µs), each with its ``_r``/``_l``/``_t`` mask; with ``obs_format="torch"`` also ``frames`` (ALE's
        episode frame number at the end, from ``values``, gpu_env's addition).
        """
        episode = self._stats.values(now)
        if self.obs_format == "torch":
            episode["frames"] = values["episode_frame_number"]
        return {"episode": self._batched(episode, done), "_episode": self._out_mask(done)}

    # ----------------------------------------------------------------------------- render
    def render(self) -> tuple[npt.NDArray[np.uint8], ...]:
        """Every env's current screen, uint8[210, 160, 3] each, as ``SyncVectorEnv.render`` of ``AtariEnv``s."""
        if self.render_mode != "rgb_array":
            raise GpuEnvError("render() needs an env made with render_mode='rgb_array'")
        screens = np.array(self.batch.get_screen_rgb(), copy=True)
        return tuple(screens[i] for i in range(self.num_envs))

    def close_extras(self, **kwargs: Any) -> None:
        """Release the engine (the native pool's worker threads; the batch frees its memory when collected)."""
        self._engine.close()
