"""``make_vec``: a gymnasium ``VectorEnv`` over :class:`~gpu_env.ale_batch.AtariBatch`.

``gpu_env.make_vec("ALE/Pong-v5", n, backend="cpu", **kwargs)`` behaves as
``gymnasium.make_vec("ALE/Pong-v5", n, vectorization_mode="sync", ...)`` with, per sub-environment,
ale-py's ``AtariEnv`` (v5 keyword arguments), then — if any preprocessing option is given —
gymnasium's ``AtariPreprocessing``, then — if ``stack_size`` is given — ``FrameStackObservation``,
under gymnasium's vector ``RecordEpisodeStatistics``. ``autoreset_mode`` (declared in
``metadata["autoreset_mode"]``) is gymnasium's: ``NEXT_STEP`` (default: the step after an episode
ends resets that env and returns its first observation with reward 0), ``SAME_STEP`` (the env is
reset in the step that ends its episode; the final observation and info are in
``info["final_obs"]`` / ``info["final_info"]`` with masks ``_final_obs`` / ``_final_info``) or
``DISABLED`` (the caller resets ended envs with ``reset(options={"reset_mask": mask})``; stepping an
ended env raises :class:`~gpu_env.errors.GpuEnvError`). Seeding is gymnasium's: ``reset(seed=s)``
gives env ``i`` the seed ``s + i``, derives ``(np_seed, ale_seed) = SeedSequence(s + i).generate_state(2)``
and reloads the ROM (``loadROM``) with ``random_seed = ale_seed``; ``reset()`` without a seed only calls
``reset_game``. The no-op counts of ``noop_max`` come from the same per-env numpy generator as in
gymnasium (``np_random.integers(1, noop_max + 1)``).

Returned values are torch tensors on ``device`` (default: the backend's device): observations
(uint8, or float32 with ``scale_obs``), rewards float32[N], terminations/truncations bool[N]; the
info dict holds ``lives``, ``episode_frame_number``, ``frame_number`` (int32[N], each with a ``_key``
mask) and, where episodes ended this step, ``episode`` = {``r``: return, ``l``: length in steps,
``frames``: ALE's episode frame number at the end, ``t``: seconds} with the mask ``_episode``. A
seeded ``reset`` adds ``info["seeds"]``: as gymnasium, a numpy object array holding each seeded
env's ``(np_seed, ale_seed)`` (``None`` elsewhere), with the mask ``_seeds``. Unlike gymnasium's
object array, ``final_obs`` is one tensor ``[N, *single_observation_shape]`` (zeros where the mask is
false), so that it can be used in batched code without a copy per env.
"""

from __future__ import annotations

import os
import re
import time
from typing import Any

import numpy as np
import numpy.typing as npt
import torch
from gymnasium import spaces
from gymnasium.utils import seeding
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from gpu_env.ale_batch import ACTION_NAMES, AtariBatch
from gpu_env.errors import GpuEnvError
from gpu_env.preprocess import FrameStack
from gpu_env.preprocess_cpu import CpuObservation

_ENV_ID = re.compile(r"^(?:ALE/)?(?P<name>[A-Za-z0-9]+)-v5$")
_V5_MAX_FRAMES = 108_000
_PREPROCESSING_DEFAULTS: dict[str, Any] = {
    "noop_max": 30, "frame_skip": 4, "screen_size": 84, "terminal_on_life_loss": False,
    "grayscale_obs": True, "grayscale_newaxis": False, "scale_obs": False,
}


def rom_id_from_env_id(env_id: str) -> str:
    """``"ALE/SpaceInvaders-v5"`` -> ``"space_invaders"``; :class:`GpuEnvError` for other ids."""
    match = _ENV_ID.match(env_id)
    if match is None:
        raise GpuEnvError(f"env id {env_id!r} is not an ALE v5 id: use e.g. 'ALE/Pong-v5'")
    from ale_py import roms

    wanted = match.group("name")
    for rom in roms.get_all_rom_ids():
        if rom.title().replace("_", "") == wanted:
            return str(rom)
    raise GpuEnvError(f"env id {env_id!r} names no ROM bundled with ale-py: see ale_py.roms.get_all_rom_ids()")


def _default_device(backend: str) -> torch.device:
    return torch.device("cuda" if backend == "cuda" else "cpu")


