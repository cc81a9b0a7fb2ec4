"""The self-play/PBT runner: :func:`run` plays training duels, trains every member's learner, snapshots and PBT.

Components, all in this process except the players:

- match threads (``concurrency`` of them) each call :func:`evaltk.tournament.match.run_match` with the
  player module :mod:`trainers.appo.selfplay.player`: the tournament's hosting/joining, ports, timeouts and
  voiding of crashed or hung engines, unchanged;
- one :class:`~trainers.appo.learner.Learner` per member (the APPO learner: PPO-clip, V-trace/GAE,
  policy-lag mask, the optional decaying cloning loss), fed only with that member's own experience; a new
  member starts from ``--init-from``'s weights when given (:class:`~trainers.appo.selfplay.setup.PopulationSetup`);
- this thread draws each match: its learner and opponents (:mod:`trainers.appo.selfplay.opponents`), saves the
  weights the match plays with, and after each match records scores, trains, snapshots and runs PBT
  (:mod:`trainers.appo.selfplay.pbt`); ``population.json`` is rewritten atomically after every change.

A voided match (engine crash, timeout, abort) contributes nothing: its experience is discarded.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import json
import shutil
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from evaltk import checkpoint as evaltk_checkpoint
from evaltk import seeding
from evaltk.tournament.match import MatchResult, MatchSpec, bot_names, run_match
from evaltk.tournament.pool import PlayerPool
from trainers.appo import checkpointing
from trainers.appo.config import AppoConfig
from trainers.appo.learner import Learner
from trainers.appo.network import ActorCritic
from trainers.appo.runner import build_model
from trainers.appo.selfplay import opponents, pbt, trajectory
from trainers.appo.selfplay import population as pop
from trainers.appo.selfplay.config import SelfPlayConfig
from trainers.appo.selfplay.population import Member, PopulationState
from trainers.appo.selfplay.setup import PLAYER_MODULE, PopulationSetup, member_config, shaping_of
from trainers.common.run import NO_PROCESS_SETTINGS, MetricsWriter, ProcessSettings, Shutdown
from trainers.common.state_io import latest_policy_path, write_run_config

__all__ = ["PLAYER_MODULE", "PopulationRun", "SelfPlayResult", "member_config", "run"]


@dataclass
class SelfPlayResult:
    """Summary of a finished population run (the ``--json`` line)."""

    total_frames: int
    seconds: float
    fps: float
    matches_played: int
    matches_voided: int
    pbt_events: int
    members: list[dict[str, Any]]
    stopped_by: str
    run_dir: str

    @classmethod
    def of(cls, state: PopulationState, run_dir: Path, seconds: float, frames_at_start: int,
           stopped_by: str) -> SelfPlayResult:
        """Summarise ``state`` after ``seconds`` of this run, which started at ``frames_at_start``."""
        members = [{"member": m.id, "train_step": m.train_step, "env_frames": m.env_frames, "matches": m.tally.matches,
                    "wins": m.tally.wins, "draws": m.tally.draws, "losses": m.tally.losses, "generation": m.generation,
                    "checkpoint": str(latest_policy_path(pop.member_dir(run_dir, m)))}
                   for m in state.members]
        new_frames = state.total_frames - frames_at_start
        return cls(total_frames=state.total_frames, seconds=round(seconds, 2),
                   fps=round(new_frames / max(seconds, 1e-9), 1), matches_played=state.matches_played,
                   matches_voided=state.matches_voided, pbt_events=len(state.events), members=members,
                   stopped_by=stopped_by, run_dir=str(run_dir))


@dataclass
class Slot:
    """One side of a submitted match: who plays it and, for a learning member, where its experience goes."""

    agent: str
    key: str
    member: int | None = None
    version: int = 0
    generation: int = 0
    trajectory: str | None = None


@dataclass
class SubmittedMatch:
    """A match submitted to a match thread."""

    spec: MatchSpec
    slots: list[Slot]
    workdir: Path


@dataclass
class Live:
    """The in-memory side of a member: model, learner, its config, pending experience, metrics."""

    member: Member
    model: ActorCritic
    learner: Learner
    cfg: AppoConfig
    generator: torch.Generator
    metrics: MetricsWriter
    chunks: list[trajectory.Chunk] = field(default_factory=list)
    last: dict[str, float] = field(default_factory=dict)


class PopulationRun(PopulationSetup):
    """One population run; :meth:`run` drives it (see the module docstring)."""

    def __init__(self, cfg: AppoConfig, sp: SelfPlayConfig, log: Callable[[str], None],
                 process: ProcessSettings = NO_PROCESS_SETTINGS) -> None:
        super().__init__(cfg, sp, log, process, Path(cfg.out))
        self.abort = threading.Event()
        self.players: PlayerPool | None = None  # the long-lived player processes while run() runs
        self.live = [self._build(m) for m in self.state.members]
        self.t0 = time.monotonic()  # the clock starts when the members are built

    # -- set-up ---------------------------------------------------------------------------------------------
    def _build(self, member: Member) -> Live:
        mcfg = member_config(self.cfg, member)
        model = build_model(mcfg, self.scenario)
        learner = Learner(model, mcfg)
        generator = torch.Generator().manual_seed(seeding.seed(mcfg.seed, "appo.inference"))
        mdir = pop.member_dir(self.run_dir, member)
        if latest_policy_path(mdir) is not None:
            policy, restored = checkpointing.load_latest(mdir)
            model.load_state_dict(policy.tensors)
            learner.load_optimizer_state(restored.optimizer)
            generator.set_state(restored.sampler_rng)
            member.train_step, member.env_frames = restored.train_step, restored.env_frames
        elif self.initial is not None:  # --init-from: every new member starts from the checkpoint's weights
            model.load_state_dict(self.initial)
        learner.version = member.train_step
        mdir.mkdir(parents=True, exist_ok=True)
        live = Live(member=member, model=model, learner=learner, cfg=mcfg, generator=generator,
                    metrics=MetricsWriter(mdir))
        if not member.snapshots:
            self._snapshot(live)
        return live

    # -- checkpoints ----------------------------------------------------------------------------------------
    def _policy_dir(self, live: Live, directory: Path) -> str:
        m = live.member
        spec = checkpointing.policy_spec(live.cfg, self.scenario, live.model, m.env_frames, m.train_step)
        return str(evaltk_checkpoint.save(directory, spec, live.model.state_dict()))

    def _snapshot(self, live: Live) -> None:
        m = live.member
        name = f"s{m.train_step:07d}_{m.env_frames}"
        path = self._policy_dir(live, pop.member_dir(self.run_dir, m) / "snapshots" / name)
        m.snapshots.append({"key": f"{m.name}-{name}", "path": path, "train_step": m.train_step,
                            "env_frames": m.env_frames, "generation": m.generation})
        m.last_snapshot_frames = m.env_frames
        while len(m.snapshots) > self.sp.max_snapshots:  # keep the first snapshot, drop the oldest after it
            dropped = m.snapshots.pop(1)
            shutil.rmtree(dropped["path"], ignore_errors=True)

    def save(self) -> None:
        """Checkpoint every member, then rewrite ``population.json`` (which never points ahead of them)."""
        self.state.train_seconds = self.prior_seconds + time.monotonic() - self.t0
        for live in self.live:
            m = live.member
            state = checkpointing.TrainState(
                train_step=m.train_step, env_frames=m.env_frames, train_seconds=self.state.train_seconds,
                resumes=self.state.resumes, optimizer=live.learner.optimizer.state_dict(),
                torch_rng=torch.get_rng_state(), sampler_rng=live.generator.get_state())
            checkpointing.save(pop.member_dir(self.run_dir, m), live.cfg, self.scenario, live.model, state)
        self.write_population()

    def write_population(self) -> None:
        """Rewrite ``population.json`` atomically with the current state."""
        self.state.rng_state = dict(self.rng.bit_generator.state)
        pop.write(self.run_dir, self.state)

    # -- matches --------------------------------------------------------------------------------------------
    def candidates(self) -> list[opponents.Candidate]:
        """Every possible opponent: the current members and all their frozen snapshots."""
        out = [opponents.Candidate(key=live.member.name, member=live.member.id) for live in self.live]
        for live in self.live:
            out.extend(opponents.Candidate(key=s["key"], member=None, checkpoint=s["path"])
                       for s in live.member.snapshots)
        return out

    def draw_match(self) -> SubmittedMatch:
        """Draw the next match: a learner (members in turn) against ``--agents-per-match`` - 1 opponents.

        The opponents are drawn by ``--opponent-sampling``; the slots are in a random order; the scenario's
        bots join (the deathmatch).
        """
        n = self.state.next_match
        self.state.next_match += 1
        learner = self.live[n % len(self.live)]
        sides: list[Live | opponents.Candidate] = [learner]
        for _ in range(self.sp.agents_per_match - 1):
            sides.append(opponents.sample(self.sp.opponent_sampling, self.candidates(), learner.member.scores(),
                                          self.rng))
        sides = [sides[int(i)] for i in self.rng.permutation(len(sides))]
        match_id = f"t{n:06d}"
        workdir = self.run_dir / "work" / match_id
        workdir.mkdir(parents=True, exist_ok=True)
        slots: list[Slot] = []
        for i, side in enumerate(sides):
            live = self.live[side.member] if isinstance(side, opponents.Candidate) and side.member is not None \
                else side if isinstance(side, Live) else None
            if live is None:
                assert isinstance(side, opponents.Candidate)
                assert side.checkpoint is not None
                slots.append(Slot(agent=side.checkpoint, key=side.key))
                continue
            m = live.member
            path = self._policy_dir(live, workdir / f"slot{i}")
            slots.append(Slot(agent=path, key=m.name, member=m.id, version=m.train_step, generation=m.generation,
                              trajectory=str(workdir / f"slot{i}.npz")))
        seed = int(self.rng.integers(2**31 - 1))
        spec = MatchSpec(match_id=match_id, agents=tuple(s.agent for s in slots),
                         bots=bot_names()[:self.scenario.bots], map=self.sp.map, seed=seed,
                         timelimit_min=self.sp.match_minutes, frameskip=self.scenario.frameskip)
        return SubmittedMatch(spec=spec, slots=slots, workdir=workdir)

    def play(self, submitted: SubmittedMatch) -> MatchResult:
        """Play one submitted match (in a match thread)."""
        extras: list[dict[str, Any]] = []
        for s in submitted.slots:
            if s.member is None:
                extras.append({"selfplay": None})
                continue
            m = self.live[s.member].member
            extras.append({"selfplay": {"trajectory": s.trajectory, "rollout": self.cfg.rollout,
                                        "encoder_precision": self.cfg.encoder_precision,
                                        "reward_shaping": shaping_of(m.hyperparams,
                                                                     dict(self.scenario.reward_shaping))}})
        return run_match(submitted.spec, workdir=self.run_dir / "work", timeout_s=self.sp.match_timeout_s,
                         abort=self.abort, player_module=PLAYER_MODULE, player_extras=extras, pool=self.players)

    def finish(self, submitted: SubmittedMatch, result: MatchResult) -> None:
        """Record a finished match: scores, experience, SGD steps, snapshots, PBT; then population.json."""
        with open(self.run_dir / "matches.jsonl", "a", encoding="utf-8") as fh:
            row = result.to_json()
            row["slots"] = [dataclasses.asdict(s) for s in submitted.slots]
            fh.write(json.dumps(row) + "\n")
        if result.outcome != "played":
            self.state.matches_voided += 1
            self.log(f"{result.match_id}: VOID ({result.error}); its experience is discarded")
            shutil.rmtree(submitted.workdir, ignore_errors=True)
            self.write_population()
            return
        self.state.matches_played += 1
        agents = [p for p in result.participants if p["kind"] == "agent"]
        frags = [int(p["frags"]) for p in agents]
        deaths = [int(p["deaths"]) for p in agents]
        frames = [int(p["decisions"]) * self.scenario.frameskip for p in agents]
        field = [(s.key, f) for s, f in zip(submitted.slots, frags, strict=True)]
        field += [(str(p["agent"]), int(p["frags"])) for p in result.participants if p["kind"] == "bot"]
        self.state.total_frames += sum(frames)
        trained: set[int] = set()
        for i, slot in enumerate(submitted.slots):
            if slot.member is None:
                continue
            live = self.live[slot.member]
            m = live.member
            if slot.generation != m.generation:  # the member was replaced by PBT while this match ran
                continue
            pairwise = pbt.pairwise_scores(i, field)
            if pairwise:
                m.record(frags[i], deaths[i], pairwise, self.sp.pbt_window)
            m.env_frames += frames[i]
            assert slot.trajectory is not None
            live.chunks.extend(trajectory.to_chunks(trajectory.load(Path(slot.trajectory)), self.cfg.rollout,
                                                    slot.version))
            trained.add(m.id)
        shutil.rmtree(submitted.workdir, ignore_errors=True)
        for stem in (self.run_dir / "work" / "logs").glob(f"{result.match_id}.*"):
            stem.unlink(missing_ok=True)
        for member_id in sorted(trained):
            self._train(self.live[member_id])
        self.log(self._match_line(submitted, result, frags))
        self.write_population()

    def _train(self, live: Live) -> None:
        m = live.member
        last = trajectory.train_chunks(live.learner, live.chunks, self.cfg.batch_trajectories, self.sp.epochs, m)
        if last:
            live.last = last
        if m.env_frames - m.last_snapshot_frames >= self.sp.snapshot_every_frames:
            self._snapshot(live)
        self.pbt_if_due(m, [x.member for x in self.live])
        self._metrics(live)

    def _metrics(self, live: Live) -> None:
        live.metrics.write(self.metrics_record(live.member, live.last), live.member.env_frames)

    # -- PBT ------------------------------------------------------------------------------------------------
    def apply_exploit(self, m: Member, donor: Member, event: dict[str, Any]) -> None:
        """Load the donor's weights and optimizer state into ``m``'s learner, record ``event``, take its settings."""
        live, source = self.live[m.id], self.live[donor.id]
        live.model.load_state_dict(source.model.state_dict())
        live.learner.load_optimizer_state(copy.deepcopy(source.learner.optimizer.state_dict()))
        self.record_exploit(m, event)
        live.cfg = member_config(self.cfg, m)
        live.learner.cfg = live.cfg
        for group in live.learner.optimizer.param_groups:
            group["lr"] = m.hyperparams["learning_rate"]
        live.chunks.clear()

    # -- the loop -------------------------------------------------------------------------------------------
    def _match_line(self, submitted: SubmittedMatch, result: MatchResult, frags: list[int]) -> str:
        sides = " vs ".join(f"{s.key}{'*' if s.member is not None else ''}={f}"
                            for s, f in zip(submitted.slots, frags, strict=True))
        new = self.state.total_frames - self.frames_at_start
        fps = new / max(time.monotonic() - self.t0, 1e-9)
        steps = " ".join(f"m{x.member.id}:{x.member.train_step}" for x in self.live)
        return (f"[{self.seconds():7.1f}s] {result.match_id} {sides} ({result.wall_s:.1f} s)  frames "
                f"{self.state.total_frames} ({fps:.0f}/s)  steps {steps}  pbt events {len(self.state.events)}")

    @contextlib.contextmanager
    def _player_pool(self) -> Iterator[None]:
        """Keep the player processes for the whole run (``--persistent-players``); end them all after it."""
        if not self.sp.persistent_players:
            yield
            return
        self.players = PlayerPool(PLAYER_MODULE, self.run_dir / "work" / "players")
        try:
            yield
        finally:
            self.players.close()
            self.players = None

    def run(self) -> SelfPlayResult:
        """Play and train until ``--max-seconds``/``--env-frames`` or a signal, then checkpoint everything."""
        write_run_config(self.run_dir, {"config": self.cfg.to_dict(), "selfplay": self.sp.to_dict(),
                                        "scenario": self.scenario.to_dict(), "process": self.process.to_dict()},
                         resumed_from_key="resumed_from_total_frames",
                         resumed_from=self.state.total_frames if self.state.resumes else None)
        self.save()
        stopped_by = ""
        running: dict[Future[MatchResult], SubmittedMatch] = {}
        last_save = time.monotonic()
        with Shutdown() as shutdown, self._player_pool(), \
                ThreadPoolExecutor(self.sp.concurrency, thread_name_prefix="match") as pool:
            try:
                while True:
                    if shutdown.signal:
                        stopped_by = shutdown.signal
                        break
                    if self.cfg.max_seconds and time.monotonic() - self.t0 >= self.cfg.max_seconds:
                        stopped_by = "max_seconds"
                        break
                    if self.cfg.env_frames and self.state.total_frames >= self.cfg.env_frames:
                        stopped_by = "env_frames"
                        break
                    while len(running) < self.sp.concurrency:
                        submitted = self.draw_match()
                        running[pool.submit(self.play, submitted)] = submitted
                    done, _ = wait(list(running), timeout=0.5, return_when=FIRST_COMPLETED)
                    for future in done:
                        self.finish(running.pop(future), future.result())
                    if self.cfg.save_every_s and time.monotonic() - last_save >= self.cfg.save_every_s:
                        last_save = time.monotonic()
                        self.save()
            finally:
                self.abort.set()  # matches still running are killed and voided
                for future, submitted in running.items():
                    result = future.result()
                    shutil.rmtree(submitted.workdir, ignore_errors=True)
                    with open(self.run_dir / "matches.jsonl", "a", encoding="utf-8") as fh:
                        fh.write(json.dumps({**result.to_json(), "stopped": True}) + "\n")
        self.save()
        for live in self.live:
            live.metrics.close()
        return SelfPlayResult.of(self.state, self.run_dir, time.monotonic() - self.t0, self.frames_at_start,
                                 stopped_by)


def run(cfg: AppoConfig, sp: SelfPlayConfig, *, log: Callable[[str], None] = print,
        process: ProcessSettings = NO_PROCESS_SETTINGS) -> SelfPlayResult:
    """Run (or resume, when ``<out>/population.json`` exists) a population; returns the summary.

    ``process``: the process-wide settings the caller chose (recorded in ``config.json``); the GC is not
    frozen here (members and snapshots come and go), only the allocator setting applies.
    """
    process.apply_allocator()
    torch.set_num_threads(cfg.learner_threads)
    return PopulationRun(cfg, sp, log, process).run()
