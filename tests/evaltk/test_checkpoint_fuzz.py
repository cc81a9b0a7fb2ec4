"""Checkpoint mutants: every corruption of a real saved policy is refused with one ``error:`` line, or is harmless.

A tiny real APPO policy is saved, then mutated 60+ ways (the kinds from issue 20: deleted and
mistyped keys, huge and negative sizes, deep nesting, NaN where an int belongs, NaN/Inf/int32
weights, flipped bytes, an unknown safetensors ``format_version``, ``hidden_size = 16.7``) and by
hypothesis. Each mutant either loads the original tensors and an equivalent spec, or is refused
by :func:`evaltk.policies.load_policy` with an :class:`EvaltkError`, and ``evaltk evaluate`` on it
prints exactly one ``error:`` line and exits 2. Never a traceback, never corrupted tensors accepted.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from safetensors.torch import load as st_load
from safetensors.torch import save as st_save

from evaltk.checkpoint import SPEC_FILE, load, save
from evaltk.errors import CheckpointError, CheckpointWarning, EvaltkError
from evaltk.policies import load_policy
from tests.evaltk.cli_helpers import error_line
from tests.evaltk.fuzz_files import read_doc, tiny_policy_checkpoint, weights_path, write_doc

Mutation = Callable[[Path], None]


@pytest.fixture(scope="module")
def original(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tiny_policy_checkpoint(tmp_path_factory.mktemp("orig") / "ckpt")


def _edit(path: str, value: Any) -> Mutation:
    """Set (or with value _DELETE, delete) the dotted ``path`` of policy.json."""
    def mutate(ckpt: Path) -> None:
        data = read_doc(ckpt)
        *parents, last = path.split(".")
        node: Any = data
        for key in parents:
            node = node[int(key)] if isinstance(node, list) else node[key]
        if value is _DELETE:
            del node[int(last) if isinstance(node, list) else last]
        elif isinstance(node, list):
            node[int(last)] = value
        else:
            node[last] = value
        write_doc(ckpt, data)
    return mutate


_DELETE = object()


def _raw_spec(text: str | bytes) -> Mutation:
    def mutate(ckpt: Path) -> None:
        target = ckpt / SPEC_FILE
        target.write_bytes(text.encode() if isinstance(text, str) else text)
    return mutate


def _flip(offset: int) -> Mutation:
    def mutate(ckpt: Path) -> None:
        data = bytearray(weights_path(ckpt).read_bytes())
        data[offset % len(data)] ^= 0x5A
        weights_path(ckpt).write_bytes(bytes(data))
    return mutate


def _redigest(ckpt: Path) -> None:
    payload = weights_path(ckpt).read_bytes()
    data = read_doc(ckpt)
    data["weights"] = {"sha256": hashlib.sha256(payload).hexdigest(), "bytes": len(payload)}
    write_doc(ckpt, data)


def _retensor(change: Callable[[dict[str, torch.Tensor]], dict[str, torch.Tensor]],
              metadata: dict[str, str] | None = None) -> Mutation:
    """Rewrite the weights with ``change`` applied, with a *matching* digest: the later checks must catch it."""
    def mutate(ckpt: Path) -> None:
        tensors = st_load(weights_path(ckpt).read_bytes())
        weights_path(ckpt).write_bytes(st_save(change(dict(tensors)),
                                               metadata={"format_version": "2"} if metadata is None else metadata))
        _redigest(ckpt)
    return mutate


def _set_first(value: float) -> Callable[[dict[str, torch.Tensor]], dict[str, torch.Tensor]]:
    def change(t: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        t["actor.weight"] = t["actor.weight"].clone()
        t["actor.weight"].view(-1)[0] = value
        return t
    return change


def _nested(depth: int) -> str:
    return "[" * depth + "]" * depth


def _mutants(weights_len: int) -> list[tuple[str, Mutation]]:
    out: list[tuple[str, Mutation]] = []
    for key in ("format_version", "model_class", "model_kwargs", "obs_spec", "action_spec", "env", "provenance",
                "weights"):
        out.append((f"delete {key}", _edit(key, _DELETE)))
    for key in ("obs_spec.shape", "obs_spec.dtype", "action_spec.n", "action_spec.type", "env.family", "env.env_id",
                "model_kwargs.obs_shape", "model_kwargs.hidden_size", "model_kwargs.rnn_size",
                "model_kwargs.action_nvec", "weights.sha256", "weights.bytes"):
        out.append((f"delete {key}", _edit(key, _DELETE)))
    bad_ints: list[Any] = ["8", 16.7, 8.0, True, None, -3, 0, 10**12, 2**63, float("nan"), float("inf"), [8]]
    for value in bad_ints:
        out.append((f"hidden_size={value!r}", _edit("model_kwargs.hidden_size", value)))
    for path, value in (("model_kwargs.rnn_size", 16.7), ("model_kwargs.rnn_size", -8),
                        ("model_kwargs.obs_shape.1", 10**6), ("model_kwargs.obs_shape.1", -72),
                        ("obs_spec.shape", [3, 100000, 100000]), ("obs_spec.shape.2", float("nan")),
                        ("action_spec.n", "4"), ("action_spec.n", 10**9), ("model_kwargs.action_nvec", [4, 4]),
                        ("model_kwargs.action_nvec.0", 0), ("format_version", 3), ("format_version", "2"),
                        ("format_version", 2.0), ("weights.bytes", -1), ("weights.sha256", "0" * 64),
                        ("model_class", "os:system"), ("model_class", "trainers.appo.model:Nope"),
                        ("model_class", "trainers.a2c.model:A2cPolicy"), ("model_class", "builtin:random"),
                        ("model_kwargs.nonlinearity", "tanh"), ("provenance", [1]), ("env.kwargs", [1]),
                        ("obs_spec.dtype", "complex128"), ("model_kwargs.hidden_size", 9)):
        out.append((f"{path}={value!r}", _edit(path, value)))
    out += [
        ("provenance nested 100000 deep", _raw_spec('{"provenance": ' + _nested(100000) + "}")),
        ("model_kwargs nested 40 deep", _edit("model_kwargs.extra", json.loads(_nested(40)))),
        ("NaN in provenance", _edit("provenance.seed", float("nan"))),
        ("truncated policy.json", lambda c: (c / SPEC_FILE).write_text((c / SPEC_FILE).read_text()[:100])),
        ("empty policy.json", _raw_spec("")),
        ("binary policy.json", _raw_spec(bytes(range(256)))),
        ("policy.json is a list", _raw_spec("[1, 2]")),
        ("5 MiB policy.json", _raw_spec(" " * (5 << 20) + "{}")),
        ("int with 5000 digits", _raw_spec('{"format_version": ' + "9" * 5000 + "}")),
        ("policy.json deleted", lambda c: (c / SPEC_FILE).unlink()),
        ("policy.safetensors deleted", lambda c: weights_path(c).unlink()),
        ("policy.safetensors empty", lambda c: weights_path(c).write_bytes(b"")),
        ("policy.safetensors truncated", lambda c: weights_path(c).write_bytes(weights_path(c).read_bytes()[:999])),
        ("policy.safetensors appended", lambda c: weights_path(c).write_bytes(weights_path(c).read_bytes() + b"\0")),
    ]
    for offset in (0, 7, 9, 200, weights_len // 2, weights_len - 1):
        out.append((f"flip weights byte {offset}", _flip(offset)))
    out += [
        ("NaN weight (re-digested)", _retensor(_set_first(float("nan")))),
        ("Inf weight (re-digested)", _retensor(_set_first(float("inf")))),
        ("int32 weights (re-digested)", _retensor(lambda t: {k: v.to(torch.int32) for k, v in t.items()})),
        ("float64 bits read as int64 (re-digested)",
         _retensor(lambda t: {k: v.view(torch.int32) if v.dtype == torch.float32 else v for k, v in t.items()})),
        ("safetensors format_version 3 (re-digested)", _retensor(lambda t: t, {"format_version": "3"})),
        ("safetensors metadata missing (re-digested)", _retensor(lambda t: t, {})),
        ("extra tensor (re-digested)", _retensor(lambda t: {**t, "extra": torch.zeros(3)})),
        ("missing tensor (re-digested)", _retensor(lambda t: {k: v for k, v in t.items() if k != "critic.bias"})),
        ("reshaped tensor (re-digested)", _retensor(lambda t: {**t, "actor.weight": t["actor.weight"].reshape(8, 4)})),
    ]
    return out


#: Mutants that change nothing the loader relies on: they must load and equal the original.
_HARMLESS: list[tuple[str, Mutation]] = [
    ("compact JSON", lambda c: (c / SPEC_FILE).write_text(json.dumps(read_doc(c), separators=(",", ":")))),
    ("reordered keys", lambda c: (c / SPEC_FILE).write_text(json.dumps(dict(reversed(read_doc(c).items()))))),
    ("provenance edited", _edit("provenance.seed", 12345)),
]


def _copy(original: Path, tmp: Path) -> Path:
    dest = tmp / "m"
    if dest.exists():
        shutil.rmtree(dest)
    shutil.copytree(original, dest)
    return dest


def _same_policy(ckpt: Path, original: Path) -> None:
    """Assert ``ckpt`` loads the original tensors and spec (provenance aside)."""
    got, want = load(ckpt), load(original)
    assert {k: v for k, v in got.spec.to_dict().items() if k != "provenance"} == {
        k: v for k, v in want.spec.to_dict().items() if k != "provenance"}
    assert got.tensors.keys() == want.tensors.keys()
    assert all(torch.equal(got.tensors[k], want.tensors[k]) for k in want.tensors)


def _refused_or_same(ckpt: Path, original: Path, capsys: pytest.CaptureFixture[str], *, corrupt_weights: bool,
                     same_spec: bool = True) -> bool:
    """Load ``ckpt`` and act once; return True if refused (then also check the CLI's one error line).

    If it loads, its tensors must be the original ones (and, with ``same_spec``, its spec too).
    """
    try:
        policy = load_policy(ckpt)
        policy.reset(2, np.random.default_rng(0))
        actions = policy.act(np.zeros((2, 3, 72, 128), np.uint8), np.ones(2, bool))
    except EvaltkError:
        line = error_line(capsys, ["evaluate", str(ckpt), "--episodes", "1", "--workers", "0",
                                   "--out", str(ckpt.parent / "out")])
        assert str(ckpt) in line or "policy" in line, line
        return True
    assert not corrupt_weights, f"{ckpt}: corrupted weights were accepted"
    assert actions.shape == (2,)
    assert actions.dtype == np.int64
    if same_spec:
        _same_policy(ckpt, original)
    got, want = load(ckpt).tensors, load(original).tensors
    assert got.keys() == want.keys()
    assert all(torch.equal(got[k], want[k]) for k in want)
    return False


def test_sixty_plus_mutants_are_refused_cleanly(original: Path, tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    mutants = _mutants(weights_path(original).stat().st_size)
    assert len(mutants) >= 60
    refused = []
    for name, mutate in mutants:
        ckpt = _copy(original, tmp_path)
        mutate(ckpt)
        if _refused_or_same(ckpt, original, capsys, corrupt_weights="weight" in name or "safetensors" in name):
            refused.append(name)
    accepted = sorted({n for n, _ in mutants} - set(refused))
    assert accepted == [], f"mutants accepted: {accepted}"


@pytest.mark.parametrize(("name", "mutate"), _HARMLESS, ids=[n for n, _ in _HARMLESS])
def test_harmless_edits_load_identical_data(original: Path, tmp_path: Path, name: str, mutate: Mutation) -> None:
    ckpt = _copy(original, tmp_path)
    mutate(ckpt)
    _same_policy(ckpt, original)


def test_flipped_weight_byte_names_the_file(original: Path, tmp_path: Path) -> None:
    ckpt = _copy(original, tmp_path)
    _flip(5000)(ckpt)
    with pytest.raises(CheckpointError, match=r"policy\.safetensors does not match the sha256"):
        load(ckpt)


def test_hidden_size_16_7_is_refused_not_truncated(original: Path, tmp_path: Path) -> None:
    ckpt = _copy(original, tmp_path)
    _edit("model_kwargs.hidden_size", 16.7)(ckpt)
    with pytest.raises(CheckpointError, match=r"model_kwargs\.hidden_size must be an int .* got 16\.7"):
        load(ckpt)


def test_overflowing_logits_name_the_checkpoint(original: Path, tmp_path: Path) -> None:
    ckpt = _copy(original, tmp_path)
    saturated = torch.cat([torch.zeros(8), torch.full((8,), -1e4), torch.full((8,), 1e4)])  # GRU gates r, z, n

    def overflow(t: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:  # h = 1, so every logit is 8 * 3e38 = inf
        return {**t, "core.bias_ih": saturated, "actor.weight": torch.full_like(t["actor.weight"], 3e38)}

    _retensor(overflow)(ckpt)
    policy = load_policy(ckpt)
    policy.reset(1, np.random.default_rng(0))
    with pytest.raises(CheckpointError, match=f"checkpoint {ckpt} failed while choosing actions"):
        policy.act(np.full((1, 3, 72, 128), 255, np.uint8), np.ones(1, bool))


def test_format_1_without_digest_loads_with_a_warning(original: Path, tmp_path: Path) -> None:
    ckpt = _copy(original, tmp_path)
    data = read_doc(ckpt)
    del data["weights"]
    data["format_version"] = 1
    write_doc(ckpt, data)
    tensors = st_load(weights_path(ckpt).read_bytes())
    weights_path(ckpt).write_bytes(st_save(dict(tensors), metadata={"format_version": "1"}))
    with pytest.warns(CheckpointWarning, match="without a weights digest"):
        got = load(ckpt)
    assert got.spec.format_version == 1
    assert all(torch.equal(got.tensors[k], v) for k, v in load(original).tensors.items())
    resaved = save(tmp_path / "resaved", got.spec, got.tensors)  # the fix the warning names
    with warnings.catch_warnings():
        warnings.simplefilter("error", CheckpointWarning)
        again = load(resaved)
    assert again.spec.format_version == 2
    assert read_doc(resaved)["weights"]["bytes"] == weights_path(resaved).stat().st_size


def _json_values() -> st.SearchStrategy[Any]:
    scalars = st.none() | st.booleans() | st.integers(-2**70, 2**70) | st.floats() | st.text(max_size=8)
    return st.recursive(scalars, lambda inner: st.lists(inner, max_size=3)
                        | st.dictionaries(st.text(max_size=5), inner, max_size=3), max_leaves=8)


def _paths(doc: Any, prefix: str = "") -> list[str]:
    found = []
    items = doc.items() if isinstance(doc, dict) else enumerate(doc) if isinstance(doc, list) else []
    for key, value in items:
        path = f"{prefix}{key}"
        found.append(path)
        found.extend(_paths(value, path + "."))
    return found


def _fuzz(original: Path, tmp: Path, capsys: pytest.CaptureFixture[str], data: st.DataObject) -> None:
    ckpt = _copy(original, tmp)
    kind = data.draw(st.sampled_from(["json", "json-delete", "spec-bytes", "weights-bytes"]))
    if kind.startswith("json"):
        path = data.draw(st.sampled_from(_paths(read_doc(ckpt))))
        _edit(path, _DELETE if kind == "json-delete" else data.draw(_json_values()))(ckpt)
    else:
        target = ckpt / SPEC_FILE if kind == "spec-bytes" else weights_path(ckpt)
        raw = bytearray(target.read_bytes())
        for _ in range(data.draw(st.integers(1, 4))):
            raw[data.draw(st.integers(0, len(raw) - 1))] = data.draw(st.integers(0, 255))
        target.write_bytes(bytes(raw))
    changed = weights_path(ckpt).read_bytes() != weights_path(original).read_bytes()
    _refused_or_same(ckpt, original, capsys, corrupt_weights=changed, same_spec=False)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_fresh_mutants(original: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], data: st.DataObject) -> None:
    _fuzz(original, tmp_path, capsys, data)


@pytest.mark.slow
@settings(max_examples=2000, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_fresh_mutants_long(original: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                            data: st.DataObject) -> None:
    _fuzz(original, tmp_path, capsys, data)
