"""The one declared schema of ``policy.json``, checked before anything is built or allocated.

The schema is data: :data:`SPEC_SCHEMA` maps each top-level field to a rule (its type, range, size
limit and whether it is required), and :data:`MODEL_KWARGS` does the same for the ``model_kwargs``
keys the project's models use. Ints must be JSON ints (``16.7`` or ``16.0`` is refused, not
truncated), numbers must be finite, nesting is bounded (:data:`MAX_DEPTH`), and the layer sizes in
``model_kwargs`` must not imply more than :data:`MAX_MODEL_BYTES` of float32 weights. A failed
check raises :class:`~evaltk.errors.CheckpointError` naming the field, the bad value and the rule.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from evaltk.errors import CheckpointError

#: ``format_version`` values this evaltk reads: 1 (no weights digest; accepted with a warning) and 2.
SUPPORTED_VERSIONS: tuple[int, ...] = (1, 2)
MAX_SPEC_BYTES = 4 << 20
"""Largest ``policy.json`` read (4 MiB; a real one is a few KiB)."""
MAX_WEIGHTS_BYTES = 8 << 30
"""Largest ``policy.safetensors`` read (8 GiB)."""
MAX_MODEL_BYTES = 1 << 30
"""Largest float32 layer the sizes in ``model_kwargs`` may imply (1 GiB)."""
MAX_DEPTH = 32
"""Deepest nesting of JSON arrays/objects anywhere in ``policy.json``."""
MAX_DIM = 1 << 16
"""Largest single dimension (observation axis, layer width, number of actions)."""
MAX_OBS_ELEMENTS = 1 << 23
"""Largest number of elements in one observation."""
MAX_STRING = 4096
OBS_DTYPES = ("uint8", "int8", "uint16", "int16", "int32", "int64", "float16", "float32", "float64", "bool")
_SIZE_NAME = re.compile(r"^(num|n)_|_(size|channels|dim|units|layers)$")


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _fail(where: str, rule: str, value: Any) -> CheckpointError:
    return CheckpointError(f"{where} must be {rule}, got {_show(value)}")


@dataclass(frozen=True)
class Int:
    """A JSON int in ``[lo, hi]`` (bools and floats such as ``16.0`` are refused)."""

    lo: int = 1
    hi: int = MAX_DIM

    def check(self, value: Any, where: str) -> None:
        """Raise :class:`CheckpointError` unless ``value`` is an int in range."""
        if not _is_int(value) or not self.lo <= value <= self.hi:
            raise _fail(where, f"an int in [{self.lo}, {self.hi}]", value)


@dataclass(frozen=True)
class Str:
    """A non-empty string of at most ``max_len`` characters, optionally matching ``pattern`` or in ``choices``."""

    max_len: int = 256
    pattern: str | None = None
    choices: tuple[str, ...] = ()

    def check(self, value: Any, where: str) -> None:
        """Raise :class:`CheckpointError` unless ``value`` is such a string."""
        if not isinstance(value, str) or not value or len(value) > self.max_len:
            raise _fail(where, f"a non-empty string of at most {self.max_len} characters", value)
        if self.choices and value not in self.choices:
            raise _fail(where, f"one of {', '.join(self.choices)}", value)
        if self.pattern is not None and re.fullmatch(self.pattern, value) is None:
            raise _fail(where, f"a string matching {self.pattern}", value)


@dataclass(frozen=True)
class Dims:
    """A list of ``min_len..max_len`` ints, each in ``[1, hi]``, with at most ``max_product`` elements in all."""

    min_len: int = 1
    max_len: int = 4
    hi: int = MAX_DIM
    max_product: int = MAX_OBS_ELEMENTS

    def check(self, value: Any, where: str) -> None:
        """Raise :class:`CheckpointError` unless ``value`` is such a list."""
        rule = f"a list of {self.min_len} to {self.max_len} ints in [1, {self.hi}]"
        if not isinstance(value, list) or not self.min_len <= len(value) <= self.max_len:
            raise _fail(where, rule, value)
        if not all(_is_int(d) and 1 <= d <= self.hi for d in value):
            raise _fail(where, rule, value)
        if math.prod(value) > self.max_product:
            raise _fail(where, f"{rule} with at most {self.max_product} elements in all", value)


@dataclass(frozen=True)
class Json:
    """Any JSON value (``kind="any"``) or a JSON object (``kind="object"``) of finite numbers."""

    kind: str = "any"

    def check(self, value: Any, where: str) -> None:
        """Raise :class:`CheckpointError` for a non-object (when one is required) or a non-finite number."""
        if self.kind == "object" and not isinstance(value, dict):
            raise _fail(where, "a JSON object", value)
        check_finite(value, where)


@dataclass(frozen=True)
class Obj:
    """A JSON object with declared ``fields`` (name -> (rule, required)); other keys checked by ``extra``."""

    fields: Mapping[str, tuple[Any, bool]]
    extra: Any = None

    def check(self, value: Any, where: str) -> None:
        """Raise :class:`CheckpointError` for a non-object, a missing required key or a bad value."""
        if not isinstance(value, dict):
            raise _fail(where, "a JSON object", value)
        for name, (rule, required) in self.fields.items():
            if name in value:
                rule.check(value[name], f"{where}.{name}")
            elif required:
                raise CheckpointError(f"{where}.{name} is required but missing: re-export the checkpoint")
        for name, item in value.items():
            if name in self.fields:
                continue
            if self.extra is None:
                raise CheckpointError(f"{where} has the unknown key {_show(name)}: remove it or upgrade evaltk")
            self.extra.check(item, f"{where}.{name}")


class _ModelKwarg:
    """A ``model_kwargs`` entry not declared in :data:`MODEL_KWARGS`: size-like names must be ints."""

    def check(self, value: Any, where: str) -> None:
        name = where.rsplit(".", 1)[-1]
        if _SIZE_NAME.search(name) and not isinstance(value, list | dict):
            Int(1, MAX_DIM).check(value, where)
        check_finite(value, where)


MODEL_KWARGS: dict[str, tuple[Any, bool]] = {
    "obs_shape": (Dims(), False),
    "num_actions": (Int(), False),
    "action_nvec": (Dims(max_len=64, max_product=2**62), False),
    "hidden_size": (Int(), False),
    "rnn_size": (Int(), False),
    "nonlinearity": (Str(choices=("elu", "relu")), False),
}
"""The ``model_kwargs`` keys of the project's models (``trainers.a2c``, ``trainers.appo``)."""

