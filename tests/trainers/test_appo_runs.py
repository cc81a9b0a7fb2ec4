"""End-to-end APPO runs on real ViZDoom: serial and multi-process smoke runs, faults, signals, resume."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from evaltk.envs import doom
from evaltk.policies import load_policy
from tests.evaltk.doom_procs import descendants, mapped_segments
from trainers.appo import checkpointing
from trainers.appo.config import AppoConfig, ConfigError
from trainers.appo.runner import AppoRun, build_model, run
from trainers.appo.scenario import resolve_scenario

pytestmark = pytest.mark.vizdoom
ROOT = Path(__file__).resolve().parents[2]


def tiny_config(out: Path, **changes: Any) -> AppoConfig:
    """Return a run config that starts and trains within seconds (36x64 obs, 64-unit layers, short rollouts)."""
    values: dict[str, Any] = {
        "scenario": "basic", "out": str(out), "num_workers": 1, "envs_per_worker": 2, "worker_splits": 2,
        "rollout": 8, "batch_size": 16, "obs_height": 36, "obs_width": 64, "hidden_size": 64, "rnn_size": 64,
        "log_every_s": 1.0, "save_every_s": 0.0, "queue_timeout_s": 0.2,
    }
    values.update(changes)
    return AppoConfig(**values)


def _records(run_dir: Path) -> list[dict[str, float]]:
    return [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]


def _alive_in_groups(pgids: list[int]) -> list[str]:
    alive = []
    for pgid in pgids:
        out = subprocess.run(["pgrep", "-g", str(pgid)], capture_output=True, text=True, check=False).stdout.split()
        alive.extend(out)
    return alive


def _pgid(pid: int) -> int | None:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[2])
    except (OSError, IndexError, ValueError):
        return None


def test_serial_smoke_run_writes_a_loadable_checkpoint(tmp_path: Path) -> None:
    cfg = tiny_config(tmp_path / "run", serial=True, env_frames=1024)
    result = run(cfg, log=lambda _: None)
    assert result.stopped_by == "env_frames"
    assert result.env_frames >= 1024
    assert result.train_step >= 1
    assert result.episodes > 0
    assert (tmp_path / "run" / "config.json").is_file()
    assert any((tmp_path / "run" / "tb").iterdir())
    records = _records(tmp_path / "run")
    assert records[-1]["env_frames"] == result.env_frames
    policy = load_policy(result.checkpoint)
    scenario = doom.scenario_from_env_spec(policy.spec.env_spec)
    assert scenario.obs_size == (36, 64)
    env = doom.DoomEnv(scenario, seed=0)
    try:
        obs = np.stack([env.reset(), env.step(0)[0]])
        policy.reset(2, np.random.default_rng(0))
        actions = policy.act(obs, np.array([True, True]))
        assert actions.shape == (2,)
        assert actions.dtype == np.int64
        assert ((actions >= 0) & (actions < 4)).all()
    finally:
        env.close()


def test_multiprocess_smoke_run(tmp_path: Path) -> None:
    cfg = tiny_config(tmp_path / "run", num_workers=2, env_frames=2048, max_seconds=600)
    lines: list[str] = []
    result = run(cfg, log=lines.append)
    assert result.stopped_by == "env_frames", lines
    assert result.train_step >= 2
    assert result.restarts == 0
    records = _records(tmp_path / "run")
    assert any("train/lag_avg" in r for r in records)
    pids = [int(m.group(1)) for m in (re.search(r"\(pid (\d+)\)", line) for line in lines) if m]
    assert len(pids) == 2
    assert _alive_in_groups(pids) == []


def _drive(appo: AppoRun, until: Callable[[], bool], what: str, limit_s: float = 240.0) -> None:
    """Step ``appo`` until ``until()``; fail naming ``what`` after ``limit_s`` (only a real hang gets there)."""
    deadline = time.monotonic() + limit_s
    while not until():
        if time.monotonic() > deadline:
            pytest.fail(f"{what}: not seen within {limit_s:g} s")
        appo.step(time.monotonic())


def _stepping(appo: AppoRun, w: int, generation: int) -> bool:
    """Whether worker ``w``'s generation ``generation`` has beaten since its start (it steps its envs)."""
    system = appo.system
    return (system.generations[w] == generation
            and float(system.buffers.np["heartbeat"][w]) > system.started_at[w])


