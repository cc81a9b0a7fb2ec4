"""Rollout worker: steps several Doom envs in double-buffered splits, writing into shared trajectory slots.

Protocol (all messages are small tuples of indices):

- worker -> inference ``request``: ``(worker, split, generation)`` once the split's observations are written;
- inference -> worker ``reply``: ``(split, generation)`` once the split's actions are written;
- worker -> learner ``ready``: ``("traj", worker, generation, slots, frames, episodes)`` when trajectories
  complete; ``frames`` = env frames in them, ``episodes`` = ``(episode_reward, episode_length,
  true_objective)`` of the episodes that ended since the last message.

In a DAgger run (``WorkerSpec.teacher_env``, :mod:`trainers.appo.dagger`) each game also renders the labels buffer,
and after every reset and step the worker writes the teacher's observation of the env's current frame and its players
grid (:func:`evaltk.envs.doom.privileged_view`) before it requests actions; the observation it writes for the
student is the run's scenario's, as in any run.

While inference computes actions for one split the worker steps the other (Sample Factory's double
buffering). A worker never blocks for long: every wait has a timeout, re-checks the stop event, the parent
process and refreshes its heartbeat.
"""

from __future__ import annotations

import contextlib
import os
import queue
import signal
import time
from dataclasses import dataclass
from typing import Any, Protocol

import cv2

from evaltk import seeding
from evaltk.envs.doom import DoomEnv, privileged_view, scenario_from_env_spec
from evaltk.envs.spec import EnvSpec
from trainers.appo.buffers import SharedBuffers


class Channel(Protocol):
    """What the worker needs of a queue (``multiprocessing.Queue`` and ``queue.Queue`` both fit)."""

    def put(self, item: Any) -> None:
        """Send ``item``."""

    def get(self, block: bool = True, timeout: float | None = None) -> Any:
        """Receive an item; raise ``queue.Empty`` after ``timeout``."""


@dataclass(frozen=True)
class WorkerSpec:
    """Everything a worker process needs (picklable)."""

    worker: int
    generation: int
    env: EnvSpec
    envs_per_worker: int
    worker_splits: int
    seed: int
    teacher_env: EnvSpec | None = None


class RolloutWorker:
    """Owns ``envs_per_worker`` envs; :meth:`advance` steps one split after its actions arrive."""

    def __init__(self, spec: WorkerSpec, buffers: SharedBuffers, requests: Channel, ready: Channel) -> None:
        self.spec = spec
        self.buffers = buffers
        self.requests = requests
        self.ready = ready
        self.scenario = scenario_from_env_spec(spec.env)
        self.rollout = buffers.layout.rollout
        self.first_env = spec.worker * spec.envs_per_worker
        per_split = spec.envs_per_worker // spec.worker_splits
        self.splits = [list(range(self.first_env + s * per_split, self.first_env + (s + 1) * per_split))
                       for s in range(spec.worker_splits)]
        self.envs: dict[int, DoomEnv] = {}
        self._episodes: list[tuple[float, float, float]] = []
        self.teacher = scenario_from_env_spec(spec.teacher_env) if spec.teacher_env is not None else None

    def start(self) -> None:
        """Create and reset every env, write first observations, and request actions for every split."""
        b = self.buffers.np
        for split in self.splits:
            for e in split:
                seed = seeding.seed(self.spec.seed, "appo.env", self.spec.generation, e, bits=31)
                env = DoomEnv(self.scenario, seed=seed, labels=self.teacher is not None)
                self.envs[e] = env
                slot = int(b["env_slot"][e])
                b["slot_ready"][slot] = 0
                env.reset(out=b["obs"][slot, 0])
                self._privileged(e)
                b["env_t"][e] = 0
                b["env_first"][e] = 1
        for s in range(len(self.splits)):
            self.requests.put((self.spec.worker, s, self.spec.generation))

    def _privileged(self, e: int) -> None:
        """In a DAgger run, write the teacher's view of env ``e``'s current frame and its players grid."""
        if self.teacher is not None:
            privileged_view(self.envs[e].state, self.teacher, obs_out=self.buffers.np["teacher_obs"][e],
                            players_out=self.buffers.np["players_now"][e])

    def _next_slot(self, e: int) -> int:
        slots = self.buffers.env_slots(e)
        current = int(self.buffers.np["env_slot"][e])
        return slots[(slots.index(current) + 1) % len(slots)]

    def can_advance(self, split: int) -> bool:
        """Return False when an env of ``split`` would end its trajectory while its next slot is with the learner."""
        b = self.buffers.np
        for e in self.splits[split]:
            if b["env_t"][e] == self.rollout - 1 and b["slot_ready"][self._next_slot(e)]:
                return False
        return True

    def advance(self, split: int) -> bool:
        """Step the envs of ``split`` with the actions inference wrote; returns False (and does nothing) if blocked."""
        if not self.can_advance(split):
            return False
        b = self.buffers.np
        finished: list[int] = []
        for e in self.splits[split]:
            slot = int(b["env_slot"][e])
            t = int(b["env_t"][e])
            env = self.envs[e]
            _, reward, done, info = env.step(b["actions"][slot, t], out=b["obs"][slot, t + 1])
            self._privileged(e)
            b["rewards"][slot, t] = reward
            b["dones"][slot, t] = done
            if done:
                self._episodes.append((info["episode_reward"], info["episode_length"],
                                       info.get("true_objective", float("nan"))))
            if t + 1 == self.rollout:
                nxt = self._next_slot(e)
                b["obs"][nxt, 0] = b["obs"][slot, t + 1]
                b["slot_ready"][slot] = 1
                finished.append(slot)
                b["env_slot"][e] = nxt
                b["env_t"][e] = 0
            else:
                b["env_t"][e] = t + 1
            b["env_first"][e] = done
        if finished:
            frames = len(finished) * self.rollout * self.scenario.frameskip
            self.ready.put(("traj", self.spec.worker, self.spec.generation, finished, frames, self._episodes))
            self._episodes = []
        self.requests.put((self.spec.worker, split, self.spec.generation))
        return True

    def close(self) -> None:
        """Close every env (ends its engine process)."""
        for env in self.envs.values():
            with contextlib.suppress(Exception):  # closing a dead engine must not mask the shutdown
                env.close()
        self.envs.clear()


