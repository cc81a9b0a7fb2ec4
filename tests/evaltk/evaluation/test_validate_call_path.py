"""``evaltk validate``, from its first call into validate to its first episode, enters each module once.

The path starts at the first call into :mod:`evaltk.evaluation.validate`.

The path is recorded by :mod:`tests.evaltk.evaluation.call_path` on a real run (the shipped A2C Breakout checkpoint,
``--sim gpu_env`` against the ``gym`` reference), stopped where the episode loop starts. No module is
exempt: the checkpoint's model class checks its tensors with :func:`evaltk.policies.check_tensor_shapes`,
a call back into the loader still on the stack, which does not start a stay. A module of a value record
(:data:`VALUES`) is not a step of the request: the modules that hand the value on convert it at their JSON edges
(``to_json`` / ``from_json``), so its stays are not counted as returns.
"""

from __future__ import annotations

from pathlib import Path

from tests.evaltk.evaluation import call_path

ROOT = Path(__file__).resolve().parents[3]
VALUES = ("evaltk/envs/spec.py",)
"""Modules of value records the path hands between its steps: ``EnvSpec`` (read from policy.json, written to
evaluation.json and environment.json, keyed by the plan and the env description's cache)."""


def test_validate_enters_each_module_once_up_to_its_first_episode(tmp_path: Path) -> None:
    found = call_path.validate_path([str(ROOT / "suites" / "checkpoints" / "a2c_breakout"), "--episodes", "2",
                                     "--num-envs", "2", "--workers", "0", "--margin", "2", "--out",
                                     str(tmp_path / "val")])
    assert found.stays[0] == ("evaltk/evaluation/validate.py", "validate"), found.render()
    modules = found.modules
    for module in ("evaltk/evaluation/plan.py", "evaltk/simulators/__init__.py", "evaltk/locations.py",
                   "evaltk/policies.py", "evaltk/checkpoint.py", "evaltk/evaluation/scores.py",
                   "evaltk/evaluation/run.py"):
        assert module in modules, f"{module} is not on the path:\n{found.render()}"
    returns = found.returns(VALUES)
    assert not returns, (f"{len(returns)} return(s) to a module already left ({found.counts(VALUES)}), first "
                         f"{returns[0]}; the path:\n{found.render()}")
    steps = [stay for stay in found.stays if stay[0] not in VALUES]
    assert len(steps) == len([m for m in modules if m not in VALUES]), found.render()
    assert set(VALUES) <= set(modules), f"{VALUES} are not on the path: drop them from VALUES\n{found.render()}"


def test_the_recorder_sees_a_return(tmp_path: Path) -> None:
    """The recorder itself: a run that enters a module twice is reported (so the test above can fail)."""
    from evaltk.simulators import check_name

    def twice() -> None:
        check_name("gym")
        check_name("gpu_env")

    def never(frame: object) -> bool:
        return False

    found = call_path.record(twice, never)
    assert found.stays == [("evaltk/simulators/__init__.py", "check_name")] * 2
    assert found.returns() == [(1, "evaltk/simulators/__init__.py", "check_name")]
