"""EnvPool's Atari environment (``envpool/atari/atari_env.h``, EnvPool 1.2.5) as a per-env program.

The rules, as EnvPool documents and implements them (facts, in our words):

- Construction: ALE ``repeat_action_probability``, ``random_seed = seed + env_id`` (or
  ``env_seed[env_id]``), ``loadROM``. The env's own ``std::mt19937`` is seeded with the same value;
  ``use_fire_reset`` applies where the action set holds FIRE.
- Reset: ``noop = U{0, noop_max-1}(mt19937) + 1 - fire_reset``. Unless ``episodic_life`` (and the
  game is not over and ``elapsed_step < max_episode_steps``), ``reset_game`` and the frame stack is
  refilled. Then ``noop`` ALE NOOP frames (``reset_game`` again on a game over), one FIRE frame
  where ``fire_reset``; the screen goes to max-pool buffer 0 and, resized, onto the stack.
- Step: up to ``frame_skip`` frames, stopping at game over; the last two frames' screens go to the
  two max-pool buffers; the element-wise max (written into buffer 0) is stacked only when all
  ``frame_skip`` frames ran (or the last one ended the game), otherwise buffer 0 as it is.
  ``elapsed_step`` counts steps; ``done`` on game over, on ``elapsed_step >= max_episode_steps``
  (``truncated``), and with ``episodic_life`` on ``0 < lives < last lives``. Rewards are summed in
  float32; ``reward_clip`` gives their sign; ``info["reward"]`` is unclipped.
- Screens are ALE's grayscale (or RGB) palette; resizing is OpenCV ``INTER_AREA`` (or
  ``INTER_LINEAR`` with ``use_inter_area_resize=False``) to ``img_height x img_width``.
- The pool resets an env in the step after its episode ended (EnvPool's auto-reset).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Generator
from dataclasses import dataclass
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

from gpu_env.mt19937 import std_mt19937
from gpu_env.presets._engine import BatchDriver, Op, Request, U8Array

_NOOP, _FIRE = 0, 1  # ALE full-set action indices


class Mt19937:
    """``std::mt19937(seed)`` and libstdc++'s ``uniform_int_distribution`` on it (Lemire's method)."""

    def __init__(self, seed: int) -> None:
        self._bits = std_mt19937(seed)

    def __call__(self) -> int:
        """Return the next 32-bit output."""
        return int(self._bits.random_raw())

    def uniform_int(self, low: int, high: int) -> int:
        """``std::uniform_int_distribution<int>(low, high)(gen)`` as libstdc++ (GCC >= 11) draws it."""
        span = high - low + 1
        product = self() * span
        low_bits = product & 0xFFFFFFFF
        if low_bits < span:
            threshold = (-span) % span
            while low_bits < threshold:
                product = self() * span
                low_bits = product & 0xFFFFFFFF
        return low + (product >> 32)


@dataclass(frozen=True)
class EnvpoolConfig:
    """EnvPool's Atari options (names and defaults of ``envpool.make("…-v5")``)."""

    stack_num: int = 4
    frame_skip: int = 4
    noop_max: int = 30
    zero_discount_on_life_loss: bool = False
    episodic_life: bool = False
    reward_clip: bool = False
    use_fire_reset: bool = True
    img_height: int = 84
    img_width: int = 84
    full_action_space: bool = False
    repeat_action_probability: float = 0.0
    use_inter_area_resize: bool = True
    gray_scale: bool = True
    max_episode_steps: int = 27000


@dataclass
class EnvpoolState:
    """What one env writes after a reset or step (EnvPool's ``WriteState``)."""

    obs: U8Array
    reward: float
    discount: float
    done: bool
    trunc: bool
    info_reward: float
    lives: int
    terminated: bool
    elapsed_step: int


