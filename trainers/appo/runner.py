"""The APPO runner: :func:`connect_components` wires every component; :func:`run` drives a run to its end.

Components: rollout workers (processes, or objects in serial mode) -> ``requests`` -> batched
:class:`~trainers.appo.inference.Inference` (a thread of this process, or called inline in serial mode)
-> ``replies[w]`` -> workers -> ``ready`` -> the :class:`~trainers.appo.learner.Learner` in this thread,
which publishes new weights back to inference after every SGD step. All data moves through
:class:`~trainers.appo.buffers.SharedBuffers`; queues carry indices.

Faults: a worker that exits or stops heart-beating for ``worker_timeout_s`` is killed together with its
engine processes (its own process group) and restarted with a new generation; requests and replies of
the old generation are dropped. SIGINT/SIGTERM end the loop; shutdown always stops and reaps every worker
and engine, and writes a final checkpoint.
"""

from __future__ import annotations

import dataclasses
import functools
import multiprocessing as mp
import os
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from evaltk import seeding
from evaltk.envs.doom import DoomScenario, action_spec, env_spec, obs_spec
from evaltk.envs.shm_reaper import group_cpu_seconds, kill_groups, processes_in_groups
from trainers.appo import checkpointing
from trainers.appo.buffers import BufferLayout, SharedBuffers
from trainers.appo.channels import PipeChannel
from trainers.appo.config import AppoConfig, ConfigError
from trainers.appo.dagger import PLAYERS_CELLS, load_teacher
from trainers.appo.inference import Inference
from trainers.appo.learner import Learner, gather_batch
from trainers.appo.monitor import Stats, console_line, record_metrics, write_config
from trainers.appo.network import ActorCritic, encoder_dtype
from trainers.appo.rollout_worker import Channel, RolloutWorker, WorkerSpec, worker_main
from trainers.appo.scenario import resolve_scenario
from trainers.common.run import NO_PROCESS_SETTINGS, MetricsWriter, ProcessSettings, Shutdown, open_run_dir


@dataclass
class RunResult:
    """Summary of a finished run (also the ``--json`` output of ``evaltk train``)."""

    env_frames: int
    train_step: int
    seconds: float
    cpu_seconds: float
    fps: float
    mean_episode_reward: float
    episodes: int
    checkpoint: str
    restarts: int
    stopped_by: str
    run_dir: str


def build_model(cfg: AppoConfig, scenario: DoomScenario) -> ActorCritic:
    """Return a fresh model sized for ``scenario`` (seeded by ``cfg.seed``)."""
    spec = action_spec(scenario)
    nvec = [spec["n"]] if spec["type"] == "discrete" else list(spec["nvec"])
    shape = obs_spec(scenario)["shape"]
    torch.manual_seed(seeding.seed(cfg.seed, "appo.weights"))
    return ActorCritic((shape[0], shape[1], shape[2]), nvec, cfg.hidden_size, cfg.rnn_size, cfg.nonlinearity)


