"""Frames nobody observes are emulated without drawing (gpu_env/core/frames.h), and nothing observable changes.

Each check runs the same envs, seeds and actions twice: as shipped, and with ``GPU_ENV_DRAW_EVERY_FRAME=1``
(every frame drawn, as before the skip), and requires every observation, reward, flag, RAM byte, screen and
the whole emulated console (CPU, RIOT, TIA in ale-py's cloneState layout, collision latches included) to be
identical, while the frame counters (``NativeBackend.frame_counts``) show that the shipped run really left
frames undrawn and the other did not. ale-py itself is the reference of the lockstep at ALE frame skip 4.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import pytest
from gymnasium.spaces import Discrete

from conformance.lockstep import LockstepConfig, run_lockstep
from conformance.report import playable_roms
from gpu_env.atari_batch import AtariBatch
from gpu_env.make import make_vec
from gpu_env.rom_params import DRAW_EVERY_FRAME_VARIABLE

# Columns of NativeBackend.frame_counts().
DRAWN, SKIPPED, REDRAWN_READ, REDRAWN_PART, REDRAWN_INTERRUPTED = range(5)
ROMS = playable_roms()


@contextmanager
def draw_every_frame(monkeypatch: pytest.MonkeyPatch, on: bool) -> Iterator[None]:
    """Build envs inside the block with every frame drawn (``on``) or as shipped."""
    with monkeypatch.context() as m:
        if on:
            m.setenv(DRAW_EVERY_FRAME_VARIABLE, "1")
        else:
            m.delenv(DRAW_EVERY_FRAME_VARIABLE, raising=False)
        yield


def assert_same(shipped: list[Any], every: list[Any], what: str) -> None:
    """Every recorded output is identical, in order."""
    assert len(shipped) == len(every)
    for k, (a, b) in enumerate(zip(shipped, every, strict=True)):
        assert np.array_equal(np.asarray(a), np.asarray(b)), f"{what}: output {k} differs when every frame is drawn"


def _dqn_run(monkeypatch: pytest.MonkeyPatch, game: str, every: bool, steps: int) -> tuple[list[Any], np.ndarray]:
    with draw_every_frame(monkeypatch, every):
        env = make_vec(f"ALE/{game}-v5", 4, obs_format="numpy", num_threads=1, frameskip=1, noop_max=30,
                       frame_skip=4, screen_size=84, grayscale_obs=True, stack_size=4,
                       repeat_action_probability=0.25)
    try:
        obs, _ = env.reset(seed=3)
        assert isinstance(env.single_action_space, Discrete)
        assert isinstance(env.batch, AtariBatch)
        rng = np.random.default_rng(5)
        record: list[Any] = [obs.copy()]
        for _ in range(steps):
            actions = rng.integers(0, env.single_action_space.n, env.num_envs)
            obs, reward, term, trunc, _ = env.step(actions)
            record += [obs.copy(), reward.copy(), term.copy(), trunc.copy()]
        backend = env.batch.native_backend()
        record += [backend.get_ram(), backend.get_screen()]
        record += [v for i in range(env.num_envs) for v in backend.export_console(i).values()]
        return record, backend.frame_counts()
    finally:
        env.close()


@pytest.mark.parametrize("game", ["Pong", "Breakout", "Seaquest"])
def test_dqn_steps_draw_two_frames_of_four_and_observe_the_same(monkeypatch: pytest.MonkeyPatch, game: str) -> None:
    steps = 150
    shipped, counts = _dqn_run(monkeypatch, game, every=False, steps=steps)
    every, every_counts = _dqn_run(monkeypatch, game, every=True, steps=steps)
    assert_same(shipped, every, game)
    assert every_counts[:, SKIPPED:].sum() == 0
    # Frame skip 4 with a max-pool of the last two: the first two frames of every step are not drawn, nor
    # the frames inside resets (60 no-op frames, RESET presses, no-op starts).
    assert (counts[:, SKIPPED] >= 2 * steps).all(), counts
    assert (counts[:, DRAWN] >= 2 * steps).all(), counts
    assert counts[:, DRAWN].sum() + counts[:, SKIPPED].sum() == every_counts[:, DRAWN].sum()


def _act_run(monkeypatch: pytest.MonkeyPatch, game: str, every: bool, acts: int,
             frameskip: int) -> tuple[list[Any], np.ndarray]:
    with draw_every_frame(monkeypatch, every):
        batch = AtariBatch(game, 2, backend="cpu", num_threads=1, seeds=[11, 12], frameskip=frameskip,
                           repeat_action_probability=0.25)
    rng = np.random.default_rng(len(game))
    actions = batch.minimal_action_set()
    backend = batch.native_backend()
    record: list[Any] = [batch.get_screen()]
    for _ in range(acts):
        record.append(batch.act(actions[rng.integers(0, len(actions), 2)]))
        record += [batch.get_screen(), batch.lives()]
        record += [v for i in range(2) for v in backend.export_console(i).values()]
        over = batch.game_over()
        if over.any():
            batch.reset_game(over)
            record.append(batch.get_screen())
    return record, backend.frame_counts()


@pytest.mark.parametrize("game", ROMS)
def test_every_rom_observes_the_same_with_ale_frameskip(monkeypatch: pytest.MonkeyPatch, game: str) -> None:
    """ALE's own frame skip (3): only the last frame of each act is drawn.

    Every screen after an act, lives count and console state, on all 104 ROMs, as when every frame is drawn.
    """
    acts = 60
    shipped, counts = _act_run(monkeypatch, game, every=False, acts=acts, frameskip=3)
    every, every_counts = _act_run(monkeypatch, game, every=True, acts=acts, frameskip=3)
    assert_same(shipped, every, game)
    assert every_counts[:, SKIPPED:].sum() == 0
    assert (counts[:, SKIPPED] >= 2 * acts).all(), counts


@pytest.mark.parametrize("game", ROMS)
def test_every_rom_in_lockstep_with_ale_py_at_frameskip_4(game: str) -> None:
    """ale-py's act with frame_skip 4 against ours, which draws only each act's last frame.

    Reward, RAM, screen, lives, game over and frame counters after every act, on all 104 ROMs.
    """
    config = LockstepConfig(game, 80, seed=4, start="boot", actions="full", repeat_action_probability=0.25,
                            frameskip=4)
    result = run_lockstep(config)
    assert result.divergence is None, result.summary()
    assert {"reward", "ram", "screen"} <= set(result.compared)
