"""Sample Factory 2.x checkpoints (``checkpoint_p0/checkpoint_*.pth`` + ``config.json``), read without unpickling.

A Sample Factory checkpoint is ``torch.save`` of a dict (``model``: the actor-critic's state dict,
``optimizer``, ``train_step``, ``env_steps``, ...) that Sample Factory itself loads without
``weights_only``. Here it goes through :func:`evaltk.importers.torch_zip.read_torch`; ``config.json``
(the experiment's resolved arguments) is plain JSON.

Rebuilt (``ActorCriticSharedWeights``): the observation normaliser (``obs_subtract_mean``,
``obs_scale``, and with ``normalize_input`` the running mean/std, eps 1e-5, clip 5), the conv
encoder ``convnet_simple`` (conv 8/4, 4/2, 3/2: Doom) or ``convnet_atari`` (8/4, 4/2, 3/1) with
``encoder_conv_mlp_layers``, the one-layer GRU core (``use_rnn``) or none, ``decoder_mlp_layers``,
``critic_linear`` and ``action_parameterization.distribution_linear``, all with ``nonlinearity``.

Two encoder layouts: Sample Factory's default (``encoder.encoders.obs.enc``; Atari, and Doom models
built without the Doom example's encoder, played on evaltk's scenario of the env's name), and
``sf_examples.vizdoom``'s ``VizdoomEncoder`` (``encoder.basic_encoder.enc`` plus, with measurements,
``encoder.measurements_head`` and its own running normaliser), played on Sample Factory's env rebuilt
from ``config.json`` (:mod:`evaltk.importers.sf_doom`), one categorical head per head of its tuple
action space. Sampled actions by default, as Sample Factory's ``enjoy``; greedy when the config sets
``eval_deterministic``. Not read: separate actor/critic weights, LSTM or multi-layer cores, ResNet
encoders, continuous (``Box``) action heads.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import torch

from evaltk.envs.spec import EnvSpec
from evaltk.importers import common, sf_doom
from evaltk.importers.common import Imported, Layer
from evaltk.importers.errors import ForeignCheckpointError
from evaltk.importers.nets import op
from evaltk.importers.safe_pickle import tensor_dict
from evaltk.importers.torch_zip import read_torch

ENCODERS: dict[str, tuple[tuple[int, int], ...]] = {
    "convnet_simple": ((8, 4), (4, 2), (3, 2)), "convnet_atari": ((8, 4), (4, 2), (3, 1)),
    "convnet_impala": ((8, 4), (4, 2)),
}
"""Sample Factory's conv encoders: (kernel, stride) per conv (strides are not stored in tensors)."""
_ENC = "encoder.encoders.obs.enc"
_DOOM_ENC = "encoder.basic_encoder.enc"
_MEASURE = "encoder.measurements_head"
_NORM_PREFIX = "obs_normalizer.running_mean_std.running_mean_std"
_NORM_EPS = 1e-5
_NORM_CLIP = 5.0
_MAX_CONFIG_BYTES = 4 << 20

CAVEATS_ATARI = [
    "EpisodicLifeEnv: Sample Factory's Atari wrappers end an episode on a life loss in training; the "
    "reference env plays full games",
    "FireResetEnv: training pressed FIRE after resets; the reference env does not",
    "gray conversion and resize: Sample Factory converts and resizes with cv2; the reference env resizes "
    "ALE's own grayscale screen: pixel values can differ by a few levels",
    "ClipRewardEnv: training rewards were clipped; evaluation scores are raw game scores",
]
CAVEATS_SF_DOOM = [
    "Sample Factory's enjoy repeats each action env_frameskip times at frameskip 1 (eval_env_frameskip); the "
    "reference env plays it as one action of env_frameskip tics: the same game tics and rewards, but when an "
    "episode ends inside the repeat, enjoy plays the rest of the repeat in the next episode",
    "the score is Sample Factory's true_objective (the unshaped game reward times the env's reward scaling, or "
    "the final FRAGCOUNT with bots); the training-time reward shaping is not part of it",
]
CAVEATS_DOOM = [
    "Doom: the reference env is evaltk's scenario of the same name; its buttons, action table, resolution "
    "and frameskip are evaltk's (checked: observation shape and action count), not read from Sample Factory",
]


