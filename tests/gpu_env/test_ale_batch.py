"""AtariBatch API properties: determinism, clone/restore, independence of envs, ale-py state import, errors."""

from __future__ import annotations

import ale_py
import numpy as np
import pytest
from ale_py import roms

import gpu_env
from gpu_env.atari_batch import AtariBatch
from gpu_env.errors import BackendError, GpuEnvError, RomError
from gpu_env.games import game_info, games
from gpu_env.rom_params import (
    DRAW_EVERY_FRAME_VARIABLE,
    PARAM_COUNT,
    encode_set_mode_program,
    rom_params,
    set_mode_programs,
)
from gpu_env.roms import load_rom


def _run(batch: AtariBatch, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    rewards = []
    for a in actions:
        rewards.append(batch.act(a))
        over = batch.game_over()
        if over.any():
            batch.reset_game(over)
    return np.array(rewards), batch.get_ram()


def test_deterministic_and_independent_of_batch_and_neighbours() -> None:
    rng = np.random.default_rng(0)
    actions = rng.integers(0, 18, (150, 3))
    a = AtariBatch("breakout", 3, backend="cpu", seeds=[1, 2, 3])
    b = AtariBatch("breakout", 3, backend="cpu", seeds=[1, 2, 3], num_threads=1)
    ra, rama = _run(a, actions)
    rb, ramb = _run(b, actions)
    np.testing.assert_array_equal(ra, rb)
    np.testing.assert_array_equal(rama, ramb)
    single = AtariBatch("breakout", 1, backend="cpu", seeds=[2])
    other = actions.copy()
    other[:, 0] = rng.integers(0, 18, 150)  # env 0's actions change, env 1's do not
    rs, rams = _run(single, actions[:, 1:2])
    rc, ramc = _run(AtariBatch("breakout", 3, backend="cpu", seeds=[1, 2, 3]), other)
    np.testing.assert_array_equal(rs[:, 0], rc[:, 1])
    np.testing.assert_array_equal(rams[0], ramc[1])


def test_clone_then_restore_replays_identically() -> None:
    batch = AtariBatch("seaquest", 2, backend="cpu", seeds=[4, 5])
    rng = np.random.default_rng(1)
    for _ in range(50):
        batch.act(rng.integers(0, 18, 2))
    saved = batch.clone_state()
    actions = rng.integers(0, 18, (60, 2))
    first = [batch.act(a) for a in actions], batch.get_ram(), batch.get_screen()
    batch.restore_state(saved)
    second = [batch.act(a) for a in actions], batch.get_ram(), batch.get_screen()
    np.testing.assert_array_equal(first[0], second[0])
    np.testing.assert_array_equal(first[1], second[1])
    np.testing.assert_array_equal(first[2], second[2])


def test_masked_envs_are_not_touched() -> None:
    batch = AtariBatch("pong", 2, backend="cpu", seeds=[1, 1])
    ram = batch.get_ram()
    frames = batch.frame_number()
    rewards = batch.act(np.array([3, 3]), mask=np.array([True, False]))
    assert rewards[1] == 0
    np.testing.assert_array_equal(batch.get_ram()[1], ram[1])
    assert batch.frame_number().tolist() == [frames[0] + 1, frames[1]]


@pytest.mark.parametrize("game", ["pong", "qbert", "elevator_action"])
def test_load_ale_state_continues_like_ale(game: str) -> None:
    ale = ale_py.ALEInterface()
    ale.setLoggerMode(ale_py.LoggerMode.Error)
    ale.setInt("random_seed", 7)
    ale.setFloat("repeat_action_probability", 0.0)
    ale.loadROM(str(roms.get_rom_path(game)))
    rng = np.random.default_rng(1)
    for _ in range(100):
        ale.act(ale_py.Action(int(rng.integers(0, 18))))
    previous = ale.getScreen().copy()
    ale.act(ale_py.Action.NOOP)
    state, screen = ale.cloneState(), ale.getScreen().copy()
    batch = AtariBatch(game, 2, backend="cpu", seeds=[3, 4], repeat_action_probability=0.0)
    batch.load_ale_state(1, state, screen, previous)
    for _ in range(200):
        a = int(rng.integers(0, 18))
        assert ale.act(ale_py.Action(a)) == batch.act(np.array([0, a]))[1]
        np.testing.assert_array_equal(ale.getRAM(), batch.get_ram()[1])
        np.testing.assert_array_equal(ale.getScreen(), batch.get_screen()[1])
        if ale.game_over():
            ale.reset_game()
            batch.reset_game(np.array([False, True]))
    assert ale.lives() == batch.lives()[1]


def test_bad_arguments_are_named() -> None:
    with pytest.raises(RomError, match="not_a_game"):
        AtariBatch("not_a_game", 1)
    with pytest.raises(BackendError, match="tpu"):
        AtariBatch("pong", 1, backend="tpu")
    with pytest.raises(BackendError, match="cuda"):  # no CuPy / GPU here: a clear error, nothing pretends
        AtariBatch("pong", 1, backend="cuda")
    batch = AtariBatch("pong", 2, backend="cpu", seeds=0)
    with pytest.raises(ValueError, match="18"):
        batch.act(np.array([0, 18]))
    with pytest.raises(ValueError, match="mode 99"):
        batch.set_mode(99)
    with pytest.raises(ValueError, match="mask"):
        batch.reset_game(np.array([1, 0]))
    ale = ale_py.ALEInterface()
    ale.setLoggerMode(ale_py.LoggerMode.Error)
    ale.loadROM(str(roms.get_rom_path("pong")))
    with_rng = ale.cloneState(include_rng=True)
    with pytest.raises(GpuEnvError, match="include_rng"):
        batch.load_ale_state(0, with_rng)


def test_set_mode_programs_encode_every_op() -> None:
    words = encode_set_mode_program([
        {"op": "select", "frames": 2},
        {"op": "select_until", "frames": 1, "max_presses": None,
         "until": {"any": [[{"addr": 129, "mask": 255, "value": 3, "decimal": False}]]}},
        {"op": "act_until_changed", "addr": 176, "actions": [5, 0]},
        {"op": "soft_reset"},
    ])
    assert words == [1, 2, 2, 1, -1, 1, 1, 129, 255, 3, 0, 8, 176, 2, 5, 0, 3, 0]
    with pytest.raises(GpuEnvError, match="teleport"):
        encode_set_mode_program([{"op": "teleport"}])


def test_rom_params_follow_params_h_order(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(DRAW_EVERY_FRAME_VARIABLE, raising=False)
    info, rom = game_info("pong"), load_rom("pong")
    words = rom_params(info, int(rom.scheme), 4, 108_000)
    assert words.dtype == np.int32
    assert words.shape == (PARAM_COUNT,)
    assert words[0] == info.game_id
    assert words[1] == int(rom.scheme)
    assert words[5:7].tolist() == [1, 1]  # pong: paddles in both ports (kParamLeftPaddles, kParamRightPaddles)
    assert words[-3:].tolist() == [4, 108_000, 0]  # kParamFrameskip, kParamMaxFrames, kParamDrawEveryFrame
    monkeypatch.setenv(DRAW_EVERY_FRAME_VARIABLE, "1")
    assert rom_params(info, int(rom.scheme), 4, 108_000)[-1] == 1  # draw the frames nobody observes too
    with pytest.raises(GpuEnvError, match="frameskip"):
        rom_params(info, int(rom.scheme), 0, 0)
    programs = set_mode_programs(game_info("double_dunk"))
    assert programs.offsets
    assert all(programs.words[o] != 0 for o in programs.offsets.values())
    assert programs.offset(-1) == -1
    plain = next(g for g in games().values() if not any(g.set_mode_program(m) for m in g.modes))
    assert set_mode_programs(plain).array().tolist() == [0]  # setMode not overridden: no program


def test_one_public_batch_class() -> None:
    assert gpu_env.AtariBatch is AtariBatch
    assert not hasattr(gpu_env, "FrameBatch")


@pytest.mark.parametrize(("grayscale", "size"), [(True, (84, 84)), (False, (105, 80))])
def test_step_preprocessed_with_resets_matches_the_reference_backend(grayscale: bool, size: tuple[int, int]) -> None:
    """The fused native step (steps, unseeded resets with no-ops, observations) equals the ale_py backend's.

    The ale_py backend runs the same method as loops of batch calls over ALEInterface.

    Short episodes (truncation at 30 frames) and up to 45 no-ops, so that games end inside the
    no-ops (reset again) as well as inside the frame skip; some envs neither step nor reset.
    """
    from gpu_env.preprocess_cpu import CpuObservation

    n, skip = 4, 4
    kwargs = {"seeds": [7, 8, 9, 10], "repeat_action_probability": 0.25, "max_num_frames_per_episode": 30}
    batches = [AtariBatch("breakout", n, backend=b, **kwargs) for b in ("cpu", "ale_py")]
    height = batches[0].screen_shape[0]
    shape = (n, height, 160) if grayscale else (n, height, 160, 3)
    state = [(np.zeros(n, np.int32), np.zeros(shape, np.uint8), np.zeros(shape, np.uint8)) for _ in batches]
    observation = CpuObservation(n, (height, 160), size, 1 if grayscale else 3)
    rng = np.random.default_rng(0)
    minimal = batches[0].minimal_action_set()
    resets_after_game_end = 0
    for t in range(60):
        actions = minimal[rng.integers(0, len(minimal), n)]
        roll = rng.random(n)
        reset, step = roll < 0.25, roll >= 0.35
        noops = rng.integers(0, 46, n)
        out = [b.step_preprocessed(actions, step, skip, True, lives, grayscale, buf0, buf1, reset=reset, noops=noops,
                                   observation=observation)
               for b, (lives, buf0, buf1) in zip(batches, state, strict=True)]
        for name, mine, ref in zip(("rewards", "terminated", "truncated", "observation"), out[0], out[1], strict=True):
            assert np.array_equal(mine, ref), f"step {t}: {name} differs"
        for name, mine, ref in zip(("lives", "buf0", "buf1"), state[0], state[1], strict=True):
            assert np.array_equal(mine, ref), f"step {t}: {name} differs"
        assert np.array_equal(batches[0].episode_frame_number(), batches[1].episode_frame_number()), f"step {t}"
        resets_after_game_end += int((reset & (noops > 0) & (batches[1].episode_frame_number() < noops)).sum())
    assert resets_after_game_end > 0  # some no-op runs crossed the 30-frame truncation and reset again


def test_step_preprocessed_refuses_an_env_in_both_masks() -> None:
    batch = AtariBatch("pong", 2, backend="cpu", seeds=0)
    height = batch.screen_shape[0]
    bufs = np.zeros((2, height, 160), np.uint8), np.zeros((2, height, 160), np.uint8)
    both = np.array([True, False])
    with pytest.raises(ValueError, match=r"envs \[0\] are in both mask and reset"):
        batch.step_preprocessed(np.zeros(2, np.int64), both, 4, False, np.zeros(2, np.int32), True, *bufs,
                                reset=both)


def test_step_preprocessed_refuses_an_observation_for_other_screens() -> None:
    from gpu_env.preprocess_cpu import CpuObservation

    batch = AtariBatch("pong", 2, backend="cpu", seeds=0)
    height = batch.screen_shape[0]
    bufs = np.zeros((2, height, 160), np.uint8), np.zeros((2, height, 160), np.uint8)
    rgb = CpuObservation(2, (height, 160), (84, 84), 3)
    with pytest.raises(ValueError, match=r"is for .* \(2, 210, 160, 3\), the screens are \(2, 210, 160, 1\)"):
        batch.step_preprocessed(np.zeros(2, np.int64), None, 4, False, np.zeros(2, np.int32), True, *bufs,
                                observation=rgb)
