"""Stable-Baselines3 ``.zip`` models (PPO, A2C, DQN; ``CnnPolicy`` and ``MlpPolicy``), read without unpickling.

An SB3 zip holds ``data`` (JSON; fields that are not JSON, such as schedules, spaces and classes,
are cloudpickle payloads under ``":serialized:"``), ``policy.pth`` (``torch.save`` of the policy's
state dict), the optimizer state and ``_stable_baselines3_version``. Only ``data``'s plain JSON and
the human-readable side SB3 writes next to each payload are read (``observation_space._shape``,
``policy_kwargs.activation_fn``, ``policy_class.__module__``); ``":serialized:"`` is never decoded.
``policy.pth`` goes through :func:`evaltk.importers.torch_zip.read_torch`.

The network is rebuilt from the tensor names and shapes: ``NatureCNN`` (``features_extractor.cnn``
conv 8/4, 4/2, 3/1, ReLU, ``linear`` 512, ReLU) or a flatten extractor, ``mlp_extractor.policy_net`` /
``value_net`` with the policy's activation (default Tanh), ``action_net`` and ``value_net``; for DQN
``q_net.features_extractor`` and ``q_net.q_net`` (default ReLU). The target network is not kept.
"""

from __future__ import annotations

import io
import json
import re
import zipfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import torch

from evaltk.envs.spec import EnvSpec
from evaltk.importers import common
from evaltk.importers.common import Imported, Layer
from evaltk.importers.errors import ForeignCheckpointError
from evaltk.importers.nets import op
from evaltk.importers.safe_pickle import tensor_dict
from evaltk.importers.torch_zip import read_torch

_NATURE = ((8, 4), (4, 2), (3, 1))
"""NatureCNN's (kernel, stride) per conv; strides are not stored in tensors, so kernels are checked."""
_ACTIVATION_NAMES = {"ReLU": "relu", "Tanh": "tanh", "ELU": "elu", "LeakyReLU": "leaky_relu"}
_MAX_DATA_BYTES = 64 << 20

CAVEATS_ATARI = [
    "EpisodicLifeEnv: SB3 trained with a life loss ending the episode; the reference env plays full games "
    "(terminal_on_life_loss=false), as SB3's own evaluation on an unwrapped env does",
    "FireResetEnv: SB3 pressed FIRE after every reset; the reference env does not, so the policy must press FIRE",
    "WarpFrame: SB3 converts RGB to gray with cv2.cvtColor before resizing; the reference env uses ALE's own "
    "grayscale (AtariPreprocessing): pixel values can differ by a few levels",
    "ClipRewardEnv: training rewards were clipped to {-1, 0, 1}; evaluation scores are the raw game scores",
    "frameskip: SB3's AtariWrapper skips 4 frames itself; the env is built with frameskip=1, as on a "
    "NoFrameskip-v4 id (a v5 id trained without env_kwargs={'frameskip': 1} skipped 16 frames)",
]


def is_sb3_zip(data: bytes) -> bool:
    """Whether ``data`` looks like an SB3 model zip (has ``data`` and ``policy.pth`` entries)."""
    if not data.startswith(b"PK"):
        return False
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            names = set(zf.namelist())
    except (zipfile.BadZipFile, OSError, ValueError, EOFError, NotImplementedError):
        return False
    return {"data", "policy.pth"} <= names


def _member(zf: zipfile.ZipFile, name: str, where: str, limit: int) -> bytes:
    try:
        info = zf.getinfo(name)
    except KeyError:
        raise ForeignCheckpointError(f"{where} has no {name!r} entry: it is not a Stable-Baselines3 model "
                                     "(saved with model.save)") from None
    if info.file_size > limit:
        raise ForeignCheckpointError(f"{where}: entry {name} is {info.file_size} bytes, over {limit}")
    return zf.read(info)


def _read_zip(data: bytes, where: str) -> tuple[dict[str, Any], dict[str, torch.Tensor], str | None]:
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            raw = _member(zf, "data", where, _MAX_DATA_BYTES)
            policy = _member(zf, "policy.pth", where, common.MAX_FILE_BYTES)
            version = None
            if "_stable_baselines3_version" in zf.namelist():
                version = _member(zf, "_stable_baselines3_version", where, 256).decode("utf-8", "replace").strip()
    except ForeignCheckpointError:
        raise
    except Exception as exc:  # zipfile raises BadZipFile, zlib.error, EOFError, ... on a corrupt file
        raise ForeignCheckpointError(f"{where} is not a readable zip file ({type(exc).__name__}): the file is "
                                     "corrupt or truncated") from None
    try:
        doc = json.loads(raw.decode("utf-8"))
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        raise ForeignCheckpointError(f"{where}: its 'data' entry is not JSON ({exc}): the file is corrupt") from None
    if not isinstance(doc, dict):
        raise ForeignCheckpointError(f"{where}: its 'data' entry is not a JSON object: the file is corrupt")
    sd = tensor_dict(read_torch(policy, name=f"{where}:policy.pth"), name=f"{where}:policy.pth")
    return doc, sd, version