@dataclass
class System:
    """Every wired component of a run."""

    cfg: AppoConfig
    scenario: DoomScenario
    buffers: SharedBuffers
    learner: Learner
    inference: Inference
    requests: Channel
    ready: Channel
    replies: list[Channel]
    generations: list[int]
    stop: Any
    new_channel: Callable[[], Channel]
    processes: list[Any] = field(default_factory=list)
    started_at: list[float] = field(default_factory=list)  # per worker: time.monotonic() of its last start
    all_pids: list[int] = field(default_factory=list)
    serial_workers: list[RolloutWorker] = field(default_factory=list)
    fault_crash_after_s: float = 0.0
    log: Callable[[str], None] = print

    def worker_spec(self, w: int) -> WorkerSpec:
        """Return the spec of worker ``w``'s current generation."""
        teacher = self.inference.teacher
        return WorkerSpec(worker=w, generation=self.generations[w], env=env_spec(self.scenario),
                          envs_per_worker=self.cfg.envs_per_worker, worker_splits=self.cfg.worker_splits,
                          seed=self.cfg.seed, teacher_env=env_spec(teacher.scenario) if teacher is not None else None)

    def start_worker(self, w: int) -> None:
        """Start worker ``w`` (a process, or an in-process object in serial mode)."""
        now = time.monotonic()
        # The worker beats only once it steps; until then _check_workers allows worker_start_timeout_s.
        self.buffers.np["heartbeat"][w] = now
        self.started_at[w] = now
        if self.cfg.serial:
            worker = RolloutWorker(self.worker_spec(w), self.buffers, self.requests, self.ready)
            self.serial_workers[w] = worker
            worker.start()
            return
        ctx = mp.get_context("spawn")
        crash = self.fault_crash_after_s if (w == 0 and self.generations[w] == 0) else 0.0
        proc = ctx.Process(target=worker_main, name=f"appo-worker-{w}", daemon=True,
                           args=(self.worker_spec(w), self.buffers.layout.to_dict(), self.buffers.names(),
                                 self.requests, self.replies[w], self.ready, self.stop, os.getpid(), crash))
        proc.start()
        self.processes[w] = proc
        self.all_pids.append(int(proc.pid))  # type: ignore[arg-type]
        self.log(f"rollout worker {w} generation {self.generations[w]} started (pid {proc.pid})")

    def worker_pgids(self) -> set[int]:
        """Process groups (= pids, each worker calls ``setsid``) of every worker process started."""
        return set(self.all_pids)


def connect_components(cfg: AppoConfig, scenario: DoomScenario, model: ActorCritic, *,
                       fault_crash_after_s: float = 0.0, log: Callable[[str], None] = print) -> System:
    """Create buffers, channels, learner, inference and (not yet started) workers, wired together.

    With ``cfg.dagger_teacher`` the teacher is loaded and checked first (:func:`trainers.appo.dagger.load_teacher`):
    inference runs it, workers write its view, the buffers hold its labels and the learner distils them.
    """
    spec = action_spec(scenario)
    teacher = load_teacher(cfg, scenario, seeding.seed(cfg.seed, "appo.teacher")) if cfg.dagger_teacher else None
    layout = BufferLayout(num_workers=cfg.num_workers, envs_per_worker=cfg.envs_per_worker,
                          slots_per_env=cfg.slots_per_env, rollout=cfg.rollout,
                          obs_shape=tuple(obs_spec(scenario)["shape"]),
                          num_heads=1 if spec["type"] == "discrete" else len(spec["nvec"]), rnn_size=cfg.rnn_size,
                          teacher_logits=sum(model.action_nvec) if teacher else 0,
                          teacher_rnn_size=teacher.model.rnn_size if teacher else 0,
                          players_cells=PLAYERS_CELLS if teacher else 0)
    buffers = SharedBuffers(layout)
    new_channel: Callable[[], Channel]
    if cfg.serial:
        new_channel = queue.Queue
        stop: Any = threading.Event()
    else:
        ctx = mp.get_context("spawn")
        new_channel = functools.partial(PipeChannel, ctx)
        stop = ctx.Event()
    requests: Channel = new_channel()
    ready: Channel = new_channel()
    replies: list[Channel] = [new_channel() for _ in range(cfg.num_workers)]
    generations = [0] * cfg.num_workers
    learner = Learner(model, cfg)
    inference = Inference(model, buffers, requests, lambda w: replies[w], lambda w: generations[w],
                          cfg.worker_splits, seed=seeding.seed(cfg.seed, "appo.inference"),
                          random_actions=cfg.sampler_only,
                          wait_s=cfg.inference_wait_ms / 1000.0, packed_weights=cfg.packed_inference,
                          encoder_dtype=encoder_dtype(cfg.encoder_precision), teacher=teacher)
    system = System(cfg=cfg, scenario=scenario, buffers=buffers, learner=learner, inference=inference,
                    requests=requests, ready=ready, replies=replies, generations=generations, stop=stop,
                    new_channel=new_channel, processes=[None] * cfg.num_workers, started_at=[0.0] * cfg.num_workers,
                    serial_workers=[None] * cfg.num_workers,  # type: ignore[list-item]
                    fault_crash_after_s=fault_crash_after_s, log=log)
    return system


