"""``evaltk import`` writes an evaltk checkpoint; ``evaltk evaluate`` plays an SB3 zip directly on the reference env."""

from __future__ import annotations

import csv
import json
import warnings
from pathlib import Path
from typing import Any

import pytest
import torch

from evaltk.checkpoint import load
from evaltk.cli.main import main

sb3 = pytest.importorskip("stable_baselines3", reason="needs stable-baselines3 (pip install stable-baselines3)")

ENV_ID = "BreakoutNoFrameskip-v4"


@pytest.fixture(scope="module")
def sb3_zip(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Return a real SB3 PPO CnnPolicy on Breakout whose greedy action is FIRE, so its episodes end quickly."""
    import ale_py
    import gymnasium as gym
    from stable_baselines3.common.env_util import make_atari_env
    from stable_baselines3.common.vec_env import VecFrameStack

    gym.register_envs(ale_py)
    env = VecFrameStack(make_atari_env(ENV_ID, n_envs=1, seed=0), n_stack=4)
    model = sb3.PPO("CnnPolicy", env, n_steps=32, batch_size=32, n_epochs=1, seed=0, device="cpu")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.learn(total_timesteps=32)
    with torch.no_grad():
        model.policy.action_net.bias.copy_(torch.tensor([0.0, 50.0, 0.0, 0.0]))  # FIRE
    path = tmp_path_factory.mktemp("sb3") / "ppo_breakout.zip"
    model.save(path)
    return path


def test_import_writes_an_evaltk_checkpoint(sb3_zip: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "ckpt"
    assert main(["import", str(sb3_zip), "--env-id", ENV_ID, "--out", str(out), "--json"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[0] == f"imported {sb3_zip} (sb3) -> {out}"
    assert any(line.startswith("  not equivalent: FireResetEnv") for line in lines)
    summary = json.loads(lines[-1])
    assert summary["source"]["format"] == "sb3"
    assert summary["obs_spec"]["shape"] == [4, 84, 84]
    ckpt = load(out)
    assert ckpt.spec.model_class == "evaltk.importers.nets:ImportedPolicy"
    assert ckpt.spec.provenance["import"]["sha256"] == summary["source"]["sha256"]
    assert set(ckpt.tensors) == set(summary["tensors"])


def test_evaluate_runs_an_sb3_zip_on_the_reference_env(sb3_zip: Path, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    out = tmp_path / "eval"
    argv = ["evaluate", str(sb3_zip), "--env-id", ENV_ID, "--episodes", "2", "--num-envs", "2", "--workers", "0",
            "--seed", "0", "--out", str(out)]
    assert main(argv) == 0
    with open(out / "episodes.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 2
    assert all(row["env_id"] == ENV_ID and int(row["frames"]) > 0 for row in rows)
    cached = list((tmp_path / "cache" / "evaltk" / "imported").iterdir())
    assert len(cached) == 1
    assert (cached[0] / "policy.json").exists()


def test_unknown_file_is_one_error_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("hello")
    assert main(["import", str(path), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"error: {path} is not a checkpoint format evaltk imports: pass --format "
                   "sb3|sample-factory|cleanrl (SB3 .zip, Sample Factory run folder or checkpoint_*.pth, CleanRL "
                   ".cleanrl_model)"]


def _evaluate_two_episodes(path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[dict[str, str]]:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    out = tmp_path / "eval"
    argv = ["evaluate", str(path), "--episodes", "2", "--num-envs", "2", "--workers", "0", "--out", str(out)]
    assert main(argv) == 0
    with open(out / "episodes.csv", newline="") as fh:
        return list(csv.DictReader(fh))


def test_evaluate_runs_a_cleanrl_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from torch import nn

    convs = [nn.Conv2d(4, 32, 8, stride=4), nn.ReLU(), nn.Conv2d(32, 64, 4, stride=2), nn.ReLU(),
             nn.Conv2d(64, 64, 3, stride=1), nn.ReLU(), nn.Flatten(), nn.Linear(3136, 512), nn.ReLU()]
    agent = nn.Module()
    agent.network = nn.Sequential(*convs)
    agent.actor = nn.Linear(512, 4)
    agent.critic = nn.Linear(512, 1)
    with torch.no_grad():
        agent.actor.bias.copy_(torch.tensor([0.0, 50.0, 0.0, 0.0]))  # FIRE: short Breakout episodes
    path = tmp_path / "ppo_atari.cleanrl_model"
    torch.save(agent.state_dict(), path)
    rows = _evaluate_two_episodes(path, tmp_path, monkeypatch)
    assert [row["env_id"] for row in rows] == ["BreakoutNoFrameskip-v4"] * 2


def test_evaluate_runs_a_sample_factory_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("sample_factory", reason="needs sample-factory (pip install sample-factory)")
    import types

    import gymnasium as gym
    import numpy as np
    from sample_factory.algo.learning.learner import Learner
    from sample_factory.cfg.arguments import cfg_dict, parse_full_cfg, parse_sf_args
    from sample_factory.model.actor_critic import create_actor_critic
    from sf_examples.atari.atari_params import atari_override_defaults

    argv = ["--env=atari_breakout", "--experiment=e"]
    parser, _ = parse_sf_args(argv)
    atari_override_defaults("atari_breakout", parser)
    cfg = parse_full_cfg(parser, argv)
    model = create_actor_critic(cfg, gym.spaces.Dict({"obs": gym.spaces.Box(0, 255, (4, 84, 84), np.uint8)}),
                                gym.spaces.Discrete(4))
    with torch.no_grad():
        model.action_parameterization.distribution_linear.bias.copy_(torch.tensor([0.0, 50.0, 0.0, 0.0]))
    learner = types.SimpleNamespace(train_step=1, env_steps=1, best_performance=0.0, actor_critic=model,
                                    optimizer=torch.optim.Adam(model.parameters()), curr_lr=1e-4)
    run = tmp_path / "e"
    (run / "checkpoint_p0").mkdir(parents=True)
    torch.save(Learner._get_checkpoint_dict(learner), run / "checkpoint_p0" / "checkpoint_000000001_1.pth")
    (run / "config.json").write_text(json.dumps(cfg_dict(cfg)))
    rows = _evaluate_two_episodes(run, tmp_path, monkeypatch)
    assert [row["env_id"] for row in rows] == ["BreakoutNoFrameskip-v4"] * 2


def test_cli_format_choices_are_the_importers_formats(capsys: pytest.CaptureFixture[str]) -> None:
    """``--format`` takes the registered formats (:data:`evaltk.importers.IMPORTERS`), a misspelt one the close ones."""
    with pytest.raises(SystemExit) as info:
        main(["import", "x.zip", "--format", "sb33", "--out", "o"])
    assert info.value.code == 2
    assert capsys.readouterr().err.strip().splitlines() == [
        "error: evaltk import: argument --format: invalid choice: 'sb33': did you mean sb3? use one of sb3, "
        "sample-factory, cleanrl (see 'evaltk import --help')"]


def test_a_registered_importer_is_detected_and_used(sb3_zip: Path, tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """One ``IMPORTERS.register`` call adds a format: ``--format`` takes it, detection tries it, its loader runs."""
    from evaltk.importers import FORMATS, IMPORTERS, Importer, detect_format

    read: list[Path] = []

    def load_sb3_again(path: Path, env_id: str | None, script: str | None) -> Any:
        read.append(path)
        return IMPORTERS["sb3"].load(path, env_id, script)

    IMPORTERS.register("sb3-again", Importer("SB3 .zip again", lambda p: p.suffix == ".again", load_sb3_again))
    try:
        assert "sb3-again" in FORMATS
        marked = tmp_path / "notes.again"
        marked.write_text("not a zip")
        assert detect_format(marked) == "sb3-again"  # the formats before it do not claim the file
        out = tmp_path / "ckpt"
        assert main(["import", str(sb3_zip), "--format", "sb3-again", "--env-id", ENV_ID, "--out", str(out)]) == 0
        assert read == [sb3_zip]
        assert load(out).spec.provenance["import"]["format"] == "sb3"
    finally:
        IMPORTERS.pop("sb3-again")
    capsys.readouterr()
    assert main(["import", str(tmp_path / "gone.zip"), "--out", str(tmp_path / "o")]) == 2
    assert capsys.readouterr().err.strip().splitlines() == [
        f"error: {tmp_path / 'gone.zip'} does not exist: pass another library's checkpoint (SB3 .zip, Sample Factory "
        "run folder or checkpoint_*.pth, CleanRL .cleanrl_model)"]
