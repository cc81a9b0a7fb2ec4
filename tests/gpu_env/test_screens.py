"""Native screens of the ``"cpu"`` backend: every ALE format, frame-exact with ale-py, written into ``out=``.

``get_screen`` / ``get_screen_rgb`` / ``get_screen_grayscale`` are produced by the C++ library
(``gpu_env/native/screen_format.h``) through the palettes of :mod:`gpu_env.palettes`; here they are
checked against the palette lookup in numpy and against ale-py's own ``getScreen*`` on real frames of
an NTSC ROM (pong) and a PAL-detected ROM (keystone_kapers).
"""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

from gpu_env import AtariBatch, make_vec, palettes

NUM_ENVS = 3
STEPS = 120


def _lockstep_screens(game: str) -> tuple[AtariBatch, AtariBatch]:
    """Return a cpu and an ale_py batch with the same seeds, stepped with the same random actions."""
    seeds = [11, 12, 13]
    cpu = AtariBatch(game, NUM_ENVS, backend="cpu", seeds=seeds, repeat_action_probability=0.25, num_threads=2)
    ref = AtariBatch(game, NUM_ENVS, backend="ale_py", seeds=seeds, repeat_action_probability=0.25)
    rng = np.random.default_rng(0)
    actions = cpu.minimal_action_set()
    for _ in range(STEPS):
        a = rng.choice(actions, size=NUM_ENVS)
        np.testing.assert_array_equal(cpu.act(a), ref.act(a))
        over = cpu.game_over()
        if over.any():
            cpu.reset_game(over)
            ref.reset_game(over)
    return cpu, ref


@pytest.mark.parametrize(("game", "pal"), [("pong", False), ("keystone_kapers", True)])
def test_native_screens_equal_ale_py_and_the_palette_lookup(game: str, pal: bool) -> None:
    cpu, ref = _lockstep_screens(game)
    assert cpu.screen_shape == ((250, 160) if pal else (210, 160))
    index = cpu.get_screen()
    np.testing.assert_array_equal(index, ref.get_screen())
    assert len(np.unique(index)) > 2, "a real frame has several colours"
    rgb, gray = cpu.get_screen_rgb(), cpu.get_screen_grayscale()
    assert rgb.shape == (NUM_ENVS, *cpu.screen_shape, 3)
    assert gray.shape == (NUM_ENVS, *cpu.screen_shape)
    np.testing.assert_array_equal(rgb, palettes.rgb_table(pal)[index])
    np.testing.assert_array_equal(gray, palettes.gray_table(pal)[index])
    np.testing.assert_array_equal(rgb, ref.get_screen_rgb())
    np.testing.assert_array_equal(gray, ref.get_screen_grayscale())


def test_every_palette_index_converts_as_the_tables_say() -> None:
    """All 256 indices (odd ones included, which ALE's grey-out produces) through the native RGB/gray path."""
    batch = AtariBatch("pong", 1, seeds=0, num_threads=1)
    state = bytearray(batch.clone_state()[0])
    env_bytes = len(state) - 2 * 160 * 250
    # Both frame buffers (the batch's raw state after the env) filled with 0..255 repeated.
    pattern = np.resize(np.arange(256, dtype=np.uint8), 2 * 160 * 250)
    state[env_bytes:] = pattern.tobytes()
    batch.restore_state([bytes(state)])
    index = batch.get_screen()
    assert set(np.unique(index).tolist()) == set(range(256))
    np.testing.assert_array_equal(batch.get_screen_rgb(), palettes.NTSC_RGB[index])
    np.testing.assert_array_equal(batch.get_screen_grayscale(), palettes.NTSC_GRAY[index])


@pytest.mark.parametrize("backend", ["cpu", "ale_py"])
@pytest.mark.parametrize(("method", "channels"), [("get_screen", ()), ("get_screen_rgb", (3,)),
                                                  ("get_screen_grayscale", ())])
def test_out_is_written_in_place(backend: str, method: str, channels: tuple[int, ...]) -> None:
    batch = AtariBatch("breakout", 2, backend=backend, seeds=[1, 2])
    for _ in range(5):
        batch.act(np.array([1, 3]))
    fetch = getattr(batch, method)
    want = fetch()
    out = np.full((2, *batch.screen_shape, *channels), 7, dtype=np.uint8)
    tracemalloc.start()
    got = fetch(out=out)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert got is out
    assert np.shares_memory(got, out)
    np.testing.assert_array_equal(out, want)
    if backend == "cpu":
        assert peak < out.nbytes // 10, f"{method}(out=) allocated {peak} bytes"


@pytest.mark.parametrize(
    ("make_out", "problem"),
    [
        (lambda shape: np.empty(shape[:-1], np.uint8), "shape"),
        (lambda shape: np.empty(shape, np.int32), "int32"),
        (lambda shape: np.empty((shape[0], shape[1], shape[2] * 2, 3), np.uint8)[:, :, ::2], "c_contiguous=False"),
        (lambda shape: np.broadcast_to(np.empty(shape[1:], np.uint8), shape), "writeable=False"),
        (lambda shape: [[0]], "list"),
    ],
)
def test_bad_out_is_refused_with_a_clear_error(make_out: object, problem: str) -> None:
    batch = AtariBatch("pong", 2, seeds=0)
    shape = (2, *batch.screen_shape, 3)
    with pytest.raises(ValueError, match=r"get_screen_rgb\(out=\.\.\.\) needs a writeable C-contiguous") as info:
        batch.get_screen_rgb(out=make_out(shape))  # type: ignore[operator]
    assert problem in str(info.value)


@pytest.mark.parametrize("stack_size", [None, 2])
def test_make_vec_raw_observations_are_native_screens_the_caller_owns(stack_size: int | None) -> None:
    env = make_vec("ALE/Breakout-v5", 2, obs_type="rgb", stack_size=stack_size, num_threads=2)
    obs, _ = env.reset(seed=3)
    first = obs.copy()
    actions = np.ones(2, dtype=np.int64)
    for _ in range(4):
        nxt, *_ = env.step(actions)
    screens = env.batch.get_screen_rgb()
    newest = nxt if stack_size is None else nxt[:, -1]
    np.testing.assert_array_equal(newest, screens)
    assert (obs == first).all(), "a returned observation changed when the env stepped on"
    assert not np.shares_memory(nxt, screens)
