"""Run bookkeeping: episode/FPS statistics, metrics.jsonl + TensorBoard output, and process-tree helpers."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import threading
import time
from collections import deque
from pathlib import Path
from typing import Any

from evaltk.envs.doom import DoomScenario
from trainers.appo.config import AppoConfig
from trainers.common.state_io import write_run_config

_CLK_TCK = os.sysconf("SC_CLK_TCK")


class Stats:
    """Running episode statistics and frame-rate windows."""

    def __init__(self, window: int, env_frames: int = 0) -> None:
        self.rewards: deque[float] = deque(maxlen=window)
        self.lengths: deque[float] = deque(maxlen=window)
        self.objectives: deque[float] = deque(maxlen=window)
        self.episodes = 0
        self.env_frames = env_frames
        self._marks: deque[tuple[float, int]] = deque(maxlen=512)
        self._marks.append((time.monotonic(), env_frames))

    def add_frames(self, frames: int) -> None:
        """Count ``frames`` more env frames."""
        self.env_frames += frames
        self._marks.append((time.monotonic(), self.env_frames))

    def add_episode(self, reward: float, length: float, objective: float) -> None:
        """Record one finished episode."""
        self.rewards.append(reward)
        self.lengths.append(length)
        if objective == objective:  # not NaN
            self.objectives.append(objective)
        self.episodes += 1

    def mean_reward(self) -> float:
        """Mean reward of the last ``window`` episodes (NaN before the first)."""
        return sum(self.rewards) / len(self.rewards) if self.rewards else float("nan")

    def fps(self, seconds: float = 10.0) -> float:
        """Env frames per second over (about) the last ``seconds``."""
        now = time.monotonic()
        old = [m for m in self._marks if now - m[0] <= seconds] or [self._marks[-1]]
        t0, f0 = old[0]
        return (self.env_frames - f0) / max(now - t0, 1e-9)


class MetricsWriter:
    """Appends one JSON object per line to ``metrics.jsonl`` and mirrors scalars to TensorBoard events.

    The TensorBoard writer is created on a background thread (its import takes seconds) and catches up.
    """

    def __init__(self, run_dir: Path) -> None:
        self.path = run_dir / "metrics.jsonl"
        self._fh = open(self.path, "a", encoding="utf-8")  # noqa: SIM115 - kept open for the run
        self._tb: Any = None
        self._backlog: list[tuple[dict[str, float], int]] = []
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._open_tb, args=(run_dir / "tb",), daemon=True)
        self._thread.start()

    def _open_tb(self, path: Path) -> None:
        from torch.utils.tensorboard import SummaryWriter

        writer = SummaryWriter(str(path))
        with self._lock:
            self._tb = writer

    def write(self, record: dict[str, Any], step: int) -> None:
        """Write ``record`` (a flat dict of JSON values) at global step ``step`` (env frames)."""
        self._fh.write(json.dumps(record) + "\n")
        self._fh.flush()
        scalars = {k: float(v) for k, v in record.items() if isinstance(v, int | float) and v == v}
        with self._lock:
            self._backlog.append((scalars, step))
            if self._tb is None:
                return
            for values, at in self._backlog:
                for key, value in values.items():
                    self._tb.add_scalar(key, value, at)
            self._backlog.clear()

    def close(self) -> None:
        """Flush and close both outputs."""
        self._thread.join(timeout=30)
        self._fh.close()
        with self._lock:
            if self._tb is not None:
                for values, at in self._backlog:
                    for key, value in values.items():
                        self._tb.add_scalar(key, value, at)
                self._tb.close()


def _stat_fields(pid: int) -> list[str] | None:
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return raw[raw.rindex(")") + 2 :].split()


def processes_in_groups(pgids: set[int]) -> list[int]:
    """Pids of live processes whose process group is in ``pgids``."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            fields = _stat_fields(int(entry))
            if fields is not None and int(fields[2]) in pgids and fields[0] != "Z":
                found.append(int(entry))
    return found


def group_cpu_seconds(pgids: set[int]) -> float:
    """User+system CPU seconds of the live processes in ``pgids`` (workers and their engines)."""
    total = 0
    for pid in processes_in_groups(pgids):
        fields = _stat_fields(pid)
        if fields is not None:
            total += int(fields[11]) + int(fields[12])
    return total / _CLK_TCK


def _engine_instance_ids(pids: list[int]) -> list[str]:
    ids = []
    for pid in pids:
        try:
            args = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        for i, arg in enumerate(args[:-1]):
            if arg == b"+viz_instance_id":
                ids.append(args[i + 1].decode(errors="replace"))
    return ids


def kill_groups(pgids: set[int]) -> None:
    """SIGKILL every process of the given process groups (no-op for groups already gone).

    A ViZDoom engine killed this way cannot remove its shared-memory segment and message queues, so the
    ``/dev/shm/ViZDoom*<instance id>`` files of the killed engines are removed here.
    """
    instance_ids = _engine_instance_ids(processes_in_groups(pgids)) if pgids else []
    for pgid in pgids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, signal.SIGKILL)
    if instance_ids:
        deadline = time.monotonic() + 2.0
        while processes_in_groups(pgids) and time.monotonic() < deadline:
            time.sleep(0.05)
    for instance in instance_ids:
        for prefix in ("ViZDoomSM", "ViZDoomMQCtr", "ViZDoomMQDoom"):
            with contextlib.suppress(OSError):
                os.unlink(f"/dev/shm/{prefix}{instance}")


def write_config(run_dir: Path, cfg: AppoConfig, scenario: DoomScenario, *, resumed_from: int | None) -> None:
    """Write ``config.json``: the resolved config, the scenario, versions, command line (kept across resumes)."""
    import vizdoom

    write_run_config(run_dir, {"config": cfg.to_dict(), "scenario": scenario.to_dict()},
                     resumed_from_key="resumed_from_env_frames", resumed_from=resumed_from,
                     vizdoom=vizdoom.__version__)
