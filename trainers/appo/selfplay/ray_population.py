"""The population on Ray (``--executor ray``): each member a Ray actor, the driver plans matches and PBT.

Components:

- one :class:`~trainers.appo.selfplay.ray_member.MemberActor` per member (``--ray-member-cpus`` CPUs, spread
  over the nodes, restarted by Ray on another node when its node is lost): its learner, its player processes
  and engines, its checkpoints; it plays one match at a time as the learning slot and trains on it;
- this driver: holds ``population.json``'s state, draws each match's opponents
  (:mod:`~trainers.appo.selfplay.opponents`) and runs PBT (:mod:`~trainers.appo.selfplay.pbt`, the same pure
  functions as the local runner); it keeps every member's latest weights and Adam state as Ray object refs
  and passes them to other members' matches (opponents) and to PBT exploits (donors) through the object store;
  frozen snapshots are written to ``RUN/members/m<i>/snapshots`` and put in the object store by the driver, so
  they outlive any node.

A new member's actor starts from the ``--init-from`` tensors, which the driver loads and checks once and puts in the
object store (:class:`~trainers.appo.selfplay.setup.PopulationSetup`); a member with a checkpoint resumes from it.

A member whose actor dies with its node is recorded (``cluster_events``: ``member_lost``; its match is voided)
and resumes on another node from its last checkpoint (``member_resumed``, with the checkpoint's counters);
the same events go to the member's ``metrics.jsonl``. Opponents in a match play frozen: only the member whose
match it is learns from it. At the stop, the matches in play are finished and recorded.
"""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evaltk import checkpoint as evaltk_checkpoint
from evaltk.executor.ray_executor import RayExecutor, import_ray
from trainers.appo.config import AppoConfig, ConfigError
from trainers.appo.selfplay import opponents, pbt
from trainers.appo.selfplay import population as pop
from trainers.appo.selfplay.config import SelfPlayConfig
from trainers.appo.selfplay.population import Member, PopulationError
from trainers.appo.selfplay.ray_member import MatchOrder, MemberActor, PolicyWeights, Reply
from trainers.appo.selfplay.runner import SelfPlayResult
from trainers.appo.selfplay.setup import PopulationSetup
from trainers.common.run import NO_PROCESS_SETTINGS, MetricsWriter, ProcessSettings, Shutdown
from trainers.common.state_io import write_run_config

MAX_RESTARTS = 10
"""Times Ray restarts one member's actor (its node lost) before the run stops with an error."""
RESUME_TIMEOUT_S = 600.0
"""Seconds a lost member may take to come back (Ray finding it a node, the actor loading its checkpoint)."""
RESUME_POLL_S = 1.0
CLOSE_TIMEOUT_S = 60.0


@dataclass
class Handle:
    """The driver's side of one member: its actor, its latest weights/Adam refs, where it runs."""

    member: Member
    actor: Any
    metrics: MetricsWriter
    policy: Any = None  # ObjectRef[PolicyWeights] of the latest reply; None while (re)starting
    optimizer: Any = None
    busy: bool = False
    node: str = ""
    pid: int = 0
    lost_at: float | None = None  # monotonic time its actor was lost; None while it runs
    retry_at: float | None = None  # when to ask the restarting actor again

    @property
    def ready(self) -> bool:
        """True once the actor has replied with its weights (and not lost them since)."""
        return self.policy is not None


@dataclass
class Call:
    """One actor call in flight: ``start`` (state after (re)start), ``match`` or ``exploit``."""

    member: int
    kind: str
    refs: list[Any]
    match_id: str = ""
    slots: list[dict[str, Any]] = field(default_factory=list)
    event: dict[str, Any] = field(default_factory=dict)


