"""``AtariVectorEnv(...).ale``: ale-py 0.12.1's ``ALEVectorInterface``, checked call for call against ale-py's own.

Every case builds ale-py's ``AtariVectorEnv`` and gpu_env's with the same options, makes the same calls
on both ``ale`` attributes and compares what comes back: equal outputs (seeded resets, so every
observation and info value), or the same exception type and message (nanobind's ``TypeError`` names
the class, ``ale_py._ale_py.ALEVectorInterface`` there, ``gpu_env.ale_vector_interface.ALEVectorInterface``
here). The calls on which ale-py would wait for ever are checked on gpu_env's side only.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from ale_py import Action
from ale_py.vector_env import AtariVectorEnv as AlePyVectorEnv

from gpu_env.ale_vector import AtariVectorEnv
from gpu_env.ale_vector_interface import ALEVectorInterface
from tests.gpu_env.test_ale_vector import assert_same_batch

THEIR_CLASS = "ale_py._ale_py.ALEVectorInterface"
OUR_CLASS = f"{ALEVectorInterface.__module__}.ALEVectorInterface"
SEEDED = ("reset", (range(3), [1, 2, 3]))
Call = tuple[str, tuple[Any, ...]]


def _outcome(ale: Any, method: str, args: tuple[Any, ...]) -> tuple[str, Any]:
    try:
        return "returned", getattr(ale, method)(*args)
    except Exception as exc:  # the exception is the outcome compared
        return type(exc).__name__, str(exc).replace(THEIR_CLASS, OUR_CLASS)


def _same_calls(calls: list[Call], **options: Any) -> tuple[str, Any]:
    """Make ``calls`` on both interfaces, asserting equal outcomes at every call; return the last one."""
    theirs, ours = AlePyVectorEnv("breakout", 3, **options).ale, AtariVectorEnv("breakout", 3, **options).ale
    outcome: tuple[str, Any] = ("", None)
    for k, (method, args) in enumerate(calls):
        want, got = _outcome(theirs, method, args), _outcome(ours, method, args)
        where = f"call {k}: {method}{args!r}"
        assert got[0] == want[0], f"{where}: gpu_env {got}, ale-py {want}"
        if want[0] != "returned":
            assert got[1] == want[1], where
        elif isinstance(want[1], tuple):
            assert_same_batch(want[1], got[1], where)
        else:
            assert got[1] == want[1], where
        outcome = got
    return outcome


def test_duplicate_env_id_raises_ale_pys_value_error() -> None:
    """The must-show case: ``envs.ale.reset([0, 0], [-1, -1])``."""
    envs = AtariVectorEnv("breakout", 3)
    with pytest.raises(ValueError, match=r"^reset has a duplicate env_id=0$"):
        envs.ale.reset([0, 0], [-1, -1])
    assert _same_calls([("reset", ([0, 0], [-1, -1]))]) == ("ValueError", "reset has a duplicate env_id=0")


@pytest.mark.parametrize("calls", [
    [SEEDED, ("send", ([0, 1, 2], [1.0, 1.0, 1.0])), ("recv", ()), ("send", ((3, 3, 0), np.ones(3))), ("recv", ())],
    [("reset", (np.arange(3, dtype=np.uint8), [np.int64(7), 8, 9])), ("reset", ([2, 0], [5, 6]))],
    [("reset", (bytearray(b"\x00\x01\x02"), [True, False, 3]))],
    [SEEDED, ("send", (np.array([1, 1, 1], dtype=np.uint64), np.zeros(3, dtype=np.float16))), ("recv", ()),
     ("reset", ([1], [-1]))],
], ids=["lists, tuples and arrays", "integer arrays, partial reset", "bytearray and bools", "unsigned and float16"])
def test_accepted_arguments_give_ale_pys_outputs(calls: list[Call]) -> None:
    _same_calls(calls)


@pytest.mark.parametrize(("calls", "error"), [
    ([("send", ([0, 0, 0], [1.0, 1.0, 1.0]))], "RuntimeError"),
    ([("reset", ([0, 3], [-1, -1]))], "IndexError"),
    ([("reset", ([-1], [-1]))], "IndexError"),
    ([("reset", ([0, 1], [-1]))], "ValueError"),
    ([("reset", ([0], [-1, 5]))], "ValueError"),
    ([("reset", ([1], [5]))], "RuntimeError"),
    ([("reset", ([], []))], "RuntimeError"),
    ([("reset", ([0.5], [1]))], "TypeError"),
    ([("reset", (0, -1))], "TypeError"),
    ([("reset", ([0, 1, 2], [2**31, 0, 0]))], "TypeError"),
    ([("reset", ([0, 1, 2], np.array([0, 1, 2**40])))], "TypeError"),
    ([("reset", (np.array([0, 1, 2**63], dtype=np.uint64), [1, 2, 3]))], "TypeError"),
    ([("reset", (np.arange(3.0), [1, 2, 3]))], "TypeError"),
    ([("reset", (np.ones(3, dtype=np.bool_), [1, 2, 3]))], "TypeError"),
    ([("reset", ("012", [1, 2, 3]))], "TypeError"),
    ([("reset", ({0, 1, 2}, [1, 2, 3]))], "TypeError"),
    ([("reset", ((i for i in range(3)), [1, 2, 3]))], "TypeError"),
    ([("reset", (np.arange(3).reshape(3, 1), [1, 2, 3]))], "TypeError"),
    ([SEEDED, ("send", ([0, 0], [1.0, 1.0]))], "ValueError"),
    ([SEEDED, ("send", ([0, 0, 0], [1.0, 1.0]))], "ValueError"),
    ([SEEDED, ("send", (np.zeros(3, dtype=np.float32), [1.0, 1.0, 1.0]))], "TypeError"),
    ([SEEDED, ("send", ([0, 0, 0], ["1", "1", "1"]))], "TypeError"),
    ([SEEDED, ("send", ([0, 0, 0], None))], "TypeError"),
])
def test_refusals_equal_ale_pys(calls: list[Call], error: str) -> None:
    assert _same_calls(calls)[0] == error


def test_partial_reset_in_async_mode_is_refused_as_by_ale_py() -> None:
    outcome = _same_calls([SEEDED, ("reset", ([0, 1], [5, 6]))], batch_size=3)  # sync: a partial reset
    assert outcome[0] == "returned"
    # Async (batch_size 2 of 3 envs): which two envs the first reset returns depends on the threads on both sides,
    # so only its kind of outcome is compared; the partial reset after it must fail the same way on both.
    theirs, ours = AlePyVectorEnv("breakout", 3, batch_size=2).ale, AtariVectorEnv("breakout", 3, batch_size=2).ale
    assert _outcome(theirs, "reset", ([0, 1, 2], [5, 6, 7]))[0] == _outcome(ours, "reset", ([0, 1, 2], [5, 6, 7]))[0]
    want, got = _outcome(theirs, "reset", ([0, 1], [5, 6])), _outcome(ours, "reset", ([0, 1], [5, 6]))
    assert got == want
    assert got[0] == "ValueError"
    assert got[1].startswith("Partial reset is not supported for async mode")


@pytest.mark.parametrize("options", [{}, {"full_action_space": True, "grayscale": False, "stack_num": 2},
                                     {"img_height": 105, "img_width": 80, "batch_size": 2}])
def test_queries_equal_ale_pys(options: dict[str, Any]) -> None:
    theirs, ours = AlePyVectorEnv("pong", 3, **options).ale, AtariVectorEnv("pong", 3, **options).ale
    assert ours.get_action_set() == theirs.get_action_set()
    assert all(isinstance(a, Action) for a in ours.get_action_set())
    assert ours.get_num_envs() == theirs.get_num_envs() == 3
    assert ours.get_observation_shape() == theirs.get_observation_shape()
    assert isinstance(ours.get_observation_shape(), tuple)


def test_where_ale_py_would_wait_for_ever_gpu_env_raises() -> None:
    ale = AtariVectorEnv("breakout", 3).ale
    with pytest.raises(RuntimeError, match=r"recv\(\) needs 3 envs running but 0 are"):
        ale.recv()
    ale.reset([0, 1, 2], [1, 2, 3])
    with pytest.raises(RuntimeError, match="but 0 are"):
        ale.recv()
    with pytest.raises(ValueError, match=r"^Invalid action_id: 4 \(the action set has 4 actions"):
        ale.send([0, 1, 4], [1.0, 1.0, 1.0])
    with pytest.raises(ValueError, match=r"^Invalid action_id: -1"):
        ale.send([-1, 1, 2], [1.0, 1.0, 1.0])
    ale.send([0, 1, 2], [1.0, 1.0, 1.0])
    with pytest.raises(RuntimeError, match=r"send\(\) of env\(s\) \[0, 1, 2\] whose last request was not"):
        ale.send([0, 1, 2], [1.0, 1.0, 1.0])
    with pytest.raises(RuntimeError, match=r"reset\(\) of env\(s\) \[1\]"):
        ale.reset([1], [4])
    assert len(ale.recv()) == 5  # the refused calls left the pool as it was
    with pytest.raises(NotImplementedError, match=r"no handle\(\) for XLA"):
        ale.handle()
    ale.close()


def test_the_vector_env_runs_on_its_ale() -> None:
    """``env.reset``/``env.step`` and the same calls on ``env.ale`` give the same batches, as in ale-py."""
    by_env, by_ale = AtariVectorEnv("breakout", 2), AtariVectorEnv("breakout", 2)
    assert_same_batch(by_env.reset(seed=4), by_ale.ale.reset([0, 1], [4, 5]), "reset")
    for t in range(20):
        actions = np.array([t % 4, (t + 1) % 4])
        by_ale.ale.send(actions, np.ones(2))
        assert_same_batch(by_env.step(actions), by_ale.ale.recv(), f"step {t}")