def test_crashed_worker_is_restarted_and_a_slow_start_is_not_a_hang(tmp_path: Path) -> None:
    # Worker 0's first process exits with code 3 after 2 s: the run restarts it and the replacement steps.
    # Worker 1 is frozen from its start until it has been silent for twice --worker-timeout-s (2 s), within
    # --worker-start-timeout-s (600 s): a slow start, not a hang; once continued it steps, never restarted.
    cfg = tiny_config(tmp_path / "run", num_workers=2, env_frames=10**9, worker_timeout_s=2.0,
                      worker_start_timeout_s=600.0)
    lines: list[str] = []
    appo = AppoRun(cfg, log=lines.append, fault_crash_after_s=2.0)
    try:
        appo.start()
        frozen = appo.system.processes[1].pid
        os.kill(frozen, signal.SIGSTOP)
        _drive(appo, lambda: time.monotonic() - appo.system.started_at[1] > 2 * cfg.worker_timeout_s,
               "worker 1 frozen for 2x --worker-timeout-s")
        os.kill(frozen, signal.SIGCONT)
        _drive(appo, lambda: _stepping(appo, 0, 1) and _stepping(appo, 1, 0),
               "a replacement for the crashed worker 0 stepping and the continued worker 1 stepping\n"
               + "\n".join(lines))
        frames = appo.stats.env_frames
        _drive(appo, lambda: appo.stats.env_frames > frames, "frames after the restart")
    finally:
        appo.stop()
    result = appo.finish("test")
    assert any("rollout worker 0 exited with code 3" in line for line in lines), lines
    assert not any("rollout worker 1 hung" in line or "worker 1 generation 1" in line for line in lines), lines
    assert result.restarts == 1, lines


def test_hung_worker_is_detected_and_replaced(tmp_path: Path) -> None:
    # Worker 1 is frozen once it steps; the 2 s heartbeat timeout declares it hung, and its replacement steps.
    cfg = tiny_config(tmp_path / "run", num_workers=2, env_frames=10**9, worker_timeout_s=2.0,
                      worker_start_timeout_s=600.0)
    lines: list[str] = []
    appo = AppoRun(cfg, log=lines.append)
    try:
        appo.start()
        _drive(appo, lambda: _stepping(appo, 1, 0), "worker 1 stepping")
        os.kill(appo.system.processes[1].pid, signal.SIGSTOP)
        _drive(appo, lambda: any("rollout worker 1 hung" in line for line in lines), "worker 1 declared hung")
        _drive(appo, lambda: _stepping(appo, 1, 1), "the replacement of worker 1 stepping\n" + "\n".join(lines))
        frames = appo.stats.env_frames
        _drive(appo, lambda: appo.stats.env_frames > frames, "frames after the restart")
    finally:
        appo.stop()
    result = appo.finish("test")
    assert result.restarts >= 1, lines
    assert (tmp_path / "run" / "metrics.jsonl").is_file()


def test_run_steps_one_at_a_time(tmp_path: Path) -> None:
    # The steps of a serial run, each on its own: stop_reason, step (collect), learn, write_metrics, save.
    cfg = tiny_config(tmp_path / "run", serial=True, env_frames=64)
    appo = AppoRun(cfg, log=lambda _: None)
    assert json.loads((tmp_path / "run" / "config.json").read_text())["process"] == {
        "malloc_tuning": False, "gc_freeze": False}
    try:
        appo.start()
        assert appo.stop_reason(time.monotonic()) == ""
        appo.shutdown.signal = "SIGTERM"
        assert appo.stop_reason(time.monotonic()) == "SIGTERM"
        appo.shutdown.signal = None
        assert appo.learn() == 0  # nothing collected yet
        _drive(appo, lambda: appo.learner.version >= 1 and appo.stop_reason(time.monotonic()) == "env_frames",
               "one SGD step and --env-frames reached", limit_s=120)
        left = len(appo.pending) % cfg.batch_trajectories  # learn() takes only full batches
        version = appo.learner.version
        steps = appo.learn()
        assert appo.learner.version == version + steps
        assert len(appo.pending) == left
        record = appo.write_metrics(time.monotonic())
        assert record["train_step"] == appo.learner.version
        assert json.loads((tmp_path / "run" / "metrics.jsonl").read_text().splitlines()[-1]) == json.loads(
            json.dumps(record))
        saved = Path(appo.save())
        assert saved.is_dir()
    finally:
        appo.stop()
    result = appo.finish("test")
    assert result.stopped_by == "test"
    assert result.train_step == appo.learner.version