_MODEL_CLASS = r"[A-Za-z_][\w.]*:[A-Za-z_]\w*"
_DISCRETE = Obj({"type": (Str(choices=("discrete",)), True), "n": (Int(), True)})
_MULTI = Obj({"type": (Str(choices=("multi_discrete",)), True), "nvec": (Dims(max_len=64, max_product=2**62), True)})

SPEC_SCHEMA: dict[str, tuple[Any, bool]] = {
    "format_version": (Int(min(SUPPORTED_VERSIONS), max(SUPPORTED_VERSIONS)), True),
    "model_class": (Str(pattern=_MODEL_CLASS), True),
    "model_kwargs": (Obj(MODEL_KWARGS, extra=_ModelKwarg()), True),
    "obs_spec": (Obj({"shape": (Dims(), True), "dtype": (Str(choices=OBS_DTYPES), True),
                      "layout": (Str(max_len=32), False)}, extra=Json()), True),
    "action_spec": (None, True),  # discrete or multi_discrete: see _check_action_spec
    "env": (Obj({"family": (Str(max_len=64), True), "env_id": (Str(), True),
                 "kwargs": (Json("object"), False), "preprocessing": (Json("object"), False)}, extra=Json()), True),
    "provenance": (Json("object"), True),
    "weights": (Obj({"sha256": (Str(pattern="[0-9a-f]{64}"), True), "bytes": (Int(0, MAX_WEIGHTS_BYTES), True)}),
                False),
}
"""Every top-level field of ``policy.json``: rule and whether it is required (``weights`` from version 2)."""


def check_finite(value: Any, where: str) -> None:
    """Raise :class:`CheckpointError` if any number inside ``value`` is NaN or infinite (iterative walk)."""
    stack: list[tuple[Any, str]] = [(value, where)]
    while stack:
        item, at = stack.pop()
        if isinstance(item, float) and not math.isfinite(item):
            raise _fail(at, "a finite number", item)
        if isinstance(item, dict):
            stack.extend((v, f"{at}.{k}") for k, v in item.items())
        elif isinstance(item, list):
            stack.extend((v, f"{at}[{i}]") for i, v in enumerate(item))


