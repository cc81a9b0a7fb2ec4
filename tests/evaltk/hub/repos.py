"""Model repos laid out as their libraries push them to the Hub, holding real checkpoints trained or built here.

* :func:`sb3_repo`: an RL Zoo repo (``a2c-BreakoutNoFrameskip-v4.zip`` saved by SB3 itself after a
  short ``learn``, ``args.yml``/``config.yml`` as RL Zoo dumps them with its OrderedDict tag,
  ``env_kwargs.yml``, the model card, ``results.json``, a ``train_eval_metrics.zip`` and a
  ``replay.mp4``). The env id is in ``args.yml`` only: the zip does not record it.
* :func:`sample_factory_repo`: Sample Factory's experiment folder as ``push_to_hub`` uploads it
  (``config.json`` from ``cfg_dict``, ``checkpoint_p0/checkpoint_*.pth`` written as its learner
  does, the model card, ``sf_log.txt``).
* :func:`sf_doom_repo`: a Sample Factory ``doom_basic`` experiment folder as ``push_to_hub`` uploads it, made of
  the committed run ``tests/data/sf_doom/basic`` (written by Sample Factory's ``train_vizdoom``).
* :func:`hostile_sb3_repo`: an SB3 zip whose ``policy.pth`` pickles ``os.system``.

Both real policies' greedy action is FIRE, so their Breakout episodes end quickly.
"""

from __future__ import annotations

import io
import json
import os
import types
import warnings
import zipfile
from collections import OrderedDict
from pathlib import Path
from typing import Any

import torch

ENV_ID = "BreakoutNoFrameskip-v4"
SB3_REPO = f"evaltk-tests/a2c-{ENV_ID}"
SF_REPO = "evaltk-tests/sf-atari-breakout"
SF_DOOM_REPO = "evaltk-tests/sf-doom-basic"
EVIL_REPO = "evaltk-tests/ppo-CartPole-v1"
EMPTY_REPO = "evaltk-tests/notes"
EVALTK_REPO = "evaltk-tests/two-evaltk-checkpoints"
FIRE_BIAS = [0.0, 50.0, 0.0, 0.0]


def _ordered_yaml(pairs: list[tuple[str, Any]]) -> bytes:
    """YAML as RL Zoo writes it: ``yaml.dump`` of an ``OrderedDict`` (a Python tag a safe loader rejects)."""
    import yaml

    return yaml.dump(OrderedDict(pairs)).encode()


def _card(library: str, algo: str, env: str) -> bytes:
    return (f"---\nlibrary_name: {library}\ntags:\n- {env}\n- deep-reinforcement-learning\n"
            "- reinforcement-learning\nmodel-index:\n"
            f"- name: {algo}\n  results:\n  - task:\n      type: reinforcement-learning\n"
            f"      name: reinforcement-learning\n    dataset:\n      name: {env}\n      type: {env}\n"
            "    metrics:\n    - type: mean_reward\n      value: 1.00 +/- 0.00\n      name: mean_reward\n---\n"
            f"# {algo} playing {env}\n").encode()


def sb3_zip(path: Path, bias: list[float]) -> Path:
    """Write a real SB3 A2C CnnPolicy on Breakout (32 steps of ``learn``) to ``path``, as SB3 saves it.

    ``bias`` replaces the action head's bias, so its greedy action is the one with the large entry.
    """
    import ale_py
    import gymnasium as gym
    import stable_baselines3 as sb3
    from stable_baselines3.common.env_util import make_atari_env
    from stable_baselines3.common.vec_env import VecFrameStack

    gym.register_envs(ale_py)
    env = VecFrameStack(make_atari_env(ENV_ID, n_envs=1, seed=0), n_stack=4)
    model = sb3.A2C("CnnPolicy", env, n_steps=16, seed=0, device="cpu")
    with warnings.catch_warnings(action="ignore"):
        model.learn(total_timesteps=32)
    with torch.no_grad():
        model.policy.action_net.bias.copy_(torch.tensor(bias))
    model.save(path)
    env.close()
    return path


def sb3_zip_bytes(tmp: Path) -> bytes:
    """Return the bytes of :func:`sb3_zip` whose greedy action is FIRE."""
    return sb3_zip(tmp / "model.zip", FIRE_BIAS).read_bytes()


