"""The safe pickle reader: real torch files read exactly; code-running pickles are refused and never run.

Fuzzed files raise only ForeignCheckpointError.
"""

from __future__ import annotations

import io
import os
import pickle
import re
import subprocess
import sys
import zipfile
from collections import OrderedDict
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

from evaltk.importers import ForeignCheckpointError, RefusedPickleError, import_checkpoint, read_foreign
from evaltk.importers.safe_pickle import read_pickle, tensor_dict
from evaltk.importers.torch_zip import read_torch


def _saved(obj: Any) -> bytes:
    buf = io.BytesIO()
    torch.save(obj, buf)
    return buf.getvalue()


class _RunsCode:
    """An object whose pickle calls os.system: a loader that unpickles would create ``marker``."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[Any, ...]:
        return (os.system, (f"touch {self.marker}",))


def _net() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(nn.Conv2d(4, 8, 3, stride=2), nn.ReLU(), nn.Flatten(), nn.Linear(8, 3))


def test_state_dict_reads_exactly() -> None:
    ref = _net().state_dict()
    got = read_torch(_saved(ref), name="net.pth")
    assert isinstance(got, OrderedDict)
    assert list(got) == list(ref)
    for key, value in ref.items():
        assert got[key].dtype == value.dtype
        assert torch.equal(got[key], value)


def test_nested_plain_data_numpy_parameters_and_views() -> None:
    base = torch.arange(20, dtype=torch.float64)
    obj = {"model": _net().state_dict(), "env_steps": np.int64(12345), "best": np.float32(2.5),
           "stats": np.arange(6, dtype=np.float32).reshape(2, 3), "param": nn.Parameter(torch.ones(3)),
           "view": base[3:15:4], "t": base.reshape(4, 5).t(), "half": torch.ones(2, dtype=torch.float16),
           "misc": [1, 2.5, "x", None, True, (1, 2), b"raw", {"k": [3]}]}
    got = read_torch(_saved(obj), name="ckpt.pth")
    assert got["env_steps"] == 12345
    assert got["best"] == np.float32(2.5)
    np.testing.assert_array_equal(got["stats"], obj["stats"])
    assert torch.equal(got["param"], torch.ones(3))
    assert torch.equal(got["view"], base[3:15:4])
    assert torch.equal(got["t"], base.reshape(4, 5).t())
    assert got["half"].dtype == torch.float16
    assert got["misc"] == obj["misc"]


@pytest.mark.parametrize("protocol", [0, 2, 4, 5])
def test_plain_pickle_every_protocol(protocol: int) -> None:
    obj = {"a": [1, 2, (3, 4.5)], "b": OrderedDict(x=None), "c": {1, 2}, "d": b"\x00\xff", "e": "héllo"}
    assert read_pickle(pickle.dumps(obj, protocol=protocol), name="p.pkl") == obj


def test_code_running_pickle_is_refused_and_does_not_run(tmp_path: Path) -> None:
    marker = tmp_path / "PWNED_plain"
    with pytest.raises(RefusedPickleError) as info:
        read_torch(_saved({"x": _RunsCode(marker)}), name="evil.pth")
    message = str(info.value)
    assert "\n" not in message
    assert message == "refused: evil.pth pickles 'posix.system' (only tensors and plain data are read)"
    assert not marker.exists()


@pytest.mark.parametrize(("payload", "named"), [
    (b"cbuiltins\neval\n(S'1'\ntR.", "'builtins.eval'"),
    (b"\x80\x02csubprocess\nPopen\nq\x00.", "'subprocess.Popen'"),
    (b"(ios\nsystem\nS'true'\no.", "an instance of 'os.system'"),
    (b"\x80\x02ctorch\nFloatStorage\n)R.", "a call of _StorageType"),
])
def test_refusals_name_the_object(payload: bytes, named: str) -> None:
    with pytest.raises(RefusedPickleError, match=re.escape(f"refused: f.pkl pickles {named}")):
        read_pickle(payload, name="f.pkl")


def test_storage_size_is_checked_against_the_zip_entry() -> None:
    raw = _saved({"w": torch.ones(10)})
    src = zipfile.ZipFile(io.BytesIO(raw))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as dst:
        for info in src.infolist():
            data = src.read(info)
            dst.writestr(info.filename, data[:-4] if info.filename.endswith("/data/0") else data)
    with pytest.raises(ForeignCheckpointError, match=re.escape("storage '0' holds 36 bytes but data.pkl declares 10")):
        read_torch(out.getvalue(), name="short.pth")


def _sb3_zip(path: Path, policy_pth: bytes, data_json: str | None = None) -> Path:
    import gymnasium as gym
    from stable_baselines3 import PPO

    PPO("MlpPolicy", gym.make("CartPole-v1"), n_steps=32, batch_size=32, device="cpu").save(path)
    src = zipfile.ZipFile(path)
    entries = {i.filename: src.read(i) for i in src.infolist()}
    src.close()
    entries["policy.pth"] = policy_pth
    if data_json is not None:
        entries["data"] = data_json.encode()
    with zipfile.ZipFile(path, "w") as dst:
        for name, data in entries.items():
            dst.writestr(name, data)
    return path


def test_crafted_sb3_zip_is_refused_and_code_does_not_run(tmp_path: Path) -> None:
    marker = tmp_path / "PWNED_sb3"
    evil = _saved(OrderedDict([("action_net.weight", torch.ones(2, 64)), ("x", _RunsCode(marker))]))
    path = _sb3_zip(tmp_path / "evil_sb3.zip", evil)
    with pytest.raises(RefusedPickleError) as info:
        import_checkpoint(path, tmp_path / "out", env_id="CartPole-v1")
    assert str(info.value) == (f"refused: {path}:policy.pth pickles 'posix.system' (only tensors and plain data "
                               "are read)")
    assert not marker.exists()
    assert not (tmp_path / "out").exists()


def test_sb3_cloudpickle_fields_are_never_decoded(tmp_path: Path) -> None:
    """A ``:serialized:`` payload that would run code sits in ``data``: the import reads past it and it never runs."""
    import base64
    import json

    import gymnasium as gym
    from stable_baselines3 import PPO

    marker = tmp_path / "PWNED_data"
    clean = tmp_path / "clean.zip"
    PPO("MlpPolicy", gym.make("CartPole-v1"), device="cpu").save(clean)
    with zipfile.ZipFile(clean) as zf:
        doc = json.loads(zf.read("data"))
        policy = zf.read("policy.pth")
    payload = base64.b64encode(pickle.dumps(_RunsCode(marker))).decode()
    for key in ("observation_space", "lr_schedule", "policy_class"):
        doc[key] = {**doc[key], ":serialized:": payload}
    path = _sb3_zip(tmp_path / "data_evil.zip", policy, json.dumps(doc))
    out, _ = import_checkpoint(path, tmp_path / "out", env_id="CartPole-v1")
    assert (out / "policy.json").exists()
    assert not marker.exists()


def test_crafted_sample_factory_pth_is_refused_and_code_does_not_run(tmp_path: Path) -> None:
    marker = tmp_path / "PWNED_sf"
    folder = tmp_path / "train_dir" / "exp" / "checkpoint_p0"
    folder.mkdir(parents=True)
    path = folder / "checkpoint_000000100_409600.pth"
    torch.save({"train_step": 100, "env_steps": 409600, "best_performance": np.float64(-1.0),
                "model": _net().state_dict(), "optimizer": {"state": {}, "param_groups": [{"lr": 1e-4}]},
                "curr_lr": 1e-4, "lr_schedule": _RunsCode(marker)}, path)
    with pytest.raises(RefusedPickleError, match=r"^refused: .*checkpoint_000000100_409600.pth pickles "
                                                 r"'posix.system' \(only tensors and plain data are read\)$"):
        read_foreign(path)
    assert not marker.exists()


def test_cli_refusal_is_one_line_and_exit_2(tmp_path: Path) -> None:
    marker = tmp_path / "PWNED_cli"
    path = tmp_path / "agent.cleanrl_model"
    torch.save(OrderedDict([("network.0.weight", torch.ones(1)), ("evil", _RunsCode(marker))]), path)
    proc = subprocess.run([sys.executable, "-m", "evaltk", "import", str(path), "--out", str(tmp_path / "o")],
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        f"error: refused: {path} pickles 'posix.system' (only tensors and plain data are read)"]
    assert not marker.exists()


# --- fuzzing: random mutations of real checkpoint files raise only ForeignCheckpointError -----------------

_REAL = _saved(OrderedDict(_net().state_dict()))
_REAL_PKL = zipfile.ZipFile(io.BytesIO(_REAL)).read("archive/data.pkl")


def _rezip(pkl: bytes) -> bytes:
    """Return the real file with its data.pkl replaced (CRCs recomputed, so the pickle interpreter sees the bytes)."""
    src = zipfile.ZipFile(io.BytesIO(_REAL))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as dst:
        for info in src.infolist():
            dst.writestr(info.filename, pkl if info.filename == "archive/data.pkl" else src.read(info))
    return out.getvalue()


def _mutate(data: bytes, edits: list[tuple[int, int]], cut: int | None) -> bytes:
    buf = bytearray(data)
    for pos, value in edits:
        buf[pos % len(buf)] = value
    return bytes(buf[:cut] if cut is not None else buf)


_EDITS = st.lists(st.tuples(st.integers(0, 1 << 20), st.integers(0, 255)), min_size=1, max_size=8)


def _reads_or_refuses(data: bytes, reader: Any = read_torch) -> None:
    message = ""
    try:
        reader(data, name="fuzz")
    except ForeignCheckpointError as exc:
        message = str(exc)
    assert "\n" not in message


@given(edits=_EDITS, cut=st.none() | st.integers(0, len(_REAL_PKL)))
def test_fuzzed_pickle_inside_a_valid_zip(edits: list[tuple[int, int]], cut: int | None) -> None:
    _reads_or_refuses(_rezip(_mutate(_REAL_PKL, edits, cut)))


@given(edits=_EDITS, cut=st.none() | st.integers(0, len(_REAL)))
def test_fuzzed_zip_bytes(edits: list[tuple[int, int]], cut: int | None) -> None:
    _reads_or_refuses(_mutate(_REAL, edits, cut))


@given(data=st.binary(max_size=300))
def test_arbitrary_bytes_as_plain_pickle(data: bytes) -> None:
    _reads_or_refuses(b"\x80\x02" + data, read_pickle)


def test_deeply_nested_pickle_is_an_error_not_a_crash() -> None:
    deep = b"\x80\x02" + b"N" + b"\x85" * 200_000 + b"."  # NONE, then TUPLE1 200,000 times
    _reads_or_refuses(deep, read_pickle)
    nested_key = b"\x80\x02}" + b"N" + b"\x85" * 100_000 + b"N" + b"s."  # a 100,000-deep tuple as a dict key
    _reads_or_refuses(nested_key, read_pickle)
    value = read_pickle(b"\x80\x02}X\x01\x00\x00\x00a" + b"N" + b"\x85" * 100_000 + b"s.", name="v")
    with pytest.raises(ForeignCheckpointError, match="entry 'a' of a state dict is a tuple of 1, not a tensor"):
        tensor_dict(value, name="v")


_SB3_ZIP: list[bytes] = []


def _sb3_bytes(tmp: Path) -> bytes:
    if not _SB3_ZIP:
        import gymnasium as gym
        from stable_baselines3 import DQN

        DQN("MlpPolicy", gym.make("CartPole-v1"), device="cpu").save(tmp / "dqn.zip")
        _SB3_ZIP.append((tmp / "dqn.zip").read_bytes())
    return _SB3_ZIP[0]


@settings(max_examples=25)
@given(edits=_EDITS, cut=st.none() | st.integers(0, 1 << 16))
def test_fuzzed_sb3_zip_files(tmp_path_factory: pytest.TempPathFactory, edits: list[tuple[int, int]],
                              cut: int | None) -> None:
    folder = tmp_path_factory.mktemp("fuzz_sb3")
    path = folder / "m.zip"
    path.write_bytes(_mutate(_sb3_bytes(folder), edits, cut))
    message = ""
    try:
        read_foreign(path, fmt="sb3", env_id="CartPole-v1")
    except ForeignCheckpointError as exc:
        message = str(exc)
    assert "\n" not in message


def test_evaluate_refuses_a_crafted_sb3_zip(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    from evaltk.cli.main import main

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    marker = tmp_path / "PWNED_eval"
    path = _sb3_zip(tmp_path / "evil.zip", _saved({"action_net.weight": torch.ones(2, 64), "x": _RunsCode(marker)}))
    argv = ["evaluate", str(path), "--env-id", "CartPole-v1", "--episodes", "1", "--out", str(tmp_path / "e")]
    assert main(argv) == 2
    assert capsys.readouterr().err.strip().splitlines() == [
        f"error: refused: {path}:policy.pth pickles 'posix.system' (only tensors and plain data are read)"]
    assert not marker.exists()
