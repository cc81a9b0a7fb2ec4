"""Sample Factory's own Doom checkpoints (``sf_examples.vizdoom``, trained by its example script) in evaltk.

The fixtures in ``tests/data/sf_doom/`` are tiny real runs written by Sample Factory 2.1.1 itself
(commands in ``tests/data/README.md``). Checked against Sample Factory's own code:

* the network: Sample Factory's ``create_actor_critic`` with its ``VizdoomEncoder`` loads the
  fixture's state dict and is run on the same screens, measurements and GRU states as evaltk's
  import (logits, values, new states; greedy actions per head);
* the observation pipeline: Sample Factory's env (``make_doom_env_impl`` with the run's
  ``config.json``) and evaltk's scenario built from that config play the same seed and actions in
  lockstep; screens and measurement vectors are equal;
* bad input: one line naming what was found and what is supported.
"""

from __future__ import annotations

import copy
import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from evaltk.envs import EnvSpec, doom, doom_measurements
from evaltk.importers import ForeignCheckpointError, import_checkpoint
from evaltk.importers.nets import ImportedPolicy
from evaltk.importers.safe_pickle import tensor_dict
from evaltk.importers.sample_factory import checkpoint_file
from evaltk.importers.torch_zip import read_torch
from evaltk.policies import load_policy
from tests.data_paths import data_path

pytest.importorskip("sf_examples.vizdoom.doom.doom_model", reason="needs sample-factory (pip install sample-factory)")
pytestmark = pytest.mark.vizdoom

TOL = 1e-5
RUNS = ("basic", "battle", "defend_the_center", "duel_bots")
"""The committed runs (``tests/data/sf_doom/<run>``); battle and duel_bots have measurements and several heads."""


@pytest.fixture
def vizdoom_encoder() -> Iterator[None]:
    """Register Sample Factory's ``VizdoomEncoder`` (as its train/enjoy scripts do) for one test, then restore."""
    from sample_factory.algo.utils.context import global_model_factory
    from sf_examples.vizdoom.doom.doom_model import make_vizdoom_encoder

    factory = global_model_factory()
    before = factory.make_model_encoder_func
    factory.register_encoder_factory(make_vizdoom_encoder)
    yield
    factory.make_model_encoder_func = before


def _run(name: str) -> Path:
    return data_path(f"sf_doom/{name}")


def _sf_model(run: Path) -> tuple[Any, dict[str, Any]]:
    """Return Sample Factory's actor-critic for ``run``: built by Sample Factory from its config, the run's weights."""
    import gymnasium as gym
    from sample_factory.model.actor_critic import create_actor_critic
    from sample_factory.utils.attr_dict import AttrDict
    from sf_examples.vizdoom.doom.doom_utils import doom_env_by_name

    cfg = json.loads((run / "config.json").read_text())
    spaces: dict[str, Any] = {"obs": gym.spaces.Box(0, 255, (3, cfg["res_h"], cfg["res_w"]), np.uint8)}
    file = checkpoint_file(run)
    sd = tensor_dict(read_torch(file.read_bytes(), name=str(file))["model"], name=str(file), what="model")
    if any(k.startswith("encoder.measurements_head") for k in sd):
        spaces["measurements"] = gym.spaces.Box(-np.inf, np.inf, (doom_measurements.COUNT,), np.float32)
    model = create_actor_critic(AttrDict(cfg), gym.spaces.Dict(spaces), doom_env_by_name(cfg["env"]).action_space)
    model.load_state_dict(sd)
    model.eval()
    return model, cfg


def _packed(screens: np.ndarray, measurements: np.ndarray | None) -> np.ndarray:
    if measurements is None:
        return screens
    b, c, h, w = screens.shape
    out = np.zeros((b, c, h + 1, w), np.uint8)
    out[:, :, :h] = screens
    for i in range(b):
        doom_measurements.pack(out[i, :, h], measurements[i])
    return out


