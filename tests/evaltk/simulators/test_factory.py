"""A user's ``MODULE:CALLABLE`` simulator, from a module written into a temporary folder on ``sys.path``.

The factory wraps gymnasium itself, so ``validate`` against ``gym`` on the same seeds must find every episode
identical step for step (on at least 10 seeds, with the bound printed), and a suite ``transfer`` case must run
it; the same factory delaying every reward by one step (same returns, same lengths) must not be identical, nor
3 equal episodes; each way a factory can be wrong is one ``error:`` line, exit status 2, and nothing written
to ``--out``.
"""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import pytest

from conformance.suite import Outcome, load_suite, run_case
from evaltk.cli.main import main
from evaltk.evaluation.run import TABLE_FILE, read_table
from tests.evaltk.cli_helpers import error_line

ENV_ID = "ALE/Breakout-v5"
ROW_KEYS = ("index", "seed", "return", "frames", "steps", "truncated")
MODULE = textwrap.dedent('''
    """A user's simulator: gymnasium + ale-py built from the spec evaltk passes."""
    import ale_py
    import gymnasium as gym

    gym.register_envs(ale_py)
    CALLS = []


    def make(*, env_id, num_envs, seed, spec):
        CALLS.append({"env_id": env_id, "num_envs": num_envs, "seed": seed, "spec": spec})
        env = gym.make(env_id, **spec["kwargs"])
        ap = spec["preprocessing"]["atari_preprocessing"]
        if ap is not None:
            env = gym.wrappers.AtariPreprocessing(env, **ap)
        if spec["preprocessing"]["frame_stack"] > 1:
            env = gym.wrappers.FrameStackObservation(env, spec["preprocessing"]["frame_stack"])
        return env


    class DelayReward(gym.Wrapper):
        """Hands out each reward one step late; the last step pays what is still owed (same return)."""

        def reset(self, **kwargs):
            self.owed = 0.0
            return self.env.reset(**kwargs)

        def step(self, action):
            obs, reward, terminated, truncated, info = self.env.step(action)
            paid, self.owed = self.owed, float(reward)
            if terminated or truncated:
                paid, self.owed = paid + self.owed, 0.0
            return obs, paid, terminated, truncated, info


    def delayed(*, env_id, num_envs, seed, spec):
        return DelayReward(make(env_id=env_id, num_envs=num_envs, seed=seed, spec=spec))


    def as_vector(*, env_id, num_envs, seed, spec):
        return gym.vector.SyncVectorEnv([lambda: make(env_id=env_id, num_envs=1, seed=seed, spec=spec)])


    def broken(**kwargs):
        raise RuntimeError("no licence for this ROM")


    def grayscale(*, env_id, num_envs, seed, spec):
        return gym.make(env_id, obs_type="grayscale")


    def not_an_env(**kwargs):
        return 42


    NOT_CALLABLE = 3


    def no_sticky(*, env_id, num_envs, seed, spec):
        """Runs without sticky actions whatever the spec says, and declares only that setting."""
        kwargs = {**spec["kwargs"], "repeat_action_probability": 0.0}
        return make(env_id=env_id, num_envs=num_envs, seed=seed, spec={**spec, "kwargs": kwargs})


    no_sticky.evaltk_settings = lambda spec: {"repeat_action_probability": 0.0}
''')


@pytest.fixture
def factory_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    folder = tmp_path / "user_code"
    folder.mkdir()
    (folder / "my_sim.py").write_text(MODULE, encoding="utf-8")
    monkeypatch.syspath_prepend(str(folder))
    monkeypatch.delitem(sys.modules, "my_sim", raising=False)  # import this test's file, as a new process would
    return "my_sim"


def _validate(out: Path, sim: str, episodes: int = 3) -> list[str]:
    return ["validate", "builtin:random", "--env-id", ENV_ID, "--episodes", str(episodes), "--num-envs", "2",
            "--seed", "3",
            "--resamples", "999", "--margin", "5", "--sim", sim, "--reference", "gym", "--workers", "0",
            "--out", str(out)]


