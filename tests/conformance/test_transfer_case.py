"""The suite's ``transfer`` case is a door to the one comparison: as strict as ``evaltk validate``, and it agrees.

Every door to a verdict (``validate``, ``compare``, ``evaluate --until-verdict``, the ``transfer`` case) is run on
shared inputs here and their JSON compared: the same verdict, intervals and explanation.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conformance.case import Outcome
from conformance.suite import load_suite, run_suite
from evaltk.cli.main import main

ROOT = Path(__file__).resolve().parents[2]
A2C = ROOT / "suites" / "checkpoints" / "a2c_breakout"
DOUBLE_SIM = '''
import ale_py
import gymnasium as gym

gym.register_envs(ale_py)


def make(*, env_id, num_envs, seed, spec):
    """gymnasium + ale-py with every reward doubled: the same episodes, other returns (declares no settings)."""
    return gym.wrappers.TransformReward(gym.make(env_id, **spec["kwargs"]), lambda r: 2.0 * r)
'''
SAME = ("verdict", "ci", "ci_tost", "decision_interval", "explanation", "design", "identical")
"""What every fixed-N door must report alike."""


def _suite(tmp_path: Path, case: str) -> Path:
    path = tmp_path / "suite.toml"
    path.write_text(f'[suite]\nname = "doors"\n\n[[case]]\nkind = "transfer"\nname = "t"\n{case}', encoding="utf-8")
    return path


def _last_json(capsys: pytest.CaptureFixture[str], argv: list[str]) -> tuple[dict[str, Any], list[str]]:
    assert main([*argv, "--json"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    return json.loads(lines[-1]), lines[:-1]


def test_a_baseline_of_another_env_is_a_case_error_naming_both(tmp_path: Path) -> None:
    pong = tmp_path / "pong.csv"
    pong.write_text("env_id,seed,return\n" + "".join(f"ALE/Pong-v5,{s},{-21 + s % 3}\n" for s in range(12)))
    suite = load_suite(_suite(tmp_path, f'checkpoint = "{A2C}"\nbaseline = "{pong}"\nepisodes = 10\nseed = 0\n'
                                        'margin = 2\nmargin_kind = "absolute"\n'))
    (result,) = run_suite(suite, tmp_path / "work")
    assert result.outcome is Outcome.ERROR
    assert "ALE/Pong-v5" in result.message
    assert "ALE/Breakout-v5" in result.message
    assert "allow_different_envs = true" in result.message
    assert "verdict" not in result.details
    assert not (tmp_path / "work" / "t" / "b" / "episodes.csv").read_text().strip().count("\n")  # no episode ran


def test_no_seed_b_pairs_and_a2c_is_identical_as_validate_says(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    """The must-show: gpu_env vs gym, 10 episodes, no seed_b: ``identical``, the verdict line validate prints."""
    suite = load_suite(_suite(tmp_path, f'checkpoint = "{A2C}"\nepisodes = 10\nseed = 0\nsimulator_a = "gym"\n'
                                        'simulator_b = "gpu_env"\nmargin = 2\nmargin_kind = "absolute"\n'
                                        'expect = "identical"\nnum_envs = 4\n'))
    (result,) = run_suite(suite, tmp_path / "work")
    assert result.outcome is Outcome.PASSED, result.message
    report, text = _last_json(capsys, ["validate", str(A2C), "--episodes", "10", "--seed", "0", "--num-envs", "4",
                                       "--margin", "2", "--out", str(tmp_path / "val")])
    assert report["verdict"] == "identical"
    assert text[-1] == report["verdict_line"] == result.details["comparison"]["verdict_line"]
    assert result.message.startswith(f"expected identical: {text[-1]}")
    case = result.details["comparison"]
    assert {k: case[k] for k in SAME} == {k: report["comparison"][k] for k in SAME}


@pytest.fixture
def double_sim(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    folder = tmp_path / "user_code"
    folder.mkdir()
    (folder / "double_sim.py").write_text(DOUBLE_SIM, encoding="utf-8")
    monkeypatch.syspath_prepend(str(folder))
    return "double_sim:make"


def test_fixed_n_doors_agree(tmp_path: Path, double_sim: str, capsys: pytest.CaptureFixture[str]) -> None:
    """validate, compare on validate's tables, and a transfer case: one verdict, one CI, one explanation."""
    common = ["--env-id", "ALE/Breakout-v5", "--episodes", "12", "--seed", "5", "--num-envs", "2", "--workers", "0"]
    rule = ["--margin", "0.5", "--resamples", "499"]
    out = tmp_path / "val"
    report, _ = _last_json(capsys, ["validate", "builtin:random", *common, *rule, "--sim", double_sim,
                                    "--reference", "gym", "--out", str(out)])
    assert report["verdict"] != "identical"
    assert "not reported by B (double_sim:make): frameskip, max_pool" in report["explanation"]
    compared, text = _last_json(capsys, ["compare", str(out / "gym"), str(out / "double_sim_make"), *rule])
    suite = load_suite(_suite(tmp_path, 'checkpoint = "builtin:random"\nenv_id = "ALE/Breakout-v5"\nepisodes = 12\n'
                                        f'seed = 5\nsimulator_a = "gym"\nsimulator_b = "{double_sim}"\nmargin = 0.5\n'
                                        f'margin_kind = "absolute"\nexpect = "{report["verdict"]}"\nnum_envs = 2\n'))
    (result,) = run_suite(suite, tmp_path / "work")
    assert result.outcome is Outcome.PASSED, result.message
    doors = {"validate": report["comparison"], "compare": compared, "transfer": result.details["comparison"]}
    assert doors["validate"]["design"] == "paired"
    for name, payload in doors.items():
        assert {k: payload[k] for k in SAME} == {k: doors["validate"][k] for k in SAME}, name
        assert payload["bootstrap_ci_mean_difference"] == doors["validate"]["bootstrap_ci_mean_difference"], name
        assert list(payload["tests"]) == list(doors["validate"]["tests"]), name
    assert text[-1].startswith(f"verdict: {report['verdict']} (margin 0.5, absolute, paired;")


