"""A2C+V-trace end to end on a real gpu_env: run folder, checkpoints, resume, evaltk evaluate on gym, bad input."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from safetensors.torch import load_file

from evaltk.checkpoint import load
from evaltk.cli.main import main as evaltk_main
from evaltk.errors import CheckpointError
from evaltk.policies import load_policy
from trainers.a2c import checkpointing
from trainers.a2c.config import A2cConfig, ConfigError
from trainers.a2c.model import A2cPolicy, NatureActorCritic
from trainers.a2c_vtrace import RunResult, run
from trainers.a2c_vtrace import main as a2c_main

ROLLOUT_FRAMES = 4 * 4 * 4  # num_envs x rollout x frame_skip


def _tiny(out: Path, **changes: object) -> A2cConfig:
    """Return a config that runs a few updates in seconds: 4 envs, 4-step rollouts, 2 updates per rollout."""
    values: dict[str, object] = {"game": "Breakout", "out": str(out), "num_envs": 4, "rollout": 4,
                                 "num_minibatches": 2, "max_frames": 3 * ROLLOUT_FRAMES, "log_every_s": 0.01,
                                 "save_every_s": 0.0, "seed": 3}
    values.update(changes)
    return A2cConfig.from_dict(values)


@pytest.fixture(scope="module")
def first_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, RunResult]:
    out = tmp_path_factory.mktemp("a2c") / "run"
    result = run(_tiny(out), log=lambda line: None)
    return out, result


def test_short_run_writes_run_folder_and_a_loadable_checkpoint(first_run: tuple[Path, RunResult]) -> None:
    out, result = first_run
    assert result.frames == 3 * ROLLOUT_FRAMES
    assert result.updates == 6
    config = json.loads((out / "config.json").read_text())
    assert config["config"]["game"] == "Breakout"
    assert config["derived"]["env_id"] == "ALE/Breakout-v5"
    assert "git_hash" in config["provenance"]
    assert config["provenance"]["versions"]["torch"]
    records = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    assert [r["frames"] for r in records] == [ROLLOUT_FRAMES, 2 * ROLLOUT_FRAMES, 3 * ROLLOUT_FRAMES]
    assert all(np.isfinite(r["losses/value"]) and r["perf/fps"] > 0 for r in records)
    assert list((out / "tb").glob("events.out.tfevents.*"))
    ckpt_path = checkpointing.latest_policy_path(out)
    assert ckpt_path is not None
    assert ckpt_path == Path(result.checkpoint)
    saved = [p for p in ckpt_path.parent.iterdir() if p.is_dir() and p.name.startswith("ckpt_")
             and not p.name.endswith(".train")]
    assert saved == [ckpt_path], "--save-every-s 0 writes only the final checkpoint"
    ckpt = load(ckpt_path)
    assert ckpt.spec.env == checkpointing.env_spec(_tiny(out)).to_json()
    assert ckpt.spec.provenance["env_frames"] == 3 * ROLLOUT_FRAMES
    torch.manual_seed(3)
    fresh = NatureActorCritic((4, 84, 84), 4)
    changed = [k for k, v in fresh.state_dict().items() if not torch.equal(v, ckpt.tensors[k])]
    assert changed, "six updates left every weight at its initial value"
    policy = load_policy(ckpt_path)
    assert isinstance(policy, A2cPolicy)
    policy.reset(3, np.random.default_rng(0))
    actions = policy.act(np.zeros((3, 4, 84, 84), np.uint8), np.ones(3, bool))
    assert actions.dtype == np.int64
    assert actions.shape == (3,)
    assert ((actions >= 0) & (actions < 4)).all()


def test_resume_continues_counters_weights_and_optimizer(first_run: tuple[Path, RunResult]) -> None:
    out, first = first_run
    before = load(Path(first.checkpoint))
    second = run(_tiny(out, resume=True, max_frames=5 * ROLLOUT_FRAMES), log=lambda line: None)
    assert (second.frames, second.updates) == (5 * ROLLOUT_FRAMES, 10)
    assert second.episodes >= first.episodes
    state = load_file(str(Path(second.checkpoint).with_name(Path(second.checkpoint).name + ".train")
                          / "train_state.safetensors"))
    assert int(state["opt.0.step"]) == 10  # RMSprop's step count continued from 6
    records = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    frames = [r["frames"] for r in records]
    assert frames == sorted(frames)
    assert frames[-1] == 5 * ROLLOUT_FRAMES
    starts = json.loads((out / "config.json").read_text())["starts"]
    assert [s["resumed_from_frames"] for s in starts] == [None, 3 * ROLLOUT_FRAMES]
    after = load(Path(second.checkpoint))
    assert any(not torch.equal(before.tensors[k], after.tensors[k]) for k in before.tensors)


def test_checkpoint_evaluates_on_gymnasium_with_evaltk(first_run: tuple[Path, RunResult], tmp_path: Path) -> None:
    ckpt = checkpointing.latest_policy_path(first_run[0])
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    proc = subprocess.run(
        [sys.executable, "-m", "evaltk", "evaluate", str(ckpt), "--env-id", "ALE/Breakout-v5", "--episodes", "1",
         "--num-envs", "1", "--workers", "0", "--against", "gym", "--out", str(tmp_path / "eval"), "--json"],
        capture_output=True, text=True, timeout=300, env=env, check=False)
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout.strip().splitlines()[-1])
    assert summary["n_episodes"] == 1
    assert summary["summary"]["simulator"] == "gym"
    assert summary["summary"]["env_steps"] > 0
    assert summary["mean_return"] >= 0


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--game", "Breakot"], "did you mean ALE/Breakout-v5"),
        (["--game", "../x"], "is not a game name"),
        (["--num-envs", "0"], "--num-envs must be >= 1"),
        (["--num-envs", "6", "--num-minibatches", "4"], "must be a multiple of --num-minibatches"),
        (["--learning-rate", "nan"], "--learning-rate must be a finite number > 0"),
        (["--gamma", "1.5"], "--gamma must be in (0, 1]"),
    ],
)
def test_bad_options_are_named(argv: list[str], message: str, tmp_path: Path,
                               capsys: pytest.CaptureFixture[str]) -> None:
    assert a2c_main([*argv, "--out", str(tmp_path / "run")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ")
    assert message in err
    assert not (tmp_path / "run").exists()


def test_evaltk_train_atari_reports_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert evaltk_main(["train", "atari", "--game", "NotAGame", "--out", str(tmp_path / "r")]) == 2
    assert "--game 'NotAGame'" in capsys.readouterr().err


def test_existing_run_needs_resume_and_resume_needs_a_checkpoint(tmp_path: Path) -> None:
    out = tmp_path / "run"
    out.mkdir()
    (out / "config.json").write_text("{}")
    with pytest.raises(ConfigError, match="already holds a run: pass --resume"):
        run(_tiny(out))
    with pytest.raises(CheckpointError, match="no checkpoint to resume"):
        run(_tiny(tmp_path / "empty", resume=True))


def test_resume_refuses_another_game(first_run: tuple[Path, RunResult], tmp_path: Path) -> None:
    import shutil

    out = tmp_path / "copy"
    shutil.copytree(first_run[0], out)
    with pytest.raises(ConfigError, match="resume with the run's own --game"):
        run(_tiny(out, resume=True, game="Pong", max_frames=10 * ROLLOUT_FRAMES))


@pytest.mark.gpu
def test_cuda_backend_trains_and_writes_a_checkpoint(tmp_path: Path) -> None:
    result = run(_tiny(tmp_path / "run", backend="cuda"), log=lambda line: None)
    assert result.frames == 3 * ROLLOUT_FRAMES
    assert load_policy(result.checkpoint, device="cuda") is not None


def test_max_seconds_stops_the_run(tmp_path: Path) -> None:
    result = run(_tiny(tmp_path / "run", max_frames=0, max_seconds=0.5), log=lambda line: None)
    assert result.stopped_by == "max_seconds"
    assert result.frames % ROLLOUT_FRAMES == 0
    assert Path(result.checkpoint).is_dir()


def test_sigterm_ends_the_run_with_a_final_checkpoint(tmp_path: Path) -> None:
    import signal
    import time

    out = tmp_path / "run"
    proc = subprocess.Popen(
        [sys.executable, "-m", "trainers.a2c_vtrace", "--game", "Breakout", "--out", str(out), "--num-envs", "4",
         "--rollout", "4", "--log-every-s", "0.01", "--json"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**os.environ, "OMP_NUM_THREADS": "1"})
    try:
        deadline = time.monotonic() + 300
        while not ((out / "metrics.jsonl").is_file() and (out / "metrics.jsonl").read_text().strip()):
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "no metrics line within 300 s"
            time.sleep(0.1)
        proc.send_signal(signal.SIGTERM)
        stdout, stderr = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, stderr
    summary = json.loads(stdout.strip().splitlines()[-1])
    assert summary["stopped_by"] == "SIGTERM"
    assert checkpointing.latest_policy_path(out) == Path(summary["checkpoint"])
    assert load(summary["checkpoint"]).spec.provenance["env_frames"] == summary["frames"]


def test_checkpoint_rows_do_not_depend_on_the_batch(first_run: tuple[Path, RunResult], tmp_path: Path) -> None:
    """A2cPolicy takes evaltk's per-episode generators: batch size and workers change no row."""
    from evaltk.evaluation.run import SETTINGS_FILE, EvalConfig, evaluate

    ckpt = checkpointing.latest_policy_path(first_run[0])
    assert ckpt is not None
    a = evaluate(EvalConfig(str(ckpt), tmp_path / "a", episodes=3, seed=5, num_envs=3, workers=0))
    b = evaluate(EvalConfig(str(ckpt), tmp_path / "b", episodes=3, seed=5, num_envs=1, workers=0))
    assert a.rows == b.rows
    settings = json.loads((tmp_path / "a" / SETTINGS_FILE).read_text())["settings"]
    assert settings["policy_seeding"] == "per-episode"
