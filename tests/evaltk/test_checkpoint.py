"""evaltk.checkpoint: round trips, atomic writes, and a clear CheckpointError for every bad input."""

from __future__ import annotations

import dataclasses
import hashlib
import importlib.metadata
import json
import pickle
from pathlib import Path
from typing import Any

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from evaltk.checkpoint import (
    FORMAT_VERSION,
    SPEC_FILE,
    WEIGHTS_FILE,
    CheckpointSpec,
    default_provenance,
    load,
    load_spec,
    save,
)
from evaltk.envs import EnvSpec
from evaltk.errors import CheckpointError


def _spec(**over: Any) -> CheckpointSpec:
    fields: dict[str, Any] = {
        "model_class": "trainers.models:AtariCnn",
        "model_kwargs": {"hidden": 8, "in_channels": 4},
        "obs_spec": {"shape": [4, 84, 84], "dtype": "uint8", "layout": "SHW"},
        "action_spec": {"type": "discrete", "n": 4},
        "env": {"family": "atari", "env_id": "ALE/Breakout-v5", "kwargs": {"frameskip": 1},
                "preprocessing": {"atari_preprocessing": {"noop_max": 30}, "frame_stack": 4}},
        "provenance": {"trainer": "test", "seed": 3},
    }
    fields.update(over)
    return CheckpointSpec(**fields)


def _tensors() -> dict[str, torch.Tensor]:
    g = torch.Generator().manual_seed(0)
    return {"fc.weight": torch.randn(8, 16, generator=g), "fc.bias": torch.zeros(8),
            "steps": torch.arange(5, dtype=torch.float64)}


def test_round_trip(tmp_path: Path) -> None:
    spec, tensors = _spec(), _tensors()
    out = save(tmp_path / "ckpt", spec, tensors)
    assert sorted(p.name for p in out.iterdir()) == [SPEC_FILE, WEIGHTS_FILE]
    ckpt = load(out)
    assert ckpt.spec == spec
    assert ckpt.path == out
    assert set(ckpt.tensors) == set(tensors)
    for name, t in tensors.items():
        assert torch.equal(ckpt.tensors[name], t)
        assert ckpt.tensors[name].dtype == t.dtype
    data = json.loads((out / SPEC_FILE).read_text())
    assert data["format_version"] == FORMAT_VERSION
    assert next(iter(data)) == "format_version"


@given(shapes=st.lists(st.lists(st.integers(1, 4), min_size=0, max_size=3), min_size=0, max_size=4),
       dtype=st.sampled_from([torch.float32, torch.float16, torch.bfloat16, torch.float64]))
def test_round_trip_any_tensors(tmp_path_factory: pytest.TempPathFactory, shapes: list[list[int]],
                                dtype: torch.dtype) -> None:
    tensors = {f"t{i}": torch.ones(s, dtype=dtype) for i, s in enumerate(shapes)}
    out = save(tmp_path_factory.mktemp("h") / "c", _spec(), tensors)
    back = load(out).tensors
    assert {k: (tuple(v.shape), v.dtype) for k, v in back.items()} == {
        k: (tuple(v.shape), v.dtype) for k, v in tensors.items()}


def test_save_leaves_no_temp_dirs_and_replaces_atomically(tmp_path: Path) -> None:
    save(tmp_path / "c", _spec(provenance={"v": 1}), _tensors())
    save(tmp_path / "c", _spec(provenance={"v": 2}), {"w": torch.ones(2)})
    assert [p.name for p in tmp_path.iterdir()] == ["c"]
    ckpt = load(tmp_path / "c")
    assert ckpt.spec.provenance == {"v": 2}
    assert list(ckpt.tensors) == ["w"]


def test_save_refuses_to_clobber_other_directories(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "notes.txt").write_text("keep me")
    with pytest.raises(CheckpointError, match="not a checkpoint directory"):
        save(tmp_path / "data", _spec(), {})
    assert (tmp_path / "data" / "notes.txt").read_text() == "keep me"


def test_missing_directory_and_files(tmp_path: Path) -> None:
    with pytest.raises(CheckpointError, match="does not exist"):
        load(tmp_path / "nope")
    out = save(tmp_path / "c", _spec(), _tensors())
    (out / WEIGHTS_FILE).unlink()
    with pytest.raises(CheckpointError, match=r"policy\.safetensors is missing"):
        load(out)
    (out / SPEC_FILE).unlink()
    with pytest.raises(CheckpointError, match=r"policy\.json is missing"):
        load(out)
    (tmp_path / "file").write_text("x")
    with pytest.raises(CheckpointError, match="is a file"):
        load(tmp_path / "file")