@pytest.mark.parametrize("name", RUNS)
def test_forward_pass_equals_sample_factorys_model(name: str, tmp_path: Path, vizdoom_encoder: None) -> None:
    run = _run(name)
    model, cfg = _sf_model(run)
    ckpt, imported = import_checkpoint(run, tmp_path / "ckpt", actions="greedy")
    assert imported.source["env"] == cfg["env"]
    policy = load_policy(str(ckpt))
    assert isinstance(policy, ImportedPolicy)
    measured = "measurements" in imported.model_kwargs
    rng = np.random.default_rng(0)
    batch = 64
    rnn = torch.zeros(batch, int(cfg["rnn_size"]))
    state: torch.Tensor | None = torch.zeros(batch, policy.model.state_size)
    for _ in range(3):  # the GRU state is carried across steps
        screens = rng.integers(0, 256, size=(batch, 3, cfg["res_h"], cfg["res_w"]), dtype=np.uint8)
        meas = rng.uniform(0, 5, size=(batch, doom_measurements.COUNT)).astype(np.float32) if measured else None
        obs = {"obs": torch.from_numpy(screens)}
        if meas is not None:
            obs["measurements"] = torch.from_numpy(meas)
        with torch.no_grad():
            ref = model(model.normalize_obs(obs), rnn)
            z, state = policy.model.features(torch.from_numpy(_packed(screens, meas)), state)
            logits, values = policy.model.policy(z), policy.model.value(z).squeeze(-1)
        np.testing.assert_allclose(logits.numpy(), ref["action_logits"].numpy(), atol=TOL, rtol=0)
        np.testing.assert_allclose(values.numpy(), ref["values"].numpy(), atol=TOL, rtol=0)
        assert state is not None
        np.testing.assert_allclose(state.numpy(), ref["new_rnn_states"].numpy(), atol=TOL, rtol=0)
        rnn = ref["new_rnn_states"]
        heads = imported.model_kwargs.get("action_heads", [logits.shape[-1]])
        with torch.no_grad():  # act() on episode starts: a zero GRU state
            first = model(model.normalize_obs(obs), torch.zeros_like(rnn))["action_logits"]
        want = np.stack([p.argmax(-1).numpy() for p in torch.split(first, heads, -1)], axis=1)
        policy.reset(batch, np.random.default_rng(0))
        got = policy.act(_packed(screens, meas), np.ones(batch, bool))
        np.testing.assert_array_equal(got.reshape(batch, -1), want)


def _lockstep_seed(sf_env: Any) -> int:
    for seed in range(100):
        sf_env.unwrapped.seed(seed)
        if sf_env.unwrapped.curr_seed < 2**31:
            return seed
    raise AssertionError("no Sample Factory seed below 2**31")


SINGLE_PLAYER = ("doom_basic", "doom_defend_the_center", "doom_defend_the_line", "doom_health_gathering",
                 "doom_health_gathering_supreme", "doom_my_way_home", "doom_deadly_corridor", "doom_battle",
                 "doom_battle2", "doom_two_colors_easy", "doom_benchmark")
"""Sample Factory's single-player Doom envs (the bots and self-play envs host network games)."""


@pytest.mark.parametrize("env", SINGLE_PLAYER)
def test_observations_equal_sample_factorys_env_in_lockstep(env: str) -> None:
    """Screens (and measurements) of Sample Factory's env and of evaltk's scenario rebuilt from the same config."""
    from sample_factory.utils.attr_dict import AttrDict
    from sf_examples.vizdoom.doom.doom_utils import doom_env_by_name, make_doom_env_impl

    from evaltk.importers import sf_doom

    cfg = AttrDict({**json.loads((_run("battle") / "config.json").read_text()), "env": env, "res_w": 96,
                    "res_h": 54})
    probe = doom.DoomScenario(name="probe", cfg="basic.cfg", buttons=(), action_heads=(doom.ActionHead("a", ((),)),),
                              scenario_dir="sample_factory")
    pre = sf_doom.scenario(cfg, env, doom.scenario_folder(probe), "test")
    scenario = doom.scenario_from_env_spec(EnvSpec("doom", pre["name"], {}, pre))
    spec = copy.copy(doom_env_by_name(cfg.env))
    spec.reward_scaling = 1.0  # its RewardScalingWrapper needs gymnasium < 1.0; rewards are not compared here
    sf_env = make_doom_env_impl(spec, cfg=cfg)
    seed = _lockstep_seed(sf_env)
    sf_obs, _ = sf_env.reset(seed=seed)
    ours = doom.DoomEnv(scenario, seed=sf_env.unwrapped.curr_seed)
    rng = np.random.default_rng(1)
    try:
        obs = ours.reset()
        for step in range(60):
            screen, meas = doom_measurements.unpack(obs[None]) if scenario.measurement_scheme else (obs[None], None)
            sf_screen = sf_obs["obs"] if isinstance(sf_obs, dict) else sf_obs
            np.testing.assert_array_equal(screen[0], sf_screen, err_msg=f"screen, step {step}")
            if meas is not None:
                np.testing.assert_array_equal(meas[0], sf_obs["measurements"], err_msg=f"measurements, step {step}")
            action = [int(rng.integers(len(head.options))) for head in scenario.action_heads]
            sf_obs, _, term, trunc, _ = sf_env.step(action if len(action) > 1 else action[0])
            obs, _, done, _ = ours.step(np.asarray(action, np.int64))
            assert bool(term or trunc) == done
            if done:
                break
    finally:
        ours.close()
        sf_env.close()