def test_sigint_stops_cleanly_without_orphan_engines(tmp_path: Path) -> None:
    before = set(subprocess.run(["pgrep", "vizdoom"], capture_output=True, text=True, check=False).stdout.split())
    out = tmp_path / "run"
    cmd = [sys.executable, "-m", "trainers.appo", "--out", str(out), "--num-workers", "2", "--envs-per-worker", "2",
           "--rollout", "8", "--batch-size", "16", "--obs-height", "36", "--obs-width", "64", "--hidden-size", "64",
           "--rnn-size", "64", "--log-every-s", "1", "--max-seconds", "120", "--json"]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert proc.stdout is not None
    lines: list[str] = []
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        lines.append(line)
        if re.search(r"frames\s+[1-9]", line):
            break
    else:
        proc.kill()
        pytest.fail("no frames within 300 s:\n" + "".join(lines))
    pids = [int(m.group(1)) for m in (re.search(r"\(pid (\d+)\)", line) for line in lines) if m]
    assert len(pids) == 2
    segments = mapped_segments(descendants(proc.pid))
    assert any(name.startswith("ViZDoomSM") for name in segments), segments
    proc.send_signal(signal.SIGINT)
    rest, _ = proc.communicate(timeout=300)
    assert proc.returncode == 0, "".join(lines) + rest
    for word in ("Traceback", "leaked", "BrokenPipeError"):
        assert word not in rest, rest[-3000:]
    summary = json.loads(rest.strip().splitlines()[-1])
    assert summary["stopped_by"] == "SIGINT"
    # the command line's process-wide choices, recorded with the run
    assert json.loads((out / "config.json").read_text())["process"] == {"malloc_tuning": True, "gc_freeze": True}
    assert Path(summary["checkpoint"]).is_dir()
    assert _alive_in_groups(pids) == []
    # Every shared-memory segment the run's processes mapped (ViZDoom's and our blocks) is gone.
    deadline = time.monotonic() + 30
    while (left := sorted(n for n in segments if Path("/dev/shm", n).exists())) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert left == [], f"left in /dev/shm: {left}"
    after = set(subprocess.run(["pgrep", "vizdoom"], capture_output=True, text=True, check=False).stdout.split())
    ours = [pid for pid in after - before if _pgid(int(pid)) in pids]
    assert ours == []


def test_resume_continues_where_the_run_stopped(tmp_path: Path) -> None:
    out = tmp_path / "run"
    first = run(tiny_config(out, serial=True, env_frames=512), log=lambda _: None)
    policy, state = checkpointing.load_latest(out)
    assert state.env_frames == first.env_frames
    assert state.train_step == first.train_step
    assert state.optimizer["state"], "Adam moments are saved"
    with pytest.raises(ConfigError, match="--resume"):
        run(tiny_config(out, serial=True, env_frames=1024), log=lambda _: None)
    second = run(tiny_config(out, serial=True, env_frames=1024, resume=True), log=lambda _: None)
    assert second.env_frames >= 1024
    assert second.train_step > first.train_step
    records = _records(out)
    resumed = [r for r in records if r["env_frames"] > first.env_frames]
    assert resumed
    assert min(r["train_step"] for r in resumed) > first.train_step
    starts = json.loads((out / "config.json").read_text())["starts"]
    assert [s["resumed_from_env_frames"] for s in starts] == [None, first.env_frames]
    # The normaliser statistics were carried over, not restarted.
    _, state2 = checkpointing.load_latest(out)
    later = checkpointing.load_latest(out)[0].tensors["obs_count"]
    assert float(later) > float(policy.tensors["obs_count"]) > 0
    assert state2.resumes == 1


def test_checkpoint_round_trip(tmp_path: Path) -> None:
    cfg = tiny_config(tmp_path)
    scenario = resolve_scenario(cfg)
    model = build_model(cfg, scenario)
    model.update_normalizer(torch.randint(0, 256, (5, 3, 36, 64), dtype=torch.uint8))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    loss = torch.stack([p.square().sum() for p in model.parameters()]).sum()
    loss.backward()  # type: ignore[no-untyped-call]
    optimizer.step()
    state = checkpointing.TrainState(train_step=7, env_frames=1234, train_seconds=5.0, resumes=0,
                                     optimizer=optimizer.state_dict(), torch_rng=torch.get_rng_state(),
                                     sampler_rng=torch.Generator().manual_seed(3).get_state())
    path = checkpointing.save(tmp_path, cfg, scenario, model, state)
    policy, loaded = checkpointing.load_latest(tmp_path)
    assert Path(path) == policy.path
    for name, tensor in model.state_dict().items():
        torch.testing.assert_close(policy.tensors[name], tensor)
    assert (loaded.train_step, loaded.env_frames) == (7, 1234)
    fresh = torch.optim.Adam(build_model(cfg, scenario).parameters(), lr=1e-3)
    fresh.load_state_dict(loaded.optimizer)
    for key, value in optimizer.state_dict()["state"][0].items():
        torch.testing.assert_close(fresh.state_dict()["state"][0][key], value)
    assert torch.equal(loaded.torch_rng, state.torch_rng)
    assert policy.spec.provenance["env_frames"] == 1234
    assert policy.spec.env["family"] == "doom"
