"""``evaltk validate``, from its first call into :mod:`evaltk.validate` to its first episode, enters each module once.

The path is recorded by :mod:`tests.evaltk.call_path` on a real run (the shipped A2C Breakout checkpoint,
``--sim gpu_env`` against the ``gym`` reference), stopped where the episode loop starts.
"""

from __future__ import annotations

from pathlib import Path

from tests.evaltk import call_path

ROOT = Path(__file__).resolve().parents[2]

ORCHESTRATION = ("evaltk/validate.py", "evaltk/plan.py", "evaltk/evaluate.py", "evaltk/simulators/__init__.py",
                 "evaltk/scores.py", "evaltk/locations.py", "evaltk/policies.py", "evaltk/checkpoint.py")
"""Modules that decide the request; none may be entered twice."""
LEAVES = {
    "evaltk/simulators/settings.py": "the one settings schema: each simulator (gpu_env, then gym) turns what its "
                                     "built env stated into settings with one call while the plan checks that "
                                     "side; one call for both sides would have settings.py tell the simulators' "
                                     "reports apart (env facts, gpu_env's read values, EnvPool's config, a "
                                     "factory's declared dict): the simulator decided a second time",
}
"""Leaf modules a return into is allowed, and why: no decisions of the request, called by each simulator in turn."""
LEAF_STAYS = {"evaltk/simulators/settings.py": 2}
"""The most stays each leaf may have: one call per simulator."""
CALLBACKS = {("evaltk/checkpoint.py", "check_tensor_shapes")}
"""Functions the model classes' own code (``from_checkpoint``, outside evaltk) calls back while a policy loads.

``check_tensor_shapes`` is the documented check every ``from_checkpoint`` makes of its own tensors; the loader
calls ``from_checkpoint`` twice (a meta-device probe that refuses mismatched ``model_kwargs`` before real memory
is allocated, then the real build), so the check runs once per build."""
CALLBACK_STAYS = 2
"""The most stays the callbacks may have together: one per build."""


def test_validate_enters_each_module_once_up_to_its_first_episode(tmp_path: Path) -> None:
    found = call_path.validate_path([str(ROOT / "suites" / "checkpoints" / "a2c_breakout"), "--episodes", "2",
                                     "--num-envs", "2", "--workers", "0", "--margin", "2", "--out",
                                     str(tmp_path / "val")])
    assert found.stays[0] == ("evaltk/validate.py", "validate"), found.render()
    modules = found.modules
    for module in ("evaltk/plan.py", "evaltk/simulators/__init__.py", "evaltk/locations.py", "evaltk/policies.py",
                   "evaltk/checkpoint.py", "evaltk/scores.py", "evaltk/evaluate.py"):
        assert module in modules, f"{module} is not on the path:\n{found.render()}"
    returns = [(i, m, f) for i, m, f in found.returns(LEAVES) if (m, f) not in CALLBACKS]
    assert not returns, (f"{len(returns)} return(s) to a module already left ({found.counts()}), first "
                         f"{returns[0]}; the path:\n{found.render()}")
    assert not [r for r in found.returns() if r[1] in ORCHESTRATION and (r[1], r[2]) not in CALLBACKS]
    assert sum(stay in CALLBACKS for stay in found.stays) <= CALLBACK_STAYS, found.render()
    stays = {leaf: sum(m == leaf for m, _ in found.stays) for leaf in LEAVES}
    assert all(stays[leaf] <= most for leaf, most in LEAF_STAYS.items()), f"{stays}:\n{found.render()}"


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
