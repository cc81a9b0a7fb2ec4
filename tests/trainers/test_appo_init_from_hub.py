"""``evaltk train doom --init-from hf://...``: the location resolved by evaltk.locations, from the tests' local Hub."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from evaltk import checkpoint as evaltk_checkpoint
from evaltk.envs.doom import DoomScenario
from tests.evaltk.hub.hub_server import HubServer
from tests.evaltk.hub.run import error_of, evaltk
from trainers.appo import checkpointing
from trainers.appo.config import AppoConfig
from trainers.appo.network import ActorCritic
from trainers.appo.runner import build_model, load_initial_weights
from trainers.appo.scenario import resolve_scenario

pytestmark = pytest.mark.vizdoom
REPO = "evaltk-tests/appo-basic-init"
TINY = ["--scenario", "basic", "--serial", "--envs-per-worker", "2", "--worker-splits", "2", "--rollout", "8",
        "--batch-size", "16", "--obs-height", "36", "--obs-width", "64", "--hidden-size", "64", "--rnn-size", "64",
        "--save-every-s", "0", "--log-every-s", "1", "--queue-timeout-s", "0.2", "--env-frames", "256", "--json"]
MARK = 123.0  # the value head's bias in the pushed checkpoint: a fresh model's is near 0, a few SGD steps keep it


def _model() -> tuple[AppoConfig, DoomScenario, ActorCritic]:
    """Return a fresh APPO model of ``TINY``'s sizes, with its config and scenario."""
    cfg = AppoConfig(scenario="basic", obs_height=36, obs_width=64, hidden_size=64, rnn_size=64)
    scenario = resolve_scenario(cfg)
    return cfg, scenario, build_model(cfg, scenario)


def _checkpoint(folder: Path) -> Path:
    """Save a tiny basic-scenario APPO model (``TINY``'s sizes) whose ``critic.bias`` is ``MARK``."""
    cfg, scenario, model = _model()
    with torch.no_grad():
        model.critic.bias.fill_(MARK)
    return evaltk_checkpoint.save(folder, checkpointing.policy_spec(cfg, scenario, model, 0, 0), model.state_dict())


def test_a_local_init_from_is_recorded_as_given(tmp_path: Path) -> None:
    path = _checkpoint(tmp_path / "init")
    model = _model()[2]
    assert load_initial_weights(model, str(path)) == str(path)
    assert float(model.critic.bias.detach()) == MARK


def test_init_from_an_hf_location_starts_the_run_from_its_weights(tmp_path: Path) -> None:
    pytest.importorskip("huggingface_hub", reason="needs huggingface_hub (pip install 'evaltk[hub]')")
    hub = HubServer()
    folder = _checkpoint(tmp_path / "init")
    sha = hub.repo(REPO).push({p.name: p.read_bytes() for p in folder.iterdir()})
    with hub.serve() as url:
        proc = evaltk(["train", "doom", *TINY, "--out", str(tmp_path / "run"), "--init-from", f"hf://{REPO}"],
                      tmp_path / "hf", endpoint=url)
        assert proc.returncode == 0, proc.stderr[-3000:]
        bad = evaltk(["train", "doom", *TINY, "--out", str(tmp_path / "bad"), "--init-from",
                      "hf://evaltk-tests/no-such-repo"], tmp_path / "hf", endpoint=url)
    summary = json.loads(proc.stdout.strip().splitlines()[-1])
    assert summary["train_step"] >= 1
    config = json.loads((tmp_path / "run" / "config.json").read_text())["config"]
    assert config["init_from"] == f"hf://{REPO}@{sha}"  # the pinned label, not the cache folder
    trained = evaltk_checkpoint.load(summary["checkpoint"])
    assert abs(float(trained.tensors["critic.bias"]) - MARK) < 1.0  # trained on from the Hub weights
    assert "evaltk-tests/no-such-repo" in error_of(bad)
    assert not (tmp_path / "bad").exists()  # a bad location writes nothing


SETUP = """
import json, sys
from pathlib import Path
from trainers.appo.config import AppoConfig
from trainers.appo.selfplay.config import SelfPlayConfig
from trainers.appo.selfplay.setup import PopulationSetup
from trainers.common.run import NO_PROCESS_SETTINGS

cfg = AppoConfig(scenario="duel", out=sys.argv[2], obs_height=36, obs_width=64, hidden_size=16, rnn_size=8,
                 init_from=sys.argv[1])
setup = PopulationSetup(cfg, SelfPlayConfig(self_play=True, population=2), print, NO_PROCESS_SETTINGS, Path(cfg.out))
print(json.dumps({"init_from": [m.init_from for m in setup.state.members],
                  "fc.weight": setup.initial["fc.weight"].flatten()[:4].tolist()}))
"""


def test_self_play_members_start_from_an_hf_location_and_record_its_pin(tmp_path: Path) -> None:
    pytest.importorskip("huggingface_hub", reason="needs huggingface_hub (pip install 'evaltk[hub]')")
    cfg = AppoConfig(scenario="duel", obs_height=36, obs_width=64, hidden_size=16, rnn_size=8)
    scenario = resolve_scenario(cfg, self_play=True)
    torch.manual_seed(5)
    model = build_model(cfg, scenario)
    folder = evaltk_checkpoint.save(tmp_path / "init", checkpointing.policy_spec(cfg, scenario, model, 0, 0),
                                    model.state_dict())
    hub = HubServer()
    sha = hub.repo(REPO).push({p.name: p.read_bytes() for p in folder.iterdir()})
    with hub.serve() as url:
        proc = evaltk([f"hf://{REPO}", str(tmp_path / "run")], tmp_path / "hf", endpoint=url, python=["-c", SETUP])
    assert proc.returncode == 0, proc.stderr[-3000:]
    found = json.loads(proc.stdout.strip().splitlines()[-1])
    assert found["init_from"] == [f"hf://{REPO}@{sha}"] * 2
    assert found["fc.weight"] == model.fc.weight.flatten()[:4].tolist()