def test_sequential_doors_agree(tmp_path: Path, double_sim: str, capsys: pytest.CaptureFixture[str]) -> None:
    """Validate --sequential, compare --sequential and evaluate --until-verdict on the same two 20-episode tables."""
    out = tmp_path / "val"
    common = ["builtin:random", "--env-id", "ALE/Breakout-v5", "--episodes", "20", "--seed", "2", "--num-envs", "2",
              "--workers", "0"]
    for sim, folder in (("gym", "gym"), (double_sim, "double_sim_make")):
        assert main(["evaluate", *common, "--sim", sim, "--out", str(out / folder)]) == 0
    capsys.readouterr()
    rule = ["--margin", "1", "--looks", "4"]
    validated, _ = _last_json(capsys, ["validate", *common, "--sim", double_sim, "--reference", "gym", *rule,
                                       "--sequential", "--out", str(out)])
    assert validated["sides"]["sim"]["summary"]["new_episodes"] == 0  # the looks read the tables evaluate wrote
    compared, _ = _last_json(capsys, ["compare", str(out / "gym"), str(out / "double_sim_make"), *rule,
                                      "--sequential"])
    until, _ = _last_json(capsys, ["evaluate", "builtin:random", "--env-id", "ALE/Breakout-v5", "--seed", "2",
                                   "--num-envs", "2", "--workers", "0", "--sim", double_sim, "--out",
                                   str(out / "double_sim_make"), "--until-verdict", "--baseline",
                                   str(out / "gym" / "episodes.csv"), "--max-episodes", "20", *rule])
    seq = validated["sequential"]
    for name, payload in (("compare", compared), ("until-verdict", until)):
        for key in ("verdict", "interval", "explanation", "looks", "design", "episodes_used", "budget"):
            assert payload[key] == seq[key], (name, key)