class AtariVecEnv(VectorEnv):
    """gymnasium ``VectorEnv`` of ALE v5 Atari games on gpu_env (see the module docstring)."""

    def __init__(
        self,
        env_id: str,
        num_envs: int,
        *,
        backend: str = "cpu",
        device: str | torch.device | None = None,
        frameskip: int | tuple[int, int] = 4,
        repeat_action_probability: float = 0.25,
        full_action_space: bool = False,
        mode: int | None = None,
        difficulty: int | None = None,
        obs_type: str = "rgb",
        max_num_frames_per_episode: int | None = _V5_MAX_FRAMES,
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
    ) -> None:
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
        self.rom_id = rom_id_from_env_id(env_id)
        self.num_envs = num_envs
        self.device = torch.device(device) if device is not None else _default_device(backend)
        self._frameskip = frameskip
        self._obs_type = obs_type
        self._num_threads = num_threads if num_threads is not None else (os.cpu_count() or 1)
        given: dict[str, Any] = {"noop_max": noop_max, "frame_skip": frame_skip, "screen_size": screen_size,
                 "terminal_on_life_loss": terminal_on_life_loss, "grayscale_obs": grayscale_obs,
                 "grayscale_newaxis": grayscale_newaxis, "scale_obs": scale_obs}
        self._preprocess = any(v is not None for v in given.values())
        pp = {k: (v if v is not None else _PREPROCESSING_DEFAULTS[k]) for k, v in given.items()}
        self._pp = pp
        if self._preprocess:
            self._check_preprocessing(pp)
        inner_skip = frameskip if isinstance(frameskip, int) and not self._preprocess else 1
        self.batch: AtariBatch = self._make_batch(backend, repeat_action_probability, inner_skip,
                                      max_num_frames_per_episode or 0, num_threads)
        self._inner_loops: int = 1 if inner_skip == frameskip or isinstance(frameskip, tuple) else frameskip
        if mode is not None:
            self.batch.set_mode(mode)
        if difficulty is not None:
            self.batch.set_difficulty(difficulty)
        self._action_set = (np.arange(len(ACTION_NAMES), dtype=np.int64) if full_action_space
                            else self.batch.minimal_action_set())
        self._env_rngs = [seeding.np_random(int(s))[0]
                           for s in np.random.SeedSequence().generate_state(num_envs)]
        self._setup_spaces(stack_size)
        self._autoreset = np.zeros(num_envs, dtype=np.bool_)
        self._ep_return = np.zeros(num_envs, dtype=np.float64)
        self._ep_length = np.zeros(num_envs, dtype=np.int64)
        self._ep_start = np.full(num_envs, time.perf_counter())
        self._seeded_with: list[tuple[np.uint32, np.uint32] | None] = [None] * num_envs
        self.metadata = {"autoreset_mode": self._autoreset_mode, "render_modes": []}

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
        self._stack = (FrameStack(n, stack_size, frame_shape, dtype)
                       if stack_size is not None else None)

    # ----------------------------------------------------------------------------- frames
    def _tensor(self, array: npt.NDArray[Any]) -> torch.Tensor:
        return torch.from_numpy(np.ascontiguousarray(array)).to(self.device)

    def _raw_obs(self) -> npt.NDArray[np.uint8]:
        if self._obs_type == "rgb":
            return self.batch.get_screen_rgb()
        if self._obs_type == "grayscale":
            return self.batch.get_screen_grayscale()
        return self.batch.get_ram()

    def _pp_screen(self) -> npt.NDArray[np.uint8]:
        if self._pp["grayscale_obs"]:
            return self.batch.get_screen_grayscale()
        return self.batch.get_screen_rgb()

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

    def _reset_envs(self, mask: npt.NDArray[np.bool_], seeds: list[int | None]) -> None:
        self._base_reset(mask, seeds)
        if self._preprocess:
            buf0, buf1 = self._buffers()
            noop_max = int(self._pp["noop_max"])
            noops = np.array([int(self._env_rngs[i].integers(1, noop_max + 1)) if m and noop_max > 0 else 0
                              for i, m in enumerate(mask)])
            noop_actions = np.full(self.num_envs, self._action_set[0], dtype=np.int64)
            for t in range(int(noops.max(initial=0))):
                active = mask & (t < noops)
                _, term, trunc = self._env_step(noop_actions, active)
                again = active & (term | trunc)
                if again.any():
                    self._base_reset(again, seeds)
            self._pp_lives[mask] = self.batch.lives()[mask]
            idx = np.flatnonzero(mask)
            buf0[idx] = self._pp_screen()[idx]
            buf1[idx] = 0
        self._ep_return[mask] = 0.0
        self._ep_length[mask] = 0
        self._ep_start[mask] = time.perf_counter()
        self._autoreset[mask] = False

    def reset(self, *, seed: int | list[int | None] | None = None, options: dict[str, Any] | None = None
              ) -> tuple[torch.Tensor, dict[str, Any]]:
        """Reset all envs (or ``options["reset_mask"]``); ``seed`` as gymnasium's sync vector env takes it."""
        mask = np.ones(self.num_envs, dtype=np.bool_)
        if options is not None and "reset_mask" in options:
            mask = np.asarray(options["reset_mask"])
            if mask.dtype != np.bool_ or mask.shape != (self.num_envs,) or not mask.any():
                raise GpuEnvError(f"options['reset_mask'] must be a bool[{self.num_envs}] array with a True entry")
        seeds = self._seed_list(seed)
        self._seeded_with = [None] * self.num_envs
        self._reset_envs(mask, seeds)
        obs = self._observe(mask, reset=mask)
        info = self._info()
        self._add_seeds_info(info, mask, seeds)
        return obs, info

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
            info["_seeds"] = torch.from_numpy(seeded).to(self.device)

    # ----------------------------------------------------------------------------- step
    def step(self, actions: Any) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, dict[str, Any]]:
        """One vector step (autoreset as ``metadata["autoreset_mode"]``); ``actions``: int[N] action indices."""
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
        if self._preprocess:
            reward, term, trunc = self._preprocessed_step(ale_actions, stepping)
        else:
            reward, term, trunc = self._env_step(ale_actions, stepping)
        reward[resetting] = 0.0
        term[resetting] = False
        trunc[resetting] = False
        if resetting.any():
            self._reset_envs(resetting, [None] * self.num_envs)
        obs = self._observe(np.ones(self.num_envs, dtype=np.bool_), reset=resetting)
        self._ep_return[stepping] += reward[stepping]
        self._ep_length[stepping] += 1
        done = term | trunc
        info = self._info()
        if done.any():
            info.update(self._episode_info(done))
        if mode == AutoresetMode.SAME_STEP:
            if done.any():
                # As gymnasium's SAME_STEP: the final observation and info go under "final_obs" /
                # "final_info", the returned observation and info are the reset ones.
                final_info = {k: v for k, v in info.items() if k not in ("episode", "_episode")}
                final_obs = torch.where(self._expand(done, obs), obs, torch.zeros_like(obs))
                self._reset_envs(done, [None] * self.num_envs)
                obs = self._observe(done, reset=done)
                info.update(self._info())
                done_t = torch.from_numpy(done).to(self.device)
                info.update({"final_obs": final_obs, "_final_obs": done_t,
                             "final_info": final_info, "_final_info": done_t})
            self._autoreset = np.zeros(self.num_envs, dtype=np.bool_)
        else:
            self._autoreset = done
        return (obs, torch.from_numpy(reward.astype(np.float32)).to(self.device),
                torch.from_numpy(term).to(self.device), torch.from_numpy(trunc).to(self.device), info)

    def _expand(self, mask: npt.NDArray[np.bool_], like: torch.Tensor) -> torch.Tensor:
        """``mask`` (bool[N]) as a tensor broadcastable against ``like`` ([N, ...])."""
        return torch.from_numpy(mask).to(like.device).view(-1, *([1] * (like.dim() - 1)))

    def _preprocessed_step(self, actions: npt.NDArray[np.int64], mask: npt.NDArray[np.bool_]
                           ) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.bool_], npt.NDArray[np.bool_]]:
        """``AtariPreprocessing.step`` on the envs in ``mask`` (its buffers and early exit included)."""
        buf0, buf1 = self._buffers()
        skip = int(self._pp["frame_skip"])
        if self._inner_loops == 1 and not isinstance(self._frameskip, tuple):
            rewards, term, trunc = self.batch.step_preprocessed(
                actions, mask, skip, bool(self._pp["terminal_on_life_loss"]), self._pp_lives,
                bool(self._pp["grayscale_obs"]), buf0, buf1)
            return rewards.astype(np.float64), term, trunc
        total = np.zeros(self.num_envs, dtype=np.float64)
        term = np.zeros(self.num_envs, dtype=np.bool_)
        trunc = np.zeros(self.num_envs, dtype=np.bool_)
        active = mask.copy()
        for t in range(skip):
            if not active.any():
                break
            reward, te, tr = self._env_step(actions, active)
            total[active] += reward[active]
            term[active] = te[active]
            trunc[active] = tr[active]
            if self._pp["terminal_on_life_loss"]:
                lives = self.batch.lives()
                term[active] |= lives[active] < self._pp_lives[active]
                self._pp_lives[active] = lives[active]
            active &= ~(term | trunc)
            if t in (skip - 2, skip - 1) and active.any():
                idx = np.flatnonzero(active)
                target = buf1 if t == skip - 2 else buf0
                target[idx] = self._pp_screen()[idx]
        return total, term, trunc

    def _buffers(self) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.uint8]]:
        """AtariPreprocessing's two screen buffers (only with preprocessing)."""
        if self._buf0 is None or self._buf1 is None:
            raise GpuEnvError("internal: the preprocessing buffers exist only when preprocessing is on")
        return self._buf0, self._buf1

    def _observe(self, mask: npt.NDArray[np.bool_], reset: npt.NDArray[np.bool_]) -> torch.Tensor:
        """Return every env's observation; frame stacks are pushed (``mask``) or refilled (``reset``)."""
        frame: npt.NDArray[Any]
        if self._preprocess:
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
            frame = self._stack.obs
        return torch.from_numpy(np.array(frame, copy=True)).to(self.device)

    def _info(self) -> dict[str, Any]:
        """``AtariEnv``'s info (lives, frame numbers) for every env, batched with ``_key`` masks."""
        ones = torch.ones(self.num_envs, dtype=torch.bool, device=self.device)
        total, episode = self.batch.frame_number(), self.batch.episode_frame_number()
        return {
            "lives": self._tensor(self.batch.lives()), "_lives": ones,
            "episode_frame_number": self._tensor(episode), "_episode_frame_number": ones,
            "frame_number": self._tensor(total), "_frame_number": ones,
        }

    def _episode_info(self, done: npt.NDArray[np.bool_]) -> dict[str, Any]:
        """``RecordEpisodeStatistics``' ``episode`` entry for the envs whose episode ended (``done``)."""
        now = time.perf_counter()
        episode = self.batch.episode_frame_number()
        return {
            "episode": {
                "r": self._tensor(np.where(done, self._ep_return, 0.0)),
                "l": self._tensor(np.where(done, self._ep_length, 0)),
                "frames": self._tensor(np.where(done, episode, 0)),
                "t": self._tensor(np.where(done, np.round(now - self._ep_start, 6), 0.0)),
            },
            "_episode": self._tensor(done),
        }

    def close_extras(self, **kwargs: Any) -> None:
        """Nothing to release: the batch frees its memory when collected."""


def make_vec(env_id: str, num_envs: int, backend: str = "cpu", **kwargs: Any) -> AtariVecEnv:
    """``gymnasium.make_vec(env_id, num_envs, vectorization_mode="sync", ...)`` on gpu_env.

    ``kwargs``: the ALE v5 options (``frameskip``, ``repeat_action_probability``,
    ``full_action_space``, ``mode``, ``difficulty``, ``obs_type``, ``max_num_frames_per_episode``),
    the ``AtariPreprocessing`` options (``noop_max``, ``frame_skip``, ``screen_size``,
    ``terminal_on_life_loss``, ``grayscale_obs``, ``grayscale_newaxis``, ``scale_obs``),
    ``stack_size`` (``FrameStackObservation``), ``device`` and ``num_threads``.

    ``backend="cuda"`` returns :class:`gpu_env.cuda.vec.CudaVecEnv` (same contract, every step on the
    GPU, torch CUDA tensors out; extra options ``cuda_device``, ``block_size``, ``noop_table_depth``).
    """
    if backend == "cuda":
        from gpu_env.cuda.vec import CudaVecEnv

        return CudaVecEnv(env_id, num_envs, **kwargs)
    return AtariVecEnv(env_id, num_envs, backend=backend, **kwargs)
