"""The host engine of :class:`gpu_env.vector.AtariVecEnv` (backends ``"cpu"`` and ``"ale_py"``).

An :class:`~gpu_env.atari_batch.AtariBatch` on the host, gymnasium's AtariPreprocessing in the native
library (:meth:`~gpu_env.atari_batch.AtariBatch.step_preprocessed`, one call per env step when each of
its frames is one ``act``) or as loops of batch calls (:mod:`gpu_env.backends.preprocessing`: a
stochastic or an inner frame skip), and a :class:`~gpu_env.preprocess.FrameStack`. Masks, rewards
and flags are numpy arrays; observations are torch tensors on ``device`` (the CPU unless given).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt
import torch

from gpu_env.atari_batch import AtariBatch
from gpu_env.backends.options import VecOptions
from gpu_env.backends.preprocessing import reset_loop, step_loop
from gpu_env.errors import GpuEnvError
from gpu_env.preprocess import FrameStack
from gpu_env.preprocess_cpu import CpuObservation

BoolArray = npt.NDArray[np.bool_]
Reseed = Callable[[BoolArray], Any]
Flags = tuple[npt.NDArray[np.float64], BoolArray, BoolArray]


class HostEngine:
    """Steps :class:`~gpu_env.vector.AtariVecEnv` on a host :class:`AtariBatch` (see the module docstring).

    ``rngs``: the env's per-env generators (replaced on a seeded reset): no-op counts, stochastic frame skips.
    """

    on_device = False

    def __init__(self, opts: VecOptions, backend: str, rngs: list[np.random.Generator]) -> None:
        self._o = opts
        self._pp = opts.pp
        self._rngs = rngs
        self.num_envs = opts.num_envs
        self.device = opts.device if opts.device is not None else torch.device("cpu")
        # Each of AtariPreprocessing's frames is one `act` (no inner loop, no stochastic frame skip).
        self._one_act_per_frame = opts.inner_loops == 1 and not isinstance(opts.frameskip, tuple)
        self.batch = AtariBatch(opts.rom_id, opts.num_envs, backend=backend, seeds=None,
                                repeat_action_probability=opts.repeat_action_probability,
                                frameskip=opts.batch_frameskip, max_num_frames_per_episode=opts.max_frames,
                                num_threads=opts.num_threads)

    def allocate(self, frame_shape: tuple[int, ...], dtype: type[np.generic],
                 action_set: npt.NDArray[np.int64]) -> None:
        """Host buffers: AtariPreprocessing's two screens and its observation pipeline, the frame stack."""
        o, n = self._o, self.num_envs
        self._action_set = action_set
        h, w = self.batch.screen_shape
        if o.preprocess:
            gray = bool(self._pp["grayscale_obs"])
            width, height = o.pp_size
            raw_shape: tuple[int, ...] = (h, w) if gray else (h, w, 3)
            self._buf0 = np.zeros((n, *raw_shape), dtype=np.uint8)
            self._buf1 = np.zeros_like(self._buf0)
            self._pp_lives = np.zeros(n, dtype=np.int32)
            self._observation = CpuObservation(n, (h, w), (height, width), 1 if gray else 3,
                                               num_threads=o.num_threads)
            # The screen AtariPreprocessing reads at a reset, written natively in place each time.
            self._pp_scratch = np.empty((n, *raw_shape), dtype=np.uint8)
        self._stack = FrameStack(n, o.stack_size, frame_shape, dtype) if o.stack_size is not None else None
        # Raw screens that go into a frame stack are written natively into one preallocated frame;
        # without a stack each observation is a new array the caller owns (written once, never copied).
        self._frame_buf = (np.empty((n, *frame_shape), dtype=np.uint8)
                           if o.stack_size is not None and not o.preprocess and o.obs_type != "ram" else None)

    def mask(self, host: BoolArray) -> BoolArray:
        """Return ``host`` (bool[N]): the host engine's masks are numpy arrays."""
        return host

    def everyone(self) -> BoolArray:
        """Return a new mask of every env."""
        return np.ones(self.num_envs, dtype=np.bool_)

    def ale_actions(self, actions: npt.NDArray[Any]) -> npt.NDArray[np.int64]:
        """ALE action numbers of the (checked) action indices."""
        ale: npt.NDArray[np.int64] = self._action_set[actions]
        return ale

    def info_values(self) -> dict[str, npt.NDArray[np.int32]]:
        """Return lives and frame numbers of every env (int32[N] each)."""
        b = self.batch
        return {"lives": b.lives(), "episode_frame_number": b.episode_frame_number(), "frame_number": b.frame_number()}

    def memory_bytes_per_env(self) -> int:
        """Raise: the count is of device memory."""
        raise GpuEnvError("memory_bytes_per_env() counts device memory: backend='cuda' only")

    # ----------------------------------------------------------------------------- frames
    def _raw_obs(self) -> npt.NDArray[np.uint8]:
        """Return the ALE observation of every env (native screens, into ``_frame_buf`` when a stack follows)."""
        if self._o.obs_type == "rgb":
            return self.batch.get_screen_rgb(out=self._frame_buf)
        if self._o.obs_type == "grayscale":
            return self.batch.get_screen_grayscale(out=self._frame_buf)
        return self.batch.get_ram()

    def _pp_screen(self) -> npt.NDArray[np.uint8]:
        """Return AtariPreprocessing's screen of every env, in a scratch buffer the next call overwrites."""
        if self._pp["grayscale_obs"]:
            return self.batch.get_screen_grayscale(out=self._pp_scratch)
        return self.batch.get_screen_rgb(out=self._pp_scratch)

    def _observe(self, mask: BoolArray, reset: BoolArray, frame: npt.NDArray[Any] | None = None) -> torch.Tensor:
        """Return every env's observation; frame stacks are pushed (``mask``) or refilled (``reset``).

        ``frame``: the preprocessed observations when the step already computed them (max-pool, resize).
        """
        if self._o.preprocess:
            if frame is None:
                frame = self._observation(self._buf0, self._buf1 if self._pp["frame_skip"] > 1 else None, mask)
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

    # ----------------------------------------------------------------------------- reset
    def _draw_noops(self, mask: BoolArray) -> npt.NDArray[np.int32]:
        """AtariPreprocessing.reset's no-op counts (1..noop_max from each env's np_random) for the envs in ``mask``."""
        noop_max = int(self._pp["noop_max"])
        noops = np.zeros(self.num_envs, dtype=np.int32)
        if noop_max > 0:
            for i in np.flatnonzero(mask):
                noops[i] = int(self._rngs[i].integers(1, noop_max + 1))
        return noops

    def _reset_envs(self, mask: BoolArray, reseed: Reseed) -> None:
        """``reset`` of the envs in ``mask``, as loops of batch calls; ``reseed`` precedes each ``reset_game``.

        An unseeded autoreset under preprocessing with one act per frame runs inside the step instead
        (:meth:`_preprocessed_step`).
        """
        def base_reset(m: BoolArray) -> None:
            reseed(m)
            self.batch.reset_game(m)

        if self._o.preprocess:
            noop_actions = np.full(self.num_envs, self._action_set[0], dtype=np.int64)
            reset_loop(base_reset, lambda m: self._env_step(noop_actions, m), self.batch.lives, self._pp_screen,
                       mask, self._draw_noops, self._pp_lives, self._buf0, self._buf1)
        else:
            base_reset(mask)

    def reset(self, mask: BoolArray, reseed: Reseed) -> torch.Tensor:
        """``reset`` of the envs in ``mask`` (``reseed(m)``: the env's seeding); every env's observation."""
        self._reset_envs(mask, reseed)
        return self._observe(mask, reset=mask)

    def reset_ended(self, done: BoolArray, obs: torch.Tensor) -> torch.Tensor:
        """Reset the envs in ``done`` without a seed (SAME_STEP); return every env's observation."""
        self._reset_envs(done, lambda m: None)
        return self._observe(done, reset=done)

    # ----------------------------------------------------------------------------- step
    def _env_step(self, actions: npt.NDArray[np.int64], mask: BoolArray) -> Flags:
        """``AtariEnv.step`` on the envs in ``mask``: reward, terminated, truncated (host arrays)."""
        reward = np.zeros(self.num_envs, dtype=np.float64)
        frameskip = self._o.frameskip
        if isinstance(frameskip, tuple):
            low, high = frameskip
            skips = np.array([int(g.integers(low, high)) if m else 0 for g, m in zip(self._rngs, mask, strict=True)])
            for t in range(int(skips.max(initial=0))):
                reward += self.batch.act(actions, mask=mask & (t < skips))
        else:
            for _ in range(self._o.inner_loops):
                reward += self.batch.act(actions, mask=mask)
        return reward, self.batch.game_over(with_truncation=False), self.batch.game_truncated()

    def step(self, actions: npt.NDArray[np.int64], resetting: BoolArray | None
             ) -> tuple[torch.Tensor, npt.NDArray[np.float64], BoolArray, BoolArray]:
        """Step the envs, or reset those in ``resetting`` (reward 0, flags false); every env's observation."""
        if resetting is None:
            resetting = np.zeros(self.num_envs, dtype=np.bool_)
        stepping = ~resetting
        frame: npt.NDArray[np.uint8] | None = None
        stacked = False
        if self._o.preprocess and self._one_act_per_frame:
            reward, term, trunc, frame, stacked = self._preprocessed_step(actions, stepping, resetting)
        elif self._o.preprocess:  # several acts per frame (a stochastic or inner frame skip): the loop of env steps
            total, term, trunc = step_loop(
                lambda m: self._env_step(actions, m), self.batch.lives, self._pp_screen, stepping,
                int(self._pp["frame_skip"]), bool(self._pp["terminal_on_life_loss"]), self._pp_lives,
                self._buf0, self._buf1)
            reward = total.astype(np.float64)
        else:
            reward, term, trunc = self._env_step(actions, stepping)
        reward[resetting] = 0.0
        term[resetting] = False
        trunc[resetting] = False
        if resetting.any() and frame is None:
            self._reset_envs(resetting, lambda m: None)  # unseeded
        if stacked and frame is not None:  # the step pushed the frame stack itself: `frame` is its copy
            return torch.from_numpy(frame).to(self.device), reward, term, trunc
        return self._observe(np.ones(self.num_envs, dtype=np.bool_), reset=resetting, frame=frame), reward, term, trunc

    def _preprocessed_step(self, actions: npt.NDArray[np.int64], mask: BoolArray, resetting: BoolArray
                           ) -> tuple[npt.NDArray[np.float64], BoolArray, BoolArray, npt.NDArray[np.uint8], bool]:
        """One batch call (one act per frame): ``AtariPreprocessing.step`` of the envs in ``mask``.

        Also the unseeded ``reset`` of the envs in ``resetting``, and every env's new observation
        (max-pool, resize). With a uint8 frame stack (no ``scale_obs``) the same call pushes the new
        observations onto it (refills it for ``resetting``) and the last value is True: the observation
        returned is then a copy of the stack.
        """
        stack = self._stack.obs if self._stack is not None and not self._pp["scale_obs"] else None
        rewards, term, trunc, frame = self.batch.step_preprocessed(
            actions, mask, int(self._pp["frame_skip"]), bool(self._pp["terminal_on_life_loss"]), self._pp_lives,
            bool(self._pp["grayscale_obs"]), self._buf0, self._buf1, reset=resetting, noops=self._draw_noops(resetting),
            observation=self._observation, stack=stack)
        if frame is None:
            raise GpuEnvError("internal: step_preprocessed returned no observation")
        return rewards.astype(np.float64), term, trunc, frame, stack is not None
