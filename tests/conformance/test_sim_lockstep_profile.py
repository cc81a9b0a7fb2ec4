"""``conformance lockstep --sim S --compare FIELDS --profile`` and the ``sim_lockstep`` case's ``compare``/``profile``.

The simulators under test are real third-party factories (``tests/conformance/other_sims.py``): gymnasium + ale-py
resized with ``cv2.INTER_LINEAR`` (every observation differs from the reference's, the game does not), and
gymnasium with ``terminal_on_life_loss`` (episodes that end on the simulator's side only). The CLI runs as a
separate ``python -m evaltk`` process with the factories' folder on ``PYTHONPATH``, as a user runs it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from conformance.lockstep import action_rng
from conformance.sim_lockstep import SimLockstepConfig, deterministic_env, run_sim_lockstep
from conformance.suite import load_suite
from evaltk.cli.main import main
from evaltk.envs import describe
from evaltk.errors import SuiteError
from evaltk.seeding import episode_seed
from evaltk.simulators import get
from tests.evaltk.cli_helpers import error_line

ROOT = Path(__file__).resolve().parents[2]
SIMS = Path(__file__).resolve().parent
DEFAULT_KEYS = ["sim", "reference", "env_id", "seed", "steps", "episodes", "identical", "terminal_obs",
                "terminal_obs_differed", "first_difference"]


def lockstep(*args: str) -> tuple[int, list[str], dict[str, Any]]:
    """Run ``python -m evaltk conformance lockstep ARGS --json`` with ``other_sims`` importable; rc, lines, JSON."""
    path = os.pathsep.join([str(ROOT), str(SIMS), os.environ.get("PYTHONPATH", "")])
    run = subprocess.run([sys.executable, "-m", "evaltk", "conformance", "lockstep", *args, "--json"], cwd=ROOT,
                         env={**os.environ, "PYTHONPATH": path}, capture_output=True, text=True, timeout=600)
    lines = run.stdout.strip().splitlines()
    assert lines, run.stderr
    return run.returncode, lines, json.loads(lines[-1])


def test_a_bilinear_resize_is_profiled_on_the_game_fields(tmp_path: Path) -> None:
    """The plain lockstep stops at the first reset (pixels); the profile shows the game never differs."""
    base = ["--sim", "other_sims:bilinear", "--reference", "gym", "--env-id", "ALE/Pong-v5", "--steps", "2000"]
    rc, lines, plain = lockstep(*base, "--out", str(tmp_path / "plain"))
    assert rc == 1
    assert list(plain) == DEFAULT_KEYS  # without --compare/--profile: today's object, no new keys
    assert lines[0].startswith("other_sims:bilinear vs gym on ALE/Pong-v5 (seed 0): first difference at step 0 "
                               "(reset, episode 0): obs:")

    rc, lines, result = lockstep(*base, "--compare", "reward,terminated,lives", "--profile", "--out",
                                 str(tmp_path / "game"))
    assert rc == 0, lines
    assert result["identical"] is True
    assert result["steps"] == 2000
    assert result["compare"] == ["reward", "terminated", "lives"]
    assert result["profile"] == {name: {"first_step": None, "steps_differing": 0, "steps": 2000, "files": {}}
                                 for name in ("reward", "terminated", "lives")}
    ends = result["episode_ends"]
    assert ends["reference_only"] == ends["sim_only"] == 0
    assert ends["both"] == result["episodes"] - 1 >= 1  # Pong games ended, on both sides at once
    assert lines[0].startswith("other_sims:bilinear vs gym on ALE/Pong-v5 (seed 0), comparing reward,terminated,"
                               f"lives: profile of 2000 steps ({result['episodes']} episodes, episode ends: "
                               f"{ends['both']} both, 0 reference only, 0 sim only)")
    assert "  reward          0 of 2000 steps differ (never)" in lines
    assert not (tmp_path / "game").exists()


def test_every_field_profiled_writes_the_first_observation_difference(tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    argv = ["conformance", "lockstep", "--sim", "other_sims:bilinear", "--env-id", "ALE/Pong-v5", "--steps", "300",
            "--profile", "--out", str(out), "--json"]
    with pytest.MonkeyPatch.context() as mp:
        mp.syspath_prepend(str(SIMS))
        assert main(argv) == 1
    result = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    obs = result["profile"]["obs"]
    assert (obs["first_step"], obs["steps"]) == (0, 301)  # the first reset and 300 steps
    assert 0 < obs["steps_differing"] <= 301
    assert 0.0 < obs["mean_abs_diff"] < 255.0
    assert result["first_difference"]["field"] == "obs"
    assert result["first_difference"]["files"] == obs["files"]
    assert Path(obs["files"]["diff"]) == out / "obs" / "diff.png"
    saved = np.load(out / "obs" / "observations.npz")
    assert int((saved["reference"] != saved["sim"]).sum()) == result["first_difference"]["pixels"] > 0
    for name in ("reward", "terminated", "truncated", "lives"):
        assert result["profile"][name]["steps_differing"] == 0, name
        assert not (out / name).exists()


def test_gym_against_gym_profiles_no_difference_in_any_field(tmp_path: Path) -> None:
    rc, lines, result = lockstep("--sim", "gym", "--reference", "gym", "--env-id", "ALE/Breakout-v5", "--steps",
                                 "500", "--profile", "--out", str(tmp_path / "out"))
    assert rc == 0, lines
    assert result["identical"] is True
    assert result["first_difference"] is None
    profile = result["profile"]
    assert list(profile) == ["obs", "reward", "terminated", "truncated", "lives"]
    for name, field in profile.items():
        assert (field["first_step"], field["steps_differing"]) == (None, 0), name
        assert field["steps"] == (501 if name == "obs" else 500), name
    assert profile["obs"]["mean_abs_diff"] == 0.0
    assert result["episode_ends"]["both"] == result["episodes"] - 1 >= 1
    assert not (tmp_path / "out").exists()


def life_loss_replay(env_id: str, steps: int, seed: int) -> tuple[dict[str, int], list[int]]:
    """Replay the engine's actions and episode seeds on gymnasium alone, restarting as a life-loss side would.

    Return the episode-end counts (``both``: game over; ``sim_only``: a life lost, the game not over) and the
    steps that ended on the life-loss side only.
    """
    info = describe(deterministic_env(env_id))
    runner = get("gym").runner(info)
    rng, n = action_rng(seed), int(info.action_spec["n"])
    ends = {"both": 0, "reference_only": 0, "sim_only": 0}
    sim_only: list[int] = []
    episode = 0
    runner.start(episode_seed(seed, episode))
    lives = runner.env.unwrapped.ale.lives()  # type: ignore[attr-defined]
    for step in range(1, steps + 1):
        t = runner.step(int(rng.integers(n)))
        game_over, lost = t.terminated or t.truncated, t.lives < lives
        if game_over:
            ends["both"] += 1
        elif lost:
            ends["sim_only"] += 1
            sim_only.append(step)
        lives = t.lives
        if game_over or lost:
            episode += 1
            runner.start(episode_seed(seed, episode))
            lives = runner.env.unwrapped.ale.lives()  # type: ignore[attr-defined]
    runner.close()
    return ends, sim_only


def test_episodes_that_end_on_one_side_only_are_counted_and_both_restart(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(SIMS))
    config = SimLockstepConfig("other_sims:life_loss", "ALE/Breakout-v5", 300, compare=("terminated", "lives"),
                               profile=True)
    result = run_sim_lockstep(config, out=tmp_path)
    ends, sim_only = life_loss_replay("ALE/Breakout-v5", 300, 0)
    assert len(sim_only) >= 3
    assert result.episode_ends.as_dict() == ends
    assert result.episodes == 1 + sum(ends.values())
    assert result.profile is not None
    terminated, lives = result.profile.fields["terminated"], result.profile.fields["lives"]
    assert (terminated.first_step, terminated.steps_differing, terminated.steps) == (sim_only[0], len(sim_only), 300)
    assert (lives.steps_differing, lives.steps) == (0, 300)
    values = json.loads((tmp_path / "terminated" / "values.json").read_text())
    assert (values["step"], values["reference"], values["sim"]) == (sim_only[0], False, True)


def test_compare_without_profile_stops_at_the_first_difference_of_those_fields(tmp_path: Path) -> None:
    base = ["--sim", "other_sims:life_loss", "--env-id", "ALE/Breakout-v5", "--steps", "300"]
    rc, lines, result = lockstep(*base, "--compare", "reward,lives", "--out", str(tmp_path / "a"))
    assert rc == 0, lines
    assert lines[0].startswith("other_sims:life_loss vs gym on ALE/Breakout-v5 (seed 0), comparing reward,lives: "
                               "identical over 300 steps")
    assert result["episode_ends"]["sim_only"] >= 3  # each restarted both sides
    assert "profile" not in result
    rc, _, result = lockstep(*base, "--compare", "terminated", "--out", str(tmp_path / "b"))
    assert rc == 1
    first = result["first_difference"]
    assert (first["field"], first["reference"], first["sim"]) == ("terminated", False, True)
    assert result["steps"] == first["step"]
    assert (tmp_path / "b" / "values.json").is_file()


SUITE = """
[suite]
name = "profiles"

