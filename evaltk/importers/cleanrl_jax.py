"""CleanRL's JAX checkpoints: ``flax.serialization.to_bytes`` msgpack files, read with ``msgpack``, never flax.

Scripts read (vwxyzjn/cleanrl, MIT licence; facts only):

- ``ppo_atari_envpool_xla_jax_scan`` saves ``[vars(args), [network_params, actor_params, critic_params]]``:
  ``Network`` (on ``transpose(x, NCHW -> NHWC) / 255``: ``Conv_0`` 32 8x8/4, ``Conv_1`` 64 4x4/2,
  ``Conv_2`` 64 3x3/1, all ``VALID``, ReLU, ``reshape`` to ``[B, -1]``, ``Dense_0`` 512, ReLU), ``Actor``
  (``Dense_0``: A logits) and ``Critic`` (``Dense_0``: 1 value). It trains on EnvPool's Atari
  (``envpool.make(env_id, episodic_life=True, reward_clip=True)``; ``args.env_id`` is recorded, default
  ``Breakout-v5``). ``ppo_atari_envpool_xla_jax`` declares the same networks but saves no model.
- ``dqn_atari_jax`` saves ``q_state.params``: ``QNetwork`` (the same convs and ``Dense_0`` 512, then
  ``Dense_1``: A Q-values) on CleanRL's gym wrapper stack (as ``dqn_atari``); no env id is recorded
  (default ``BreakoutNoFrameskip-v4``, or ``--env-id``).

The format (``flax.serialization``): flax turns lists and tuples into maps keyed ``"0"``, ``"1"``, ...
(its state dict) and packs the tree with msgpack; an array is msgpack extension type 1 (a numpy
scalar: type 3) whose payload is the msgpack array ``[shape, dtype name, C-order bytes]`` in the
writer's byte order (little-endian on every platform jax runs on). Arrays over 1 GiB are split into
``{"__msgpack_chunked_array__": ...}`` maps (refused: no Atari network has one). Read here: maps with
string keys, arrays, strings, numbers, booleans and nil, and the two extension types above with a
numeric dtype; anything else (another extension type, raw bytes, a non-string or repeated key,
nesting deeper than :data:`MAX_DEPTH`, trailing bytes, a file over :data:`MAX_BYTES`) is refused with
one line naming the item and where it is.

To torch: a ``Conv`` kernel ``[kh, kw, in, out]`` (HWIO) becomes a ``Conv2d`` weight ``[out, in, kh, kw]``
(both are cross-correlations; flax's NHWC input is evaltk's NCHW observation with the same channel
order); a ``Dense`` kernel ``[in, out]`` becomes a ``Linear`` weight ``[out, in]``; the first ``Dense``
after the convs has its input rows reordered from flax's NHWC flatten ``(h, w, c)`` to torch's NCHW
flatten ``(c, h, w)``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgpack
import torch

from evaltk.importers import cleanrl, common
from evaltk.importers.common import Imported, Layer
from evaltk.importers.errors import ForeignCheckpointError
from evaltk.importers.nets import op

PPO_SCRIPT = "ppo_atari_envpool_xla_jax_scan"
DQN_SCRIPT = "dqn_atari_jax"
SCRIPTS = (PPO_SCRIPT, DQN_SCRIPT)
ACCEPTED_SCRIPTS = {PPO_SCRIPT: (PPO_SCRIPT, "ppo_atari_envpool_xla_jax", "ppo_atari_envpool"),
                    DQN_SCRIPT: (DQN_SCRIPT, "dqn_atari")}
"""``--script`` values accepted for each network read from a file (the JAX script, or its PyTorch twin)."""
DEFAULT_ENV = {PPO_SCRIPT: "Breakout-v5", DQN_SCRIPT: "BreakoutNoFrameskip-v4"}
MAX_BYTES = 1 << 30
"""Largest JAX checkpoint read (1 GiB; CleanRL's Atari networks take about 7 MB)."""
MAX_DEPTH = 32
"""Deepest nesting of maps and arrays read (CleanRL's files nest 5 levels)."""
MAX_NDIM = 8
EXT_NDARRAY, EXT_NPSCALAR = 1, 3
_DTYPES = {"float32": torch.float32, "float64": torch.float64, "float16": torch.float16, "bfloat16": torch.bfloat16,
           "int8": torch.int8, "int16": torch.int16, "int32": torch.int32, "int64": torch.int64,
           "uint8": torch.uint8, "bool": torch.bool}
_CONVS = (("Conv_0", 8, 4), ("Conv_1", 4, 2), ("Conv_2", 3, 1))
"""Each script's convs: name, kernel size, stride (strides are not in the file)."""
_MAP_FIRST_BYTES = frozenset(range(0x81, 0x90)) | {0xDE, 0xDF}
CAVEAT_ENVPOOL_TRAINING = ("trained by CleanRL's ppo_atari_envpool_xla_jax_scan on EnvPool's Atari "
                           "(envpool.make(env_id, episodic_life=True, reward_clip=True)), evaluated on gymnasium + "
                           "ale-py with the spec below")


@dataclass(frozen=True)
class _Ext:
    """A msgpack extension object as the unpacker hands it over (decoded later, where its path is known)."""

    code: int
    data: bytes


@dataclass(frozen=True)
class _Pairs:
    """A msgpack map as its list of (key, value) pairs (so keys are checked where their path is known)."""

    pairs: list[tuple[Any, Any]]


def is_msgpack_file(path: Path) -> bool:
    """Whether ``path`` starts like a flax msgpack file (a non-empty map), not a torch zip or pickle."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(1)
    except OSError:
        return False
    return len(head) == 1 and head[0] in _MAP_FIRST_BYTES


def _refuse(where: str, path: str, what: str) -> ForeignCheckpointError:
    return ForeignCheckpointError(f"refused: {where} {what} at {path or '<root>'} (only flax's arrays and plain "
                                  "data are read)")


def _ndarray(ext: _Ext, where: str, path: str) -> torch.Tensor:
    """Decode flax's ndarray payload ``[shape, dtype name, bytes]`` into a tensor, checking every part."""
    try:
        shape, dtype_name, buffer = msgpack.unpackb(ext.data, raw=True, use_list=True)
    except (ValueError, TypeError, msgpack.UnpackException):
        raise _refuse(where, path, "an array payload that is not [shape, dtype, bytes]") from None
    ok_shape = (isinstance(shape, list) and len(shape) <= MAX_NDIM
                and all(isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in shape))
    if not ok_shape:
        raise _refuse(where, path, f"an array with shape {str(shape)[:80]} (up to {MAX_NDIM} non-negative sizes)")
    name = dtype_name.decode("ascii", "replace") if isinstance(dtype_name, bytes) else None
    if name not in _DTYPES or not isinstance(buffer, bytes):
        raise _refuse(where, path, f"an array of dtype {str(dtype_name)[:40]} (numeric dtypes only)")
    dtype = _DTYPES[name]
    count = math.prod(shape)
    need = count * torch.empty((), dtype=dtype).element_size()
    if len(buffer) != need:
        raise _refuse(where, path, f"a {name} array of shape {shape} ({need} bytes) with {len(buffer)} bytes of data")
    flat = torch.frombuffer(bytearray(buffer), dtype=dtype) if count else torch.empty(0, dtype=dtype)
    tensor = flat.reshape(shape)
    if ext.code == EXT_NPSCALAR and shape:
        raise _refuse(where, path, f"a numpy scalar of shape {shape}")
    return tensor


def _plain(node: Any, where: str, path: str, depth: int) -> Any:
    """Turn the unpacked tree into dicts, lists, tensors and plain values, refusing anything else."""
    if depth > MAX_DEPTH:
        raise _refuse(where, path, f"nesting deeper than {MAX_DEPTH} levels")
    if node is None or isinstance(node, bool | int | float | str):
        return node
    if isinstance(node, list):
        return [_plain(item, where, f"{path}/{i}", depth + 1) for i, item in enumerate(node)]
    if isinstance(node, _Pairs):
        out: dict[str, Any] = {}
        for key, value in node.pairs:
            if not isinstance(key, str):
                raise _refuse(where, path, f"a map key {key!r:.40} that is not a string")
            if key in out:
                raise _refuse(where, path, f"the map key {key!r:.40} twice")
            if key == "__msgpack_chunked_array__":
                raise _refuse(where, path, "an array over 1 GiB split into chunks (not a CleanRL Atari network)")
            out[key] = _plain(value, where, f"{path}/{key}", depth + 1)
        return out
    if isinstance(node, _Ext):
        if node.code not in (EXT_NDARRAY, EXT_NPSCALAR):
            raise _refuse(where, path, f"msgpack extension type {node.code} (flax's arrays are types 1 and 3)")
        return _ndarray(node, where, path)
    raise _refuse(where, path, f"a msgpack {type(node).__name__} value")


def read_tree(data: bytes, where: str) -> Any:
    """Parse the bytes of a ``flax.serialization.to_bytes`` file into plain data and tensors (see module doc)."""
    try:
        tree = msgpack.unpackb(data, ext_hook=_Ext, object_pairs_hook=_Pairs, raw=False, strict_map_key=False,
                               use_list=True)
    except msgpack.StackError:
        raise ForeignCheckpointError(f"refused: {where} nests its msgpack deeper than the unpacker's stack") from None
    except msgpack.ExtraData as exc:
        raise ForeignCheckpointError(f"{where} has {len(exc.extra)} bytes after its msgpack object: it is not one "
                                     "flax.serialization.to_bytes file") from None
    except (ValueError, msgpack.UnpackException) as exc:
        detail = str(exc).splitlines()[0][:80] if str(exc) else type(exc).__name__
        raise ForeignCheckpointError(f"{where} is truncated or not msgpack ({detail}): pass the file CleanRL "
                                     "wrote") from None
    return _plain(tree, where, "", 0)


def _module(tree: Any, keys: tuple[str, ...], where: str, path: str) -> dict[str, dict[str, torch.Tensor]]:
    """Return the ``{"kernel", "bias"}`` tensors of each flax submodule named in ``keys`` under ``tree["params"]``."""
    params = tree.get("params") if isinstance(tree, dict) and set(tree) == {"params"} else None
    if not isinstance(params, dict) or set(params) != set(keys):
        found = sorted(params) if isinstance(params, dict) else sorted(tree) if isinstance(tree, dict) else tree
        at = f"{path}/params" if isinstance(params, dict) else path or "the top level"
        raise ForeignCheckpointError(f"{where}: {at} holds {str(found)[:120]}, expected {{'params': "
                                     f"{{{', '.join(keys)}}}}} (the CleanRL script's flax modules)")
    for name in keys:
        leaves = params[name]
        if not (isinstance(leaves, dict) and set(leaves) == {"kernel", "bias"}
                and all(isinstance(v, torch.Tensor) for v in leaves.values())):
            raise ForeignCheckpointError(f"{where}: {path}/params/{name} is not a flax Conv/Dense "
                                         "({'kernel', 'bias'} arrays)")
    return params


def _identify(tree: Any, where: str) -> tuple[str, dict[str, Any], dict[str, dict[str, Any]]]:
    """Return ``(script, args, {prefix: flax module params})`` of a PPO or DQN tree."""
    trunk = ("Conv_0", "Conv_1", "Conv_2", "Dense_0")
    if isinstance(tree, dict) and set(tree) == {"params"}:
        return DQN_SCRIPT, {}, {"params": _module(tree, (*trunk, "Dense_1"), where, "")}
    if isinstance(tree, dict) and set(tree) == {"0", "1"} and isinstance(tree["1"], dict) and set(tree["1"]) == {
            "0", "1", "2"}:
        args = tree["0"]
        if not isinstance(args, dict) or any(isinstance(v, torch.Tensor | dict) for v in args.values()):
            raise ForeignCheckpointError(f"{where}: item 0 should be vars(args), a map of plain values")
        nets = tree["1"]
        return PPO_SCRIPT, args, {"network_params": _module(nets["0"], trunk, where, "1/0"),
                                  "actor_params": _module(nets["1"], ("Dense_0",), where, "1/1"),
                                  "critic_params": _module(nets["2"], ("Dense_0",), where, "1/2")}
    found = sorted(tree)[:8] if isinstance(tree, dict) else type(tree).__name__
    raise ForeignCheckpointError(f"{where} is msgpack but not a CleanRL JAX checkpoint (top level {found}): "
                                 f"{PPO_SCRIPT}'s [vars(args), [network_params, actor_params, critic_params]] or "
                                 f"{DQN_SCRIPT}'s q_state.params are read")


def _kernel(leaves: Mapping[str, torch.Tensor], ndim: int, where: str, name: str) -> torch.Tensor:
    kernel = leaves["kernel"]
    if kernel.dim() != ndim or leaves["bias"].dim() != 1:
        raise ForeignCheckpointError(f"{where}: {name} has a kernel of shape {list(kernel.shape)} and a bias of shape "
                                     f"{list(leaves['bias'].shape)}; a flax {'Conv' if ndim == 4 else 'Dense'} has "
                                     f"a {ndim}-d kernel and a 1-d bias")
    return kernel


def _torch_tensors(modules: Mapping[str, Mapping[str, Any]], obs_shape: list[int],
                   where: str) -> dict[str, torch.Tensor]:
    """Map the flax params to torch ``Conv2d``/``Linear`` tensors named ``<prefix>.params.<module>.weight|bias``."""
    sd: dict[str, torch.Tensor] = {}
    convs = modules.get("network_params") or modules["params"]
    base = "network_params.params" if "network_params" in modules else "params"
    height, width = obs_shape[-2], obs_shape[-1]
    for name, size, stride in _CONVS:
        kernel = _kernel(convs[name], 4, where, f"{base}.{name}")
        if tuple(kernel.shape[:2]) != (size, size):
            raise ForeignCheckpointError(f"{where}: {base}.{name} has a {kernel.shape[0]}x{kernel.shape[1]} kernel; "
                                         f"the CleanRL network's is {size}x{size}")
        sd[f"{base}.{name}.weight"] = kernel.permute(3, 2, 0, 1).contiguous()
        sd[f"{base}.{name}.bias"] = convs[name]["bias"]
        height, width = (height - size) // stride + 1, (width - size) // stride + 1
    channels = int(convs["Conv_2"]["kernel"].shape[3])
    dense = _kernel(convs["Dense_0"], 2, where, f"{base}.Dense_0")
    if dense.shape[0] != height * width * channels or min(height, width) < 1:
        raise ForeignCheckpointError(f"{where}: {base}.Dense_0 takes {dense.shape[0]} inputs, but the convs give "
                                     f"{max(height, 0)}x{max(width, 0)}x{channels} on observations {obs_shape}: "
                                     "declare the env it was trained on (--env-id)")
    sd[f"{base}.Dense_0.weight"] = dense.reshape(height, width, channels, -1).permute(3, 2, 0, 1).reshape(
        dense.shape[1], -1).contiguous()
    sd[f"{base}.Dense_0.bias"] = convs["Dense_0"]["bias"]
    heads = [(f"{prefix}.params.Dense_0", modules[prefix]["Dense_0"]) for prefix in ("actor_params", "critic_params")
             if prefix in modules]
    if "Dense_1" in convs:
        heads.append((f"{base}.Dense_1", convs["Dense_1"]))
    for name, leaves in heads:
        sd[f"{name}.weight"] = _kernel(leaves, 2, where, name).T.contiguous()
        sd[f"{name}.bias"] = leaves["bias"]
    return sd


def _branches(sd: Mapping[str, torch.Tensor], script: str, where: str) -> dict[str, list[Layer]]:
    base = "network_params.params" if script == PPO_SCRIPT else "params"
    trunk: list[Layer] = []
    for name, _, stride in _CONVS:
        trunk += [common.conv_layer(sd, f"{base}.{name}", stride, where), (op("relu"), None)]
    trunk += [(op("flatten"), None), common.linear_layer(sd, f"{base}.Dense_0", where), (op("relu"), None)]
    if script == PPO_SCRIPT:
        return {"trunk": trunk, "policy": [common.linear_layer(sd, "actor_params.params.Dense_0", where)],
                "value": [common.linear_layer(sd, "critic_params.params.Dense_0", where)]}
    return {"trunk": [], "policy": [*trunk, common.linear_layer(sd, f"{base}.Dense_1", where)]}


def load(path: Path, *, env_id: str | None, script: str | None = None) -> Imported:
    """Convert the CleanRL JAX checkpoint at ``path`` (``script``: checked against the network found, if given)."""
    where = str(path)
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise ForeignCheckpointError(f"cannot read {path}: {exc.strerror}") from None
    if size > MAX_BYTES:
        raise ForeignCheckpointError(f"refused: {where} is {size} bytes, over the {MAX_BYTES >> 20} MiB read for a "
                                     "CleanRL JAX checkpoint")
    data = common.read_file(path)
    found, args, modules = _identify(read_tree(data, where), where)
    if script is not None and script not in ACCEPTED_SCRIPTS[found]:
        raise ForeignCheckpointError(f"{where} holds {found}'s network, not a {script} one: pass --script "
                                     f"{found} or omit --script")
    recorded = args.get("env_id")
    env_id = env_id or (recorded if isinstance(recorded, str) else None) or DEFAULT_ENV[found]
    env_dict = cleanrl.script_env("ppo_atari_envpool" if found == PPO_SCRIPT else "dqn_atari", env_id)
    env, obs_spec, action_spec = common.describe_env(env_dict)
    sd = _torch_tensors(modules, list(obs_spec["shape"]), where)
    head = "logits" if found == PPO_SCRIPT else "q"
    kwargs, tensors = common.assemble(_branches(sd, found, where), sd, source=f"cleanrl:{found}", head=head,
                                      obs_scale=255.0, where=where)
    outputs = common.trace_output(kwargs, tensors, obs_spec["shape"], where)
    common.check_actions(outputs, action_spec, env_id, where)
    source: dict[str, Any] = {"format": "cleanrl", "script": found, "serialization": "flax msgpack",
                              "file": path.name, "sha256": common.sha256(data)}
    for key in ("exp_name", "env_id", "seed", "total_timesteps"):
        if isinstance(args.get(key), str | int) and not isinstance(args.get(key), bool):
            source[f"args.{key}"] = args[key]
    caveats = [CAVEAT_ENVPOOL_TRAINING, *cleanrl.CAVEATS_ENVPOOL] if found == PPO_SCRIPT else list(cleanrl.CAVEATS_GYM)
    return Imported(model_kwargs=kwargs, tensors=tensors, env=env, obs_spec=obs_spec, action_spec=action_spec,
                    source=source, caveats=caveats)