def _readable(doc: Mapping[str, Any], key: str, attr: str) -> Any:
    """Return the human-readable attribute SB3 writes next to a cloudpickled field (never the payload)."""
    field = doc.get(key)
    return field.get(attr) if isinstance(field, dict) else None


def _policy_class(doc: Mapping[str, Any]) -> str:
    init = _readable(doc, "policy_class", "__init__")
    module = _readable(doc, "policy_class", "__module__")
    match = re.match(r"<function (\w+)\.__init__", init) if isinstance(init, str) else None
    return f"{module}.{match.group(1)}" if match and isinstance(module, str) else str(module)


def _activation(doc: Mapping[str, Any], default: str, where: str) -> str:
    kwargs = doc.get("policy_kwargs")
    text = kwargs.get("activation_fn") if isinstance(kwargs, dict) else None
    if text is None:
        return default
    match = re.search(r"torch\.nn\.modules\.activation\.(\w+)'", str(text))
    if match is None or match.group(1) not in _ACTIVATION_NAMES:
        raise ForeignCheckpointError(f"{where}: policy_kwargs.activation_fn is {text!r}; evaltk rebuilds "
                                     f"{', '.join(_ACTIVATION_NAMES)} only")
    return _ACTIVATION_NAMES[match.group(1)]


def _obs_space(doc: Mapping[str, Any]) -> tuple[list[int] | None, str | None]:
    raw_shape, dtype = _readable(doc, "observation_space", "_shape"), _readable(doc, "observation_space", "dtype")
    if isinstance(raw_shape, str):
        try:
            raw_shape = json.loads(raw_shape.replace("(", "[").replace(")", "]").replace(",]", "]"))
        except ValueError:
            raw_shape = None
    ok = isinstance(raw_shape, list) and all(isinstance(d, int) and d > 0 for d in raw_shape)
    return (list(raw_shape) if ok else None), (dtype if isinstance(dtype, str) else None)


def _extractor(sd: Mapping[str, torch.Tensor], prefix: str, where: str) -> list[Layer]:
    """NatureCNN at ``prefix`` if it has ``cnn`` tensors, else SB3's FlattenExtractor."""
    convs = common.sequential_indices(sd, f"{prefix}.cnn")
    if not convs:
        return [(op("flatten"), None)]
    if len(convs) != 3 or common.sequential_indices(sd, f"{prefix}.linear") != [0]:
        raise ForeignCheckpointError(f"{where}: {prefix} is not SB3's NatureCNN (3 convs + 1 linear): custom "
                                     "features extractors are not read")
    layers: list[Layer] = []
    for index, (kernel, stride) in zip(convs, _NATURE, strict=True):
        layer = common.conv_layer(sd, f"{prefix}.cnn.{index}", stride, where)
        if layer[0]["kernel"] != kernel:
            raise ForeignCheckpointError(f"{where}: {prefix}.cnn.{index} has a {layer[0]['kernel']}x kernel; "
                                         f"NatureCNN's is {kernel}: custom features extractors are not read")
        layers += [layer, (op("relu"), None)]
    return [*layers, (op("flatten"), None), common.linear_layer(sd, f"{prefix}.linear.0", where), (op("relu"), None)]


def _mlp(sd: Mapping[str, torch.Tensor], prefix: str, activation: str, where: str, *, last_plain: bool) -> list[Layer]:
    """Describe an SB3 ``create_mlp`` Sequential: Linear + activation (none after the last if ``last_plain``)."""
    indices = common.sequential_indices(sd, prefix)
    layers: list[Layer] = []
    for n, index in enumerate(indices):
        layers.append(common.linear_layer(sd, f"{prefix}.{index}", where))
        if not (last_plain and n == len(indices) - 1):
            layers.append((op(activation), None))
    return layers