def worker_main(spec: WorkerSpec, layout: dict[str, Any], names: dict[str, str], requests: Channel,
                replies: Channel, ready: Channel, stop: Any, parent_pid: int, crash_after_s: float = 0.0) -> None:
    """Process entry point: own session (so the runner can kill the worker with its engines), loop until stopped.

    ``crash_after_s`` > 0 makes the worker exit abruptly after that many seconds (fault-injection for tests).
    """
    os.setsid()
    # One thread for OpenCV's resize of each frame: its pool would wake a second thread per 160x120 -> 128x72
    # resize, 36 us of CPU against 21 us on one thread (2-core AMD EPYC guest, 2026-12-04); same pixels.
    cv2.setNumThreads(1)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    buffers = SharedBuffers.attach(layout, names)
    heartbeat = buffers.np["heartbeat"]  # first beat once stepping: the runner times the start up separately
    worker = RolloutWorker(spec, buffers, requests, ready)
    born = time.monotonic()
    try:
        worker.start()
        pending: list[int] = []
        while not stop.is_set() and os.getppid() == parent_pid:
            heartbeat[spec.worker] = time.monotonic()
            if crash_after_s and time.monotonic() - born > crash_after_s:
                os._exit(3)
            if not pending:
                try:
                    split, generation = replies.get(timeout=0.2)
                except queue.Empty:
                    continue
                if generation == spec.generation:
                    pending.append(split)
            while True:
                try:
                    split, generation = replies.get(block=False)
                except queue.Empty:
                    break
                if generation == spec.generation:
                    pending.append(split)
            still: list[int] = []
            for split in pending:
                if not worker.advance(split):
                    still.append(split)
            pending = still
            if pending:
                time.sleep(0.002)
    finally:
        worker.close()
        buffers.close()
        if os.getppid() != parent_pid:  # the runner was killed: free what it no longer can, without warnings
            free_orphaned(names, stop)


def _semaphore_names(event: Any) -> list[str]:
    """Names of the POSIX semaphores behind a ``multiprocessing`` Event (empty for a threading one)."""
    cond = getattr(event, "_cond", None)
    parts = [getattr(event, "_flag", None), getattr(cond, "_lock", None), getattr(cond, "_sleeping_count", None),
             getattr(cond, "_woken_count", None), getattr(cond, "_wait_semaphore", None)]
    names = [getattr(getattr(p, "_semlock", None), "name", None) for p in parts]
    return [n for n in names if isinstance(n, str)]


def free_orphaned(names: dict[str, str], stop: Any) -> None:
    """Unlink the runner's shared-memory blocks and ``stop``'s semaphores after the runner died.

    Python's resource tracker would free them too, but only after printing "leaked shared_memory /
    semaphore objects" warnings. The tracker holds each name once (the runner registered it); the one
    worker whose unlink succeeds unregisters it, the others find it gone (FileNotFoundError) and skip it.
    Names are unlinked without opening them: on Python < 3.13 opening a block registers it again, and a
    worker's late "register" message after another's "unregister" is what the tracker then reports leaked.
    """
    from multiprocessing import resource_tracker, synchronize

    def shm_unlink(name: str) -> None:  # what shm_unlink(3) does on Linux: POSIX shm objects live in /dev/shm
        os.unlink(os.path.join("/dev/shm", name.lstrip("/")))

    blocks = [(name if name.startswith("/") else "/" + name, "shared_memory", shm_unlink) for name in names.values()]
    semaphores = [(name, "semaphore", synchronize.sem_unlink)  # type: ignore[attr-defined]  # from _multiprocessing
                  for name in _semaphore_names(stop)]
    for name, kind, unlink in blocks + semaphores:
        try:
            unlink(name)
        except OSError:  # gone already (FileNotFoundError): another worker freed it
            continue
        resource_tracker.unregister(name, kind)