def load_initial_weights(model: ActorCritic, location: str) -> str:
    """Load the --init-from checkpoint ``location`` (weights, obs statistics) into ``model``; return its label."""
    from evaltk import checkpoint as evaltk_checkpoint
    from evaltk.errors import CheckpointError
    from evaltk.locations import resolve
    from evaltk.policies import check_tensor_shapes

    where = resolve(location)
    ckpt = evaltk_checkpoint.load(where.ref)
    try:
        check_tensor_shapes(ckpt, model.tensor_shapes())
    except CheckpointError as exc:
        raise CheckpointError(f"--init-from {where.label}: its tensors do not fit this model ({exc}); use the same "
                              "--hidden-size, --rnn-size, observation size and scenario heads") from None
    model.load_state_dict(ckpt.tensors)
    return where.label


def _flushes_denormals() -> bool:
    """Whether float32 subnormals are flushed to zero in this thread now (flush-to-zero / denormals-are-zero)."""
    return float(torch.tensor(1e-39, dtype=torch.float32).mul(1.0).item()) == 0.0


def run(cfg: AppoConfig, *, log: Callable[[str], None] = print, fault_crash_after_s: float = 0.0,
        process: ProcessSettings = NO_PROCESS_SETTINGS) -> RunResult:
    """Train until ``max_seconds``/``env_frames`` or a signal; returns the run summary.

    ``fault_crash_after_s`` > 0 makes worker 0's first process crash after that many seconds (fault test).
    ``process``: the process-wide settings the caller chose (the command line turns them on; recorded in
    ``config.json``). Subnormal floats are flushed to zero while it runs (faster on the CPU); the caller's
    setting is restored afterwards, since it is process state that other code (e.g. hypothesis) relies on.
    """
    previous = _flushes_denormals()
    torch.set_flush_denormal(True)
    try:
        return AppoRun(cfg, log=log, fault_crash_after_s=fault_crash_after_s, process=process).run()
    finally:
        torch.set_flush_denormal(previous)