class RayPopulationRun(PopulationSetup):
    """One population run with members as Ray actors; :meth:`run` drives it (see the module docstring)."""

    def __init__(self, cfg: AppoConfig, sp: SelfPlayConfig, log: Callable[[str], None],
                 process: ProcessSettings = NO_PROCESS_SETTINGS) -> None:
        super().__init__(cfg, sp, log, process, Path(cfg.out).resolve())
        self.ray = import_ray()
        self.handles: list[Handle] = []
        self.calls: dict[Any, Call] = {}
        self.snapshot_refs: dict[str, Any] = {}
        self.restarts: dict[int, int] = {}
        self.t0 = time.monotonic()

    # -- bookkeeping ----------------------------------------------------------------------------------------
    def write_population(self) -> None:
        """Rewrite ``population.json`` atomically with the current state."""
        self.state.train_seconds = self.seconds()
        self.state.rng_state = dict(self.rng.bit_generator.state)
        pop.write(self.run_dir, self.state)

    def _cluster_event(self, h: Handle, kind: str, **extra: Any) -> None:
        event = {"kind": kind, "member": h.member.id, "node": h.node, "pid": h.pid, "train_step": h.member.train_step,
                 "env_frames": h.member.env_frames, "seconds": round(self.seconds(), 1), **extra}
        self.state.cluster_events.append(event)
        h.metrics.write({"event": kind, **{k: v for k, v in event.items() if k != "kind"}}, h.member.env_frames)

    def _check_feasible(self) -> None:
        cpus = [float(n["Resources"].get("CPU", 0.0)) for n in self.ray.nodes() if n.get("Alive")]
        if not any(c >= self.sp.ray_member_cpus for c in cpus):
            raise ConfigError(f"--ray-member-cpus {self.sp.ray_member_cpus:g}: no node of the Ray cluster has that "
                              f"many CPUs (nodes: {cpus}); pass a smaller --ray-member-cpus or start bigger nodes")

    # -- actor calls ----------------------------------------------------------------------------------------
    def _submit(self, h: Handle, kind: str, method: str, *args: Any, **meta: Any) -> None:
        refs = getattr(h.actor, method).options(num_returns=3).remote(*args)
        h.busy = True
        self.calls[refs[0]] = Call(member=h.member.id, kind=kind, refs=list(refs), **meta)

    def _start(self, h: Handle) -> None:
        self._submit(h, "start", "state", h.member.hyperparams, self.seconds(), self.state.resumes)

    def _adopt(self, h: Handle, reply: Reply, refs: list[Any]) -> None:
        h.member.train_step, h.member.env_frames = reply.train_step, reply.env_frames
        h.node, h.pid = reply.node, reply.pid
        h.policy, h.optimizer = refs[1], refs[2]

    def _snapshot_ref(self, key: str, path: str) -> Any:
        if key not in self.snapshot_refs:
            ckpt = evaltk_checkpoint.load(path)
            self.snapshot_refs[key] = self.ray.put(PolicyWeights(spec=ckpt.spec, tensors=ckpt.tensors))
        return self.snapshot_refs[key]

    def _snapshot(self, h: Handle) -> None:
        m = h.member
        name = f"s{m.train_step:07d}_{m.env_frames}"
        policy: PolicyWeights = self.ray.get(h.policy)
        path = policy.save(pop.member_dir(self.run_dir, m) / "snapshots" / name)
        key = f"{m.name}-{name}"
        self.snapshot_refs[key] = self.ray.put(policy)
        m.snapshots.append({"key": key, "path": path, "train_step": m.train_step, "env_frames": m.env_frames,
                            "generation": m.generation})
        m.last_snapshot_frames = m.env_frames
        while len(m.snapshots) > self.sp.max_snapshots:  # keep the first snapshot, drop the oldest after it
            dropped = m.snapshots.pop(1)
            self.snapshot_refs.pop(dropped["key"], None)
            shutil.rmtree(dropped["path"], ignore_errors=True)

    # -- matches --------------------------------------------------------------------------------------------
    def _candidates(self) -> list[opponents.Candidate]:
        out = [opponents.Candidate(key=h.member.name, member=h.member.id) for h in self.handles if h.ready]
        for h in self.handles:
            out.extend(opponents.Candidate(key=s["key"], member=None, checkpoint=s["path"])
                       for s in h.member.snapshots)
        return out

    def _play(self, h: Handle) -> None:
        n = self.state.next_match
        self.state.next_match += 1
        sides: list[opponents.Candidate | None] = [None]  # None: the learner
        for _ in range(self.sp.agents_per_match - 1):
            sides.append(opponents.sample(self.sp.opponent_sampling, self._candidates(), h.member.scores(), self.rng))
        sides = [sides[int(i)] for i in self.rng.permutation(len(sides))]
        keys: list[str] = []
        policies: list[Any] = []
        slots: list[dict[str, Any]] = []
        for side in sides:
            if side is None:
                keys.append(h.member.name)
                policies.append(None)
                slots.append({"key": h.member.name, "member": h.member.id, "learns": True})
                continue
            keys.append(side.key)
            if side.member is not None:
                policies.append(self.handles[side.member].policy)
            else:
                assert side.checkpoint is not None
                policies.append(self._snapshot_ref(side.key, side.checkpoint))
            slots.append({"key": side.key, "member": side.member, "learns": False})
        order = MatchOrder(match_id=f"t{n:06d}", keys=tuple(keys), learner_slot=sides.index(None),
                           seed=int(self.rng.integers(2**31 - 1)), hyperparams=dict(h.member.hyperparams),
                           train_seconds=self.seconds(), resumes=self.state.resumes)
        self._submit(h, "match", "play", order, *policies, match_id=order.match_id, slots=slots)

    def _finish_match(self, h: Handle, call: Call, reply: Reply) -> None:
        result = reply.result
        assert result is not None
        with open(self.run_dir / "matches.jsonl", "a", encoding="utf-8") as fh:
            fh.write(json.dumps({**result, "slots": call.slots, "node": reply.node}) + "\n")
        if result["outcome"] != "played":
            self.state.matches_voided += 1
            self.log(f"{result['match_id']}: VOID ({result['error']}); its experience is discarded")
            return
        self.state.matches_played += 1
        agents = [p for p in result["participants"] if p["kind"] == "agent"]
        frags = [int(p["frags"]) for p in agents]
        field_ = [(s["key"], f) for s, f in zip(call.slots, frags, strict=True)]
        field_ += [(str(p["agent"]), int(p["frags"])) for p in result["participants"] if p["kind"] == "bot"]
        self.state.total_frames += sum(int(p["decisions"]) * self.scenario.frameskip for p in agents)
        i = next(k for k, s in enumerate(call.slots) if s["learns"])
        pairwise = pbt.pairwise_scores(i, field_)
        m = h.member
        if pairwise:
            m.record(frags[i], int(agents[i]["deaths"]), pairwise, self.sp.pbt_window)
        if m.env_frames - m.last_snapshot_frames >= self.sp.snapshot_every_frames:
            self._snapshot(h)
        self._metrics(h, reply.losses)
        sides = " vs ".join(f"{s['key']}{'*' if s['learns'] else ''}={f}" for s, f in zip(call.slots, frags,
                                                                                          strict=True))
        self.log(f"[{self.seconds():7.1f}s] {result['match_id']} {sides} ({result['wall_s']:.1f} s) on "
                 f"{reply.node[:8]}  frames {self.state.total_frames}  steps "
                 + " ".join(f"{x.member.name}:{x.member.train_step}" for x in self.handles)
                 + f"  pbt events {len(self.state.events)}")
        self.pbt_if_due(m, [x.member for x in self.handles])

    def _metrics(self, h: Handle, losses: dict[str, float]) -> None:
        h.metrics.write(self.metrics_record(h.member, losses), h.member.env_frames)

    # -- PBT ------------------------------------------------------------------------------------------------
    def donor_ready(self, m: Member, donor: Member) -> bool:
        """Refuse a donor whose actor is restarting (logged; the member is checked again next period)."""
        if not self.handles[donor.id].ready:
            self.log(f"PBT: m{m.id} would copy m{donor.id}, which is restarting; not this time")
            return False
        return True

    def apply_exploit(self, m: Member, donor: Member, event: dict[str, Any]) -> None:
        """Send the exploit to ``m``'s actor with the donor's weight and optimizer refs (recorded when it replies)."""
        source = self.handles[donor.id]
        self._submit(self.handles[m.id], "exploit", "exploit", event["hyperparams_after"], source.policy,
                     source.optimizer, self.seconds(), self.state.resumes, event=event)

    def _finish_exploit(self, h: Handle, event: dict[str, Any]) -> None:
        m = h.member
        self.record_exploit(m, event)
        h.metrics.write({"event": "exploit_explore", "donor": event["donor"], "env_frames": m.env_frames,
                         "train_step": m.train_step, "pbt/generation": m.generation,
                         **{f"hyper/{k}": v for k, v in m.hyperparams.items()}}, m.env_frames)

    # -- replies --------------------------------------------------------------------------------------------
    def _handle(self, ref: Any) -> None:
        call = self.calls.pop(ref)
        h = self.handles[call.member]
        h.busy = False
        ray = self.ray
        try:
            reply: Reply = ray.get(ref)
        except ray.exceptions.RayTaskError as exc:
            raise (exc.cause if isinstance(exc.cause, BaseException) else exc) from None
        except ray.exceptions.RayActorError as exc:
            if getattr(exc, "actor_init_failed", False):  # its __init__ raised: a restart would raise again
                raise PopulationError(f"m{h.member.id}'s actor failed to start: {str(exc).strip()[-500:]}") from None
            if h.lost_at is None:
                self._lost(h, call, exc)
            elif time.monotonic() - h.lost_at > RESUME_TIMEOUT_S:
                raise PopulationError(f"m{h.member.id} did not come back within {RESUME_TIMEOUT_S:g} s of losing its "
                                      f"node ({type(exc).__name__}); the run is saved: re-run the same command to "
                                      "resume it on a cluster with room for it") from None
            else:  # still restarting: ask again shortly
                h.retry_at = time.monotonic() + RESUME_POLL_S
            return
        except ray.exceptions.RayError as exc:  # an argument (a lost node's weights) could not be fetched
            self._void(call, f"{type(exc).__name__}: {(str(exc).strip().splitlines() or [''])[0]}")
            return
        self._adopt(h, reply, call.refs)
        h.lost_at = h.retry_at = None
        if call.kind == "start":
            self._cluster_event(h, "member_resumed" if reply.restarted else "member_started",
                                restarts=self.restarts.get(h.member.id, 0))
            if reply.restarted:
                self.log(f"m{h.member.id} resumed on node {h.node[:8]} (pid {h.pid}) from its checkpoint at "
                         f"{h.member.train_step} steps, {h.member.env_frames} frames")
            if not h.member.snapshots:
                self._snapshot(h)
        elif call.kind == "exploit":
            self._finish_exploit(h, call.event)
        else:
            self._finish_match(h, call, reply)
        self.write_population()

    def _void(self, call: Call, error: str) -> None:
        if call.kind == "match":
            self.state.matches_voided += 1
            with open(self.run_dir / "matches.jsonl", "a", encoding="utf-8") as fh:
                fh.write(json.dumps({"match_id": call.match_id, "outcome": "void", "error": error,
                                     "slots": call.slots, "lost": True}) + "\n")
        self.log(f"m{call.member}: {call.kind} lost ({error}); nothing recorded")
        self.write_population()

    def _lost(self, h: Handle, call: Call, exc: BaseException) -> None:
        """Record a member whose actor died with its node, void its call, and ask for the restarted actor."""
        count = self.restarts[h.member.id] = self.restarts.get(h.member.id, 0) + 1
        if count > MAX_RESTARTS:
            raise PopulationError(f"m{h.member.id} lost its actor {count} times ({type(exc).__name__}); the run is "
                                  "saved: re-run the same command to resume it on a healthy cluster")
        self._cluster_event(h, "member_lost", call=call.kind, error=type(exc).__name__)
        self.log(f"m{h.member.id} lost with node {h.node[:8]} (pid {h.pid}) during its {call.kind}; it resumes "
                 "from its last checkpoint on another node")
        h.policy = h.optimizer = None
        h.lost_at = time.monotonic()
        self._void(call, f"member m{h.member.id} lost with its node")
        self._start(h)

    def _retry(self) -> None:
        """Ask each restarting member's actor again once its retry time has come."""
        for h in self.handles:
            if h.retry_at is not None and not h.busy and time.monotonic() >= h.retry_at:
                h.retry_at = None
                self._start(h)

    # -- the loop -------------------------------------------------------------------------------------------
    def _stop_reason(self, shutdown: Shutdown) -> str:
        if shutdown.signal:
            return shutdown.signal
        if self.cfg.max_seconds and time.monotonic() - self.t0 >= self.cfg.max_seconds:
            return "max_seconds"
        if self.cfg.env_frames and self.state.total_frames >= self.cfg.env_frames:
            return "env_frames"
        return ""

    def _wait(self, timeout_s: float) -> None:
        """Handle the first call to finish within ``timeout_s`` (sleep that long when none is in flight)."""
        if not self.calls:
            time.sleep(timeout_s)
            return
        done, _ = self.ray.wait(list(self.calls), num_returns=1, timeout=timeout_s)
        for ref in done:
            self._handle(ref)

    def _drain(self) -> None:
        """Wait for the calls in flight (matches finish and are recorded; a restart completes)."""
        deadline = time.monotonic() + self.sp.match_timeout_s + 120
        while (self.calls or any(h.retry_at is not None for h in self.handles)) and time.monotonic() < deadline:
            self._retry()
            self._wait(1.0)

    def run(self) -> SelfPlayResult:
        """Play and train until ``--max-seconds``/``--env-frames`` or a signal; every member checkpointed."""
        self.run_dir.mkdir(parents=True, exist_ok=True)
        write_run_config(self.run_dir, {"config": self.cfg.to_dict(), "selfplay": self.sp.to_dict(),
                                        "scenario": self.scenario.to_dict(), "process": self.process.to_dict()},
                         resumed_from_key="resumed_from_total_frames",
                         resumed_from=self.state.total_frames if self.state.resumes else None)
        stopped_by = ""
        with RayExecutor(address=self.sp.ray_address or None) as executor, Shutdown() as shutdown:
            self.log(f"ray: cluster {executor.address}, {len(self.state.members)} member actors of "
                     f"{self.sp.ray_member_cpus:g} CPU each")
            self._check_feasible()
            remote = self.ray.remote(MemberActor).options(num_cpus=self.sp.ray_member_cpus,
                                                          max_restarts=MAX_RESTARTS, max_task_retries=0,
                                                          scheduling_strategy="SPREAD")
            initial = self.ray.put(self.initial) if self.initial is not None else None
            try:
                for m in self.state.members:
                    mdir = pop.member_dir(self.run_dir, m)
                    mdir.mkdir(parents=True, exist_ok=True)
                    h = Handle(member=m, actor=remote.remote(self.cfg, self.sp, m.id, m.hyperparams, initial),
                               metrics=MetricsWriter(mdir))
                    self.handles.append(h)
                    self._start(h)
                self.write_population()
                while not (stopped_by := self._stop_reason(shutdown)):
                    self._retry()
                    for h in self.handles:
                        if h.ready and not h.busy:
                            self._play(h)
                    self._wait(0.5)
                self._drain()
            finally:
                self._close_actors()
        self.write_population()
        return self._result(stopped_by)

    def _close_actors(self) -> None:
        """End every member's players (``close``), then the actors; close the metrics files."""
        closing = [h.actor.close.remote() for h in self.handles]
        if closing:
            self.ray.wait(closing, num_returns=len(closing), timeout=CLOSE_TIMEOUT_S)
        for h in self.handles:
            self.ray.kill(h.actor, no_restart=True)
            h.metrics.close()

    def _result(self, stopped_by: str) -> SelfPlayResult:
        return SelfPlayResult.of(self.state, self.run_dir, time.monotonic() - self.t0, self.frames_at_start,
                                 stopped_by)


def run(cfg: AppoConfig, sp: SelfPlayConfig, *, log: Callable[[str], None] = print,
        process: ProcessSettings = NO_PROCESS_SETTINGS) -> SelfPlayResult:
    """Run (or resume, when ``<out>/population.json`` exists) a population of Ray actors; returns the summary."""
    return RayPopulationRun(cfg, sp, log, process).run()