@pytest.mark.parametrize("callable_name", ["make", pytest.param("as_vector", marks=pytest.mark.slow)])
def test_factory_wrapping_gymnasium_is_identical_to_gym(factory_module: str, callable_name: str, tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    import my_sim  # type: ignore[import-not-found]

    out = tmp_path / "val"
    sim = f"{factory_module}:{callable_name}"
    assert main([*_validate(out, sim, episodes=10), "--json"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    report = json.loads(lines[-1])
    assert report["verdict"] == "identical"
    assert lines[-2].startswith("verdict: identical on 10/10 seeds: fewer than 30% of episodes differ (95%); "
                                "compared step for step: rewards, actions and episode ends, and observations")
    assert report["identical"]["upper_bound"] == pytest.approx(0.3)
    assert report["pairs"]["same"]["episode"] == 10
    sim_rows = [tuple(r.to_json()[k] for k in ROW_KEYS) for r in read_table(out / sim.replace(":", "_") / TABLE_FILE)]
    gym_rows = [tuple(r.to_json()[k] for k in ROW_KEYS) for r in read_table(out / "gym" / TABLE_FILE)]
    assert sorted(sim_rows) == sorted(gym_rows)
    assert {r.simulator for r in read_table(out / sim.replace(":", "_") / TABLE_FILE)} == {sim}
    call = my_sim.CALLS[0]
    assert call["env_id"] == ENV_ID
    assert call["num_envs"] == 1
    assert set(call["spec"]) == {"family", "env_id", "kwargs", "preprocessing", "obs_spec", "action_spec"}
    assert call["spec"]["action_spec"] == {"type": "discrete", "n": 4}
    settings = report["simulator_settings"]
    assert settings["sim"]["package"] == sim
    assert settings["sim"].get("frameskip") is None  # not reported by this factory: never counted as a difference
    envs = report["environments"]
    assert envs["differs"] == ["simulator", "package"]
    assert "frameskip" in envs["not_reported"]["sim"]  # ...but said
    assert envs["not_reported"]["reference"] == []
    md = (out / "report.md").read_text()
    assert "## What each side ran" in md
    assert "not reported by sim: frameskip" in md


def test_a_factory_declaring_one_setting_names_the_rest_as_not_reported(factory_module: str, tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """The spec says sticky 0.25, the factory declares and runs 0.0: every row shows what ran, the rest is said."""
    out = tmp_path / "val"
    assert main([*_validate(out, f"{factory_module}:no_sticky", episodes=10), "--json"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    report = json.loads(lines[-1])
    envs = report["environments"]
    rows = {r["setting"]: r for r in envs["rows"]}
    assert (rows["repeat_action_probability"]["sim"], rows["repeat_action_probability"]["reference"]) == (0.0, 0.25)
    assert "repeat_action_probability" in envs["differs"]
    assert not any(key.startswith("env.kwargs.repeat") for key in rows)  # no row shows the spec's 0.25 as run
    unreported = envs["not_reported"]["sim"]
    assert unreported[:3] == ["frameskip", "max_pool", "full_action_space"]
    assert len(unreported) == 13
    console = "\n".join(lines)
    assert f"not reported by sim: {', '.join(unreported)}" in console
    assert f"not reported by sim: {', '.join(unreported)}" in (out / "report.md").read_text()
    assert "Not reported by sim" in (out / "report.html").read_text()


def test_delayed_rewards_are_not_identical(factory_module: str, tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    """Same returns and lengths on every seed, rewards one step late: equivalent returns, not identical episodes."""
    out = tmp_path / "val"
    sim = f"{factory_module}:delayed"
    assert main([*_validate(out, sim, episodes=10), "--json"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    report = json.loads(lines[-1])
    sim_rows = {r.seed: r for r in read_table(out / sim.replace(":", "_") / TABLE_FILE)}
    gym_rows = {r.seed: r for r in read_table(out / "gym" / TABLE_FILE)}
    assert all((sim_rows[s].episode_return, sim_rows[s].steps) == (g.episode_return, g.steps)
               for s, g in gym_rows.items())
    rewarded = sum(g.episode_return != 0 for g in gym_rows.values())  # a delay does not change a rewardless episode
    assert rewarded >= 1
    assert report["verdict"] != "identical"
    assert report["identical"] is None
    episodes = report["comparison"]["episodes"]
    assert (episodes["n_compared"], episodes["n_same"]) == (10, 10 - rewarded)
    assert f"not identical: {rewarded} of 10 shared episodes differ step for step" in lines[-2]
    assert "differ step for step" in report["explanation"]


def test_three_equal_episodes_are_not_identical(factory_module: str, tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "val"
    assert main([*_validate(out, f"{factory_module}:make"), "--json"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    report = json.loads(lines[-1])
    assert report["comparison"]["episodes"]["n_same"] == 3
    assert report["verdict"] == "inconclusive"
    assert "all 3 shared episodes are the same step for step, but 'identical' needs at least 10" in lines[-2]


def test_resume_refuses_an_edited_factory_module(factory_module: str, tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """The manifest records a digest of the factory's module source: a changed module is not pooled with old rows."""
    out = tmp_path / "val"
    sim = f"{factory_module}:make"
    assert main(_validate(out, sim)) == 0
    capsys.readouterr()
    manifest = json.loads((out / "my_sim_make" / "evaluation.json").read_text())
    assert len(manifest["simulator"]["module_source"]) == 64
    tables = {side: (out / side / TABLE_FILE).read_text() for side in ("my_sim_make", "gym")}
    module = tmp_path / "user_code" / "my_sim.py"
    module.write_text(module.read_text() + "\nSCALE = 2  # an edit after the first validation\n")
    line = error_line(capsys, _validate(out, sim, episodes=5))  # resuming would add two rows per side
    assert "holds episodes of another simulator (module_source:" in line
    assert "use a new --out" in line
    assert {side: (out / side / TABLE_FILE).read_text() for side in tables} == tables  # no row written
    assert main(_validate(tmp_path / "new", sim, episodes=5)) == 0  # a new --out runs


@pytest.mark.parametrize(("callable_name", "needle"), [
    ("missing_function", "has no attribute 'missing_function'"),
    ("NOT_CALLABLE", "'NOT_CALLABLE' is a int, not callable"),
    ("broken", "raised RuntimeError: no licence for this ROM; fix the factory"),
    ("grayscale", "the checkpoint expects uint8[210, 160, 3]"),
    ("not_an_env", "returned a int, not a gymnasium Env or VectorEnv"),
])
def test_bad_factories_are_one_error_line(factory_module: str, callable_name: str, needle: str, tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "val"
    line = error_line(capsys, _validate(out, f"{factory_module}:{callable_name}"))
    assert needle in line
    assert not out.exists()


def test_unimportable_module_and_unknown_name(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "val"
    line = error_line(capsys, _validate(out, "no_such_module_here:make"))
    assert "module 'no_such_module_here' does not import" in line
    assert "PYTHONPATH" in line
    line = error_line(capsys, _validate(out, "envpoool"))
    assert ("--sim 'envpoool' is not a simulator: did you mean envpool? use one of gym, gpu_env, envpool, or "
            "MODULE:CALLABLE") in line
    line = error_line(capsys, ["evaluate", "builtin:scripted", "--env-id", ENV_ID, "--sim", "nope",
                               "--out", str(out)])
    assert "--sim 'nope' is not a simulator" in line
    assert not out.exists()


def test_against_is_an_alias_of_sim(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "ev"
    line = error_line(capsys, ["evaluate", "builtin:scripted", "--env-id", ENV_ID, "--against", "nope",
                               "--out", str(out)])
    assert "--sim 'nope' is not a simulator" in line
    assert not out.exists()


def test_factory_runs_in_a_suite_transfer_case(factory_module: str, tmp_path: Path) -> None:
    suite = tmp_path / "s.toml"
    suite.write_text(textwrap.dedent(f'''
        [suite]
        name = "factory"
        [[case]]
        kind = "transfer"
        name = "my-sim-vs-gym"
        checkpoint = "builtin:random"
        env_id = "{ENV_ID}"
        episodes = 10
        seed = 5
        seed_b = 5
        simulator_a = "gym"
        simulator_b = "{factory_module}:make"
        margin = 5
        margin_kind = "absolute"
        expect = "identical"
        num_envs = 2
    '''), encoding="utf-8")
    result = run_case(load_suite(suite).cases[0], tmp_path / "work")
    assert result.outcome is Outcome.PASSED, result.message
    assert result.details["verdict"] == "identical"
