from pathlib import Path

import numpy as np
import pytest

from conformance.trace import AleBackend, TraceError, load, record_ale, replay


@pytest.fixture(scope="module")
def pong_trace() -> object:
    return record_ale("pong", frames=400, seed=3, repeat_action_probability=0.25)


def test_round_trip_is_exact(tmp_path: Path, pong_trace: object) -> None:
    path = pong_trace.save(tmp_path / "pong.npz")  # type: ignore[attr-defined]
    again = load(path)
    assert again.header == pong_trace.header  # type: ignore[attr-defined]
    for name in ("action", "reward", "game_over", "lives", "reset", "ram", "screen_md5"):
        assert np.array_equal(getattr(again, name), getattr(pong_trace, name)), name
    assert again.frames == 400


def test_replay_on_reference_matches_itself(pong_trace: object) -> None:
    backend = AleBackend("pong", seed=3, repeat_action_probability=0.25)
    assert replay(pong_trace, backend) is None  # type: ignore[arg-type]


def test_replay_reports_first_divergence(pong_trace: object) -> None:
    # A different seed draws different sticky-action repeats: the replay must notice, not pass.
    backend = AleBackend("pong", seed=4, repeat_action_probability=0.25)
    div = replay(pong_trace, backend)  # type: ignore[arg-type]
    assert div is not None
    assert div.frame >= 1
    assert "frame" in div.summary()


def test_tampered_trace_diverges_at_that_frame(pong_trace: object) -> None:
    ram = pong_trace.ram.copy()  # type: ignore[attr-defined]
    ram[99, 5] ^= 0xFF
    tampered = type(pong_trace)(**{**pong_trace.__dict__, "ram": ram})  # type: ignore[attr-defined]
    div = replay(tampered, AleBackend("pong", seed=3, repeat_action_probability=0.25))
    assert div is not None
    assert div.frame == 100
    assert div.fields == ("ram",)
    assert div.ram_bytes == (5,)


def test_bad_files_give_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(TraceError, match="does not exist"):
        load(tmp_path / "missing.npz")
    junk = tmp_path / "junk.npz"
    junk.write_bytes(b"not a zip")
    with pytest.raises(TraceError, match="corrupt"):
        load(junk)
    with pytest.raises(TraceError, match="unknown ROM"):
        record_ale("no_such_game", frames=1, seed=0)