def sb3_repo(tmp: Path) -> dict[str, bytes]:
    """Return the files of an RL Zoo Hub repo around a real SB3 model."""
    metrics = io.BytesIO()
    with zipfile.ZipFile(metrics, "w") as zf:
        zf.writestr("evaluations.npz", b"\x93NUMPY not read")
    args = [("algo", "a2c"), ("env", ENV_ID), ("seed", 0), ("n_timesteps", 32), ("device", "cpu")]
    config = [("env_wrapper", ["stable_baselines3.common.atari_wrappers.AtariWrapper"]),
              ("frame_stack", 4), ("n_steps", 16), ("policy", "CnnPolicy")]
    return {f"a2c-{ENV_ID}.zip": sb3_zip_bytes(tmp), "args.yml": _ordered_yaml(args),
            "config.yml": _ordered_yaml(config), "env_kwargs.yml": b"{}\n",
            "README.md": _card("stable-baselines3", "A2C", ENV_ID), "results.json": b'{"mean_reward": 1.0}',
            "train_eval_metrics.zip": metrics.getvalue(), "replay.mp4": b"\x00\x00\x00\x18ftypmp42 not a video",
            ".gitattributes": b"*.zip filter=lfs diff=lfs merge=lfs -text\n"}


def sample_factory_repo() -> dict[str, bytes]:
    """Return the files of a Sample Factory experiment pushed to the Hub (Atari Breakout, one checkpoint)."""
    import gymnasium as gym
    import numpy as np
    from sample_factory.algo.learning.learner import Learner
    from sample_factory.cfg.arguments import cfg_dict, parse_full_cfg, parse_sf_args
    from sample_factory.model.actor_critic import create_actor_critic
    from sf_examples.atari.atari_params import atari_override_defaults

    argv = ["--env=atari_breakout", "--experiment=sf-breakout"]
    parser, _ = parse_sf_args(argv)
    atari_override_defaults("atari_breakout", parser)
    cfg = parse_full_cfg(parser, argv)
    torch.manual_seed(0)
    model = create_actor_critic(cfg, gym.spaces.Dict({"obs": gym.spaces.Box(0, 255, (4, 84, 84), np.uint8)}),
                                gym.spaces.Discrete(4))
    with torch.no_grad():
        model.action_parameterization.distribution_linear.bias.copy_(torch.tensor(FIRE_BIAS))
    learner = types.SimpleNamespace(train_step=1, env_steps=1, best_performance=0.0, actor_critic=model,
                                    optimizer=torch.optim.Adam(model.parameters()), curr_lr=1e-4)
    buf = io.BytesIO()
    torch.save(Learner._get_checkpoint_dict(learner), buf)
    return {"config.json": json.dumps(cfg_dict(cfg), indent=2).encode(),
            "checkpoint_p0/checkpoint_000000001_1.pth": buf.getvalue(),
            "README.md": _card("sample-factory", "APPO", "atari_breakout"), "sf_log.txt": b"[2026] done\n",
            ".summary/0/events.out.tfevents.1.host": b"\x00not read"}


def sf_doom_repo() -> dict[str, bytes]:
    """Return the files of a Sample Factory Doom experiment pushed to the Hub (the committed ``doom_basic`` run)."""
    from tests.data_paths import data_path

    run = data_path("sf_doom/basic")
    files = {"config.json": (run / "config.json").read_bytes(),
             "README.md": _card("sample-factory", "APPO", "doom_basic"), "sf_log.txt": b"[2026] done\n"}
    files.update({f"checkpoint_p0/{p.name}": p.read_bytes() for p in (run / "checkpoint_p0").glob("*.pth")})
    return files


def evaltk_repo(tmp: Path) -> dict[str, bytes]:
    """Return a repo of two evaltk checkpoint folders (``random/``, ``scripted/``: built-ins saved for Breakout)."""
    from evaltk.envs import env_for_id
    from evaltk.policies import save_builtin

    files = {"README.md": b"# two policies\n"}
    for name in ("random", "scripted"):
        folder = save_builtin(tmp / name, name, env_for_id("ALE/Breakout-v5"))
        files.update({f"{name}/{p.name}": p.read_bytes() for p in sorted(folder.iterdir())})
    return files


class RunsCode:
    """An object whose pickle calls ``os.system``: a loader that unpickles would create ``marker``."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[Any, ...]:
        return (os.system, (f"touch {self.marker}",))


def hostile_sb3_repo(tmp: Path, marker: Path) -> dict[str, bytes]:
    """Return an RL Zoo-shaped repo whose SB3 zip's ``policy.pth`` runs ``touch marker`` when unpickled."""
    import gymnasium as gym
    from stable_baselines3 import PPO

    path = tmp / "clean.zip"
    PPO("MlpPolicy", gym.make("CartPole-v1"), n_steps=32, batch_size=32, device="cpu").save(path)
    evil = io.BytesIO()
    torch.save({"action_net.weight": torch.ones(2, 64), "x": RunsCode(marker)}, evil)
    out = io.BytesIO()
    with zipfile.ZipFile(path) as src, zipfile.ZipFile(out, "w") as dst:
        for info in src.infolist():
            dst.writestr(info.filename, evil.getvalue() if info.filename == "policy.pth" else src.read(info))
    return {"ppo-CartPole-v1.zip": out.getvalue(), "args.yml": _ordered_yaml([("env", "CartPole-v1")]),
            "README.md": _card("stable-baselines3", "PPO", "CartPole-v1")}