def json_depth(value: Any) -> int:
    """Return the nesting depth of arrays/objects in ``value`` (0 for a scalar), without recursion."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            depth += 1
            deepest = max(deepest, depth)
            stack.extend((v, depth) for v in (item.values() if isinstance(item, dict) else item))
    return deepest


def _check_action_spec(value: Any) -> None:
    if not isinstance(value, dict) or value.get("type") not in ("discrete", "multi_discrete"):
        raise _fail("action_spec", "{'type': 'discrete', 'n': N} or {'type': 'multi_discrete', 'nvec': [...]}",
                    value)
    (_DISCRETE if value["type"] == "discrete" else _MULTI).check(value, "action_spec")


def _check_consistency(data: Mapping[str, Any]) -> None:
    """Cross-field rules: model_kwargs agree with the obs/action spec and imply a bounded model size."""
    kw, obs, act = data["model_kwargs"], data["obs_spec"], data["action_spec"]
    if "obs_shape" in kw and kw["obs_shape"] != obs["shape"]:
        raise CheckpointError(f"model_kwargs.obs_shape {kw['obs_shape']} differs from obs_spec.shape {obs['shape']}: "
                              "the model and its observations must agree")
    heads = [act["n"]] if act["type"] == "discrete" else list(act["nvec"])
    if "num_actions" in kw and [kw["num_actions"]] != heads:
        raise CheckpointError(f"model_kwargs.num_actions {kw['num_actions']} differs from action_spec {act}")
    if "action_nvec" in kw and kw["action_nvec"] != heads:
        raise CheckpointError(f"model_kwargs.action_nvec {kw['action_nvec']} differs from action_spec {act}")
    inputs = math.prod(kw.get("obs_shape", obs["shape"]))
    layers = [(inputs, kw.get("hidden_size", 1)), (kw.get("hidden_size", 1), 3 * kw.get("rnn_size", 1)),
              (kw.get("rnn_size", kw.get("hidden_size", 1)), sum(heads))]
    for fan_in, fan_out in layers:
        if 4 * fan_in * fan_out > MAX_MODEL_BYTES:
            raise CheckpointError(f"model_kwargs {_show(kw)} imply a {fan_in}x{fan_out} float32 layer of "
                                  f"{4 * fan_in * fan_out / 2**30:.1f} GiB, over the {MAX_MODEL_BYTES >> 30} GiB "
                                  "limit: the sizes are corrupt")


def check_spec(data: Any, *, weights_required: bool = True) -> None:
    """Check a parsed ``policy.json`` against :data:`SPEC_SCHEMA`; raise :class:`CheckpointError` if it fails.

    ``weights_required``: whether a version-2 document must carry the ``weights`` digest (False when
    checking a spec that is about to be saved, before the digest exists).
    """
    if not isinstance(data, dict):
        raise CheckpointError(f"policy.json must hold a JSON object, got {type(data).__name__}")
    if json_depth(data) > MAX_DEPTH:
        raise CheckpointError(f"policy.json is nested more than {MAX_DEPTH} levels deep: the file is corrupt")
    version = data.get("format_version")
    if not _is_int(version) or version not in SUPPORTED_VERSIONS:
        raise CheckpointError(f"policy.json has format_version {_show(version)}; this evaltk reads versions "
                              f"{', '.join(map(str, SUPPORTED_VERSIONS))}: re-export the checkpoint with a "
                              "matching evaltk (or upgrade evaltk)")
    missing = [k for k, (_, required) in SPEC_SCHEMA.items() if required and k not in data]
    if weights_required and version >= 2 and "weights" not in data:
        missing.append("weights")
    if missing:
        raise CheckpointError(f"policy.json lacks the field(s) {', '.join(missing)}: "
                              "re-export the checkpoint with evaltk.checkpoint.save")
    unknown = sorted(set(data) - set(SPEC_SCHEMA))
    if unknown:
        raise CheckpointError(f"policy.json has unknown field(s) {', '.join(map(_show, unknown))}: "
                              "remove them or upgrade evaltk")
    for name, (rule, _) in SPEC_SCHEMA.items():
        if name in data and rule is not None:
            rule.check(data[name], name)
    _check_action_spec(data["action_spec"])
    _check_consistency(data)
