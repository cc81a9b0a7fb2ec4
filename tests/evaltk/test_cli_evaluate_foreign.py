"""``evaltk evaluate`` of another library's checkpoint: caveats, ``--deterministic``/``--stochastic``, frame caps.

The checkpoint is a real Stable-Baselines3 A2C on Breakout (a short ``learn``, saved by SB3) whose
greedy action is NOOP: it never presses FIRE, so an episode lasts until the env's frame limit, the
issue's case. ``--max-episode-frames`` cuts it; the row says ``truncated``, the table records the cap,
and a resume with another cap is refused.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from evaltk.cli.output import print_import_caveats
from evaltk.envs import EnvSpec
from evaltk.importers import import_caveats
from tests.evaltk.hub.repos import ENV_ID, sb3_zip

ROOT = Path(__file__).resolve().parents[2]
NOOP_BIAS = [50.0, 0.0, 0.0, 0.0]


@pytest.fixture(scope="module")
def noop_zip(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Return an SB3 A2C CnnPolicy zip for Breakout whose greedy action is NOOP."""
    pytest.importorskip("stable_baselines3", reason="needs stable-baselines3 (pip install stable-baselines3)")
    return sb3_zip(tmp_path_factory.mktemp("sb3") / "noop.zip", NOOP_BIAS)


def _evaltk(args: list[str], cache: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "XDG_CACHE_HOME": str(cache), "OMP_NUM_THREADS": "1",
           "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    return subprocess.run([sys.executable, "-m", "evaltk", *args], capture_output=True, text=True, timeout=600, env=env,
                          cwd=ROOT)


def _rows(out: Path) -> list[dict[str, str]]:
    lines = (out / "episodes.csv").read_text().splitlines()
    return [dict(zip(lines[0].split(","), line.split(","), strict=True)) for line in lines[1:]]


def test_caveats_once_then_capped_truncated_episodes(noop_zip: Path, tmp_path: Path) -> None:
    out = tmp_path / "e"
    run = _evaltk(["evaluate", str(noop_zip), "--env-id", ENV_ID, "--episodes", "2", "--num-envs", "2",
                   "--max-episode-frames", "400", "--out", str(out)], tmp_path / "cache")
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stderr.count("was imported from sb3") == 1
    assert run.stderr.index("the policy must press FIRE") < run.stderr.index("episodes")  # before the first episode
    assert "--max-episode-frames N cuts it earlier" not in run.stderr  # capped already
    rows = _rows(out)
    assert [(r["frames"], r["truncated"]) for r in rows] == [("400", "true"), ("400", "true")]
    settings = json.loads((out / "evaluation.json").read_text())
    assert settings["settings"]["env"]["kwargs"]["max_num_frames_per_episode"] == 400

    again = _evaltk(["evaluate", str(noop_zip), "--env-id", ENV_ID, "--episodes", "3", "--num-envs", "2",
                     "--max-episode-frames", "800", "--out", str(out)], tmp_path / "cache")
    assert again.returncode == 2
    error = again.stderr.strip().splitlines()[-1]
    assert error.startswith(f"error: {out} holds an evaluation with different settings (env:")
    assert "'max_num_frames_per_episode': 400" in error
    assert len(_rows(out)) == 2  # nothing written


def test_stochastic_imports_a_sampling_policy(noop_zip: Path, tmp_path: Path) -> None:
    args = ["evaluate", str(noop_zip), "--env-id", ENV_ID, "--episodes", "1", "--num-envs", "1",
            "--max-episode-frames", "200"]
    greedy = _evaltk([*args, "--deterministic", "--out", str(tmp_path / "g")], tmp_path / "cache")
    sampled = _evaltk([*args, "--stochastic", "--out", str(tmp_path / "s")], tmp_path / "cache")
    assert greedy.returncode == 0, greedy.stderr[-2000:]
    assert sampled.returncode == 0, sampled.stderr[-2000:]
    actions = sorted(json.loads(p.read_text())["model_kwargs"]["actions"]
                     for p in (tmp_path / "cache").rglob("policy.json"))
    assert actions == ["greedy", "sample"]
    digests = {json.loads((tmp_path / side / "evaluation.json").read_text())["settings"]["policy_digest"]
               for side in ("g", "s")}
    assert len(digests) == 2


def test_deterministic_is_refused_for_a_builtin(tmp_path: Path) -> None:
    run = _evaltk(["evaluate", "builtin:random", "--env-id", ENV_ID, "--deterministic", "--episodes", "1", "--out",
                   str(tmp_path / "e")], tmp_path / "cache")
    assert run.returncode == 2
    assert run.stderr.strip().splitlines()[-1] == (
        "error: --deterministic/--stochastic choose how another library's checkpoint acts; builtin:random is not "
        "one (an evaltk checkpoint's policy.json fixes it, e.g. evaltk import --actions): drop the option")
    assert not (tmp_path / "e").exists()


@pytest.mark.vizdoom
def test_a_doom_cap_is_the_scenarios_episode_timeout(tmp_path: Path) -> None:
    """``basic`` cut at 40 tics after its cfg's 14 start tics: rows of 54 tics (the frames column counts both)."""
    pytest.importorskip("vizdoom", reason="needs vizdoom (pip install 'evaltk[doom]')")
    out = tmp_path / "d"
    run = _evaltk(["evaluate", "builtin:random", "--env-id", "basic", "--episodes", "2", "--max-episode-frames", "40",
                   "--out", str(out)], tmp_path / "cache")
    assert run.returncode == 0, run.stderr[-2000:]
    assert "imported" not in run.stderr  # a built-in has no caveats
    rows = _rows(out)
    assert [r["truncated"] for r in rows] == ["true", "true"]
    assert [r["frames"] for r in rows] == ["54", "54"]
    settings = json.loads((out / "evaluation.json").read_text())["settings"]
    assert settings["env"]["preprocessing"]["episode_timeout"] == 40


def test_an_uncapped_atari_note_says_how_to_cap(capsys: pytest.CaptureFixture[str]) -> None:
    provenance = {"import": {"format": "sb3", "caveats": ["FireResetEnv: the policy must press FIRE"]}}
    env = EnvSpec("atari", "ALE/Breakout-v5", {"max_num_frames_per_episode": 108_000})
    assert print_import_caveats("ppo.zip", import_caveats(provenance), env=env)
    assert capsys.readouterr().err.splitlines() == [
        "note: ppo.zip was imported from sb3; what evaltk plays differently from its library:",
        "  - FireResetEnv: the policy must press FIRE",
        "  an episode the policy never ends runs to 108,000 frames (the env's limit): --max-episode-frames N cuts it "
        "earlier"]
    assert not print_import_caveats("ckpt", import_caveats({"trainer": "evaltk"}), env=env)
    assert capsys.readouterr().err == ""
