"""CleanRL ``.cleanrl_model`` files (``torch.save(agent.state_dict())``), read without unpickling.

Scripts read: ``ppo_atari``, ``ppo_atari_envpool`` and ``dqn_atari``; the JAX scripts' msgpack files are read by
:mod:`evaltk.importers.cleanrl_jax`.

The networks (CleanRL v1, MIT licence; facts only): ``ppo_atari``/``ppo_atari_envpool``'s ``Agent`` is
``network = Sequential(Conv2d(4, 32, 8, stride=4), ReLU, Conv2d(32, 64, 4, stride=2), ReLU,
Conv2d(64, 64, 3, stride=1), ReLU, Flatten, Linear(3136, 512), ReLU)`` with ``actor = Linear(512, A)``
and ``critic = Linear(512, 1)`` on ``x / 255``; ``dqn_atari``'s ``QNetwork`` is the same ``network``
ending in ``Linear(512, A)`` (index 9). The file does not say which script wrote it (both PPO
scripts share the ``Agent``) nor the env id: both are declared (defaults: ``ppo_atari`` for an
``Agent``, the scripts' default env ``BreakoutNoFrameskip-v4`` / ``Breakout-v5`` for envpool).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import torch

from evaltk.envs.spec import EnvSpec
from evaltk.importers import common
from evaltk.importers.common import Imported, Layer
from evaltk.importers.errors import ForeignCheckpointError
from evaltk.importers.nets import op
from evaltk.importers.safe_pickle import tensor_dict
from evaltk.importers.torch_zip import read_torch

SCRIPTS = ("ppo_atari", "ppo_atari_envpool", "dqn_atari")
DEFAULT_ENV = {"ppo_atari": "BreakoutNoFrameskip-v4", "dqn_atari": "BreakoutNoFrameskip-v4",
               "ppo_atari_envpool": "Breakout-v5"}
_STRIDES = (4, 2, 1)

CAVEATS_GYM = [
    "EpisodicLifeEnv: training ended an episode on a life loss; the reference env plays full games",
    "FireResetEnv: training pressed FIRE after every reset; the reference env does not",
    "ResizeObservation then GrayScaleObservation (cv2 RGB resize, then cv2.cvtColor): the reference env takes "
    "ALE's grayscale first and resizes it (AtariPreprocessing): pixel values can differ by a few levels",
    "ClipRewardEnv: training rewards were clipped; evaluation scores are raw game scores",
]
CAVEATS_ENVPOOL = [
    "envpool episodic_life=True: training ended an episode on a life loss; the reference env plays full games",
    "envpool use_fire_reset (default true): training pressed FIRE after resets; the reference env does not",
    "envpool reward_clip=True: training rewards were clipped; evaluation scores are raw game scores",
    "envpool noop_max=30: training started each episode with 0..29 NOOPs; the reference env's AtariPreprocessing "
    "starts with 1..30 (grayscale, INTER_AREA resize and max-pool are the same on both: docs/simulators.md)",
    "envpool <Game>-v5 maps to ALE/<Game>-v5 with frameskip=1 (envpool skips 4 itself) and "
    "repeat_action_probability=0 (envpool's default)",
]


def _network(sd: Mapping[str, torch.Tensor], where: str, *, final: bool) -> list[Layer]:
    layers: list[Layer] = []
    for index, stride in zip((0, 2, 4), _STRIDES, strict=True):
        layers += [common.conv_layer(sd, f"network.{index}", stride, where), (op("relu"), None)]
    layers += [(op("flatten"), None), common.linear_layer(sd, "network.7", where)]
    if final:
        return [*layers, (op("relu"), None), common.linear_layer(sd, "network.9", where)]
    return [*layers, (op("relu"), None)]


def _env(script: str, env_id: str) -> EnvSpec:
    if script != "ppo_atari_envpool":
        return common.atari_env(env_id, frame_stack=4)
    game = env_id.removeprefix("ALE/")
    if not game.endswith("-v5"):
        raise ForeignCheckpointError(f"ppo_atari_envpool env id {env_id!r}: envpool ids look like Breakout-v5")
    return common.atari_env(f"ALE/{game}", frame_stack=4,
                            kwargs={"repeat_action_probability": 0.0, "max_num_frames_per_episode": 108_000})


def script_env(script: str, env_id: str) -> EnvSpec:
    """Return the evaltk env spec of ``script``'s preprocessing on ``env_id`` (``ppo_atari_envpool``: an envpool id)."""
    return _env(script, env_id)


def load(path: Path, *, env_id: str | None, script: str | None = None) -> Imported:
    """Convert the CleanRL state-dict file at ``path`` (``script``: one of :data:`SCRIPTS`, inferred if None).

    A torch state dict (CleanRL's PyTorch scripts); a flax msgpack file (its JAX scripts) is
    :func:`evaltk.importers.cleanrl_jax.load`'s (the ``cleanrl`` importer picks the one the file is).
    """
    where = str(path)
    data = common.read_file(path)
    sd = tensor_dict(read_torch(data, name=where), name=where)
    is_agent = "actor.weight" in sd and "critic.weight" in sd
    if not is_agent and "network.9.weight" not in sd:
        raise ForeignCheckpointError(f"{where} is neither a CleanRL ppo_atari Agent (network, actor, critic) nor a "
                                     "dqn_atari QNetwork (network.0..9) state dict")
    script = script or ("ppo_atari" if is_agent else "dqn_atari")
    if script not in SCRIPTS:
        raise ForeignCheckpointError(f"unknown CleanRL script {script!r}: use one of {', '.join(SCRIPTS)}")
    if is_agent != script.startswith("ppo"):
        raise ForeignCheckpointError(f"{where} holds a {'ppo Agent' if is_agent else 'dqn QNetwork'}, not a "
                                     f"{script} network: pass the script that wrote it")
    if is_agent:
        branches = {"trunk": _network(sd, where, final=False),
                    "policy": [common.linear_layer(sd, "actor", where)],
                    "value": [common.linear_layer(sd, "critic", where)]}
    else:
        branches = {"trunk": [], "policy": _network(sd, where, final=True)}
    head = "logits" if is_agent else "q"
    kwargs, tensors = common.assemble(branches, sd, source=f"cleanrl:{script}", head=head, obs_scale=255.0,
                                      where=where)
    env_id = env_id or DEFAULT_ENV[script]
    env, obs_spec, action_spec = common.describe_env(_env(script, env_id))
    outputs = common.trace_output(kwargs, tensors, obs_spec["shape"], where)
    common.check_actions(outputs, action_spec, env_id, where)
    source = {"format": "cleanrl", "script": script, "file": path.name, "sha256": common.sha256(data)}
    caveats = list(CAVEATS_ENVPOOL if script == "ppo_atari_envpool" else CAVEATS_GYM)
    return Imported(model_kwargs=kwargs, tensors=tensors, env=env, obs_spec=obs_spec, action_spec=action_spec,
                    source=source, caveats=caveats)
