"""CleanRL's JAX checkpoints (flax msgpack) load in evaltk with flax's own logits, values, Q-values and greedy actions.

The fixtures in ``tests/data/cleanrl_jax/`` were written by flax itself (``make_fixture.py`` there:
CleanRL's ``ppo_atari_envpool_xla_jax_scan`` and ``dqn_atari_jax`` networks, saved with
``flax.serialization.to_bytes`` in the scripts' layout) together with flax's outputs; flax is not
needed here. Hostile files are built with ``msgpack`` from the real fixture.
"""

from __future__ import annotations

import csv
import hashlib
import json
import lzma
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgpack
import numpy as np
import pytest
import torch

from evaltk.cli.main import main
from evaltk.envs.atari import make_env
from evaltk.importers import ForeignCheckpointError, detect_format, import_checkpoint
from evaltk.importers.cleanrl_jax import DQN_SCRIPT, MAX_BYTES, PPO_SCRIPT
from evaltk.importers.nets import ImportedPolicy
from evaltk.policies import load_policy
from tests.data_paths import data_path

TOL = 1e-5
EPISODE_STEPS = 64
"""Steps of the recorded episode replayed (the fixture holds up to 128; the default test run keeps to 64)."""
PREFIX = {PPO_SCRIPT: "ppo", DQN_SCRIPT: "dqn"}


@pytest.fixture(scope="module")
def reference() -> dict[str, np.ndarray]:
    """Return flax's outputs and the recorded observations (``tests/data/cleanrl_jax/reference.npz``)."""
    with np.load(data_path("cleanrl_jax/reference.npz")) as data:
        return {key: data[key] for key in data.files}


def _checkpoint(script: str, folder: Path) -> Path:
    """Decompress the fixture ``<script>.cleanrl_model.xz`` into ``folder`` and return the file flax wrote."""
    path = folder / f"{script}.cleanrl_model"
    if not path.exists():
        path.write_bytes(lzma.decompress(data_path(f"cleanrl_jax/{script}.cleanrl_model.xz").read_bytes()))
    return path


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("cleanrl_jax")
    return {script: _checkpoint(script, folder) for script in PREFIX}


