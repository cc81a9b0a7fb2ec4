"""The run scaffold every trainer (A2C, APPO, self-play) uses: run folder, signals, metrics, process settings.

* :func:`open_run_dir`: the run folder, refusing to write over another run unless resuming (``config.json``
  itself is written by :func:`trainers.common.state_io.write_run_config`; resume reads
  :func:`trainers.common.state_io.read_latest`).
* :class:`Shutdown`: SIGINT/SIGTERM set a flag that the loop reads, so a run ends with a final checkpoint.
* :class:`MetricsWriter`: the one metrics writer: one JSON object per line in ``metrics.jsonl`` and every
  finite number of the record mirrored to TensorBoard (``tb/``) at the record's step.
* :class:`ProcessSettings`: process-wide choices (glibc allocator thresholds, a GC freeze after start-up),
  off unless a command line chooses them; recorded in ``config.json``.
"""

from __future__ import annotations

import ctypes
import gc
import json
import signal
import threading
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from evaltk.errors import EvaltkError


def open_run_dir(out: str | Path, *, resume: bool, error: type[EvaltkError]) -> Path:
    """Return the run folder ``out``, created; raise ``error`` when it holds a run and ``resume`` is off."""
    run_dir = Path(out)
    if (run_dir / "config.json").exists() and not resume:
        raise error(f"--out {run_dir} already holds a run: pass --resume to continue it or choose another --out")
    run_dir.mkdir(parents=True, exist_ok=True)
    return run_dir


class Shutdown:
    """Context manager: SIGINT/SIGTERM set :attr:`signal` (their name) instead of raising.

    Handlers are installed only in the main thread (elsewhere Python refuses them) and restored on exit.
    """

    def __init__(self) -> None:
        self.signal: str | None = None
        self._old: dict[int, Any] = {}

    def __enter__(self) -> Shutdown:
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGINT, signal.SIGTERM):
                self._old[sig] = signal.signal(sig, self._handle)
        return self

    def _handle(self, signum: int, _frame: Any) -> None:
        self.signal = signal.Signals(signum).name

    def __exit__(self, *exc: object) -> None:
        for sig, handler in self._old.items():
            signal.signal(sig, handler)
        self._old.clear()


class MetricsWriter:
    """Appends one JSON object per line to ``<run_dir>/metrics.jsonl``; mirrors its numbers to TensorBoard.

    TensorBoard policy (one for every trainer): every ``int``/``float`` value of a record that is finite is
    written as a scalar under its key at the record's ``step``; other values (strings, lists) only go to
    ``metrics.jsonl``. The TensorBoard writer (``<run_dir>/tb``) is opened on a background thread, since its
    import takes seconds; records written before it is ready are replayed to it in order.
    """

    def __init__(self, run_dir: Path) -> None:
        self.path = run_dir / "metrics.jsonl"
        self._fh = open(self.path, "a", encoding="utf-8")  # noqa: SIM115 - kept open for the run
        self._tb: Any = None
        self._backlog: list[tuple[dict[str, float], int]] = []
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._open_tb, args=(run_dir / "tb",), name="metrics-tb", daemon=True)
        self._thread.start()

    def _open_tb(self, path: Path) -> None:
        from torch.utils.tensorboard import SummaryWriter

        writer = SummaryWriter(str(path))
        with self._lock:
            self._tb = writer

    @staticmethod
    def scalars(record: dict[str, Any]) -> dict[str, float]:
        """Return the part of ``record`` mirrored to TensorBoard: its finite ``int``/``float`` values (not ``bool``)."""
        return {k: float(v) for k, v in record.items()
                if isinstance(v, int | float) and not isinstance(v, bool) and abs(float(v)) != float("inf")
                and v == v}

    def write(self, record: dict[str, Any], step: int) -> None:
        """Write ``record`` (a flat dict of JSON values) at global step ``step``."""
        self._fh.write(json.dumps(record) + "\n")
        self._fh.flush()
        with self._lock:
            self._backlog.append((self.scalars(record), step))
            if self._tb is not None:
                self._flush_backlog()

    def _flush_backlog(self) -> None:
        for values, at in self._backlog:
            for key, value in values.items():
                self._tb.add_scalar(key, value, at)
        self._backlog.clear()

    def close(self) -> None:
        """Flush and close both outputs (waits for the TensorBoard writer to open)."""
        self._thread.join()
        self._fh.close()
        with self._lock:
            if self._tb is not None:
                self._flush_backlog()
                self._tb.close()


@dataclass(frozen=True)
class ProcessSettings:
    """Process-wide settings a trainer's command line may choose (library calls default to none of them).

    ``malloc_tuning``: raise glibc's mmap and trim thresholds (``mallopt``) so that freed activation memory
    stays in the heap instead of being returned to the kernel and zero-filled again on the next step
    (Linux/glibc only). ``gc_freeze``: after start-up, ``gc.collect()`` then ``gc.freeze()``, so full
    collections no longer rescan the objects alive then (torch, the model, buffers). Both change the whole
    process, so they are recorded in ``config.json`` (:meth:`to_dict`).
    """

    malloc_tuning: bool = False
    gc_freeze: bool = False

    def to_dict(self) -> dict[str, Any]:
        """Return the settings as JSON (the ``process`` section of ``config.json``)."""
        return asdict(self)

    def apply_allocator(self) -> bool:
        """Apply ``malloc_tuning`` if chosen; returns whether the thresholds were set."""
        if not self.malloc_tuning:
            return False
        try:
            libc = ctypes.CDLL("libc.so.6")
        except OSError:
            return False
        m_trim_threshold, m_mmap_threshold = -1, -3
        return bool(libc.mallopt(m_mmap_threshold, 1 << 30)) and bool(libc.mallopt(m_trim_threshold, 1 << 30))

    def freeze_heap(self) -> bool:
        """Apply ``gc_freeze`` if chosen (call once start-up is done); returns whether it froze."""
        if not self.gc_freeze:
            return False
        gc.collect()
        gc.freeze()
        return True


NO_PROCESS_SETTINGS = ProcessSettings()
"""The library default: no process-wide setting changed."""