def _branches(sd: Mapping[str, torch.Tensor], doc: Mapping[str, Any], where: str) -> tuple[dict[str, list[Layer]], str]:
    if "q_net.q_net.0.weight" in sd:
        act = _activation(doc, "relu", where)
        return {"trunk": _extractor(sd, "q_net.features_extractor", where),
                "policy": _mlp(sd, "q_net.q_net", act, where, last_plain=True)}, "q"
    if "action_net.weight" not in sd:
        raise ForeignCheckpointError(f"{where}: policy.pth has neither action_net (PPO/A2C) nor q_net (DQN) "
                                     "tensors: only PPO, A2C and DQN with discrete actions are read")
    act = _activation(doc, "tanh", where)
    pi = _mlp(sd, "mlp_extractor.policy_net", act, where, last_plain=False)
    vf = _mlp(sd, "mlp_extractor.value_net", act, where, last_plain=False)
    action = [common.linear_layer(sd, "action_net", where)]
    value = [common.linear_layer(sd, "value_net", where)]
    if any(k.startswith("pi_features_extractor.") for k in sd) and not any(
            k.startswith("features_extractor.") for k in sd):  # share_features_extractor=False
        return {"trunk": [], "policy": [*_extractor(sd, "pi_features_extractor", where), *pi, *action],
                "value": [*_extractor(sd, "vf_features_extractor", where), *vf, *value]}, "logits"
    return {"trunk": _extractor(sd, "features_extractor", where), "policy": [*pi, *action],
            "value": [*vf, *value]}, "logits"


def _normalize_images(doc: Mapping[str, Any]) -> bool:
    kwargs = doc.get("policy_kwargs")
    value = kwargs.get("normalize_images", True) if isinstance(kwargs, dict) else True
    return value is not False


def load(path: Path, *, env_id: str | None) -> Imported:
    """Convert the SB3 model zip at ``path``; ``env_id`` (a gymnasium id) names the env it was trained on.

    Image policies (NatureCNN) get the evaltk spec of SB3's ``AtariWrapper`` + ``VecFrameStack`` on
    ``env_id`` (see :data:`CAVEATS_ATARI` for what is not equivalent). ``MlpPolicy`` on an Atari id
    gets the plain env; on a non-Atari id the checkpoint records ``family: gymnasium`` (evaltk has
    no reference env for it, so it can be imported and run, not evaluated).
    """
    where = str(path)
    data = common.read_file(path)
    doc, sd, version = _read_zip(data, where)
    branches, head = _branches(sd, doc, where)
    image = any(layer.get("op") == "conv" for b in branches.values() for layer, _ in b)
    scale = 255.0 if image and _normalize_images(doc) else 1.0
    kwargs, tensors = common.assemble(branches, sd, source="sb3", head=head, obs_scale=scale, where=where)
    space_shape, space_dtype = _obs_space(doc)
    if env_id is None:
        raise ForeignCheckpointError(f"{where}: an SB3 zip does not record its env id: pass --env-id (e.g. "
                                     "BreakoutNoFrameskip-v4 or CartPole-v1)")
    caveats: list[str] = []
    if image:
        stack = int(tensors["trunk.0.weight"].shape[1]) if branches["trunk"] else \
            int(tensors["policy.0.weight"].shape[1])
        env, obs_spec, action_spec = common.describe_env(common.atari_env(env_id, frame_stack=stack))
        caveats = list(CAVEATS_ATARI)
    elif common.is_atari_id(env_id):
        env, obs_spec, action_spec = common.describe_env(EnvSpec("atari", env_id))
    else:
        if space_shape is None or space_dtype is None:
            raise ForeignCheckpointError(f"{where}: data.observation_space has no readable _shape/dtype; "
                                         "re-save the model with a current SB3")
        env = EnvSpec("gymnasium", env_id)
        obs_spec = {"shape": space_shape, "dtype": space_dtype, "layout": "N" * len(space_shape)}
        n = int(tensors[f"policy.{len(kwargs['layers']['policy']) - 1}.weight"].shape[0])
        action_spec = {"type": "discrete", "n": n}
        caveats = [f"{env_id} is not an Atari or Doom env: evaltk has no reference env for it, so the checkpoint "
                   "can be imported and its network run, but not evaluated"]
    if space_shape is not None and space_shape != list(obs_spec["shape"]):
        raise ForeignCheckpointError(f"{where}: SB3 recorded observations of shape {space_shape} but {env_id} "
                                     f"with SB3's preprocessing gives {obs_spec['shape']}: pass the env it was "
                                     "trained on (--env-id)")
    outputs = common.trace_output(kwargs, tensors, obs_spec["shape"], where)
    common.check_actions(outputs, action_spec, env_id, where)
    source = {"format": "sb3", "sb3_version": version, "policy_class": _policy_class(doc),
              "num_timesteps": doc.get("num_timesteps") if isinstance(doc.get("num_timesteps"), int) else None,
              "file": path.name, "sha256": common.sha256(data)}
    return Imported(model_kwargs=kwargs, tensors=tensors, env=env, obs_spec=obs_spec, action_spec=action_spec,
                    source=source, caveats=caveats)
