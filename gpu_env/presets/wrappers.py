"""The clients' Atari wrappers as per-env programs (:mod:`gpu_env.presets._engine`), rule for rule.

Each class reproduces one wrapper's ``step``/``reset`` (same order of inner calls, same early exits,
same seeds passed down), so a stack of them makes the same emulator calls as the client's stack:
SB3's ``stable_baselines3.common.atari_wrappers`` (``NoopResetEnv``, ``MaxAndSkipEnv``,
``EpisodicLifeEnv``, ``FireResetEnv``, ``WarpFrame``, ``ClipRewardEnv``) and ``Monitor``, and
gymnasium's ``RecordEpisodeStatistics``, ``ResizeObservation``, ``GrayscaleObservation`` and
``FrameStackObservation``. Image arithmetic uses the same OpenCV / numpy calls as the originals.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Generator
from typing import Any, Protocol

import cv2
import numpy as np

from gpu_env.presets._engine import AleEnv, Request, ResetOut, StepOut, U8Array

Gen = Generator[Request, Any, Any]
_GYM_GRAY = np.array([0.2125, 0.7154, 0.0721])  # gymnasium GrayscaleObservation's weights


class ProgramEnv(Protocol):
    """One env of a stack: ``step``/``reset`` programs and the base env under it."""

    @property
    def unwrapped(self) -> AleEnv:
        """The base :class:`AleEnv`."""
        ...

    def step(self, action: int, need_obs: bool = True) -> Generator[Request, Any, StepOut]:
        """Program returning ``(obs, reward, terminated, truncated, info)``."""
        ...

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None,
              need_obs: bool = True) -> Generator[Request, Any, ResetOut]:
        """Program returning ``(obs, info)``."""
        ...


class Wrapper:
    """Pass-through base: ``step``/``reset`` call the inner env's."""

    def __init__(self, env: ProgramEnv) -> None:
        self.env = env

    @property
    def unwrapped(self) -> AleEnv:
        """The base :class:`AleEnv`."""
        return self.env.unwrapped

    def step(self, action: int, need_obs: bool = True) -> Generator[Request, Any, StepOut]:
        """Program: the inner env's step."""
        return (yield from self.env.step(action, need_obs))

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None,
              need_obs: bool = True) -> Generator[Request, Any, ResetOut]:
        """Program: the inner env's reset."""
        return (yield from self.env.reset(seed, options, need_obs))


class Monitor(Wrapper):
    """SB3's ``Monitor`` (``allow_early_resets=True``): ``info["episode"] = {r, l, t}`` at each game end."""

    def __init__(self, env: ProgramEnv) -> None:
        super().__init__(env)
        self.t_start = time.time()
        self.rewards: list[float] = []

    def step(self, action: int, need_obs: bool = True) -> Generator[Request, Any, StepOut]:
        """Program: record the reward; add ``episode`` when the inner episode ends."""
        obs, reward, terminated, truncated, info = yield from self.env.step(action, need_obs)
        self.rewards.append(float(reward))
        if terminated or truncated:
            info["episode"] = {"r": round(sum(self.rewards), 6), "l": len(self.rewards),
                               "t": round(time.time() - self.t_start, 6)}
        return obs, reward, terminated, truncated, info

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None,
              need_obs: bool = True) -> Generator[Request, Any, ResetOut]:
        """Program: start a new record."""
        self.rewards = []
        return (yield from self.env.reset(seed, options, need_obs))


class RecordEpisodeStatistics(Wrapper):
    """gymnasium's ``RecordEpisodeStatistics`` (per env): ``info["episode"] = {r, l, t}``."""

    def __init__(self, env: ProgramEnv) -> None:
        super().__init__(env)
        self.episode_returns = 0.0
        self.episode_lengths = 0
        self.episode_start_time = time.perf_counter()

    def step(self, action: int, need_obs: bool = True) -> Generator[Request, Any, StepOut]:
        """Program: count; add ``episode`` when the inner episode ends."""
        obs, reward, terminated, truncated, info = yield from self.env.step(action, need_obs)
        self.episode_returns += reward
        self.episode_lengths += 1
        if terminated or truncated:
            info["episode"] = {"r": self.episode_returns, "l": self.episode_lengths,
                               "t": round(time.perf_counter() - self.episode_start_time, 6)}
            self.episode_start_time = time.perf_counter()
        return obs, reward, terminated, truncated, info

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None,
              need_obs: bool = True) -> Generator[Request, Any, ResetOut]:
        """Program: reset the counters after the inner reset."""
        out = yield from self.env.reset(seed, options, need_obs)
        self.episode_start_time = time.perf_counter()
        self.episode_returns = 0.0
        self.episode_lengths = 0
        return out


