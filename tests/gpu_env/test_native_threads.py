"""The native library's thread pool: results independent of threads, callers and fork (gpu_env/native/parallel.h)."""

from __future__ import annotations

import multiprocessing as mp
import threading

import numpy as np

from gpu_env import AtariBatch

STEPS = 60


def _play(num_threads: int, game: str = "breakout", num_envs: int = 6) -> tuple[np.ndarray, np.ndarray]:
    """Rewards and final RGB screens of a seeded random run."""
    batch = AtariBatch(game, num_envs, seeds=list(range(num_envs)), num_threads=num_threads)
    actions = np.random.default_rng(7).integers(0, 18, size=(STEPS, num_envs))
    rewards = np.stack([batch.act(a) for a in actions])
    return rewards, batch.get_screen_rgb()


def _child(queue: mp.Queue) -> None:  # type: ignore[type-arg]
    rewards, screen = _play(3)
    queue.put((rewards.tobytes(), screen.tobytes()))


def test_results_do_not_depend_on_the_thread_count() -> None:
    one = _play(1)
    for threads in (2, 4, 6):
        got = _play(threads)
        np.testing.assert_array_equal(got[0], one[0])
        np.testing.assert_array_equal(got[1], one[1])


def test_batches_stepped_from_several_python_threads_at_once_give_the_sequential_results() -> None:
    # One caller holds the pool; the others start their own threads. All must finish with the same results.
    games = ["breakout", "pong", "seaquest", "ms_pacman"]
    expected = {g: _play(1, g) for g in games}
    got: dict[str, tuple[np.ndarray, np.ndarray]] = {}

    def run(game: str) -> None:
        got[game] = _play(2, game)

    threads = [threading.Thread(target=run, args=(g,)) for g in games]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert sorted(got) == sorted(games)
    for g in games:
        np.testing.assert_array_equal(got[g][0], expected[g][0])
        np.testing.assert_array_equal(got[g][1], expected[g][1])


def test_a_forked_child_gets_a_working_pool() -> None:
    expected = _play(3)  # the parent's pool now has helper threads, which a forked child does not inherit
    ctx = mp.get_context("fork")
    queue = ctx.Queue()
    child = ctx.Process(target=_child, args=(queue,))
    child.start()
    rewards, screen = queue.get(timeout=60)  # a child waiting on the parent's threads would hang here
    child.join(timeout=30)
    assert child.exitcode == 0
    assert rewards == expected[0].tobytes()
    assert screen == expected[1].tobytes()
