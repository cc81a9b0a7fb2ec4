"""Run per-environment wrapper programs over one :class:`~gpu_env.atari_batch.AtariBatch`, batching the emulation.

A client's wrapper stack (SB3's ``MaxAndSkipEnv`` over ``NoopResetEnv`` over ``AtariEnv`` …) is
sequential code per environment: loops that stop early, resets inside steps, no-op steps inside
resets. To reproduce it exactly, each environment's step or reset is written as a generator that
*yields* what it needs from the emulator (:class:`Op`: one frame, a screen, ``reset_game``,
``loadROM`` with a seed) and receives the answer; :meth:`BatchDriver.run` advances every
environment's generator to its next request, serves all requests of one round with one masked
batch call per kind, and repeats until every generator has returned. Environments never see each
other, so the batching changes no environment's sequence of emulator calls.

:class:`AleEnv` is ale-py's ``AtariEnv`` for one environment of the batch (its frame skip is a loop of
single-frame ALE ``act`` calls, as ``AtariEnv.step`` runs it).
"""

from __future__ import annotations

import enum
from collections.abc import Generator
from typing import Any

import numpy as np
import numpy.typing as npt
from gymnasium.utils import seeding

from gpu_env.atari_batch import ACTION_NAMES, AtariBatch


class Op(enum.Enum):
    """What a program asks of the emulator (the request's second item is its argument)."""

    ACT = "act"  # one ALE frame with this full-set action; answers the reward (int)
    SCREEN = "screen"  # answers getScreenRGB() of this env (uint8[H, 160, 3], a copy)
    RESET_GAME = "reset_game"  # ALE reset_game(); answers None
    LOAD_ROM = "load_rom"  # setInt("random_seed", seed); loadROM(); answers None


Request = tuple[Op, int]
Program = Generator[Request, Any, Any]
U8Array = npt.NDArray[np.uint8]
StepOut = tuple[U8Array | None, float, bool, bool, dict[str, Any]]
ResetOut = tuple[U8Array | None, dict[str, Any]]


class BatchDriver:
    """Serve the requests of per-env programs with masked calls on one ``AtariBatch``."""

    def __init__(self, batch: AtariBatch) -> None:
        self.batch = batch
        n = batch.num_envs
        self.num_envs = n
        self.lives = np.zeros(n, dtype=np.int32)
        self.terminal = np.zeros(n, dtype=np.bool_)
        self.truncated = np.zeros(n, dtype=np.bool_)
        self.frame_number = np.zeros(n, dtype=np.int32)
        self.episode_frame_number = np.zeros(n, dtype=np.int32)
        self._refresh()

    def _refresh(self) -> None:
        """Re-read the per-env ALE state the programs look at after a round changed it."""
        b = self.batch
        self.lives = b.lives()
        self.terminal = b.game_over(with_truncation=False)
        self.truncated = b.game_truncated()
        self.frame_number = b.frame_number()
        self.episode_frame_number = b.episode_frame_number()

    def run(self, programs: dict[int, Program]) -> dict[int, Any]:
        """Run each env's program to completion; returns each program's return value by env index."""
        results: dict[int, Any] = {}
        pending: dict[int, tuple[Program, Request]] = {}
        for i, prog in programs.items():
            self._advance(i, prog, None, pending, results, first=True)
        n = self.num_envs
        while pending:
            kinds = {req[0] for _, req in pending.values()}
            masks = {k: np.zeros(n, dtype=np.bool_) for k in kinds}
            args = np.zeros(n, dtype=np.int64)
            for i, (_, (op, arg)) in pending.items():
                masks[op][i] = True
                args[i] = arg
            rewards: npt.NDArray[np.int32] | None = None
            if Op.LOAD_ROM in masks:
                self.batch.load_rom(masks[Op.LOAD_ROM], args.astype(np.uint32))
            if Op.RESET_GAME in masks:
                self.batch.reset_game(masks[Op.RESET_GAME])
            if Op.ACT in masks:
                rewards = self.batch.act(args, mask=masks[Op.ACT])
            if kinds - {Op.SCREEN}:
                self._refresh()
            screens = self.batch.get_screen_rgb() if Op.SCREEN in masks else None
            for i, (prog, (op, _)) in list(pending.items()):
                answer: Any = None
                if op is Op.ACT and rewards is not None:
                    answer = int(rewards[i])
                elif op is Op.SCREEN and screens is not None:
                    answer = screens[i].copy()
                self._advance(i, prog, answer, pending, results)
        return results

    @staticmethod
    def _advance(i: int, prog: Program, answer: Any, pending: dict[int, tuple[Program, Request]],
                 results: dict[int, Any], first: bool = False) -> None:
        try:
            req = next(prog) if first else prog.send(answer)
        except StopIteration as stop:
            pending.pop(i, None)
            results[i] = stop.value
            return
        pending[i] = (prog, req)


