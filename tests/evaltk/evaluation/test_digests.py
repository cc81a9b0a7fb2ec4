"""Per-episode digests (evaltk.evaluation.digests) equal their definition, computed here step by step, slot by slot."""

from __future__ import annotations

import struct
import zlib
from hashlib import blake2b

import numpy as np
import pytest

from evaltk.evaluation.digests import LOG_ROWS, EpisodeDigests


class Definition:
    """The module docstring's digests, one hash update per slot and step (what the tables hold)."""

    def __init__(self, num_envs: int) -> None:
        self.steps = [blake2b(b"steps", digest_size=16) for _ in range(num_envs)]
        self.obs = [blake2b(b"obs", digest_size=16) for _ in range(num_envs)]

    def start(self, slot: int) -> None:
        self.steps[slot] = blake2b(b"steps", digest_size=16)
        self.obs[slot] = blake2b(b"obs", digest_size=16)

    def observe(self, obs: np.ndarray, active: np.ndarray) -> None:
        for slot in np.flatnonzero(active):
            self.obs[slot].update(struct.pack("<I", zlib.crc32(np.ascontiguousarray(obs[slot]).tobytes())))

    def step(self, actions: np.ndarray, rewards: np.ndarray, active: np.ndarray) -> None:
        for slot in np.flatnonzero(active):
            self.steps[slot].update(np.asarray(actions[slot], dtype="<i8").tobytes())
            self.steps[slot].update(struct.pack("<d", float(rewards[slot])))

    def finish(self, slot: int, steps: int, terminated: bool, truncated: bool) -> tuple[str, str]:
        h = self.steps[slot].copy()
        h.update(struct.pack("<q??", steps, terminated, truncated))
        return h.hexdigest(), self.obs[slot].hexdigest()


def _play(seed: int, num_envs: int, steps: int, obs_shape: tuple[int, ...], obs_dtype: str,
          action_shape: tuple[int, ...], transpose: bool) -> list[tuple[int, tuple[str, str], tuple[str, str]]]:
    """Drive both with random episodes (starts, restarts, idle slots, ends); return each end's two digest pairs."""
    rng = np.random.default_rng(seed)
    ours, ref = EpisodeDigests(num_envs), Definition(num_envs)
    length = np.zeros(num_envs, np.int64)
    active = np.ones(num_envs, np.bool_)
    ends = []
    for t in range(steps):
        obs = (rng.integers(0, 256, (num_envs, *obs_shape)) if obs_dtype == "uint8"
               else rng.standard_normal((num_envs, *obs_shape))).astype(obs_dtype)
        if transpose:  # a non-contiguous batch (the last two axes swapped)
            obs = np.swapaxes(obs, -1, -2)
        actions = rng.integers(0, 18, (num_envs, *action_shape))
        rewards = rng.choice(np.array([0.0, 1.0, -1.0, 0.25], np.float32), num_envs)
        for d in (ours, ref):
            d.observe(obs, active)
            d.step(actions, rewards, active)
        length[active] += 1
        for slot in range(num_envs):
            draw = rng.random()
            if active[slot] and draw < 0.02:  # a voided episode started again
                ours.start(slot)
                ref.start(slot)
                length[slot] = 0
            elif active[slot] and draw < 0.06:
                term, trunc = bool(rng.random() < 0.7), bool(rng.random() < 0.5)
                ends.append((t, ours.finish(slot, int(length[slot]), term, trunc),
                             ref.finish(slot, int(length[slot]), term, trunc)))
                active[slot] = rng.random() < 0.8  # an idle slot: no episodes left for it for now
                if active[slot]:
                    ours.start(slot)
                    ref.start(slot)
                    length[slot] = 0
            elif not active[slot] and draw < 0.1:
                ours.start(slot)
                ref.start(slot)
                active[slot], length[slot] = True, 0
    return ends


@pytest.mark.parametrize(("obs_shape", "obs_dtype", "action_shape", "transpose"), [
    ((4, 6, 5), "uint8", (), False),
    ((7, 3), "float32", (3,), True),
    ((2, 3, 4), "uint8", (2,), True),
])
def test_digests_equal_the_definition_across_log_folds(obs_shape: tuple[int, ...], obs_dtype: str,
                                                       action_shape: tuple[int, ...], transpose: bool) -> None:
    ends = _play(7, 5, 3 * LOG_ROWS + 17, obs_shape, obs_dtype, action_shape, transpose)
    assert len(ends) > 40
    for t, ours, ref in ends:
        assert ours == ref, f"episode ending at step {t}"


def test_a_long_episode_spans_several_log_folds() -> None:
    """One slot plays 2.5 logs' worth of steps while the other ends every few steps."""
    ours, ref = EpisodeDigests(2), Definition(2)
    rng = np.random.default_rng(3)
    active = np.ones(2, np.bool_)
    last = ("", "")
    for t in range(1, int(2.5 * LOG_ROWS)):
        obs = rng.integers(0, 256, (2, 3, 3)).astype(np.uint8)
        actions, rewards = rng.integers(0, 4, 2), rng.random(2)
        for d in (ours, ref):
            d.observe(obs, active)
            d.step(actions, rewards, active)
        if t % 7 == 0:
            assert ours.finish(1, 7, True, False) == ref.finish(1, 7, True, False)
            ours.start(1)
            ref.start(1)
        last = ours.finish(0, t, False, True)
        assert last == ref.finish(0, t, False, True)
    assert len(set(last)) == 2


def test_the_observation_crc_is_zlibs_crc32() -> None:
    """Whichever implementation is installed (zlib-ng's or the standard library's), the values are zlib's."""
    import zlib

    from evaltk.evaluation import digests

    rng = np.random.default_rng(1)
    for size in (0, 1, 15, 64, 1000, 28_224, 100_800):
        data = rng.integers(0, 256, size, dtype=np.uint8).tobytes()
        assert digests.crc32(data) == zlib.crc32(data)