class NoopReset(Wrapper):
    """SB3's ``NoopResetEnv``: after reset, ``np_random.integers(1, noop_max + 1)`` NOOP steps."""

    def __init__(self, env: ProgramEnv, noop_max: int = 30) -> None:
        super().__init__(env)
        self.noop_max = noop_max

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None,
              need_obs: bool = True) -> Generator[Request, Any, ResetOut]:
        """Program: inner reset, then the no-ops (resetting again, with the same seed, on an end)."""
        yield from self.env.reset(seed, options, need_obs=False)
        noops = int(self.unwrapped.np_random.integers(1, self.noop_max + 1))
        obs: U8Array | None = None
        info: dict[str, Any] = {}
        for t in range(noops):
            last = t == noops - 1
            obs, _, terminated, truncated, info = yield from self.env.step(0, need_obs and last)
            if terminated or truncated:
                obs, info = yield from self.env.reset(seed, options, need_obs and last)
        return obs, info


class MaxAndSkip(Wrapper):
    """SB3's ``MaxAndSkipEnv``: repeat ``skip`` times, max of the last two screens (buffer kept across steps)."""

    def __init__(self, env: ProgramEnv, skip: int = 4, screen_shape: tuple[int, ...] = (210, 160, 3)) -> None:
        super().__init__(env)
        self.skip = skip
        self.obs_buffer = np.zeros((2, *screen_shape), dtype=np.uint8)

    def step(self, action: int, need_obs: bool = True) -> Generator[Request, Any, StepOut]:
        """Program: the repeated steps; stops at the first end."""
        total = 0.0
        terminated = truncated = False
        info: dict[str, Any] = {}
        for i in range(self.skip):
            into = 0 if i == self.skip - 2 else 1 if i == self.skip - 1 else None
            obs, reward, terminated, truncated, info = yield from self.env.step(action, into is not None)
            if into is not None and obs is not None:
                self.obs_buffer[into] = obs
            total += float(reward)
            if terminated or truncated:
                break
        max_frame = self.obs_buffer.max(axis=0) if need_obs else None
        return max_frame, total, terminated, truncated, info


class EpisodicLife(Wrapper):
    """SB3's ``EpisodicLifeEnv``: a life loss ends the episode; reset continues the game with a NOOP step."""

    def __init__(self, env: ProgramEnv) -> None:
        super().__init__(env)
        self.lives = 0
        self.was_real_done = True

    def step(self, action: int, need_obs: bool = True) -> Generator[Request, Any, StepOut]:
        """Program: the inner step; ``terminated`` also on ``0 < lives < last lives``."""
        obs, reward, terminated, truncated, info = yield from self.env.step(action, need_obs)
        self.was_real_done = terminated or truncated
        lives = self.unwrapped.lives()
        if 0 < lives < self.lives:
            terminated = True
        self.lives = lives
        return obs, reward, terminated, truncated, info

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None,
              need_obs: bool = True) -> Generator[Request, Any, ResetOut]:
        """Program: a real reset only after a real game end, otherwise a NOOP step."""
        if self.was_real_done:
            obs, info = yield from self.env.reset(seed, options, need_obs)
        else:
            obs, _, terminated, truncated, info = yield from self.env.step(0, need_obs)
            if terminated or truncated:
                obs, info = yield from self.env.reset(seed, options, need_obs)
        self.lives = self.unwrapped.lives()
        return obs, info


class FireReset(Wrapper):
    """SB3's ``FireResetEnv``: after reset, step FIRE (1) then action 2; info is ``{}``."""

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None,
              need_obs: bool = True) -> Generator[Request, Any, ResetOut]:
        """Program: reset, FIRE, action 2 (re-resetting on an end); returns action 2's observation."""
        yield from self.env.reset(seed, options, need_obs=False)
        _, _, terminated, truncated, _ = yield from self.env.step(1, need_obs=False)
        if terminated or truncated:
            yield from self.env.reset(seed, options, need_obs=False)
        obs, _, terminated, truncated, _ = yield from self.env.step(2, need_obs)
        if terminated or truncated:
            yield from self.env.reset(seed, options, need_obs=False)
        return obs, {}