class AppoRun:
    """One APPO run as steps that can each be called (and tested) on their own.

    Construction resumes and sets up (config.json, components); :meth:`start` starts workers and inference;
    :meth:`step` is one pass of the loop (learn, health, log, save); :meth:`stop_reason` says when to end;
    :meth:`stop` reaps everything; :meth:`finish` writes the last checkpoint. :meth:`run` chains them.
    """

    def __init__(self, cfg: AppoConfig, *, log: Callable[[str], None] = print, fault_crash_after_s: float = 0.0,
                 process: ProcessSettings = NO_PROCESS_SETTINGS) -> None:
        cfg.check()
        if (Path(cfg.out) / "config.json").exists() and not cfg.resume:
            open_run_dir(cfg.out, resume=False, error=ConfigError)  # raises: the folder holds another run
        self.cfg, self.log, self.process = cfg, log, process
        self.scenario = resolve_scenario(cfg)
        process.apply_allocator()
        torch.set_num_threads(max(cfg.learner_threads, cfg.inference_threads))
        self.model = build_model(cfg, self.scenario)
        self.start_frames, start_step, self.resumes, self.prior_seconds = 0, 0, 0, 0.0
        restored = self._restore()
        if restored is None and cfg.init_from:  # config.json records the pinned label of an hf:// location
            cfg = self.cfg = dataclasses.replace(cfg, init_from=load_initial_weights(self.model, cfg.init_from))
        if restored is not None:
            self.start_frames, start_step = restored.env_frames, restored.train_step
            self.resumes, self.prior_seconds = restored.resumes + 1, restored.train_seconds
        self.run_dir = open_run_dir(cfg.out, resume=cfg.resume, error=ConfigError)
        write_config(self.run_dir, cfg, self.scenario, resumed_from=self.start_frames if cfg.resume else None,
                     process=process)
        resume_cfg = dataclasses.replace(cfg, seed=seeding.seed(cfg.seed, "appo.resume", self.resumes))
        self.system = connect_components(resume_cfg,
                                         self.scenario, self.model, fault_crash_after_s=fault_crash_after_s, log=log)
        self.learner, self.inference = self.system.learner, self.system.inference
        self.learner.version = self.inference.version = start_step
        if restored is not None:
            self.learner.load_optimizer_state(restored.optimizer)
            self.learner.load_state_tensors(restored.extra)
            self.inference.set_generator_state(restored.sampler_rng)
        self.inference.publish(self.model.state_dict(), self.learner.version)
        self.stats = Stats(cfg.stats_window, self.start_frames)
        self.metrics = MetricsWriter(self.run_dir)
        self.shutdown = Shutdown()
        self.t0, self.cpu0 = time.monotonic(), time.process_time()
        self.last_log = self.last_save = self.last_health = self.t0
        self.restarts, self.worker_cpu, self.checkpoint_path = 0, 0.0, ""
        self.last_metrics: dict[str, float] = {}
        self.pending: list[int] = []
        self.serial_pending: list[list[int]] = [[] for _ in range(cfg.num_workers)]
        self.inference_error: list[BaseException] = []
        self.serve_thread = threading.Thread(target=self._serve_forever, name="appo-inference", daemon=True)

    def _restore(self) -> checkpointing.TrainState | None:
        """With ``--resume`` and a checkpoint: load the weights and RNG, return the training state."""
        if not self.cfg.resume or checkpointing.latest_policy_path(Path(self.cfg.out)) is None:
            return None
        policy, restored = checkpointing.load_latest(Path(self.cfg.out))
        self.model.load_state_dict(policy.tensors)
        torch.set_rng_state(restored.torch_rng)
        return restored

    def _serve_forever(self) -> None:
        try:
            while not self.system.stop.is_set():
                self.inference.serve(timeout=self.cfg.queue_timeout_s)
        except BaseException as exc:  # surfaced by step()
            self.inference_error.append(exc)

    def start(self) -> None:
        """Start the workers and (unless serial) the inference thread; then the chosen GC freeze."""
        for w in range(self.cfg.num_workers):
            self.system.start_worker(w)
        if not self.cfg.serial:
            self.serve_thread.start()
        self.process.freeze_heap()
        self.last_log = self.last_save = self.last_health = time.monotonic()

    def stop_reason(self, now: float) -> str:
        """Why the loop should end now (a signal name, ``max_seconds``, ``env_frames``), or ``""``."""
        if self.shutdown.signal:
            return self.shutdown.signal
        if self.cfg.max_seconds and now - self.t0 >= self.cfg.max_seconds:
            return "max_seconds"
        if self.cfg.env_frames and self.stats.env_frames >= self.cfg.env_frames:
            return "env_frames"
        return ""

    def step(self, now: float) -> None:
        """One pass of the loop: collect ready trajectories, learn, and at their periods check, log, save."""
        if self.inference_error:
            raise RuntimeError(f"inference thread failed: {self.inference_error[0]!r}") from self.inference_error[0]
        if self.cfg.serial:
            _serial_tick(self.system, self.serial_pending)
        _drain_ready(self.system, self.pending, self.stats, timeout=0.0 if self.cfg.serial else 0.02)
        self.learn()
        if not self.cfg.serial and now - self.last_health >= 0.5:
            self.last_health = now
            self.check_health()
        if now - self.last_log >= self.cfg.log_every_s:
            self.last_log = now
            self.write_metrics(now)
        if self.cfg.save_every_s and now - self.last_save >= self.cfg.save_every_s:
            self.last_save = now
            self.checkpoint_path = self.save()

    def learn(self) -> int:
        """Take one SGD step per full batch of pending trajectories (sampler-only: free them); returns the count."""
        size, steps = self.cfg.batch_trajectories, 0
        while len(self.pending) >= size:
            slots, self.pending[:] = self.pending[:size], self.pending[size:]
            steps += 1
            if self.cfg.sampler_only:  # nothing to learn: hand the slots straight back
                self.system.buffers.np["slot_ready"][slots] = 0
                continue
            self.last_metrics = self.learner.train(gather_batch(self.system.buffers, slots))
            self.inference.publish(self.model.state_dict(), self.learner.version)
        return steps

    def check_health(self) -> None:
        """Restart dead or hung workers; raise once more than ``max_restarts`` were needed."""
        self.restarts += _check_workers(self.system, self.pending, self.log)
        if self.restarts > self.cfg.max_restarts:
            raise RuntimeError(f"rollout workers were restarted {self.restarts} times (> --max-restarts "
                               f"{self.cfg.max_restarts}); see the log above for the cause")

    def record(self, now: float) -> dict[str, Any]:
        """Return the metrics record at ``now`` (worker CPU included as last measured)."""
        return record_metrics(self.stats, self.learner.version, now - self.t0 + self.prior_seconds,
                       time.process_time() - self.cpu0 + self.worker_cpu, self.restarts, self.last_metrics)

    def write_metrics(self, now: float) -> dict[str, Any]:
        """Write one metrics record and its console line; returns the record."""
        if not self.cfg.serial:
            self.worker_cpu = max(self.worker_cpu, group_cpu_seconds(self.system.worker_pgids()))
        record = self.record(now)
        self.metrics.write(record, self.stats.env_frames)
        self.log(console_line(record))
        return record

    def save(self) -> str:
        """Write a checkpoint (policy + training state); returns its path."""
        state = checkpointing.TrainState(
            train_step=self.learner.version, env_frames=self.stats.env_frames,
            train_seconds=self.prior_seconds + time.monotonic() - self.t0, resumes=self.resumes,
            optimizer=self.learner.optimizer.state_dict(), torch_rng=torch.get_rng_state(),
            sampler_rng=self.inference.generator_state(), extra=self.learner.state_tensors())
        return str(checkpointing.save(self.run_dir, self.cfg, self.scenario, self.model, state))

    def stop(self) -> None:
        """Stop and reap every worker and engine, the inference thread and the shared memory."""
        self.worker_cpu = max(self.worker_cpu, group_cpu_seconds(self.system.worker_pgids()))
        _stop_everything(self.system, self.serve_thread)

    def finish(self, stopped_by: str) -> RunResult:
        """Write the final checkpoint and metrics record; returns the summary."""
        now = time.monotonic()
        seconds = now - self.t0
        self.checkpoint_path = self.save()
        record = self.record(now)
        self.metrics.write(record, self.stats.env_frames)
        self.metrics.close()
        self.log(console_line(record) + f"  [stopped by {stopped_by}]")
        return RunResult(env_frames=self.stats.env_frames, train_step=self.learner.version, seconds=seconds,
                         cpu_seconds=record["perf/cpu_seconds"],
                         fps=(self.stats.env_frames - self.start_frames) / max(seconds, 1e-9),
                         mean_episode_reward=self.stats.mean_reward(), episodes=self.stats.episodes,
                         checkpoint=self.checkpoint_path, restarts=self.restarts, stopped_by=stopped_by,
                         run_dir=str(self.run_dir))

    def run(self) -> RunResult:
        """Start, step until :meth:`stop_reason` says so (SIGINT/SIGTERM included), stop, finish."""
        with self.shutdown:
            try:
                self.start()
                while not (stopped_by := self.stop_reason(time.monotonic())):
                    self.step(time.monotonic())
            finally:
                self.stop()
        return self.finish(stopped_by)


