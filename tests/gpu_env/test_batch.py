"""ConsoleBatch (the console layer) and AtariBatch from imported states: properties and bad input."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpu_env import AtariBatch
from gpu_env.console_batch import ConsoleBatch
from gpu_env.console_native import ConsoleProps
from gpu_env.errors import GpuEnvError
from tests.gpu_env.tia_helpers import imported_batch, make_ale

GAMES = ("pong", "space_invaders", "pitfall2", "montezuma_revenge")
_ALES = {g: make_ale(g, warmup=40) for g in GAMES}

actions_strategy = st.lists(st.integers(min_value=0, max_value=17), min_size=1, max_size=12)


def _run(batch: ConsoleBatch, plan: list[list[int]]) -> list[tuple[np.ndarray, np.ndarray]]:
    out = []
    for acts in plan:
        batch.step_frames(np.asarray(acts))
        out.append((batch.get_ram(), batch.get_screen()))
    return out


@settings(max_examples=8, deadline=None)
@given(game=st.sampled_from(GAMES), actions=actions_strategy)
def test_same_state_same_actions_same_frames(game: str, actions: list[int]) -> None:
    a = imported_batch(game, 1, _ALES[game])
    b = imported_batch(game, 1, _ALES[game])
    plan = [[x] for x in actions]
    for (ma, sa), (mb, sb) in zip(_run(a, plan), _run(b, plan), strict=True):
        assert (ma == mb).all()
        assert (sa == sb).all()


@settings(max_examples=8, deadline=None)
@given(game=st.sampled_from(GAMES), before=actions_strategy, after=actions_strategy)
def test_restore_of_clone_then_step_equals_step(game: str, before: list[int], after: list[int]) -> None:
    batch = imported_batch(game, 2, _ALES[game])
    _run(batch, [[x, 17 - x] for x in before])
    saved = batch.clone_state()
    first = _run(batch, [[x, x] for x in after])
    _run(batch, [[3, 4]] * 5)  # wander off
    batch.restore_state(saved)
    again = _run(batch, [[x, x] for x in after])
    for (m1, s1), (m2, s2) in zip(first, again, strict=True):
        assert (m1 == m2).all()
        assert (s1 == s2).all()


@settings(max_examples=8, deadline=None)
@given(game=st.sampled_from(GAMES), mine=actions_strategy, seed=st.integers(0, 2**16), size=st.integers(2, 5))
def test_env_frames_do_not_depend_on_batch_size_or_neighbours(
    game: str, mine: list[int], seed: int, size: int
) -> None:
    rng = np.random.default_rng(seed)
    alone = imported_batch(game, 1, _ALES[game])
    crowd = imported_batch(game, size, _ALES[game], num_threads=2)
    slot = int(rng.integers(size))
    for x in mine:
        others = rng.integers(0, 18, size=size)
        others[slot] = x
        alone.step_frames(np.array([x]))
        crowd.step_frames(others)
        assert (alone.get_ram()[0] == crowd.get_ram()[slot]).all()
        assert (alone.get_screen()[0] == crowd.get_screen()[slot]).all()


def test_console_frames_equal_ale_frames() -> None:
    ale = make_ale("breakout", warmup=30, seed=3)
    batch = imported_batch("breakout", 1, ale)
    actions = ale.getMinimalActionSet()
    rng = np.random.default_rng(5)
    for _ in range(200):
        action = actions[int(rng.integers(len(actions)))]
        ale.act(action)
        batch.step_frames(np.array([action.value]))
        if ale.game_over():
            break
        assert (batch.get_ram()[0] == ale.getRAM()).all()
        assert (batch.get_screen()[0] == ale.getScreen()).all()
        assert (batch.get_screen_rgb()[0] == ale.getScreenRGB()).all()
        assert (batch.get_screen_grayscale()[0] == ale.getScreenGrayscale()).all()


def test_atari_batch_from_an_imported_state_matches_ale() -> None:
    ale = make_ale("breakout", warmup=30, seed=3)
    batch = AtariBatch("breakout", 1, repeat_action_probability=0.0)
    batch.load_ale_state(0, ale.cloneState(), ale.getScreen())
    actions = ale.getMinimalActionSet()
    rng = np.random.default_rng(5)
    for _ in range(200):
        action = actions[int(rng.integers(len(actions)))]
        assert batch.act(np.array([action.value]))[0] == ale.act(action)
        assert (batch.get_ram()[0] == ale.getRAM()).all()
        assert (batch.get_screen()[0] == ale.getScreen()).all()
        assert batch.lives()[0] == ale.lives()
        assert batch.game_over()[0] == ale.game_over()
    assert list(batch.minimal_action_set()) == [a.value for a in actions]


def test_bad_input_is_rejected_with_the_value_named() -> None:
    batch = imported_batch("pong", 2, _ALES["pong"])
    with pytest.raises(GpuEnvError, match=r"shape \(3,\)"):
        batch.step_frames(np.zeros(3, dtype=np.int64))
    with pytest.raises(GpuEnvError, match=r"0\.\.17"):
        batch.step_frames(np.array([0, 18]))
    with pytest.raises(GpuEnvError, match="frames=0"):
        batch.step_frames(np.zeros(2, dtype=np.int64), frames=0)
    with pytest.raises(GpuEnvError, match="out of range"):
        batch.load_ale_state(5, _ALES["pong"].cloneState())
    with pytest.raises(GpuEnvError, match="md5"):
        batch.load_ale_state(0, _ALES["space_invaders"].cloneState())
    with pytest.raises(GpuEnvError, match="num_envs"):
        ConsoleBatch("pong", 0)
    with pytest.raises(GpuEnvError, match="no state"):
        ConsoleBatch("pong", 2).step_frames(np.zeros(2, dtype=np.int64))
    other = ConsoleBatch("pong", 3)
    with pytest.raises(GpuEnvError, match="same ROM and size"):
        other.restore_state(batch.clone_state())


def test_a_rom_outside_ales_table_needs_its_props(tmp_path: object) -> None:
    from pathlib import Path

    from ale_py import roms

    copy = Path(str(tmp_path)) / "homebrew.bin"
    copy.write_bytes(Path(str(roms.get_rom_path("pong"))).read_bytes()[::-1])
    with pytest.raises(GpuEnvError, match="props=ConsoleProps"):
        ConsoleBatch(copy, 1)
    assert ConsoleBatch(copy, 1, props=ConsoleProps()).props.height == 210
