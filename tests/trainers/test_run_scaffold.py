"""The run scaffold of every trainer: run folder, signals, the one metrics writer, process settings."""

from __future__ import annotations

import gc
import json
import os
import signal
from pathlib import Path
from typing import Any

import pytest

from trainers.appo.config import ConfigError
from trainers.common.run import NO_PROCESS_SETTINGS, MetricsWriter, ProcessSettings, Shutdown, open_run_dir


def test_open_run_dir_refuses_another_run_unless_resuming(tmp_path: Path) -> None:
    run_dir = open_run_dir(tmp_path / "run", resume=False, error=ConfigError)
    assert run_dir.is_dir()
    (run_dir / "config.json").write_text("{}")
    with pytest.raises(ConfigError, match="--resume"):
        open_run_dir(run_dir, resume=False, error=ConfigError)
    assert open_run_dir(run_dir, resume=True, error=ConfigError) == run_dir


def test_shutdown_turns_sigterm_into_a_flag_and_restores_the_handler() -> None:
    before = signal.getsignal(signal.SIGTERM)
    with Shutdown() as shutdown:
        os.kill(os.getpid(), signal.SIGTERM)
        assert shutdown.signal == "SIGTERM"
    assert signal.getsignal(signal.SIGTERM) is before


def test_metrics_writer_mirrors_every_finite_number_to_tensorboard(tmp_path: Path) -> None:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    writer = MetricsWriter(tmp_path)
    records: list[dict[str, Any]] = [
        {"frames": 10, "charts/return": 1.5, "note": "x", "flag": True, "nan": float("nan")},
        {"frames": 20, "charts/return": 2.5, "losses/value": float("inf")}]
    for record in records:
        writer.write(record, record["frames"])
    writer.close()
    lines = [json.loads(line) for line in (tmp_path / "metrics.jsonl").read_text().splitlines()]
    assert [line["frames"] for line in lines] == [10, 20]
    assert lines[0]["note"] == "x"
    events = EventAccumulator(str(tmp_path / "tb"))
    events.Reload()
    assert sorted(events.Tags()["scalars"]) == ["charts/return", "frames"]
    assert [(e.step, e.value) for e in events.Scalars("charts/return")] == [(10, 1.5), (20, 2.5)]


def test_process_settings_change_nothing_unless_chosen() -> None:
    assert NO_PROCESS_SETTINGS.to_dict() == {"malloc_tuning": False, "gc_freeze": False}
    frozen = gc.get_freeze_count()
    assert NO_PROCESS_SETTINGS.freeze_heap() is False
    assert NO_PROCESS_SETTINGS.apply_allocator() is False
    assert gc.get_freeze_count() == frozen
    chosen = ProcessSettings(gc_freeze=True)
    try:
        assert chosen.freeze_heap() is True
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()


def test_importing_and_building_the_trainers_changes_no_process_setting(tmp_path: Path) -> None:
    import subprocess
    import sys

    code = ("import gc, trainers.appo.runner, trainers.appo.selfplay.runner, trainers.a2c.runner, trainers.appo.cli;"
            "from trainers.appo.config import AppoConfig; from trainers.appo.runner import AppoRun;"
            f"r = AppoRun(AppoConfig(out={str(tmp_path / 'r')!r}, serial=True, num_workers=1, envs_per_worker=2,"
            " hidden_size=8, rnn_size=8, rollout=8, batch_size=16), log=lambda _: None); r.stop();"
            "print(gc.get_freeze_count())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=Path(__file__).resolve().parents[2], timeout=300)
    assert out.stdout.split()[-1] == "0"