def checkpoint_file(path: Path) -> Path:
    """Return ``path`` if a file, else the newest ``checkpoint_p0/checkpoint_*.pth`` of the run folder ``path``."""
    if path.is_file():
        return path
    found = sorted((path / "checkpoint_p0").glob("checkpoint_*.pth")) or sorted(path.glob("checkpoint_*.pth"))
    if not found:
        raise ForeignCheckpointError(f"{path} holds no checkpoint_p0/checkpoint_*.pth: pass a Sample Factory "
                                     "experiment folder or a checkpoint file")
    return found[-1]


def _config(file: Path) -> dict[str, Any]:
    for folder in (file.parent, file.parent.parent):
        cfg = folder / "config.json"
        if cfg.is_file():
            if cfg.stat().st_size > _MAX_CONFIG_BYTES:
                raise ForeignCheckpointError(f"{cfg} is over {_MAX_CONFIG_BYTES >> 20} MiB: not a Sample Factory "
                                             "config")
            try:
                doc = json.loads(cfg.read_text(encoding="utf-8"))
            except (ValueError, UnicodeDecodeError, OSError, RecursionError) as exc:
                raise ForeignCheckpointError(f"{cfg} is not readable JSON ({exc}): the file is corrupt") from None
            if not isinstance(doc, dict):
                raise ForeignCheckpointError(f"{cfg} does not hold a JSON object: it is not a Sample Factory config")
            return doc
    raise ForeignCheckpointError(f"no config.json next to {file} or in its experiment folder: Sample Factory "
                                 "writes one there; copy it back")


def _get(cfg: Mapping[str, Any], key: str, kind: type | tuple[type, ...], where: str) -> Any:
    if key not in cfg:
        raise ForeignCheckpointError(f"{where}: config.json lacks {key!r}: it is not a Sample Factory 2.x config")
    value = cfg[key]
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
        raise ForeignCheckpointError(f"{where}: config.json {key} = {value!r} has the wrong type")
    return value


def _activation(cfg: Mapping[str, Any], where: str) -> str:
    act = _get(cfg, "nonlinearity", str, where)
    if act not in ("elu", "relu", "tanh"):
        raise ForeignCheckpointError(f"{where}: nonlinearity {act!r} is not one of elu, relu, tanh")
    return str(act)


def _norm(sd: dict[str, torch.Tensor], cfg: Mapping[str, Any], key: str, shape: list[int], where: str) -> Layer:
    """Sample Factory's normaliser of observation key ``key`` (mean/scale apply to ``obs`` only)."""
    running = bool(_get(cfg, "normalize_input", bool, where))
    keys = cfg.get("normalize_input_keys")
    running = running and (keys is None or key in keys)
    prefix = f"{_NORM_PREFIX}.{key}"
    if not running:  # the layer keeps its (unused) buffers: identity statistics
        sd[f"{prefix}.running_mean"] = torch.zeros(shape)
        sd[f"{prefix}.running_var"] = torch.ones(shape)
    number = (int, float)
    sub, scale = 0.0, 1.0
    if key == "obs":
        sub, scale = float(_get(cfg, "obs_subtract_mean", number, where)), float(_get(cfg, "obs_scale", number, where))
    return {"op": "obs_norm", "shape": shape, "sub_mean": sub, "scale": scale, "running": running, "eps": _NORM_EPS,
            "clip": _NORM_CLIP}, prefix