def _serial_tick(system: System, pending: list[list[int]]) -> None:
    """Run one serial-mode round: serve all inference requests, then advance every split whose actions are ready."""
    while system.inference.serve(timeout=0.0, max_requests=1024):
        pass
    for w, worker in enumerate(system.serial_workers):
        while True:
            try:
                split, generation = system.replies[w].get(block=False)
            except queue.Empty:
                break
            if generation == system.generations[w]:
                pending[w].append(split)
        pending[w] = [s for s in pending[w] if not worker.advance(s)]


def _drain_ready(system: System, pending: list[int], stats: Stats, timeout: float) -> None:
    """Move every ``ready`` message into ``pending`` slots and the statistics."""
    first = True
    while True:
        try:
            msg = system.ready.get(timeout=timeout) if first and timeout > 0 else system.ready.get(block=False)
        except queue.Empty:
            return
        first = False
        _, _worker, _generation, slots, frames, episodes = msg
        pending.extend(slots)
        stats.add_frames(frames)
        for reward, length, objective in episodes:
            stats.add_episode(reward, length, objective)


def _check_workers(system: System, pending: list[int], log: Callable[[str], None]) -> int:
    """Restart every dead or hung worker; returns how many were restarted."""
    restarted = 0
    now = time.monotonic()
    for w, proc in enumerate(system.processes):
        started = system.started_at[w]
        beat = float(system.buffers.np["heartbeat"][w])
        stepping = beat > started  # it has beaten since its start
        silent = now - beat
        limit = system.cfg.worker_timeout_s if stepping else system.cfg.worker_start_timeout_s
        if proc.is_alive() and silent <= limit:
            continue
        if not proc.is_alive():
            reason = f"exited with code {proc.exitcode}"
        elif stepping:
            reason = f"hung (no heartbeat for {silent:.1f} s)"
        else:
            reason = f"hung (not stepping {silent:.1f} s after its start; --worker-start-timeout-s {limit:g})"
        log(f"rollout worker {w} {reason}: killing its process group and restarting it")
        kill_groups({proc.pid})
        proc.join(timeout=5)
        # Trajectories the dead worker marked complete but never announced are lost: hand the slots back.
        received: list[int] = []
        _drain_ready(system, received, Stats(1), timeout=0.0)
        pending.extend(received)
        known = set(pending)
        b = system.buffers.np
        first_env = w * system.cfg.envs_per_worker
        for e in range(first_env, first_env + system.cfg.envs_per_worker):
            for slot in system.buffers.env_slots(e):
                if b["slot_ready"][slot] and slot not in known:
                    b["slot_ready"][slot] = 0
        system.generations[w] += 1
        system.replies[w] = system.new_channel()
        system.start_worker(w)
        restarted += 1
    return restarted


def _stop_everything(system: System, serve_thread: threading.Thread) -> None:
    """Stop workers (gracefully, then by force), engines, the inference thread and the shared memory."""
    system.stop.set()
    pgids = system.worker_pgids()
    deadline = time.monotonic() + 10.0
    for proc in system.processes:
        if proc is not None:
            proc.join(timeout=max(0.1, deadline - time.monotonic()))
    kill_groups(pgids)
    for proc in system.processes:
        if proc is not None:
            proc.join(timeout=5)
    for _ in range(50):
        if not processes_in_groups(pgids):
            break
        time.sleep(0.1)
    for worker in system.serial_workers:
        if worker is not None:
            worker.close()
    if serve_thread.is_alive():
        serve_thread.join(timeout=10)
    for channel in (system.requests, system.ready, *system.replies):
        if isinstance(channel, PipeChannel):
            channel.close()
    system.buffers.close()