def test_corrupt_json_and_weights(tmp_path: Path) -> None:
    out = save(tmp_path / "c", _spec(), _tensors())
    good = (out / SPEC_FILE).read_text()
    (out / SPEC_FILE).write_text(good[: len(good) // 2])
    with pytest.raises(CheckpointError, match="not valid JSON"):
        load(out)
    (out / SPEC_FILE).write_text(good)
    (out / WEIGHTS_FILE).write_bytes((out / WEIGHTS_FILE).read_bytes()[:40])
    with pytest.raises(CheckpointError, match=r"not a valid safetensors file .* \(truncated or replaced\)"):
        load(out)


def _redigest(out: Path) -> None:
    """Record the current weights file's digest in policy.json (a corruption the digest cannot see)."""
    payload = (out / WEIGHTS_FILE).read_bytes()
    data = json.loads((out / SPEC_FILE).read_text())
    data["weights"] = {"sha256": hashlib.sha256(payload).hexdigest(), "bytes": len(payload)}
    (out / SPEC_FILE).write_text(json.dumps(data))


class _Boom:
    def __reduce__(self) -> tuple[Any, ...]:
        return (Path.touch, (Path("/tmp/evaltk_unpickled_marker"),))


def test_never_unpickles(tmp_path: Path) -> None:
    marker = Path("/tmp/evaltk_unpickled_marker")
    marker.unlink(missing_ok=True)
    out = save(tmp_path / "c", _spec(), {})
    (out / WEIGHTS_FILE).write_bytes(pickle.dumps({"w": _Boom()}))
    with pytest.raises(CheckpointError, match=r"truncated or replaced|does not match the sha256"):
        load(out)
    _redigest(out)
    with pytest.raises(CheckpointError, match="not a valid safetensors"):
        load(out)
    assert not marker.exists()


@pytest.mark.parametrize(("edit", "message"), [
    ({"format_version": 99}, "format_version 99"),
    ({"format_version": 2.0}, "format_version 2.0"),
    ({"format_version": "2"}, "format_version '2'"),
    ({"format_version": None}, "format_version None"),
    ({"extra": 1}, "unknown field"),
    ({"weights": {"sha256": "zz", "bytes": 1}}, r"weights\.sha256"),
    ({"model_class": "noclass"}, "model_class"),
    ({"obs_spec": {"shape": [0, 84], "dtype": "uint8"}}, r"obs_spec\.shape"),
    ({"obs_spec": {"shape": [84], "dtype": 3}}, r"obs_spec\.dtype"),
    ({"action_spec": {"type": "box"}}, "action_spec"),
    ({"action_spec": {"type": "discrete", "n": 0}}, r"action_spec\.n"),
    ({"action_spec": {"type": "multi_discrete", "nvec": []}}, r"action_spec\.nvec"),
    ({"env": {"family": "atari"}}, r"env\.env_id"),
    ({"env": {"family": "atari", "env_id": "x", "kwargs": []}}, r"env\.kwargs"),
])
def test_malformed_spec_fields(tmp_path: Path, edit: dict[str, Any], message: str) -> None:
    out = save(tmp_path / "c", _spec(), {})
    data = json.loads((out / SPEC_FILE).read_text())
    data.update(edit)
    (out / SPEC_FILE).write_text(json.dumps(data))
    with pytest.raises(CheckpointError, match=message):
        load_spec(out)


def test_missing_field(tmp_path: Path) -> None:
    out = save(tmp_path / "c", _spec(), {})
    data = json.loads((out / SPEC_FILE).read_text())
    del data["action_spec"]
    (out / SPEC_FILE).write_text(json.dumps(data))
    with pytest.raises(CheckpointError, match="lacks the field"):
        load(out)



def test_the_public_constructor_always_checks_the_schema() -> None:
    with pytest.raises(CheckpointError, match=r"action_spec\.n"):
        _spec(action_spec={"type": "discrete", "n": 0})
    with pytest.raises(TypeError, match="schema_checked"):  # no keyword skips the check
        _spec(schema_checked=True)
    spec = _spec()
    with pytest.raises(CheckpointError, match="model_class"):
        dataclasses.replace(spec, model_class="noclass")


def test_the_env_is_its_json_and_reads_as_an_env_spec() -> None:
    """``env`` holds the JSON object (an EnvSpec is refused in one line); ``env_spec`` is it as an EnvSpec."""
    spec = _spec()
    assert spec.env_spec == EnvSpec.from_json(spec.env)
    assert spec.env_spec.to_json() == spec.env
    assert "env_spec" not in spec.to_dict()
    with pytest.raises(CheckpointError, match=r"^CheckpointSpec env is of type EnvSpec, not the env JSON object: pass "
                                              r"env=ENV\.to_json\(\)") as caught:
        _spec(env=spec.env_spec)
    assert "\n" not in str(caught.value)


def test_from_dict_checks_the_schema_once(monkeypatch: pytest.MonkeyPatch) -> None:
    from evaltk import checkpoint_schema

    fields = _spec().to_dict()
    data = {**fields, "weights": {"sha256": "0" * 64, "bytes": 0}}  # as policy.json holds it
    calls: list[bool] = []

    def counted(document: Any, **kwargs: Any) -> None:  # the real check, counted
        calls.append(True)
        checkpoint_schema.check_spec(document, **kwargs)

    monkeypatch.setattr("evaltk.checkpoint.check_spec", counted)
    spec = CheckpointSpec.from_dict(data)
    assert len(calls) == 1
    assert spec.to_dict() == fields
    assert spec == CheckpointSpec(**fields)  # what the constructor builds
    with pytest.raises(CheckpointError, match=r"action_spec\.n"):
        CheckpointSpec.from_dict({**data, "action_spec": {"type": "discrete", "n": 0}})

def test_default_provenance_has_versions() -> None:
    prov = default_provenance(seed=5)
    assert prov["seed"] == 5
    assert prov["versions"]["torch"] == importlib.metadata.version("torch")
    assert "created" in prov
