"""What every importer shares: the imported result, layer descriptions read off tensor shapes, the env spec."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from evaltk.envs.spec import EnvSpec
from evaltk.importers import nets
from evaltk.importers.errors import ForeignCheckpointError

MAX_FILE_BYTES = 4 << 30
"""Largest foreign checkpoint file read (4 GiB)."""

Layer = tuple[dict[str, Any], str | None]
"""A layer description and the foreign tensor-name prefix of its parameters (None: no parameters)."""


@dataclass(frozen=True)
class Imported:
    """A foreign checkpoint converted: evaltk's ``model_kwargs``, tensors, env spec and what is not equivalent."""

    model_kwargs: dict[str, Any]
    tensors: dict[str, torch.Tensor]
    env: EnvSpec
    obs_spec: dict[str, Any]
    action_spec: dict[str, Any]
    source: dict[str, Any]
    caveats: list[str] = field(default_factory=list)
    default_actions: str = "greedy"
    """How the policy acts unless told otherwise: ``greedy`` or ``sample`` (as the library's own evaluation)."""


def read_file(path: Path) -> bytes:
    """Return the bytes of ``path``, with a one-line error for a missing, unreadable or huge file."""
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise ForeignCheckpointError(f"{path} is {size} bytes, over the {MAX_FILE_BYTES >> 30} GiB read for a "
                                         "policy checkpoint")
        return path.read_bytes()
    except FileNotFoundError:
        raise ForeignCheckpointError(f"{path} does not exist: pass the checkpoint file") from None
    except IsADirectoryError:
        raise ForeignCheckpointError(f"{path} is a directory: pass the checkpoint file inside it") from None
    except OSError as exc:
        raise ForeignCheckpointError(f"cannot read {path}: {exc.strerror}") from None


def sha256(data: bytes) -> str:
    """Hex sha256 of ``data`` (recorded in provenance)."""
    return hashlib.sha256(data).hexdigest()


def shape(sd: Mapping[str, torch.Tensor], key: str, ndim: int, where: str) -> tuple[int, ...]:
    """Return the shape of ``sd[key]``, which must exist with ``ndim`` dims."""
    if key not in sd:
        raise ForeignCheckpointError(f"{where} has no tensor {key!r}: it is not the network this importer reads")
    found = tuple(int(d) for d in sd[key].shape)
    if len(found) != ndim:
        raise ForeignCheckpointError(f"{where}: tensor {key!r} has shape {list(found)}, expected {ndim} dims")
    return found


def conv_layer(sd: Mapping[str, torch.Tensor], prefix: str, stride: int, where: str) -> Layer:
    """Describe the square ``Conv2d`` at ``prefix`` from its weight's shape."""
    out_c, in_c, kh, kw = shape(sd, f"{prefix}.weight", 4, where)
    if kh != kw:
        raise ForeignCheckpointError(f"{where}: conv {prefix} has a {kh}x{kw} kernel; only square kernels are read")
    return nets.conv(in_c, out_c, kh, stride), prefix


def linear_layer(sd: Mapping[str, torch.Tensor], prefix: str, where: str) -> Layer:
    """Describe the ``Linear`` at ``prefix`` from its weight's shape."""
    out_f, in_f = shape(sd, f"{prefix}.weight", 2, where)
    return nets.linear(in_f, out_f), prefix


def sequential_indices(sd: Mapping[str, torch.Tensor], prefix: str) -> list[int]:
    """Sorted indices ``i`` with a tensor ``<prefix>.<i>.weight`` (the parameter layers of an ``nn.Sequential``)."""
    found: set[int] = set()
    for key in sd:
        rest = key.removeprefix(prefix + ".")
        if rest != key and rest.endswith(".weight") and rest.removesuffix(".weight").isdigit():
            found.add(int(rest.removesuffix(".weight")))
    return sorted(found)