class AleEnv:
    """ale-py's ``AtariEnv`` for env ``index`` of a :class:`BatchDriver`'s batch.

    ``step``/``reset`` are programs (see the module docstring); ``need_obs=False`` skips fetching a
    screen that the caller discards (a screen fetch changes no emulator state).
    """

    def __init__(self, driver: BatchDriver, index: int, action_set: npt.NDArray[np.int64],
                 frameskip: int | tuple[int, int] = 1) -> None:
        self.driver = driver
        self.index = index
        self.action_set = action_set
        self.frameskip = frameskip
        self.render_mode: str | None = None
        # AtariEnv.__init__ seeds itself from OS entropy (seed_game(None)).
        np_seed = np.random.SeedSequence().generate_state(1)[0]
        self.np_random: np.random.Generator = seeding.np_random(int(np_seed))[0]

    @property
    def unwrapped(self) -> AleEnv:
        """The base env itself (as gymnasium's ``env.unwrapped``)."""
        return self

    def get_action_meanings(self) -> list[str]:
        """ALE's names of the actions of this env's action set."""
        return [ACTION_NAMES[a] for a in self.action_set]

    def lives(self) -> int:
        """ALE ``lives()``."""
        return int(self.driver.lives[self.index])

    def info(self) -> dict[str, Any]:
        """``AtariEnv._get_info()``: lives and frame numbers (Python ints)."""
        d, i = self.driver, self.index
        return {"lives": int(d.lives[i]), "episode_frame_number": int(d.episode_frame_number[i]),
                "frame_number": int(d.frame_number[i])}

    def screen(self) -> Generator[Request, Any, U8Array]:
        """Program: this env's RGB screen now."""
        obs: U8Array = yield (Op.SCREEN, 0)
        return obs

    def step(self, action: int, need_obs: bool = True) -> Generator[Request, Any, StepOut]:
        """Program: ``AtariEnv.step(action)``: ``frameskip`` frames (drawn from ``np_random`` when a range)."""
        skip = self.frameskip
        frames = int(self.np_random.integers(*skip)) if isinstance(skip, tuple) else skip
        reward = 0
        for _ in range(frames):
            reward += yield (Op.ACT, int(self.action_set[action]))
        d, i = self.driver, self.index
        terminal, truncated = bool(d.terminal[i]), bool(d.truncated[i])
        obs = (yield from self.screen()) if need_obs else None
        return obs, float(reward), terminal, truncated, self.info()

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None,
              need_obs: bool = True) -> Generator[Request, Any, ResetOut]:
        """Program: ``AtariEnv.reset(seed=seed)``: with a seed, ``seed_game`` and ``loadROM``; then ``reset_game``."""
        seeded: tuple[np.uint32, np.uint32] | None = None
        if seed is not None:
            np_seed, ale_seed = np.random.SeedSequence(seed).generate_state(2)
            self.np_random = seeding.np_random(int(np_seed))[0]
            yield (Op.LOAD_ROM, int(ale_seed))
            seeded = (np_seed, ale_seed)
        yield (Op.RESET_GAME, 0)
        obs = (yield from self.screen()) if need_obs else None
        info = self.info()
        if seeded is not None:
            info["seeds"] = seeded
        return obs, info
