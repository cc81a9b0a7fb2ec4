"""``gpu_env.backends.native_pool.NativePool``: the running envs it keeps and ``run_all``'s env order."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

from gpu_env.atari_batch import AtariBatch
from gpu_env.backends.native_pool import ALE_VECTOR_RULES, REPORT, RESET, STEP, NativePool
from gpu_env.errors import GpuEnvError

_N = 4
# ale-py's vector rules: frame skip 4, noop_max 30, 108,000 steps, max-pool, no fire reset, no episodic
# life, no life-loss info, reward clipping.
_RULES = [4, 30, 108000, 1, 0, 0, 0, 1]


@pytest.fixture
def pool() -> Iterator[NativePool]:
    """Yield a pool of ale-py's vector rules over 4 Pong envs on 2 threads; close it after the test."""
    batch = AtariBatch("pong", _N, seeds=np.arange(_N))
    made = NativePool(batch.native_backend(), ALE_VECTOR_RULES, _RULES, np.arange(_N), batch.minimal_action_set(),
                      True, (84, 84), 4, (4, 84, 84), 2)
    yield made
    made.close()


def test_send_marks_envs_running_and_recv_clears_those_it_returns(pool: NativePool) -> None:
    pool.send(np.arange(_N), RESET)
    assert pool.running.tolist() == [True] * _N
    first = pool.recv(2, ("obs",))  # the first two envs the workers complete, env_id not asked for
    assert "env_id" not in first
    still = np.flatnonzero(pool.running)
    assert len(still) == 2
    rest = pool.recv(2, ("env_id",))
    assert sorted(rest["env_id"].tolist()) == still.tolist()
    assert not pool.running.any()
    pool.send([1, 3], STEP, actions=[0, 1])
    assert pool.running.tolist() == [False, True, False, True]
    out = pool.recv(2, ("env_id", "obs"), order=[1, 3])
    assert out["env_id"].tolist() == [1, 3]
    assert not pool.running.any()


def test_run_all_runs_the_given_envs_reports_the_others_in_env_order(pool: NativePool) -> None:
    reset = pool.run_all(np.arange(_N), RESET, ("env_id", "obs", "frame_number"))
    assert reset["env_id"].tolist() == list(range(_N))
    stepped = pool.run_all(np.array([2]), STEP, ("env_id", "obs", "frame_number"), actions=[0])
    assert stepped["env_id"].tolist() == list(range(_N))
    frames = stepped["frame_number"]
    assert frames[2] == reset["frame_number"][2] + 4  # one step of 4 frames
    others = [0, 1, 3]
    assert frames[others].tolist() == reset["frame_number"][others].tolist()  # REPORT: nothing run
    assert np.array_equal(stepped["obs"][others], reset["obs"][others])
    assert not pool.running.any()


def test_run_all_refuses_while_envs_are_running(pool: NativePool) -> None:
    pool.send(np.arange(_N), RESET)
    pool.recv(_N, ("env_id",))
    pool.send([0], REPORT)
    with pytest.raises(GpuEnvError, match=r"run_all with envs \[0\] still running"):
        pool.run_all(np.arange(_N), STEP, ("obs",), actions=np.zeros(_N))
    pool.recv(1, ("env_id",))


def test_output_rows_are_held_by_the_pool_and_not_swapped_under_running_envs(pool: NativePool) -> None:
    # A row array handed to the pool stays alive with it (a request still running when the caller is
    # interrupted writes into memory the pool holds, never freed memory), and is not replaced while envs run.
    rows = np.zeros((_N, *pool.obs_shape), dtype=np.uint8)
    pool.obs_rows(rows)
    handed = id(rows)
    del rows
    pool.send(np.arange(_N), RESET)
    with pytest.raises(GpuEnvError, match=r"obs rows changed with envs \[0, 1, 2, 3\] running"):
        pool.obs_rows(None)
    pool.recv(_N, ("env_id",))
    assert id(pool._rows) == handed  # still alive: held by the pool, not freed with the caller's name
    pool.obs_rows(None)
    assert pool._rows is None
