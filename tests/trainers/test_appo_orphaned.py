"""Rollout workers outliving a killed runner free its shared memory once, with no resource-tracker warning."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# The "runner": creates blocks and an Event, starts workers that attach and say so, then dies without
# cleaning up; each worker, orphaned at that moment, calls free_orphaned as soon as it sees its runner gone.
_SCRIPT = textwrap.dedent("""
    import multiprocessing as mp, os, time
    from multiprocessing import shared_memory

    def worker(names, stop, attached):
        from trainers.appo.rollout_worker import free_orphaned
        runner = os.getppid()
        blocks = [shared_memory.SharedMemory(name=n) for n in names.values()]  # attach, as workers do
        for b in blocks:
            b.close()
        attached.send(os.getpid())
        while os.getppid() == runner:  # until the runner is gone (the kernel reparents this worker at once)
            time.sleep(0.001)
        free_orphaned(names, stop)

    if __name__ == "__main__":
        ctx = mp.get_context("spawn")
        blocks = {str(i): shared_memory.SharedMemory(create=True, size=4096) for i in range(64)}
        names = {k: b.name for k, b in blocks.items()}
        stop = ctx.Event()
        said, attached = ctx.Pipe(duplex=False)  # a pipe: no semaphore for the tracker to report
        procs = [ctx.Process(target=worker, args=(names, stop, attached)) for _ in range(6)]
        for p in procs:
            p.start()
        for _ in procs:
            said.recv()  # every worker has attached
        print(" ".join(names.values()), flush=True)
        os._exit(0)  # die like a SIGKILLed runner: no unlink, no atexit
""")


def test_orphaned_workers_free_every_block_without_a_leak_warning(tmp_path: Path) -> None:
    script = tmp_path / "runner.py"
    script.write_text(_SCRIPT)
    # run() reads the pipes to their end, so it returns once the workers and the resource tracker,
    # which inherit them, have exited: stderr then holds everything the tracker printed.
    proc = subprocess.run([sys.executable, str(script)], cwd=ROOT, capture_output=True,
                          text=True, timeout=300, env={**os.environ, "PYTHONPATH": str(ROOT)})
    names = proc.stdout.split()
    assert len(names) == 64, proc.stdout + proc.stderr
    assert not [n for n in names if Path(f"/dev/shm/{n}").exists()]
    assert "leaked" not in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr, proc.stderr