def _copy_run(name: str, tmp_path: Path) -> Path:
    dst = tmp_path / name
    shutil.copytree(_run(name), dst)
    return dst


def test_unsupported_encoder_and_action_space_are_one_line(tmp_path: Path) -> None:
    run = _copy_run("basic", tmp_path)
    cfg = json.loads((run / "config.json").read_text())
    (run / "config.json").write_text(json.dumps({**cfg, "encoder_conv_architecture": "resnet_impala"}))
    with pytest.raises(ForeignCheckpointError, match=r"encoder .resnet_impala. is not read \(supported: convnet_"):
        import_checkpoint(run, tmp_path / "a")
    (run / "config.json").write_text(json.dumps(cfg))
    with pytest.raises(ForeignCheckpointError, match=r"doom_dm's action space has a continuous \(Box\) turn head"):
        import_checkpoint(run, tmp_path / "b", env_id="doom_dm")
    with pytest.raises(ForeignCheckpointError, match=r"Sample Factory env 'doom_nope' is not one evaltk rebuilds"):
        import_checkpoint(run, tmp_path / "c", env_id="doom_nope")
    with pytest.raises(ForeignCheckpointError, match=r"doom_basic has no measurement inputs but the checkpoint has"):
        import_checkpoint(_run("battle"), tmp_path / "d", env_id="doom_basic")


def test_default_actions_follow_enjoy(tmp_path: Path) -> None:
    run = _copy_run("basic", tmp_path)
    _, imported = import_checkpoint(run, tmp_path / "a")
    assert json.loads((tmp_path / "a" / "policy.json").read_text())["model_kwargs"]["actions"] == "sample"
    cfg = json.loads((run / "config.json").read_text())
    (run / "config.json").write_text(json.dumps({**cfg, "eval_deterministic": True}))
    import_checkpoint(run, tmp_path / "b")
    assert json.loads((tmp_path / "b" / "policy.json").read_text())["model_kwargs"]["actions"] == "greedy"
    assert imported.env.preprocessing["interpolation"] == "nearest"
    assert imported.env.preprocessing["scenario_dir"] == "sample_factory"


