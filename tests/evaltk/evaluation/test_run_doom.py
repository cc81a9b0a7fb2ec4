"""evaltk evaluate on ViZDoom: rows replay in a fresh DoomEnv, APPO checkpoints, bots, signals and resume."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from evaltk.checkpoint import save
from evaltk.envs import doom
from evaltk.evaluation.run import SETTINGS_FILE, TABLE_FILE, EvalConfig, episode_seed, evaluate, read_table
from evaltk.policies import EpisodeSeeded, Policy, episode_policy_rng, load_policy, save_builtin
from tests.evaltk.cli_helpers import error_line, restore_sigint

pytestmark = pytest.mark.vizdoom
EVALTK = [sys.executable, "-m", "evaltk"]


def _replay(scenario: doom.DoomScenario, seed: int, policy: Policy | None, rng: np.random.Generator
            ) -> tuple[float, int, bool, int]:
    """Play one episode in a fresh ``DoomEnv(scenario, seed=seed)``; returns (return, steps, timeout, tics).

    Actions come from ``policy`` (batch of one) or, without one, ``rng.integers`` over the action spec (the
    random builtin's documented stream). Tics are counted with a second fresh raw game fed the same actions.
    """
    env = doom.DoomEnv(scenario, seed=seed)
    game = doom.make_game(scenario, seed=seed)
    spec = doom.action_spec(scenario)
    try:
        obs = env.reset()
        game.init()
        doom.start_episode(game, scenario, first=True)
        first = np.ones(1, np.bool_)
        while True:
            if policy is not None:
                action = policy.act(obs[None], first)[0]
                first[:] = False
            elif spec["type"] == "discrete":
                action = np.int64(rng.integers(spec["n"]))
            else:
                action = rng.integers(0, np.asarray(spec["nvec"]))
            before = game.get_episode_time()
            game.make_action(doom.action_to_buttons(action, scenario), scenario.frameskip)
            if scenario.bots and not game.is_episode_finished() and game.is_player_dead():
                game.respawn_player()
            obs, _, done, info = env.step(action)
            if done:
                assert game.is_episode_finished()
                # A map exit resets ViZDoom's tic counter: the last action then counts a full frameskip.
                tics = game.get_episode_time() or before + scenario.frameskip
                return info["episode_reward"], int(info["episode_length"]), bool(info["timeout"]), tics
    finally:
        env.close()
        game.close()


def _check_rows_replay(rows: list[dict[str, Any]], scenario: doom.DoomScenario) -> None:
    for row in rows:
        ret, steps, timeout, tics = _replay(scenario, row.seed, None, episode_policy_rng(row.seed))
        assert (row.episode_return, row.steps, row.truncated, row.frames) == (ret, steps, timeout, tics), row


def test_random_basic_rows_replay_in_a_fresh_doom_env(tmp_path: Path) -> None:
    # 3 slots over 2 worker processes: the second episode of a slot reuses its game (set_seed + new_episode).
    result = evaluate(EvalConfig("builtin:random", tmp_path, episodes=6, seed=0, num_envs=3, workers=2,
                                 env_id="basic"))
    rows = read_table(tmp_path / TABLE_FILE)
    assert sorted(r.index for r in rows) == list(range(6))
    assert {(r.env_id, r.simulator, r.checkpoint) for r in rows} == {("basic", "vizdoom", "builtin:random")}
    assert all(r.seed == episode_seed(0, r.index) for r in rows)
    assert any(r.truncated for r in rows)
    assert not all(r.truncated for r in rows)
    _check_rows_replay(result.rows, doom.SCENARIOS["basic"])
    settings = json.loads((tmp_path / SETTINGS_FILE).read_text())["settings"]
    assert settings["policy_seeding"] == "per-episode"
    assert settings["env"] == json.loads(json.dumps(doom.env_spec(doom.SCENARIOS["basic"]).to_json()))
    same = evaluate(EvalConfig("random", tmp_path / "one", episodes=6, seed=0, num_envs=1, workers=0,
                               env_id="basic"))
    assert [(r.episode_return, r.frames) for r in same.rows] == [(r.episode_return, r.frames) for r in result.rows]


def test_bot_scenario_rows_replay(tmp_path: Path) -> None:
    # Bots keep state across new_episode(), so every bot episode gets a fresh engine; rows must replay anyway.
    scenario = doom.SCENARIOS["deathmatch_bots"].replace(bots=2, timelimit=0.05, resolution="RES_160X120",
                                                         obs_size=(36, 64))
    ckpt = save_builtin(tmp_path / "ckpt", "random", doom.env_spec(scenario))
    result = evaluate(EvalConfig(str(ckpt), tmp_path / "out", episodes=2, seed=3, num_envs=1, workers=0))
    assert [r.index for r in result.rows] == [0, 1]
    assert all(r.truncated for r in result.rows)  # deathmatch episodes end at the time limit
    _check_rows_replay(result.rows, scenario)


def _tiny_appo_checkpoint(path: Path) -> Path:
    """Save a freshly initialised (untrained) APPO model for basic at 36x64 through trainers.appo's spec."""
    from trainers.appo.checkpointing import policy_spec
    from trainers.appo.config import AppoConfig
    from trainers.appo.runner import build_model

    cfg = AppoConfig(scenario="basic", out=str(path), obs_height=36, obs_width=64, hidden_size=32, rnn_size=32,
                     seed=7)
    scenario = doom.get_scenario("basic").replace(obs_size=(36, 64))
    model = build_model(cfg, scenario)
    return save(path, policy_spec(cfg, scenario, model, 0, 0), model.state_dict())


def test_appo_checkpoint_rows_are_reproducible(tmp_path: Path) -> None:
    ckpt = _tiny_appo_checkpoint(tmp_path / "ckpt")
    a = evaluate(EvalConfig(str(ckpt), tmp_path / "a", episodes=3, seed=1, num_envs=2, workers=0))
    settings = json.loads((tmp_path / "a" / SETTINGS_FILE).read_text())["settings"]
    assert settings["policy_seeding"] == "per-episode"  # AppoPolicy samples each slot from its episode's generator
    assert "num_envs" not in settings
    assert a.summary["simulator"] == "vizdoom"
    b = evaluate(EvalConfig(str(ckpt), tmp_path / "b", episodes=3, seed=1, num_envs=1, workers=1))
    assert a.rows == b.rows  # batch size and workers do not change any row
    # Every row replays alone from its seed: a fresh env and the episode's own policy generator.
    scenario = doom.scenario_from_env_spec(load_policy(ckpt).spec.env_spec)
    for row in a.rows:
        policy = load_policy(ckpt)
        policy.reset(1, np.random.default_rng(0))
        assert isinstance(policy, EpisodeSeeded)
        policy.begin_episodes(np.zeros(1, np.int64), [episode_policy_rng(row.seed)])
        ret, steps, timeout, tics = _replay(scenario, row.seed, policy, np.random.default_rng())
        assert (row.episode_return, row.steps, row.truncated, row.frames) == (ret, steps, timeout, tics), row


def test_doom_refuses_gpu_env_and_fast_reset(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = ["evaluate", "random", "--env-id", "basic", "--episodes", "1", "--out", str(tmp_path / "o")]
    line = error_line(capsys, [*base, "--sim", "gpu_env"])
    assert "--sim gpu_env runs Atari envs only, and basic is a ViZDoom scenario" in line
    assert "--fast-reset restores ALE states" in error_line(capsys, [*base, "--fast-reset"])
    line = error_line(capsys, [*base[:3], "basik", *base[4:]])
    assert ("--env-id 'basik' is neither a ViZDoom scenario nor an Atari env id: did you mean basic? use a scenario "
            "(basic, ") in line
    line = error_line(capsys, [*base[:3], "basci", *base[4:]])
    assert "--env-id 'basci' is neither a ViZDoom scenario nor an Atari env id: did you mean basic? " in line
    assert not (tmp_path / "o").exists()  # refused before anything was written


def test_doom_checkpoint_env_id_picks_a_builtin_scenario(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ckpt = _tiny_appo_checkpoint(tmp_path / "ckpt")  # 36x64 observations; the built-in scenarios give 72x128
    line = error_line(capsys, ["evaluate", str(ckpt), "--env-id", "defend_the_center", "--out", str(tmp_path / "o")])
    assert "expects observations uint8[3, 36, 64] but defend_the_center" in line


def _args(out: Path, episodes: int, *extra: str) -> list[str]:
    return ["evaluate", "builtin:random", "--env-id", "basic", "--episodes", str(episodes), "--seed", "4",
            "--num-envs", "2", "--out", str(out), *extra]


# SIGINT is slow here: the rows and the resume are evaluate's own code, whose SIGINT case the default run
# checks on Atari (tests/evaltk/test_cli_evaluate.py); SIGKILL, the harder case, stays for Doom.
@pytest.mark.parametrize("sig", [pytest.param(signal.SIGINT, marks=pytest.mark.slow), signal.SIGKILL])
def test_interrupted_doom_run_keeps_rows_and_resumes(tmp_path: Path, sig: signal.Signals) -> None:
    episodes = 400  # far more than a quiet machine finishes before the signal arrives
    proc = subprocess.Popen([*EVALTK, *_args(tmp_path, episodes)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True,
                            preexec_fn=restore_sigint)
    table = tmp_path / TABLE_FILE
    deadline = time.monotonic() + 300
    while not (table.exists() and table.read_text().count("\n") >= 4):
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            pytest.fail(f"no rows before the signal: {proc.communicate()}")
        time.sleep(0.05)
    if sig == signal.SIGINT:  # Ctrl-C reaches the whole foreground group: workers and ViZDoom engines too
        os.killpg(proc.pid, sig)
    else:
        proc.send_signal(sig)
    _, err = proc.communicate(timeout=300)
    if sig == signal.SIGINT:
        assert proc.returncode == 130, err
        assert "re-run the same command to resume" in err
    else:
        assert proc.returncode == -signal.SIGKILL
    kept = read_table(table, repair=True)
    assert 3 <= len(kept) < episodes
    # Resume with fewer episodes than were kept plus a few: rows already there are not rerun.
    target = len(kept) + 3
    resumed = subprocess.run([*EVALTK, *_args(tmp_path, target, "--json")], capture_output=True, text=True,
                             timeout=120)
    assert resumed.returncode == 0, resumed.stderr
    summary = json.loads(resumed.stdout.strip().splitlines()[-1])["summary"]
    kept_below = [r for r in kept if r.index < target]
    assert summary["resumed_episodes"] == len(kept_below)
    rows = read_table(table)
    assert [r for r in rows if r in kept] == kept
    fresh = evaluate(EvalConfig("random", tmp_path / "fresh", episodes=target, seed=4, num_envs=1, workers=0,
                                env_id="basic"))
    by_index = {r.index: r for r in rows}
    assert [by_index[i] for i in range(target)] == fresh.rows


def test_an_episode_whose_engine_is_killed_is_replayed_and_every_row_written_once(
        tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    """SIGKILL one real ViZDoom engine mid-episode: its worker is replaced and the slot's episode replayed."""
    from evaltk.evaluation.plan import plan
    from evaltk.evaluation.run import run_plan
    from tests.evaltk.doom_procs import descendants

    config = EvalConfig("builtin:random", tmp_path / "killed", episodes=6, seed=2, num_envs=2, workers=2,
                        env_id="basic")
    prep = plan(config)
    act = prep.policy.act
    calls = [0]
    killed: list[int] = []

    def act_and_kill_at_the_tenth_step(obs: np.ndarray, first: np.ndarray) -> np.ndarray:
        calls[0] += 1
        if calls[0] == 10:  # both slots are mid-episode (a random basic episode lasts up to 75 steps)
            engines = sorted(p for p in descendants(os.getpid())
                             if Path(f"/proc/{p}/comm").read_text().strip() == "vizdoom")
            os.kill(engines[0], signal.SIGKILL)
            killed.append(engines[0])
        return act(obs, first)

    prep.policy.act = act_and_kill_at_the_tenth_step  # type: ignore[method-assign]
    result = run_plan(prep)
    assert killed, "the evaluation never reached its tenth step"
    err = capfd.readouterr().err
    assert "evaluation worker: the ViZDoom engine" in err, err[-2000:]
    rows = read_table(tmp_path / "killed" / TABLE_FILE)
    assert sorted(r.index for r in rows) == list(range(6))  # every row once
    undisturbed = evaluate(EvalConfig("builtin:random", tmp_path / "calm", episodes=6, seed=2, num_envs=2,
                                      workers=2, env_id="basic"))
    key = ("index", "seed", "return", "frames", "steps", "truncated")
    assert sorted(tuple(r.to_json()[k] for k in key) for r in rows) == sorted(
        tuple(r.to_json()[k] for k in key) for r in undisturbed.rows)
    assert len(result.rows) == 6


def test_a_doom_checkpoint_against_its_own_table_is_identical_through_every_door(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Its env spec holds tuples (buttons, obs_size), the table's JSON lists: one spec, nothing differs."""
    from conformance.suite import Outcome, load_suite, run_suite
    from evaltk.cli.main import main

    ckpt = _tiny_appo_checkpoint(tmp_path / "ckpt")
    table = tmp_path / "table"
    run = ["--episodes", "10", "--seed", "4", "--num-envs", "2", "--workers", "0"]
    assert main(["evaluate", str(ckpt), *run, "--out", str(table)]) == 0
    capsys.readouterr()
    assert main(["validate", str(ckpt), "--sim", "gym", "--baseline", str(table), *run, "--margin", "1",
                 "--out", str(tmp_path / "val"), "--json"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    report = json.loads(lines[-1])
    assert report["verdict"] == "identical"
    assert report["environments"]["check"]["same"]
    assert report["environments"]["differs"] == []
    assert report["environments"]["not_reported"] == {"sim": [], "reference": []}
    suite = tmp_path / "doom.toml"
    suite.write_text(f'[suite]\nname = "doom-doors"\n\n[[case]]\nkind = "transfer"\nname = "own-table"\n'
                     f'checkpoint = "{ckpt}"\nbaseline = "{table}"\nsimulator_b = "gym"\nepisodes = 10\nseed = 4\n'
                     'num_envs = 2\nmargin = 1\nmargin_kind = "absolute"\nexpect = "identical"\n')
    (result,) = run_suite(load_suite(suite), tmp_path / "work")
    assert result.outcome is Outcome.PASSED, result.message
    assert result.details["comparison"]["verdict_line"] == report["verdict_line"] == lines[-2]