@pytest.fixture(scope="module")
def imported(files: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Return the evaltk checkpoints ``evaltk.importers.import_checkpoint`` writes for the two fixtures."""
    return {script: import_checkpoint(path, tmp_path_factory.mktemp(PREFIX[script]) / "ckpt")[0]
            for script, path in files.items()}


def _outputs(policy: ImportedPolicy, obs: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
    with torch.no_grad():
        out, value = policy.model(torch.from_numpy(obs))
    return out.numpy(), None if value is None else value.numpy()


@pytest.mark.parametrize("script", [PPO_SCRIPT, DQN_SCRIPT])
def test_outputs_equal_flax_on_256_observations(script: str, files: dict[str, Path], imported: dict[str, Path],
                                                reference: dict[str, np.ndarray]) -> None:
    prefix = PREFIX[script]
    assert detect_format(files[script]) == "cleanrl"
    policy = load_policy(str(imported[script]))
    assert isinstance(policy, ImportedPolicy)
    source = policy.spec.provenance["import"]
    assert (source["script"], source["serialization"]) == (script, "flax msgpack")
    head = "logits" if prefix == "ppo" else "q_values"
    frames = reference[f"{prefix}_frames"]
    assert frames.shape == (256, 4, 84, 84)
    out, value = _outputs(policy, frames)
    np.testing.assert_allclose(out, reference[f"{prefix}_frames_{head}"], atol=TOL, rtol=0)
    assert len(set(out.argmax(-1).tolist())) == 4  # every action is greedy somewhere: a real comparison
    if prefix == "ppo":
        assert value is not None
        np.testing.assert_allclose(value, reference["ppo_frames_values"], atol=TOL, rtol=0)
    else:
        assert value is None
    noise = np.random.default_rng(int(reference["obs_seed"])).integers(0, 256, size=(256, 4, 84, 84), dtype=np.uint8)
    assert hashlib.md5(noise.tobytes()).hexdigest() == str(reference["obs_md5"])
    out, value = _outputs(policy, noise)
    want = reference[f"{prefix}_{head}"]  # uniform noise drives outputs to ~200: 1e-5 relative to their scale
    np.testing.assert_allclose(out, want, atol=TOL * max(1.0, float(np.abs(want).max())), rtol=0)
    if value is not None:
        np.testing.assert_allclose(value, reference["ppo_values"], atol=TOL, rtol=0)


@pytest.mark.parametrize("script", [PPO_SCRIPT, DQN_SCRIPT])
def test_greedy_actions_equal_flax_on_a_played_episode(script: str, imported: dict[str, Path],
                                                       reference: dict[str, np.ndarray]) -> None:
    prefix = f"{PREFIX[script]}_episode"
    policy = load_policy(str(imported[script]))
    assert isinstance(policy, ImportedPolicy)
    recorded = json.loads(str(reference[f"{prefix}_env"]))
    spec = policy.spec.env_spec
    assert (spec.env_id, spec.kwargs) == (recorded["env_id"], recorded["kwargs"])
    assert spec.preprocessing == {"atari_preprocessing": recorded["preprocessing"], "frame_stack": 4}
    frames, actions = reference[f"{prefix}_frames"], reference[f"{prefix}_actions"][:EPISODE_STEPS]
    env = make_env(spec)
    obs, _ = env.reset(seed=int(reference[f"{prefix}_seed"]))
    played = []
    for t, action in enumerate(actions.tolist()):
        np.testing.assert_array_equal(np.asarray(obs), frames[t:t + 4])  # the same episode as flax played
        played.append(np.asarray(obs))
        assert int(policy.act(played[-1][None], np.array([t == 0]))[0]) == action
        obs, _, terminated, truncated, _ = env.step(action)
        assert not (terminated or truncated) or t == len(reference[f"{prefix}_actions"]) - 1
    env.close()
    out, _ = _outputs(policy, np.stack(played))
    np.testing.assert_allclose(out, reference[f"{prefix}_outputs"][:len(played)], atol=TOL, rtol=0)
    assert len(set(actions.tolist())) > 1 or PREFIX[script] == "ppo"  # the PPO fixture serves (FIRE) throughout


def test_cli_imports_and_evaluates_the_jax_file(files: dict[str, Path], tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "ckpt"
    path = files[DQN_SCRIPT]
    assert main(["import", str(path), "--format", "cleanrl", "--out", str(out), "--json"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[0] == f"imported {path} (cleanrl) -> {out}"
    summary = json.loads(lines[-1])
    assert summary["source"]["script"] == DQN_SCRIPT
    assert summary["env"]["env_id"] == "BreakoutNoFrameskip-v4"
    assert summary["tensors"]["policy.7.weight"] == [512, 3136]
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    argv = ["evaluate", str(files[PPO_SCRIPT]), "--episodes", "1", "--num-envs", "1", "--workers", "0",
            "--out", str(tmp_path / "eval")]
    assert main(argv) == 0
    with open(tmp_path / "eval" / "episodes.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert [row["env_id"] for row in rows] == ["ALE/Breakout-v5"]
    assert int(rows[0]["frames"]) > 0


# --- hostile input ----------------------------------------------------------------------------------------------

def _unpack(path: Path) -> Any:
    return msgpack.unpackb(path.read_bytes(), ext_hook=msgpack.ExtType, raw=False, strict_map_key=False)


def _array(a: np.ndarray) -> msgpack.ExtType:
    """Encode ``a`` as flax does (extension type 1: ``[shape, dtype name, bytes]``)."""
    return msgpack.ExtType(1, msgpack.packb((list(a.shape), a.dtype.name, a.tobytes()), use_bin_type=True))


def _with(path: Path, change: Callable[[Any], None]) -> bytes:
    tree = _unpack(path)
    change(tree)
    return bytes(msgpack.packb(tree, use_bin_type=True))


def _set_conv0_kernel(tree: Any) -> None:
    tree["params"]["Conv_0"]["kernel"] = _array(np.zeros((4, 8, 8, 32), np.float32))  # OIHW-like, not HWIO


def _set_dense0_kernel(tree: Any) -> None:
    tree["params"]["Dense_0"]["kernel"] = _array(np.zeros((3000, 512), np.float32))


def _set_bias_2d(tree: Any) -> None:
    tree["params"]["Dense_1"]["bias"] = _array(np.zeros((1, 4), np.float32))


def _set_int_kernel(tree: Any) -> None:
    tree["params"]["Dense_1"]["kernel"] = _array(np.zeros((512, 4), np.int32))


def _drop_layer(tree: Any) -> None:
    del tree["params"]["Dense_1"]


HOSTILE: dict[str, tuple[Callable[[bytes], bytes], str]] = {
    "unknown extension type": (lambda d: msgpack.packb({"params": msgpack.ExtType(42, b"x")}),
                               "msgpack extension type 42 (flax's arrays are types 1 and 3) at /params"),
    "timestamp extension": (lambda d: msgpack.packb({"params": msgpack.Timestamp(1, 0)}),
                            "a msgpack Timestamp value at /params"),
    "raw bytes": (lambda d: msgpack.packb({"params": b"\x80\x04cos\nsystem\n"}, use_bin_type=True),
                  "a msgpack bytes value at /params"),
    "object dtype": (lambda d: msgpack.packb({"params": msgpack.ExtType(1, msgpack.packb(
        ([1], "object", b"\0" * 8), use_bin_type=True))}), "an array of dtype b'object' (numeric dtypes only)"),
    "array larger than its data": (lambda d: msgpack.packb({"params": msgpack.ExtType(1, msgpack.packb(
        ([1 << 40, 1 << 40], "float32", b""), use_bin_type=True))}), "with 0 bytes of data at /params"),
    "corrupt array payload": (lambda d: msgpack.packb({"params": msgpack.ExtType(1, b"\xc1")}),
                              "an array payload that is not [shape, dtype, bytes] at /params"),
    "non-string key": (lambda d: msgpack.packb({1: 2}, strict_types=False), "a map key 1 that is not a string"),
    "repeated key": (lambda d: b"\x82\xa6params\x01\xa6params\x02", "the map key 'params' twice"),
    "chunked array": (lambda d: msgpack.packb({"params": {"__msgpack_chunked_array__": True}}),
                      "an array over 1 GiB split into chunks"),
    "deeply nested maps": (lambda d: b"\x81\xa1a" * 40 + b"\x00", "nesting deeper than 32 levels"),
    "nested past the unpacker's stack": (lambda d: b"\x81\xa1a" + b"\x91" * 100_000 + b"\x00",
                                         "nests its msgpack deeper than the unpacker's stack"),
    "truncated": (lambda d: d[: len(d) // 2], "is truncated or not msgpack"),
    "trailing bytes": (lambda d: d + b"\x00\x00", "has 2 bytes after its msgpack object"),
    "not a CleanRL tree": (lambda d: msgpack.packb({"weights": [1, 2]}),
                           "is msgpack but not a CleanRL JAX checkpoint (top level ['weights'])"),
}


@pytest.mark.parametrize("name", list(HOSTILE))
def test_hostile_msgpack_is_refused_in_one_line(name: str, files: dict[str, Path], tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    make, expected = HOSTILE[name]
    path = tmp_path / "bad.cleanrl_model"
    path.write_bytes(make(files[DQN_SCRIPT].read_bytes()))
    assert main(["import", str(path), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert err[0].startswith("error: ")
    assert expected in err[0]
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(("change", "expected"), [
    (_set_conv0_kernel, "params.Conv_0 has a 4x8 kernel; the CleanRL network's is 8x8"),
    (_set_dense0_kernel, "params.Dense_0 takes 3000 inputs, but the convs give 7x7x64"),
    (_set_bias_2d, "params.Dense_1 has a kernel of shape [512, 4] and a bias of shape [1, 4]"),
    (_set_int_kernel, "tensor 'params.Dense_1.weight' has dtype torch.int32, not floating"),
    (_drop_layer, ": /params holds ['Conv_0', 'Conv_1', 'Conv_2', 'Dense_0']"),
])
def test_wrong_shapes_are_refused(change: Callable[[Any], None], expected: str, files: dict[str, Path],
                                  tmp_path: Path) -> None:
    path = tmp_path / "bad.cleanrl_model"
    path.write_bytes(_with(files[DQN_SCRIPT], change))
    with pytest.raises(ForeignCheckpointError, match=None) as info:
        import_checkpoint(path, tmp_path / "out")
    assert expected in str(info.value)
    assert "\n" not in str(info.value)


def test_oversize_file_and_wrong_script_are_refused(files: dict[str, Path], tmp_path: Path) -> None:
    big = tmp_path / "big.cleanrl_model"
    with open(big, "wb") as fh:  # sparse: takes no disk space
        fh.write(b"\x81")
        fh.truncate(MAX_BYTES + 1)
    with pytest.raises(ForeignCheckpointError, match=r"is 1073741825 bytes, over the 1024 MiB read"):
        import_checkpoint(big, tmp_path / "a")
    with pytest.raises(ForeignCheckpointError, match=f"holds {DQN_SCRIPT}'s network, not a ppo_atari one"):
        import_checkpoint(files[DQN_SCRIPT], tmp_path / "b", script="ppo_atari")
    _, result = import_checkpoint(files[PPO_SCRIPT], tmp_path / "c", script="ppo_atari_envpool")
    assert result.source["args.env_id"] == "Breakout-v5"
    assert result.caveats[0].startswith("trained by CleanRL's ppo_atari_envpool_xla_jax_scan on EnvPool's Atari")