[[case]]
kind = "sim_lockstep"
name = "bilinear-game"
sim = "other_sims:bilinear"
env_id = "ALE/Pong-v5"
steps = 300
compare = ["reward", "terminated", "lives"]
profile = true

[[case]]
kind = "sim_lockstep"
name = "life-loss"
sim = "other_sims:life_loss"
env_id = "ALE/Breakout-v5"
steps = 300
compare = ["terminated", "lives"]
profile = true
"""


def test_sim_lockstep_cases_profile(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.syspath_prepend(str(SIMS))
    (tmp_path / "s.toml").write_text(SUITE, encoding="utf-8")
    assert main(["conformance", "run", str(tmp_path / "s.toml"), "--workdir", str(tmp_path / "w"), "--json"]) == 1
    cases = {c["name"]: c for c in json.loads(capsys.readouterr().out.strip().splitlines()[-1])["cases"]}
    game, loss = cases["bilinear-game"], cases["life-loss"]
    assert game["outcome"] == "passed", game["message"]
    assert game["compare"] == ["reward", "terminated", "lives"]
    assert [f["steps_differing"] for f in game["profile"].values()] == [0, 0, 0]
    assert "profile of 300 steps" in game["message"]
    ends, sim_only = life_loss_replay("ALE/Breakout-v5", 300, 0)
    assert loss["outcome"] == "failed"
    assert loss["episode_ends"] == ends
    assert loss["profile"]["terminated"]["steps_differing"] == len(sim_only)
    assert f"terminated {len(sim_only)}/300 from step {sim_only[0]}" in loss["message"]
    assert (tmp_path / "w" / "life-loss" / "terminated" / "diff.png").is_file()


def test_bad_compare_and_profile_input(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    line = error_line(capsys, ["conformance", "lockstep", "--sim", "gym", "--env-id", "ALE/Pong-v5", "--compare",
                               "reward,rewards", "--out", str(tmp_path / "o")])
    assert "--compare 'reward,rewards' names 'rewards', not a field: use one or more of obs, reward" in line
    assert not (tmp_path / "o").exists()
    line = error_line(capsys, ["conformance", "lockstep", "--game", "pong", "--profile"])
    assert "--compare and --profile go with --sim" in line
    path = tmp_path / "s.toml"
    case = "[suite]\nname='s'\n[[case]]\nkind='sim_lockstep'\nname='a'\nsim='gym'\nenv_id='ALE/Pong-v5'\nsteps=10\n"
    for extra, match in (("compare=['obs','nope']", "field 'compare' = \\['obs', 'nope'\\] names 'nope', not a field"),
                         ("compare='reward'", "field 'compare' = 'reward' should be list"),
                         ("compare=[]", "names no field"), ("profile=1", "field 'profile' = 1 should be bool")):
        path.write_text(case + extra + "\n", encoding="utf-8")
        with pytest.raises(SuiteError, match=match):
            load_suite(path)
