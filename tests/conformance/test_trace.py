"""Trace files: exact round trip, replay through the lockstep engine, and every kind of bad file named."""

from __future__ import annotations

import dataclasses
import io
import json
import zipfile
from pathlib import Path

import numpy as np
import pytest

from conformance.trace import Trace, TraceError, batch_for, load, record_ale, replay
from gpu_env import AtariBatch


@pytest.fixture(scope="module")
def pong_trace() -> Trace:
    return record_ale("pong", frames=400, seed=3, repeat_action_probability=0.25)


def test_round_trip_is_exact(tmp_path: Path, pong_trace: Trace) -> None:
    path = pong_trace.save(tmp_path / "pong.npz")
    again = load(path)
    assert again.header == pong_trace.header
    assert again.header["frames"] == 400
    for name in ("action", "reward", "game_over", "lives", "reset", "ram", "screen_md5"):
        assert np.array_equal(getattr(again, name), getattr(pong_trace, name)), name
    assert again.frames == 400


def test_replay_on_reference_and_gpu_env_matches(pong_trace: Trace) -> None:
    assert replay(pong_trace, batch_for(pong_trace, "ale_py")) is None
    assert replay(pong_trace, batch_for(pong_trace, "cpu")) is None
    assert replay(pong_trace, batch_for(pong_trace, "cpu"), frames=50) is None
    with pytest.raises(TraceError, match="holds 400"):
        replay(pong_trace, batch_for(pong_trace, "cpu"), frames=401)


def test_replay_reports_first_divergence(pong_trace: Trace) -> None:
    # A different seed draws different sticky-action repeats: the replay must notice, not pass.
    div = replay(pong_trace, AtariBatch("pong", 1, backend="ale_py", seeds=[4], repeat_action_probability=0.25))
    assert div is not None
    assert div.frame >= 1
    assert "frame" in div.summary()


def test_tampered_trace_diverges_at_that_frame(pong_trace: Trace) -> None:
    ram = pong_trace.ram.copy()
    ram[99, 5] ^= 0xFF
    tampered = dataclasses.replace(pong_trace, ram=ram)
    div = replay(tampered, batch_for(pong_trace, "ale_py"))
    assert div is not None
    assert div.frame == 100
    assert div.fields == ("ram",)
    assert [d[0] for d in div.ram_diffs] == [5]


def _rewrite_header(path: Path, out: Path, **changes: object) -> Path:
    """Copy a trace file, changing header keys without recomputing the digest."""
    with np.load(path, allow_pickle=False) as data:
        members = {k: np.asarray(data[k]) for k in data.files}
    header = {**json.loads(members["header"].tobytes().decode()), **changes}
    members["header"] = np.frombuffer(json.dumps(header).encode(), dtype=np.uint8)
    buffer = io.BytesIO()
    np.savez(buffer, **members)  # type: ignore[arg-type]
    out.write_bytes(buffer.getvalue())
    return out


def test_header_frame_count_and_digest_are_checked(tmp_path: Path, pong_trace: Trace) -> None:
    path = pong_trace.save(tmp_path / "pong.npz")
    with pytest.raises(TraceError, match=r"declares frames=2000 but the arrays hold 400"):
        load(_rewrite_header(path, tmp_path / "count.npz", frames=2000))
    with pytest.raises(TraceError, match="content digest"):
        load(_rewrite_header(path, tmp_path / "md5.npz", rom_md5="0" * 32))
    with pytest.raises(TraceError, match="version 1"):
        load(_rewrite_header(path, tmp_path / "v1.npz", version=1))
    with np.load(path, allow_pickle=False) as data:
        members = {k: np.asarray(data[k]) for k in data.files}
    members["ram"] = members["ram"][:, :64]
    buffer = io.BytesIO()
    np.savez(buffer, **members)  # type: ignore[arg-type]
    (tmp_path / "shape.npz").write_bytes(buffer.getvalue())
    with pytest.raises(TraceError, match=r"array 'ram' is uint8\[400, 64\], expected uint8\[T, 128\]"):
        load(tmp_path / "shape.npz")


def test_bad_files_give_clear_errors_naming_the_file(tmp_path: Path, pong_trace: Trace) -> None:
    with pytest.raises(TraceError, match="does not exist"):
        load(tmp_path / "missing.npz")
    with pytest.raises(TraceError, match="is a directory"):
        load(tmp_path)
    empty = tmp_path / "empty.npz"
    empty.write_bytes(b"")
    with pytest.raises(TraceError, match=r"empty\.npz is empty"):
        load(empty)
    junk = tmp_path / "junk.npz"
    junk.write_bytes(np.random.default_rng(0).bytes(4096))
    with pytest.raises(TraceError, match=r"junk\.npz is not an evaltk trace") as err:
        load(junk)
    assert "pickle" not in str(err.value)
    good = pong_trace.save(tmp_path / "good.npz").read_bytes()
    for cut in (10, len(good) // 2, len(good) - 30):
        truncated = tmp_path / f"cut{cut}.npz"
        truncated.write_bytes(good[:cut])
        with pytest.raises(TraceError, match=rf"cut{cut}\.npz is truncated or corrupt"):
            load(truncated)
    partial = tmp_path / "partial.npz"
    with zipfile.ZipFile(partial, "w") as z:
        z.writestr("header.npy", b"")
    with pytest.raises(TraceError, match=r"partial\.npz lacks the arrays"):
        load(partial)
    with pytest.raises(TraceError, match="unknown ROM id"):
        record_ale("no_such_game", frames=1, seed=0)
    with pytest.raises(TraceError, match="frames=0"):
        record_ale("pong", frames=0, seed=0)


def test_random_and_policy_traces_share_one_header_layout() -> None:
    """Both recorders build their header with conformance.trace.trace_header: the same fields, in the same order."""
    from conformance.policy_trace import record_policy
    from conformance.trace import record_ale, trace_header

    checkpoint = Path(__file__).resolve().parents[2] / "suites" / "checkpoints" / "a2c_breakout"
    random_play = record_ale("breakout", frames=5, seed=0).header
    policy_play = record_policy(checkpoint, frames=5, seed=0).header
    layout = list(trace_header("breakout", seed=0, frames=5, settings={}, actions={}, reset_rule=""))
    assert [k for k in random_play if k != "digest"] == layout
    assert [k for k in policy_play if k not in ("digest", "initial_reset")] == layout
    assert {k: random_play[k] for k in ("format", "version", "ale_py_version", "rom", "rom_md5")} == {
        k: policy_play[k] for k in ("format", "version", "ale_py_version", "rom", "rom_md5")}
    assert policy_play["actions"]["checkpoint"] == str(checkpoint)
