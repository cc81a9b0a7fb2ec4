"""gpu_env/core/ale/mt19937.h against numpy's MT19937 (which reproduces std::mt19937), and ALE's RNG use."""

from __future__ import annotations

import ctypes

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpu_env.atari_batch import AtariBatch
from gpu_env.binding import native
from gpu_env.errors import GpuEnvError
from gpu_env.mt19937 import from_text, std_mt19937, to_text

SYSTEM_SEED = 4753849  # ALE's system_random_seed


def _ours(seed: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    out = np.zeros(n, dtype=np.uint32)
    dbl = np.zeros(n, dtype=np.float64)
    native().gpu_env_ale_mt_draws(ctypes.c_uint32(seed), ctypes.c_int32(n), out.ctypes.data_as(ctypes.c_void_p),
                                  dbl.ctypes.data_as(ctypes.c_void_p))
    return out, dbl


def _numpy(seed: int, n: int) -> np.ndarray:
    bitgen = std_mt19937(seed)
    return np.asarray(bitgen.random_raw(n), dtype=np.uint32)


@pytest.mark.parametrize("seed", [0, 1, SYSTEM_SEED, 2**31 - 1, 2**32 - 1])
def test_matches_numpy_over_several_twists(seed: int) -> None:
    raw, dbl = _ours(seed, 2000)
    np.testing.assert_array_equal(raw, _numpy(seed, 2000))
    np.testing.assert_array_equal(dbl, raw.astype(np.float64) / 2.0**32)


@settings(max_examples=25, deadline=None)
@given(st.integers(min_value=0, max_value=2**32 - 1))
def test_matches_numpy_for_any_seed(seed: int) -> None:
    np.testing.assert_array_equal(_ours(seed, 700)[0], _numpy(seed, 700))


def test_power_on_ram_bytes_are_the_first_system_draws() -> None:
    # atari.md 2(c): the first RIOT RAM bytes would be 184, 150, 192, 73, ...
    assert (_ours(SYSTEM_SEED, 4)[0] & 0xFF).tolist() == [184, 150, 192, 73]


def _rng_state(batch: AtariBatch, which: int) -> tuple[np.ndarray, int]:
    impl = batch._impl
    words = np.zeros(624, dtype=np.uint32)
    index = np.zeros(1, dtype=np.uint32)
    native().gpu_env_ale_rng_state(impl._envs.ctypes.data_as(ctypes.c_void_p), ctypes.c_int32(0),  # type: ignore[attr-defined]
                                   ctypes.c_int32(which), words.ctypes.data_as(ctypes.c_void_p),
                                   index.ctypes.data_as(ctypes.c_void_p))
    return words, int(index[0])


def _advanced(seed: int, draws: int) -> tuple[np.ndarray, int]:
    bitgen = std_mt19937(seed)
    if draws:
        bitgen.random_raw(draws)
    state = bitgen.state["state"]
    return np.asarray(state["key"], dtype=np.uint32), int(state["pos"])


def _same_state(ours: tuple[np.ndarray, int], ref: tuple[np.ndarray, int]) -> bool:
    # numpy twists lazily like std::mt19937; a fresh seed has pos 624 in both.
    return bool(np.array_equal(ours[0], ref[0]) and ours[1] == ref[1])


@pytest.mark.parametrize(("game", "per_reset"), [("pong", 1), ("darkchambers", 129)])
def test_system_rng_draw_counts(game: str, per_reset: int) -> None:
    # atari.md 2(c): loadROM draws 128 + 1 + 3 resets x (1 or 129); each reset_game 1 or 129 more.
    batch = AtariBatch(game, 1, backend="cpu", seeds=[5])
    assert _same_state(_rng_state(batch, 0), _advanced(SYSTEM_SEED, 128 + 1 + 3 * per_reset))
    batch.reset_game()
    batch.reset_game()
    assert _same_state(_rng_state(batch, 0), _advanced(SYSTEM_SEED, 128 + 1 + 5 * per_reset))


def test_two_sticky_draws_per_frame_even_with_p_zero() -> None:
    batch = AtariBatch("pong", 1, backend="cpu", seeds=[123], repeat_action_probability=0.0, frameskip=2)
    assert _same_state(_rng_state(batch, 1), _advanced(123, 0))
    for _ in range(7):
        batch.act(np.array([3]))
    assert _same_state(_rng_state(batch, 1), _advanced(123, 2 * 2 * 7))


@pytest.mark.parametrize(("seed", "draws"), [(0, 0), (SYSTEM_SEED, 1), (2**32 - 1, 700)])
def test_text_form_round_trips(seed: int, draws: int) -> None:
    bits = std_mt19937(seed)
    bits.random_raw(draws)
    text = to_text(bits)
    assert len(text.split()) == 625
    words, index = from_text(text)
    state = bits.state["state"]
    np.testing.assert_array_equal(words, np.asarray(state["key"], dtype=np.uint32))
    assert index == int(state["pos"])
    with pytest.raises(GpuEnvError, match="625 numbers, found 624"):
        from_text(text.rsplit(b" ", 1)[0])