def _trunk(sd: dict[str, torch.Tensor], cfg: Mapping[str, Any], obs_shape: list[int], where: str, *,
           enc: str = _ENC, measurements: bool = False) -> list[Layer]:
    act = _activation(cfg, where)
    layers: list[Layer] = [_norm(sd, cfg, "obs", obs_shape, where)]
    arch = _get(cfg, "encoder_conv_architecture", str, where)
    if arch not in ENCODERS:
        raise ForeignCheckpointError(f"{where}: encoder {arch!r} is not read (supported: {', '.join(ENCODERS)})")
    convs = common.sequential_indices(sd, f"{enc}.conv_head")
    if len(convs) != len(ENCODERS[arch]):
        raise ForeignCheckpointError(f"{where}: {len(convs)} conv layers in the checkpoint, but {arch} has "
                                     f"{len(ENCODERS[arch])}: config.json and the checkpoint do not belong together")
    for index, (kernel, stride) in zip(convs, ENCODERS[arch], strict=True):
        layer = common.conv_layer(sd, f"{enc}.conv_head.{index}", stride, where)
        if layer[0]["kernel"] != kernel:
            raise ForeignCheckpointError(f"{where}: conv {index} has kernel {layer[0]['kernel']}, {arch}'s is {kernel}")
        layers += [layer, (op(act), None)]
    layers.append((op("flatten"), None))
    for index in common.sequential_indices(sd, f"{enc}.mlp_layers"):
        layers += [common.linear_layer(sd, f"{enc}.mlp_layers.{index}", where), (op(act), None)]
    if measurements:
        layers.append((op("concat_measurements"), None))
    if _get(cfg, "use_rnn", bool, where):
        if cfg.get("rnn_type") != "gru" or cfg.get("rnn_num_layers") != 1:
            raise ForeignCheckpointError(f"{where}: core {cfg.get('rnn_type')} x{cfg.get('rnn_num_layers')} is not "
                                         "read (only a one-layer gru)")
        hidden4, in_size = common.shape(sd, "core.core.weight_ih_l0", 2, where)
        layers.append(({"op": "gru", "input_size": in_size, "hidden_size": hidden4 // 3}, "core.core"))
    for index in common.sequential_indices(sd, "decoder.mlp"):
        layers += [common.linear_layer(sd, f"decoder.mlp.{index}", where), (op(act), None)]
    return layers


def _env(cfg: Mapping[str, Any], env_id: str | None, stack: int, where: str) -> tuple[EnvSpec, list[str]]:
    name = env_id or _get(cfg, "env", str, where)
    if name.startswith("doom_"):
        return EnvSpec("doom", name.removeprefix("doom_")), list(CAVEATS_DOOM)
    if name.startswith("atari_"):
        game = "".join(part.capitalize() for part in name.removeprefix("atari_").split("_"))
        name = f"{game}NoFrameskip-v4"
    if not common.is_atari_id(name):
        raise ForeignCheckpointError(f"{where}: env {name!r} is neither a Sample Factory doom_*/atari_* env nor a "
                                     "gymnasium Atari id: pass --env-id (e.g. BreakoutNoFrameskip-v4 or doom_basic)")
    return common.atari_env(name, frame_stack=stack), list(CAVEATS_ATARI)


def _encoder_prefix(sd: Mapping[str, torch.Tensor], where: str) -> str:
    """Return the conv encoder's tensor prefix: the default ``MultiInputEncoder``'s or ``sf_examples.vizdoom``'s."""
    for prefix in (_ENC, _DOOM_ENC):
        if f"{prefix}.conv_head.0.weight" in sd:
            return prefix
    found = sorted({".".join(k.split(".")[:3]) for k in sd if k.startswith("encoder.")})[:4]
    raise ForeignCheckpointError(f"{where}: encoder tensors {found or 'none'} are not an encoder evaltk reads "
                                 f"(supported: {_ENC}.conv_head.* (Sample Factory's default image encoder) and "
                                 f"{_DOOM_ENC}.conv_head.* (sf_examples.vizdoom's VizdoomEncoder), with "
                                 f"encoder_conv_architecture {', '.join(ENCODERS)})")


def _doom_branches(sd: dict[str, torch.Tensor], cfg: Mapping[str, Any], name: str,
                   where: str) -> tuple[EnvSpec, dict[str, list[Layer]], list[int], int]:
    """Env spec, layer branches, head sizes and measurement count of an ``sf_examples.vizdoom`` model."""
    from evaltk.envs import doom, doom_measurements

    probe = doom.DoomScenario(name="probe", cfg=sf_doom.lookup(name, where).cfg, buttons=(),
                              action_heads=(doom.ActionHead("a", ((),)),), scenario_dir="sample_factory")
    pre = sf_doom.scenario(cfg, name, doom.scenario_folder(probe), where)
    env = EnvSpec("doom", pre["name"], {}, pre)
    measured = "measurement_scheme" in pre
    if measured != (f"{_MEASURE}.0.weight" in sd):
        raise ForeignCheckpointError(f"{where}: {name} {'has' if measured else 'has no'} measurement inputs but the "
                                     f"checkpoint {'lacks' if measured else 'has'} {_MEASURE}: config.json and the "
                                     "checkpoint do not belong together")
    res_h, res_w = pre["obs_size"]
    branches = {"trunk": _trunk(sd, cfg, [3, res_h, res_w], where, enc=_DOOM_ENC, measurements=measured)}
    count = doom_measurements.COUNT if measured else 0
    if measured:
        act = _activation(cfg, where)
        branch = [_norm(sd, cfg, "measurements", [count], where)]
        for index in common.sequential_indices(sd, _MEASURE):
            branch += [common.linear_layer(sd, f"{_MEASURE}.{index}", where), (op(act), None)]
        branches["measurements"] = branch
    heads = [len(h["options"]) for h in pre["action_heads"]]
    return env, branches, heads, count


def load(path: Path, *, env_id: str | None) -> Imported:
    """Convert the Sample Factory checkpoint ``path`` (a ``.pth`` file or an experiment folder)."""
    file = checkpoint_file(path)
    where = str(file)
    data = common.read_file(file)
    obj = read_torch(data, name=where)
    if not isinstance(obj, dict) or "model" not in obj:
        raise ForeignCheckpointError(f"{file} is not a Sample Factory checkpoint (a dict with a 'model' state dict)")
    sd = tensor_dict(obj["model"], name=where, what="its 'model' state dict")
    cfg = _config(file)
    if not cfg.get("actor_critic_share_weights", True):
        raise ForeignCheckpointError(f"{where}: actor_critic_share_weights=false models are not read")
    prefix = _encoder_prefix(sd, where)
    extra: dict[str, Any] = {}
    heads: list[int] | None = None
    if prefix == _DOOM_ENC:
        name = env_id or _get(cfg, "env", str, where)
        env, branches, heads, count = _doom_branches(sd, cfg, name, where)
        caveats = list(CAVEATS_SF_DOOM)
        if name in sf_doom.SELF_PLAY:
            caveats.append(f"{name} is Sample Factory's self-play env: evaluate plays it against ViZDoom bots, "
                           "not against copies of itself; evaltk tournament plays it head to head")
        extra = {**({"action_heads": heads} if len(heads) > 1 else {}), **({"measurements": count} if count else {})}
    else:
        channels = common.shape(sd, f"{_ENC}.conv_head.0.weight", 4, where)[1]
        env, caveats = _env(cfg, env_id, channels, where)
    env, obs_spec, action_spec = common.describe_env(env)
    if prefix == _ENC:
        branches = {"trunk": _trunk(sd, cfg, list(obs_spec["shape"]), where)}
    branches.update(policy=[common.linear_layer(sd, "action_parameterization.distribution_linear", where)],
                    value=[common.linear_layer(sd, "critic_linear", where)])
    kwargs, tensors = common.assemble(branches, sd, source="sample-factory", head="logits", obs_scale=1.0,
                                      where=where, extra=extra)
    outputs = common.trace_output(kwargs, tensors, obs_spec["shape"], where)
    if heads is None:
        common.check_actions(outputs, action_spec, env.env_id, where)
    elif outputs != sum(heads):
        raise ForeignCheckpointError(f"{where}: the network has {outputs} action outputs but {env.env_id}'s "
                                     f"action heads {heads} need {sum(heads)}: pass the env it was trained on")
    steps = obj.get("env_steps")
    source = {"format": "sample-factory", "env": cfg.get("env"), "file": file.name, "sha256": common.sha256(data),
              "env_steps": steps if isinstance(steps, int) else None,
              "recurrent": any(layer["op"] == "gru" for layer in kwargs["layers"]["trunk"])}
    actions = "greedy" if cfg.get("eval_deterministic") is True else "sample"
    return Imported(model_kwargs=kwargs, tensors=tensors, env=env, obs_spec=obs_spec, action_spec=action_spec,
                    source=source, caveats=caveats, default_actions=actions)