def assemble(branches: Mapping[str, Sequence[Layer]], sd: Mapping[str, torch.Tensor], *, source: str, head: str,
             obs_scale: float, where: str, extra: Mapping[str, Any] | None = None
             ) -> tuple[dict[str, Any], dict[str, torch.Tensor]]:
    """Return ``(model_kwargs, tensors)`` for a layer program; every described shape is checked against ``sd``.

    ``extra``: further ``model_kwargs`` (``measurements``, ``action_heads``: :mod:`evaltk.importers.nets`).

    Tensors are copied to float32 and named ``<branch>.<index>.weight|bias`` (see :mod:`evaltk.importers.nets`).
    """
    layers: dict[str, list[dict[str, Any]]] = {}
    tensors: dict[str, torch.Tensor] = {}
    names: dict[str, str] = {}
    for branch, items in branches.items():
        layers[branch] = []
        for index, (layer, prefix) in enumerate(items):
            layers[branch].append(layer)
            if prefix is None:
                continue
            for param in nets.PARAMS[layer["op"]]:
                key = f"{prefix}.{param}"
                if key not in sd:
                    raise ForeignCheckpointError(f"{where} has no tensor {key!r}: it is not the network this importer "
                                                 "reads (layers without a bias are not read)")
                if not sd[key].is_floating_point():
                    raise ForeignCheckpointError(f"{where}: tensor {key!r} has dtype {sd[key].dtype}, not floating")
                tensors[f"{branch}.{index}.{param}"] = sd[key].detach().to(torch.float32).clone()
                names[f"{branch}.{index}.{param}"] = key
    kwargs = {"source": source, "head": head, "obs_scale": float(obs_scale), "layers": layers, "source_names": names,
              **(extra or {})}
    model = nets.build(kwargs)
    want = {k: tuple(v.shape) for k, v in model.state_dict().items()}
    for name, tensor in tensors.items():
        if tuple(tensor.shape) != want.get(name):
            raise ForeignCheckpointError(f"{where}: tensor {names[name]!r} has shape {list(tensor.shape)}, but the "
                                         f"network read from the file needs {list(want.get(name, ()))}")
    if not all(bool(torch.isfinite(t).all()) for t in tensors.values()):
        raise ForeignCheckpointError(f"{where} holds NaN or infinite weights: use an earlier checkpoint")
    return kwargs, tensors


def trace_output(kwargs: Mapping[str, Any], tensors: Mapping[str, torch.Tensor], obs_shape: Sequence[int],
                 where: str) -> int:
    """Run the program on one zero observation of ``obs_shape``; return its number of outputs (actions).

    A network whose layers do not fit together (a flattened size that differs from the linear layer's
    input, say, because the observation shape was declared wrongly) raises :class:`ForeignCheckpointError`.
    """
    model = nets.build(kwargs)
    model.load_state_dict(dict(tensors))
    try:
        with torch.inference_mode():
            out, _ = model(torch.zeros((1, *obs_shape)))
    except RuntimeError as exc:
        detail = str(exc).splitlines()[0][:160]
        raise ForeignCheckpointError(f"{where}: the network does not accept observations of shape {list(obs_shape)} "
                                     f"({detail}): declare the env it was trained on (--env-id)") from None
    return int(out.shape[-1])


def atari_env(env_id: str, *, frame_stack: int, kwargs: Mapping[str, Any] | None = None) -> EnvSpec:
    """Return the evaltk Atari env spec of the usual DQN-style preprocessing (84x84 gray, noop 30, skip 4, max-pool)."""
    from evaltk.envs.atari import atari_env as resolve

    return resolve(env_id, kwargs={"frameskip": 1, **(kwargs or {})},
                   atari_preprocessing={"noop_max": 30, "frame_skip": 4, "screen_size": 84,
                                        "terminal_on_life_loss": False, "grayscale_obs": True},
                   frame_stack=frame_stack)


def is_atari_id(env_id: str) -> bool:
    """Whether ``env_id`` is a gymnasium id served by ale-py."""
    import ale_py
    import gymnasium

    ale_py.ALEInterface.setLoggerMode(ale_py.LoggerMode.Error)
    gymnasium.register_envs(ale_py)
    spec = gymnasium.registry.get(env_id)
    return spec is not None and str(spec.entry_point) == "ale_py.env:AtariEnv"


def describe_env(env: EnvSpec) -> tuple[EnvSpec, dict[str, Any], dict[str, Any]]:
    """Return ``(resolved env, obs_spec, action_spec)`` of an evaltk env spec (:class:`SpecError` if invalid)."""
    from evaltk.envs import describe

    info = describe(env)
    return info.env, info.obs_spec, info.action_spec


def check_actions(num_actions: int, action_spec: Mapping[str, Any], env_id: str, where: str) -> None:
    """Refuse a network whose output count differs from the env's action count."""
    if action_spec.get("type") != "discrete" or action_spec.get("n") != num_actions:
        raise ForeignCheckpointError(f"{where}: the network has {num_actions} outputs but {env_id} has actions "
                                     f"{action_spec}: declare the env it was trained on (--env-id)")
