"""evaltk.policies: builtins, load_policy, the random policy's seed contract and the scripted baseline."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from evaltk.checkpoint import SPEC_FILE, CheckpointSpec, save
from evaltk.envs import EnvSpec, env_for_id
from evaltk.envs.atari import atari_env, make_env
from evaltk.errors import CheckpointError, SpecError
from evaltk.policies import (
    BUILTINS,
    EpisodeSeeded,
    PaddleTracker,
    Policy,
    RandomPolicy,
    builtin_names,
    check_tensor_shapes,
    episode_policy_rng,
    load_policy,
    register_builtin,
    save_builtin,
)

BREAKOUT = env_for_id("ALE/Breakout-v5")


@pytest.mark.parametrize("ref", ["random", "builtin:random", "scripted", "builtin:scripted"])
def test_builtins_load_with_env(ref: str) -> None:
    policy = load_policy(ref, env=BREAKOUT)
    assert isinstance(policy, Policy)
    assert policy.spec.model_class == "builtin:" + ref.removeprefix("builtin:")
    assert policy.spec.obs_spec == {"shape": [210, 160, 3], "dtype": "uint8", "layout": "HWC"}
    assert policy.spec.action_spec == {"type": "discrete", "n": 4}
    assert policy.spec.env == BREAKOUT.to_json()


def test_builtin_needs_env_and_unknown_names() -> None:
    with pytest.raises(CheckpointError, match="needs an environment"):
        load_policy("random")
    with pytest.raises(CheckpointError, match="unknown built-in policy 'nope': use one of random, scripted"):
        load_policy("builtin:nope", env=BREAKOUT)
    with pytest.raises(CheckpointError, match="does not exist"):
        load_policy("no/such/dir")


def test_random_policy_follows_episode_seeds() -> None:
    policy = load_policy("random", env=BREAKOUT)
    assert isinstance(policy, RandomPolicy)
    assert isinstance(policy, EpisodeSeeded)
    policy.reset(3, np.random.default_rng(0))
    policy.begin_episodes(np.array([0, 2]), [episode_policy_rng(11), episode_policy_rng(12)])
    obs = np.zeros((3, 210, 160, 3), np.uint8)
    first = np.ones(3, bool)
    acts = np.stack([policy.act(obs, first) for _ in range(50)])
    assert acts.dtype == np.int64
    assert acts.shape == (50, 3)
    for slot, seed in ((0, 11), (2, 12)):
        rng = episode_policy_rng(seed)
        assert acts[:, slot].tolist() == [int(rng.integers(4)) for _ in range(50)]


def test_random_policy_is_uniform() -> None:
    policy = load_policy("random", env=BREAKOUT)
    policy.reset(8, np.random.default_rng(1))
    acts = np.concatenate([policy.act(np.zeros((8, 1)), np.zeros(8, bool)) for _ in range(500)])
    counts = np.bincount(acts, minlength=4)
    from scipy import stats

    assert counts.sum() == 4000
    assert stats.chisquare(counts).pvalue > 1e-4


def test_random_policy_multi_discrete() -> None:
    spec = CheckpointSpec(model_class="builtin:random", model_kwargs={}, obs_spec={"shape": [3], "dtype": "uint8"},
                          action_spec={"type": "multi_discrete", "nvec": [3, 2, 5]},
                          env={"family": "doom", "env_id": "basic"})
    policy = RandomPolicy(spec)
    policy.reset(4, np.random.default_rng(0))
    acts = np.stack([policy.act(np.zeros((4, 3)), np.zeros(4, bool)) for _ in range(200)])
    assert acts.shape == (200, 4, 3)
    assert acts.max(axis=(0, 1)).tolist() == [2, 1, 4]
    assert acts.min() == 0


def _frame(ball_x: int | None, paddle_x: int) -> np.ndarray:
    frame = np.zeros((210, 160, 3), np.uint8)
    frame[189:193, paddle_x - 8:paddle_x + 8] = (200, 72, 72)
    if ball_x is not None:
        frame[150:154, ball_x:ball_x + 2] = (200, 72, 72)
    frame[:, :8] = 142  # walls are ignored
    frame[:, 152:] = 142
    return frame


def test_scripted_tracks_ball_and_serves() -> None:
    policy = load_policy("scripted", env=BREAKOUT)
    assert isinstance(policy, PaddleTracker)
    a = policy.spec.model_kwargs["actions"]
    obs = np.stack([_frame(30, 100), _frame(130, 60), _frame(80, 80), _frame(None, 80)])
    assert policy.act(obs, np.ones(4, bool)).tolist() == [a["left"], a["right"], a["noop"], a["fire"]]


def test_scripted_remembers_the_ball_for_a_few_steps() -> None:
    policy = load_policy("scripted", env=BREAKOUT)
    a = policy.spec.model_kwargs["actions"]
    memory = policy.spec.model_kwargs["memory_steps"]
    policy.reset(2, np.random.default_rng(0))
    seen = np.stack([_frame(30, 100), _frame(130, 60)])
    gone = np.stack([_frame(None, 100), _frame(None, 60)])
    assert policy.act(seen, np.ones(2, bool)).tolist() == [a["left"], a["right"]]
    for _ in range(memory):
        assert policy.act(gone, np.zeros(2, bool)).tolist() == [a["left"], a["right"]]
    assert policy.act(gone, np.zeros(2, bool)).tolist() == [a["fire"], a["fire"]]
    policy.act(seen, np.zeros(2, bool))
    assert policy.act(gone, np.array([True, False])).tolist() == [a["fire"], a["right"]]


def test_scripted_on_preprocessed_stacked_frames() -> None:
    env = atari_env("ALE/Breakout-v5", kwargs={"frameskip": 1}, atari_preprocessing={"noop_max": 0},
                    frame_stack=4)
    policy = load_policy("scripted", env=env)
    assert policy.spec.obs_spec["layout"] == "SHW"
    import cv2

    gray = [cv2.resize(_frame(b, 80).max(axis=2), (84, 84), interpolation=cv2.INTER_AREA) for b in (20, 140, None)]
    obs = np.stack([np.stack([np.zeros((84, 84), np.uint8)] * 3 + [g]) for g in gray])
    a = policy.spec.model_kwargs["actions"]
    assert policy.act(obs, np.ones(3, bool)).tolist() == [a["left"], a["right"], a["fire"]]


def test_scripted_rejects_ram_observations() -> None:
    with pytest.raises(SpecError, match="needs image observations"):
        load_policy("scripted", env=atari_env("ALE/Breakout-v5", kwargs={"obs_type": "ram"}))


def _play(policy: Policy, seed: int, env_dict: EnvSpec = BREAKOUT) -> float:
    env = make_env(env_dict)
    obs, _ = env.reset(seed=seed)
    policy.reset(1, np.random.default_rng(seed))
    total, first = 0.0, np.ones(1, bool)
    while True:
        obs, r, term, trunc, _ = env.step(int(policy.act(obs[None], first)[0]))
        first[:] = False
        total += float(r)
        if term or trunc:
            return total


def test_scripted_beats_random_on_breakout() -> None:
    scripted = [_play(load_policy("scripted", env=BREAKOUT), s) for s in (0, 1)]
    rand = [_play(load_policy("random", env=BREAKOUT), s) for s in (0, 1)]
    assert min(scripted) > max(rand)
    assert np.mean(scripted) >= 5


def test_scripted_scores_on_preprocessed_frames() -> None:
    env = atari_env("ALE/Breakout-v5", kwargs={"frameskip": 1}, atari_preprocessing={"noop_max": 30}, frame_stack=4)
    assert _play(load_policy("scripted", env=env), 0, env) >= 5


def test_save_builtin_round_trip_and_tamper(tmp_path: Path) -> None:
    out = save_builtin(tmp_path / "rand", "random", BREAKOUT)
    policy = load_policy(out)
    assert policy.spec.model_class == "builtin:random"
    assert policy.spec.env == BREAKOUT.to_json()
    data = json.loads((out / SPEC_FILE).read_text())
    data["action_spec"]["n"] = 6
    (out / SPEC_FILE).write_text(json.dumps(data))
    with pytest.raises(CheckpointError, match="action_spec"):
        load_policy(out)


@pytest.mark.parametrize(("model_class", "message"), [
    ("os:system", "outside evaltk./trainers."),
    ("evaltk.no_such_module:Net", "cannot be imported"),
    ("evaltk.checkpoint:Nope", "has no class Nope"),
])
def test_model_class_resolution_errors(tmp_path: Path, model_class: str, message: str) -> None:
    spec = CheckpointSpec(model_class=model_class, model_kwargs={}, obs_spec={"shape": [4], "dtype": "uint8"},
                          action_spec={"type": "discrete", "n": 2}, env=BREAKOUT.to_json())
    save(tmp_path / "c", spec, {})
    with pytest.raises(CheckpointError, match=message):
        load_policy(tmp_path / "c")


def test_register_builtin() -> None:
    def factory(env: EnvSpec) -> Policy:
        return RandomPolicy(CheckpointSpec(model_class="builtin:coin", model_kwargs={},
                                           obs_spec={"shape": [1], "dtype": "uint8"},
                                           action_spec={"type": "discrete", "n": 2}, env=env.to_json()))

    register_builtin("coin", factory)
    try:
        assert "coin" in builtin_names()
        assert load_policy("builtin:coin", env=BREAKOUT).spec.action_spec["n"] == 2
        with pytest.raises(ValueError, match="registered already"):
            register_builtin("coin", factory)
    finally:
        BUILTINS.pop("coin")
    with pytest.raises(ValueError, match="plain word"):
        register_builtin("a:b", factory)


@pytest.mark.vizdoom
def test_random_builtin_for_a_doom_scenario() -> None:
    from evaltk.envs import doom

    policy = load_policy("random", env=EnvSpec("doom", "basic"))
    scenario = doom.get_scenario("basic")
    assert policy.spec.action_spec == doom.action_spec(scenario)
    assert policy.spec.obs_spec == doom.obs_spec(scenario)
    policy.reset(2, np.random.default_rng(0))
    assert policy.act(np.zeros((2, *doom.obs_spec(scenario)["shape"]), np.uint8), np.ones(2, bool)).shape[0] == 2


def test_check_tensor_shapes_names_tensor_and_shapes(tmp_path: Path) -> None:
    import torch

    from evaltk.checkpoint import Checkpoint, load

    spec = CheckpointSpec(model_class="trainers.models:AtariCnn", model_kwargs={"hidden": 8},
                          obs_spec={"shape": [4, 84, 84], "dtype": "uint8", "layout": "SHW"},
                          action_spec={"type": "discrete", "n": 4}, env=BREAKOUT.to_json(),
                          provenance={"trainer": "test"})
    ckpt = load(save(tmp_path / "c", spec, {"fc.weight": torch.zeros(8, 16), "fc.bias": torch.zeros(8)}))
    check_tensor_shapes(ckpt, {"fc.weight": (8, 16), "fc.bias": (8,)})
    with pytest.raises(CheckpointError, match=r"'fc\.weight' has shape \[8, 16\], expected \[8, 32\]"):
        check_tensor_shapes(ckpt, {"fc.weight": (8, 32), "fc.bias": (8,)})
    with pytest.raises(CheckpointError, match=r"lacks tensor\(s\) head"):
        check_tensor_shapes(ckpt, {"fc.weight": (8, 16), "fc.bias": (8,), "head": (1,)})
    with pytest.raises(CheckpointError, match="unexpected tensor"):
        check_tensor_shapes(Checkpoint(None, ckpt.spec, ckpt.tensors), {"fc.weight": (8, 16)})
