"""The ``envpool`` simulator with the real EnvPool package: settings, evaluation, resume, and bad input.

Without the package (a real child process whose ``sitecustomize`` blocks ``import envpool``) every
command says which extra to install, exits 2 and writes nothing.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from evaltk.cli.main import main
from evaltk.envs import EnvSpec, describe
from evaltk.envs.atari_settings import UNKNOWN
from evaltk.evaluation.run import TABLE_FILE, read_table
from evaltk.simulators import SimulatorError, get
from evaltk.simulators.align import align_env
from evaltk.verdict import Sample
from evaltk.verdict.differences import difference_rows, differences
from tests.evaltk.cli_helpers import error_line

pytest.importorskip("envpool")

REPO = Path(__file__).resolve().parents[3]
A2C = REPO / "suites" / "checkpoints" / "a2c_breakout"


def _a2c_env() -> EnvSpec:
    return EnvSpec.from_json(json.loads((A2C / "policy.json").read_text())["env"])


def test_settings_table_lists_what_envpool_does_differently() -> None:
    import envpool

    env = describe(_a2c_env()).env
    sim, ref = get("envpool").settings(env), get("gym").settings(env)
    rows = difference_rows(sim, ref)
    assert [r["setting"] for r in rows if r["differs"]] == [
        "package", "env_id", "repeat_action_probability", "noop_starts", "fire_on_reset"]
    assert sim["package"] == f"envpool {envpool.__version__}"
    pool = envpool.make("Breakout-v5", env_type="gymnasium", num_envs=1)  # what a user of EnvPool gets
    try:
        defaults = pool.config
    finally:
        pool.close()
    assert sim["repeat_action_probability"] == defaults["repeat_action_probability"]
    assert sim["max_episode_frames"] == defaults["max_episode_steps"] * 4
    assert sim["fire_on_reset"] is defaults["use_fire_reset"] is True  # Breakout has FIRE
    assert sim["noop_starts"] == [0, 29]  # noop_max 30 from the checkpoint, one reset frame for FIRE
    assert ref["noop_starts"] == [1, 30]
    assert sim["max_pool"] == sim["grayscale"] == UNKNOWN  # EnvPool's config does not state them
    assert not next(r for r in rows if r["setting"] == "max_pool")["differs"]
    note = differences(Sample.of([], settings=ref), Sample.of([], settings=sim)).note()
    assert "different repeat_action_probability, noop_starts, fire_on_reset" in str(note)
    assert get("gpu_env").settings(env) | {"package": ref["package"]} == ref  # gpu_env reproduces gym's settings

    aligned = align_env(env, sim, ref)
    assert aligned.env.kwargs["repeat_action_probability"] == 0.0
    assert aligned.env.preprocessing["atari_preprocessing"]["noop_max"] == 30
    assert aligned.aligned == ("repeat_action_probability",)
    assert [k for k, _ in aligned.not_aligned] == ["noop_starts", "fire_on_reset"]


def test_envpool_options_change_the_settings_read_from_the_pool() -> None:
    """``envpool:KEY=VALUE`` goes to ``envpool.make`` as EnvPool's own option; the table reads the pool's config."""
    env = describe(_a2c_env()).env
    sim = get("envpool:repeat_action_probability=0.25,max_episode_steps=500,use_fire_reset=false").settings(env)
    assert sim["repeat_action_probability"] == 0.25
    assert sim["max_episode_frames"] == 2000
    assert sim["fire_on_reset"] is False
    assert sim["noop_starts"] == [1, 30]
    differs = [r["setting"] for r in difference_rows(sim, get("gym").settings(env)) if r["differs"]]
    assert differs == ["package", "env_id", "max_episode_frames"]
    with pytest.raises(SimulatorError, match="'max_episode_steps' is not KEY=VALUE"):
        get("envpool:max_episode_steps")


@pytest.fixture
def cleanrl_checkpoint(tmp_path: Path) -> Path:
    """Import a seeded, untrained CleanRL ``ppo_atari_envpool`` model with sampled actions (short episodes)."""
    import torch

    from evaltk.importers import import_checkpoint
    from tests.evaltk.importers.test_cleanrl import Agent

    torch.manual_seed(0)
    model = tmp_path / "ppo.cleanrl_model"
    torch.save(Agent(4).state_dict(), model)
    out = tmp_path / "ckpt"
    import_checkpoint(model, out, fmt="cleanrl", env_id="Breakout-v5", script="ppo_atari_envpool", actions="sample")
    return out


@pytest.mark.slow
def test_evaluate_on_envpool_writes_rows_and_resumes(cleanrl_checkpoint: Path, tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "ev"
    argv = ["evaluate", str(cleanrl_checkpoint), "--sim", "envpool", "--episodes", "3", "--num-envs", "2",
            "--seed", "1", "--out", str(out)]
    assert main(argv) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["simulator"] == "envpool"
    assert summary["new_episodes"] == 3
    rows = read_table(out / TABLE_FILE)
    assert {r.simulator for r in rows} == {"envpool"}
    assert all(r.steps > 0 for r in rows)
    assert main(argv) == 0  # the same command again: every episode resumed, none re-run
    again = json.loads((out / "summary.json").read_text())
    assert again["new_episodes"] == 0
    assert again["resumed_episodes"] == 3
    assert read_table(out / TABLE_FILE) == rows


def test_validate_shows_envpool_options_and_resume_refuses_another_configuration(
        cleanrl_checkpoint: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "val"

    def argv(sim: str, episodes: int) -> list[str]:
        return ["validate", str(cleanrl_checkpoint), "--sim", sim, "--reference", "gym", "--episodes", str(episodes),
                "--num-envs", "2", "--seed", "2", "--margin", "5", "--resamples", "199", "--workers", "0",
                "--out", str(out)]

    assert main([*argv("envpool:max_episode_steps=40", 2), "--json"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    report = json.loads(lines[-1])
    settings = report["simulator_settings"]
    assert settings["sim"]["max_episode_frames"] == 160  # 40 steps x frame_skip 4, from the pool's config
    assert "max_episode_frames" in report["environments"]["differs"]
    assert any("max_episode_frames" in line and "160" in line for line in lines)  # the printed settings table
    rows = read_table(out / "envpool" / TABLE_FILE)
    assert len(rows) == 2
    assert all(r.steps <= 40 for r in rows)
    manifest = json.loads((out / "envpool" / "evaluation.json").read_text())
    assert manifest["simulator"]["options"] == {"max_episode_steps": 40}

    line = error_line(capsys, argv("envpool:max_episode_steps=60", 4))
    assert "holds episodes of another simulator" in line
    assert "max_episode_frames: 160 there, 240 now" in line
    assert "use a new --out" in line
    assert read_table(out / "envpool" / TABLE_FILE) == rows  # no row written


def test_env_ids_envpool_cannot_run_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "ev"
    line = error_line(capsys, ["evaluate", "builtin:random", "--env-id", "ALE/Pong-v5", "--sim", "envpool",
                               "--out", str(out)])
    assert "has raw observations" in line
    assert "use --sim gym/gpu_env" in line
    line = error_line(capsys, ["evaluate", "builtin:random", "--env-id", "ALE/Pongg-v5", "--sim", "envpool",
                               "--out", str(out)])
    assert "unknown Atari env id 'ALE/Pongg-v5'" in line
    assert not out.exists()


COMMANDS = {
    "validate": ["validate", str(A2C), "--sim", "envpool", "--reference", "gym", "--margin", "5"],
    "evaluate": ["evaluate", str(A2C), "--sim", "envpool"],
    "lockstep": ["conformance", "lockstep", "--sim", "envpool", "--env-id", "ALE/Pong-v5", "--steps", "10"],
}


@pytest.mark.parametrize("command", ["validate", pytest.param("evaluate", marks=pytest.mark.slow),
                                     pytest.param("lockstep", marks=pytest.mark.slow)])
def test_without_the_package_every_command_names_the_extra(command: str, tmp_path: Path) -> None:
    block = tmp_path / "block"
    block.mkdir()
    (block / "sitecustomize.py").write_text(textwrap.dedent('''
        import sys

        class _NoEnvpool:
            def find_spec(self, name, path=None, target=None):
                if name == "envpool" or name.startswith("envpool."):
                    raise ModuleNotFoundError("No module named 'envpool'", name="envpool")
                return None

        sys.meta_path.insert(0, _NoEnvpool())
    '''), encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(block), str(REPO)])}
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, "-m", "evaltk", *COMMANDS[command], "--out", str(out)], env=env,
                          capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith("error: ")
    assert "pip install 'evaltk[envpool]'" in lines[0]
    assert not out.exists()


def test_an_untested_envpool_release_is_refused_in_one_line(tmp_path: Path) -> None:
    """EnvPool 1.2.6 (tested: 1.2.5 and 1.2.7) is refused before anything runs.

    1.2.6 has no CPython 3.11 wheel, so a stand-in package with its version (module and metadata) comes
    first on the child process's path.
    """
    site = tmp_path / "site"
    (site / "envpool").mkdir(parents=True)
    (site / "envpool" / "__init__.py").write_text('__version__ = "1.2.6"\n', encoding="utf-8")
    (site / "envpool-1.2.6.dist-info").mkdir()
    (site / "envpool-1.2.6.dist-info" / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: envpool\nVersion: 1.2.6\n", encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(REPO)])}
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, "-m", "evaltk", *COMMANDS["validate"], "--out", str(out)], env=env,
                          capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 2, proc.stderr
    (line,) = proc.stderr.strip().splitlines()
    assert line.startswith("error: EnvPool 1.2.6 is installed, and gpu_env.envpool reproduces (and evaltk's envpool "
                           "simulator runs) only the tested releases 1.2.5 and 1.2.7: pip install 'evaltk[envpool]'")
    assert not out.exists()


def test_compare_prints_the_settings_recorded_next_to_each_table(tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    from evaltk.evaluation.samples import load_sample

    env = describe(_a2c_env()).env
    for name in ("gym", "envpool"):
        (tmp_path / name).mkdir()
        (tmp_path / name / TABLE_FILE).write_text("return\n1\n2\n")
        (tmp_path / name / "simulator.json").write_text(json.dumps(get(name).settings(env)))
    a, b = (load_sample(tmp_path / name / TABLE_FILE, label=name) for name in ("gym", "envpool"))
    lines = differences(a, b).lines()
    assert lines[0] == "settings that differ (gym | envpool):"
    assert any(line.split() == ["repeat_action_probability", "0.25", "|", "0.0"] for line in lines)
    assert any(line.split() == ["noop_starts", "[1,", "30]", "|", "[0,", "29]"] for line in lines)
    assert lines[-1] == "not reported by envpool: simulator, max_pool, grayscale"  # a CSV without a simulator column
    plain = tmp_path / "plain.csv"
    plain.write_text("return\n1\n2\n")
    assert "not reported by plain: simulator, package, env_id, frameskip" in "".join(
        differences(a, load_sample(plain, label="plain")).lines())