class EnvpoolAtari:
    """EnvPool's ``AtariEnv`` for env ``index`` of a :class:`BatchDriver`'s batch (see the module docstring)."""

    def __init__(self, driver: BatchDriver, index: int, action_set: npt.NDArray[np.int64], seed: int,
                 config: EnvpoolConfig) -> None:
        self.driver = driver
        self.index = index
        self.action_set = action_set
        self.config = config
        self.gen = Mt19937(seed)
        self.fire_reset = config.use_fire_reset and _FIRE in action_set.tolist()
        self.elapsed_step = config.max_episode_steps + 1
        self.done = True
        self.lives = 0
        h, w = driver.batch.screen_shape
        channels = 1 if config.gray_scale else 3
        raw: tuple[int, ...] = (h, w) if config.gray_scale else (h, w, 3)
        self.maxpool = [np.zeros(raw, dtype=np.uint8), np.zeros(raw, dtype=np.uint8)]
        frame = (channels, config.img_height, config.img_width)
        self.stack: deque[U8Array] = deque((np.zeros(frame, dtype=np.uint8) for _ in range(config.stack_num)),
                                           maxlen=config.stack_num)

    def _screen(self) -> Generator[Request, Any, U8Array]:
        op = Op.SCREEN_GRAY if self.config.gray_scale else Op.SCREEN
        screen: U8Array = yield (op, 0)
        return screen

    def _game_over(self) -> bool:
        return bool(self.driver.terminal[self.index] or self.driver.truncated[self.index])

    def _lives(self) -> int:
        return int(self.driver.lives[self.index])

    def _push_stack(self, push_all: bool, maxpool: bool) -> None:
        c = self.config
        if maxpool:
            np.maximum(self.maxpool[0], self.maxpool[1], out=self.maxpool[0])
        interp = cv2.INTER_AREA if c.use_inter_area_resize else cv2.INTER_LINEAR
        img = np.asarray(cv2.resize(self.maxpool[0], (c.img_width, c.img_height), interpolation=interp),
                         dtype=np.uint8)
        frame: U8Array = img[None] if c.gray_scale else np.ascontiguousarray(img.transpose(2, 0, 1))
        self.stack.append(frame)
        if push_all:
            for i in range(len(self.stack)):
                self.stack[i] = frame.copy()

    def _state(self, reward: float, discount: float, info_reward: float) -> EnvpoolState:
        c = self.config
        trunc = self.done and self.elapsed_step >= c.max_episode_steps
        return EnvpoolState(obs=np.concatenate(list(self.stack), axis=0), reward=reward, discount=discount,
                            done=self.done, trunc=trunc, info_reward=info_reward, lives=self.lives,
                            terminated=self._game_over(), elapsed_step=self.elapsed_step)

    def reset(self) -> Generator[Request, Any, EnvpoolState]:
        """Program: EnvPool's ``Reset``."""
        c = self.config
        noop = self.gen.uniform_int(0, c.noop_max - 1) + 1 - int(self.fire_reset)
        push_all = False
        if not c.episodic_life or self._game_over() or self.elapsed_step >= c.max_episode_steps:
            yield (Op.RESET_GAME, 0)
            self.elapsed_step = 0
            push_all = True
        for _ in range(noop):
            yield (Op.ACT, _NOOP)
            if self._game_over():
                yield (Op.RESET_GAME, 0)
                push_all = True
        if self.fire_reset:
            yield (Op.ACT, _FIRE)
        self.maxpool[0] = yield from self._screen()
        self._push_stack(push_all, maxpool=False)
        self.done = False
        self.lives = self._lives()
        return self._state(0.0, 1.0, 0.0)

    def step(self, action: int) -> Generator[Request, Any, EnvpoolState]:
        """Program: EnvPool's ``Step`` with an index into the action set."""
        c = self.config
        reward = np.float32(0.0)
        self.done = False
        skip = c.frame_skip
        while skip > 0 and not self.done:
            reward = np.float32(reward + np.float32((yield (Op.ACT, int(self.action_set[action])))))
            self.done = self._game_over()
            if skip <= 2:
                self.maxpool[2 - skip] = yield from self._screen()
            skip -= 1
        self._push_stack(False, maxpool=skip == 0)
        self.elapsed_step += 1
        self.done = self.done or self.elapsed_step >= c.max_episode_steps
        lives = self._lives()
        if c.episodic_life and 0 < lives < self.lives:
            self.done = True
        if c.zero_discount_on_life_loss:
            discount = float(self.lives == lives and not self.done)
        else:
            discount = 1.0 - float(self.done)
        info_reward = float(reward)
        out_reward = float(np.sign(reward)) if c.reward_clip else float(reward)
        self.lives = lives
        return self._state(out_reward, discount, info_reward)

    def auto_step(self, action: int) -> Generator[Request, Any, EnvpoolState]:
        """Program: what the pool runs for a step request: ``Reset`` if the episode ended, else ``Step``."""
        if self.done:
            return (yield from self.reset())
        return (yield from self.step(action))