@pytest.mark.parametrize("name", ["basic", "battle"])
def test_evaluate_cli_plays_the_experiment_folder(name: str, tmp_path: Path) -> None:
    """``evaltk evaluate <Sample Factory experiment folder>``: the issue's command, now a score table."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache"), "OMP_NUM_THREADS": "1"}
    run = subprocess.run([sys.executable, "-m", "evaltk", "evaluate", str(_run(name)), "--episodes", "2", "--out",
                          str(tmp_path / "eval"), "--json"], capture_output=True, text=True, timeout=600, env=env)
    assert run.returncode == 0, run.stderr[-2000:]
    rows = (tmp_path / "eval" / "episodes.csv").read_text().splitlines()
    assert len(rows) == 3
    assert f"sf_doom_{name}" in rows[1]
    policy = json.loads(next((tmp_path / "cache").rglob("policy.json")).read_text())
    assert policy["model_kwargs"]["actions"] == "sample"
    cfgs = {"basic": "basic.cfg", "battle": "battle_continuous_turning.cfg"}
    assert policy["env"]["preprocessing"]["cfg"] == cfgs[name]


def test_self_play_env_imports_as_a_bots_game(tmp_path: Path) -> None:
    """``doom_duel`` shares ``doom_duel_bots``'s model and spaces; it imports as one agent hosting bots."""
    _, imported = import_checkpoint(_run("duel_bots"), tmp_path / "a", env_id="doom_duel")
    pre = imported.env.preprocessing
    assert pre["bots"] >= 1
    assert pre["cfg"] == "ssl2.cfg"
    assert pre["reward_shaping"] == {"FRAGCOUNT": 1.0}
    assert any("self-play" in c for c in imported.caveats)
    assert imported.action_spec == {"type": "multi_discrete", "nvec": [3, 3, 8, 2, 2, 2, 21]}


def test_every_listed_env_rebuilds_with_sample_factorys_buttons_and_heads() -> None:
    """Each env of the table builds a valid scenario whose heads match Sample Factory's action space."""
    from sf_examples.vizdoom.doom.doom_utils import DOOM_ENVS, doom_env_by_name

    from evaltk.importers import sf_doom

    assert set(sf_doom.SF_DOOM_ENVS) == {spec.name for spec in DOOM_ENVS}
    for spec in DOOM_ENVS:  # the table's facts are Sample Factory's
        row = sf_doom.SF_DOOM_ENVS[spec.name]
        assert (row.cfg, row.reward_scaling, row.timeout, row.bots, row.agents, row.respawn_delay) == (
            spec.env_spec_file, spec.reward_scaling, spec.default_timeout, spec.num_bots, spec.num_agents,
            spec.respawn_delay), spec.name
        wrappers = [w.__name__ for w, _ in spec.extra_wrappers or []]
        assert row.measurements == ("DoomAdditionalInput" in wrappers), spec.name
    cfg = json.loads((_run("battle") / "config.json").read_text())
    probe = doom.DoomScenario(name="probe", cfg="basic.cfg", buttons=(), action_heads=(doom.ActionHead("a", ((),)),),
                              scenario_dir="sample_factory")
    folder = doom.scenario_folder(probe)
    for env, row in sf_doom.SF_DOOM_ENVS.items():
        if any(h[0] == "box" for h in row.heads):
            continue
        pre = sf_doom.scenario({**cfg, "env": env}, env, folder, "test")
        scenario = doom.scenario_from_env_spec(EnvSpec("doom", pre["name"], {}, pre))
        space = doom_env_by_name(env).action_space
        sizes = [s.n for s in space.spaces] if hasattr(space, "spaces") else [space.n]
        assert [len(h.options) for h in scenario.action_heads] == sizes, env
        assert (scenario.measurement_scheme == "sample_factory") == row.measurements, env


def test_evaluate_a_bots_env_hosts_sample_factorys_bots_game(tmp_path: Path) -> None:
    """``doom_duel_bots`` with ``timelimit`` 0.1 minutes: episodes of 210 tics against the bot, scored by frags."""
    import os
    import subprocess
    import sys

    run_dir = _copy_run("duel_bots", tmp_path)
    cfg = json.loads((run_dir / "config.json").read_text())
    (run_dir / "config.json").write_text(json.dumps({**cfg, "timelimit": 0.1}))
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache"), "OMP_NUM_THREADS": "1"}
    run = subprocess.run([sys.executable, "-m", "evaltk", "evaluate", str(run_dir), "--episodes", "2", "--out",
                          str(tmp_path / "eval")], capture_output=True, text=True, timeout=600, env=env)
    assert run.returncode == 0, run.stderr[-2000:]
    lines = (tmp_path / "eval" / "episodes.csv").read_text().splitlines()
    header, rows = lines[0].split(","), [dict(zip(lines[0].split(","), r.split(","), strict=True)) for r in lines[1:]]
    assert "frames" in header
    assert [int(r["frames"]) for r in rows] == [210, 210]