class ClipReward(Wrapper):
    """SB3's ``ClipRewardEnv``: ``np.sign(float(reward))``."""

    def step(self, action: int, need_obs: bool = True) -> Generator[Request, Any, StepOut]:
        """Program: the inner step with the reward's sign."""
        obs, reward, terminated, truncated, info = yield from self.env.step(action, need_obs)
        return obs, float(np.sign(float(reward))), terminated, truncated, info


class ObservationWrapper(Wrapper):
    """Apply :meth:`observation` to every observation returned (when one is wanted)."""

    def observation(self, obs: U8Array) -> U8Array:
        """Transform one observation."""
        raise NotImplementedError

    def step(self, action: int, need_obs: bool = True) -> Generator[Request, Any, StepOut]:
        """Program: the inner step, observation transformed."""
        obs, reward, terminated, truncated, info = yield from self.env.step(action, need_obs)
        return (self.observation(obs) if obs is not None else None), reward, terminated, truncated, info

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None,
              need_obs: bool = True) -> Generator[Request, Any, ResetOut]:
        """Program: the inner reset, observation transformed."""
        obs, info = yield from self.env.reset(seed, options, need_obs)
        return (self.observation(obs) if obs is not None else None), info


class WarpFrame(ObservationWrapper):
    """SB3's ``WarpFrame``: ``cv2.cvtColor(RGB2GRAY)``, ``cv2.resize(INTER_AREA)``, a channel axis."""

    def __init__(self, env: ProgramEnv, width: int = 84, height: int = 84) -> None:
        super().__init__(env)
        self.size = (width, height)

    def observation(self, obs: U8Array) -> U8Array:
        """uint8[H, W, 3] -> uint8[height, width, 1]."""
        gray = cv2.cvtColor(obs, cv2.COLOR_RGB2GRAY)
        out: U8Array = np.asarray(cv2.resize(gray, self.size, interpolation=cv2.INTER_AREA), dtype=np.uint8)
        return out[:, :, None]


class ResizeObservation(ObservationWrapper):
    """gymnasium's ``ResizeObservation(shape)``: ``cv2.resize(obs, shape[::-1], INTER_AREA)``."""

    def __init__(self, env: ProgramEnv, shape: tuple[int, int] = (84, 84)) -> None:
        super().__init__(env)
        self.cv2_shape = (shape[1], shape[0])

    def observation(self, obs: U8Array) -> U8Array:
        """uint8[H, W, C] -> uint8[shape[0], shape[1], C]."""
        out: U8Array = np.asarray(cv2.resize(obs, self.cv2_shape, interpolation=cv2.INTER_AREA), dtype=np.uint8)
        return out


class GrayscaleObservation(ObservationWrapper):
    """gymnasium's ``GrayscaleObservation`` (``keep_dim=False``): weights 0.2125/0.7154/0.0721, truncated."""

    def observation(self, obs: U8Array) -> U8Array:
        """uint8[H, W, 3] -> uint8[H, W]."""
        out: U8Array = np.sum(np.multiply(obs, _GYM_GRAY), axis=-1).astype(np.uint8)
        return out


class FrameStackObservation(Wrapper):
    """gymnasium's ``FrameStackObservation(stack_size)`` with ``padding_type="reset"``."""

    def __init__(self, env: ProgramEnv, stack_size: int = 4) -> None:
        super().__init__(env)
        self.stack_size = stack_size
        self.queue: deque[U8Array] = deque(maxlen=stack_size)

    def step(self, action: int, need_obs: bool = True) -> Generator[Request, Any, StepOut]:
        """Program: the inner step; the new frame pushed."""
        obs, reward, terminated, truncated, info = yield from self.env.step(action, True)
        assert obs is not None  # need_obs=True above: the stack needs every frame
        self.queue.append(obs)
        return np.stack(self.queue), reward, terminated, truncated, info

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None,
              need_obs: bool = True) -> Generator[Request, Any, ResetOut]:
        """Program: the inner reset; the stack filled with its frame."""
        obs, info = yield from self.env.reset(seed, options, True)
        assert obs is not None
        for _ in range(self.stack_size):
            self.queue.append(obs)
        return np.stack(self.queue), info
