"""Doom traces: recorded on the installed ViZDoom, replayed tic for tic; each gate fails at the first diverging tic."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from conformance.doom_agents import decider
from conformance.doom_trace import DoomTrace, installed_version, load_doom, record_doom, replay_doom
from conformance.suite import Case, Outcome, run_case
from conformance.trace import load as load_atari
from conformance.trace_file import TraceError

pytestmark = pytest.mark.vizdoom
TICS = 200
SHIPPED_ATARI = Path(__file__).resolve().parents[2] / "suites" / "traces" / "pong_seed0_2000.npz"


@pytest.fixture(scope="module")
def basic() -> DoomTrace:
    return record_doom("basic", seed=3, tics=TICS, decide=decider("builtin:random", "basic", seed=3),
                       agent="builtin:random")


def _case(path: Path, **params: object) -> Case:
    return Case("doom_trace", "t", {"trace_file": str(path), "scenario": "basic", "seed": 3, "tics": TICS, **params})


def _with(trace: DoomTrace, **header: object) -> DoomTrace:
    return DoomTrace({**trace.header, **header}, {k: v.copy() for k, v in trace.arrays.items()})


def test_record_then_replay_is_identical_and_the_file_round_trips(tmp_path: Path, basic: DoomTrace) -> None:
    path = basic.save(tmp_path / "basic.npz")
    loaded = load_doom(path)
    assert loaded.tics == TICS
    assert loaded.header["vizdoom_version"] == installed_version()
    assert all(np.array_equal(loaded.arrays[k], basic.arrays[k]) for k in basic.arrays)
    assert replay_doom(loaded) is None
    result = run_case(_case(path), tmp_path)
    assert result.outcome is Outcome.PASSED, result.message
    assert path.stat().st_size < 20_000  # hashes, not screens


@pytest.mark.parametrize("change", [{"seed": 4}, {"frameskip": 3}])
def test_other_seed_or_frameskip_fails_at_the_first_diverging_tic(tmp_path: Path, basic: DoomTrace,
                                                                  change: dict[str, int]) -> None:
    divergence = replay_doom(basic, **change)  # type: ignore[arg-type]
    assert divergence is not None
    assert replay_doom(basic, tics=divergence.tic - 1, **change) is None  # type: ignore[arg-type]
    result = run_case(_case(basic.save(tmp_path / "b.npz"), **change), tmp_path)
    assert result.outcome is Outcome.FAILED
    assert f"first divergence at tic {divergence.tic}:" in result.message
    key, value = next(iter(change.items()))
    assert f"{key} = {value} (recorded with {basic.header[key]})" in result.message
    png = result.message.split("image (recorded | replayed | difference): ")[1].split(";")[0]
    assert Path(png).is_file()
    assert png.endswith(f"_tic{divergence.tic}.png")


@pytest.mark.parametrize("k", [5, 33])
def test_one_flipped_action_fails_at_its_tic(tmp_path: Path, basic: DoomTrace, k: int) -> None:
    arrays = {n: v.copy() for n, v in basic.arrays.items()}
    starts = np.flatnonzero(arrays["decision"])
    t0, end = int(starts[k]), int(starts[k + 1])
    old = arrays["buttons"][t0].copy()
    arrays["buttons"][t0:end] = np.roll(old, 1) if old.any() else np.eye(old.size)[0]
    path = DoomTrace(basic.header, arrays).save(tmp_path / "flipped.npz")
    result = run_case(_case(path), tmp_path)
    assert result.outcome is Outcome.FAILED
    assert f"first divergence at tic {t0 + 1}:" in result.message
    assert "variables recorded -> replayed" in result.message
    assert "image" in result.message
    assert result.details["first_divergence"] == t0 + 1


def test_version_drift_is_named_when_passing_and_when_failing(tmp_path: Path, basic: DoomTrace) -> None:
    path = _with(basic, vizdoom_version="1.2.4").save(tmp_path / "old.npz")
    here = installed_version()
    passed = run_case(_case(path), tmp_path)
    assert passed.outcome is Outcome.PASSED
    assert f"recorded with ViZDoom 1.2.4, installed ViZDoom {here}" in passed.message
    failed = run_case(_case(path, seed=9), tmp_path)
    assert failed.outcome is Outcome.FAILED
    assert f"recorded with ViZDoom 1.2.4, installed ViZDoom {here}" in failed.message


def test_a_shorter_trace_or_another_scenario_fails_the_case(tmp_path: Path, basic: DoomTrace) -> None:
    short = run_case(_case(basic.save(tmp_path / "b.npz"), tics=TICS + 1), tmp_path)
    assert short.outcome is Outcome.FAILED
    assert f"holds {TICS} tics" in short.message
    other = run_case(_case(tmp_path / "b.npz", scenario="defend_the_center"), tmp_path)
    assert other.outcome is Outcome.FAILED
    assert "recorded on 'basic'" in other.message


def test_the_file_discipline_of_atari_traces_holds(tmp_path: Path, basic: DoomTrace) -> None:
    path = basic.save(tmp_path / "b.npz")
    good = path.read_bytes()
    (tmp_path / "cut.npz").write_bytes(good[: len(good) // 2])
    with pytest.raises(TraceError, match=r"cut\.npz is truncated or corrupt"):
        load_doom(tmp_path / "cut.npz")
    with pytest.raises(TraceError, match="does not exist"):
        load_doom(tmp_path / "missing.npz")
    with np.load(path, allow_pickle=False) as data:
        members = {k: np.asarray(data[k]) for k in data.files}
    header = json.loads(members["header"].tobytes().decode())
    members["header"] = np.frombuffer(json.dumps({**header, "seed": 4}).encode(), dtype=np.uint8)
    np.savez(tmp_path / "edited.npz", **members)  # type: ignore[arg-type]
    with pytest.raises(TraceError, match="content digest"):
        load_doom(tmp_path / "edited.npz")
    with pytest.raises(TraceError, match=r"is an Atari trace of ale-py \(suite kind \"trace\"\), not a ViZDoom trace"):
        load_doom(SHIPPED_ATARI)
    with pytest.raises(TraceError, match=r"is a ViZDoom trace \(suite kind \"doom_trace\"\), not an Atari trace"):
        load_atari(path)


def test_scripted_agent_records_depth_and_labels_hashes() -> None:
    trace = record_doom("deathmatch_bots_map01", seed=1, tics=40, agent="builtin:scripted",
                        decide=decider("builtin:scripted", "deathmatch_bots_map01", seed=1),
                        buffers=("depth", "labels"))
    assert trace.arrays["depth_md5"].any(axis=1).all()
    assert trace.arrays["labels_md5"].any(axis=1).all()
    assert replay_doom(trace) is None
    with pytest.raises(TraceError, match="unknown built-in agent"):
        decider("builtin:nope", "basic", seed=0)


def test_a_doom_checkpoint_records_its_own_play(tmp_path: Path) -> None:
    from evaltk.checkpoint import save
    from evaltk.envs.doom import get_scenario
    from trainers.appo.checkpointing import policy_spec
    from trainers.appo.config import AppoConfig
    from trainers.appo.runner import build_model

    cfg = AppoConfig(scenario="basic", out=str(tmp_path), obs_height=36, obs_width=64, hidden_size=32, rnn_size=32,
                     seed=7)
    scenario = get_scenario("basic").replace(obs_size=(36, 64))
    model = build_model(cfg, scenario)
    ckpt = save(tmp_path / "ckpt", policy_spec(cfg, scenario, model, 0, 0), model.state_dict())
    trace = record_doom("basic", seed=2, tics=60, decide=decider(str(ckpt), "basic", seed=2), agent=str(ckpt))
    assert trace.header["agent"] == str(ckpt)
    assert replay_doom(trace) is None
    with pytest.raises(TraceError, match="record it with --scenario basic"):
        decider(str(ckpt), "defend_the_center", seed=2)
