"""One population member as a Ray actor (``--executor ray``): its APPO learner, its match players, its checkpoints.

:class:`MemberActor` is a plain class that :mod:`trainers.appo.selfplay.ray_population` wraps with
``ray.remote``; this module never imports Ray (except to read the actor's node id and restart flag). It owns
the member's model, :class:`~trainers.appo.learner.Learner`, sampling generator and a
:class:`~evaltk.tournament.pool.PlayerPool` of its own player processes on its node. Every call returns
``(Reply, PolicyWeights, optimizer state)``; the driver keeps the last two as object refs, so other members' matches
and PBT exploits take them from Ray's object store.

A member's checkpoint (the APPO trainer's format, written atomically under ``RUN/members/m<i>/checkpoints``)
is rewritten after every match that changed it and *before* the reply leaves the actor, so the driver never
records more than the checkpoint holds. A restarted actor (its node was lost; Ray's ``max_restarts``)
builds itself from that checkpoint. The run folder must be the same path on every node (one machine, or a
shared filesystem).
"""

from __future__ import annotations

import os
import shutil
import sys
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
from trainers.appo.runner import build_model
from trainers.appo.scenario import resolve_scenario
from trainers.appo.selfplay import trajectory
from trainers.appo.selfplay.config import SelfPlayConfig
from trainers.appo.selfplay.population import Member
from trainers.appo.selfplay.setup import PLAYER_MODULE, member_config, shaping_of
from trainers.common.state_io import latest_policy_path


@dataclass(frozen=True)
class PolicyWeights:
    """A member's weights as a match needs them: the evaltk checkpoint spec and the tensors."""

    spec: evaltk_checkpoint.CheckpointSpec
    tensors: dict[str, torch.Tensor]

    def save(self, directory: Path) -> str:
        """Write this policy as an evaltk checkpoint in ``directory``; return its path."""
        return str(evaltk_checkpoint.save(directory, self.spec, self.tensors))


@dataclass(frozen=True)
class MatchOrder:
    """A match the driver planned for this member: slot keys, which slot learns, seed, the member's state."""

    match_id: str
    keys: tuple[str, ...]
    learner_slot: int
    seed: int
    hyperparams: dict[str, float]
    train_seconds: float
    resumes: int


@dataclass
class Reply:
    """What a call tells the driver: the member's counters (as checkpointed), where it runs, the match."""

    member: int
    train_step: int
    env_frames: int
    node: str
    pid: int
    restarted: bool
    result: dict[str, Any] | None = None
    losses: dict[str, float] = field(default_factory=dict)


def _node_id() -> tuple[str, bool]:
    """Return this actor's Ray node id and whether Ray restarted it (``("", False)`` outside Ray)."""
    ray = sys.modules.get("ray")  # an actor's worker has imported Ray; a plain process has not
    if ray is None or not ray.is_initialized():  # asking would start a local Ray instance
        return "", False
    ctx = ray.get_runtime_context()
    return str(ctx.get_node_id()), bool(ctx.get_actor_id() is not None and ctx.was_current_actor_reconstructed)


class MemberActor:
    """Member ``member_id`` of the population in ``cfg.out``: builds from its latest checkpoint if it has one.

    Without one it starts from ``initial`` (the ``--init-from`` tensors the driver loaded and checked, passed
    through Ray's object store) or, when that is None, from the model's random initialisation.
    """

    def __init__(self, cfg: AppoConfig, sp: SelfPlayConfig, member_id: int, hyperparams: dict[str, float],
                 initial: dict[str, torch.Tensor] | None = None) -> None:
        torch.set_num_threads(cfg.learner_threads)
        self.base, self.sp = cfg, sp
        self.run_dir = Path(cfg.out)
        self.scenario = resolve_scenario(cfg, self_play=True)
        self.member = Member(id=member_id, hyperparams=dict(hyperparams))
        self.cfg = member_config(cfg, self.member)
        self.model = build_model(self.cfg, self.scenario)
        self.learner = Learner(self.model, self.cfg)
        self.generator = torch.Generator().manual_seed(seeding.seed(self.cfg.seed, "appo.inference"))
        self.dir = self.run_dir / "members" / self.member.name
        self.dir.mkdir(parents=True, exist_ok=True)
        if latest_policy_path(self.dir) is not None:
            policy, restored = checkpointing.load_latest(self.dir)
            self.model.load_state_dict(policy.tensors)
            self.learner.load_optimizer_state(restored.optimizer)
            self.generator.set_state(restored.sampler_rng)
            self.member.train_step, self.member.env_frames = restored.train_step, restored.env_frames
        elif initial is not None:
            self.model.load_state_dict(initial)
        self.learner.version = self.member.train_step
        self.chunks: list[trajectory.Chunk] = []
        self.node, self.restarted = _node_id()
        self.work = self.run_dir / "work" / self.member.name
        for stale in self.work.glob("t[0-9]*"):  # the match folder of this member's actor lost with its node
            shutil.rmtree(stale, ignore_errors=True)
        self.players: PlayerPool | None = None
        if sp.persistent_players:
            self.players = PlayerPool(PLAYER_MODULE, self.work / "players")

    # -- state ----------------------------------------------------------------------------------------------
    def _apply(self, hyperparams: dict[str, float]) -> None:
        """Take the driver's hyperparameters (learning rate, entropy, shaping) for what follows."""
        self.member.hyperparams = dict(hyperparams)
        self.cfg = member_config(self.base, self.member)
        self.learner.cfg = self.cfg
        for group in self.learner.optimizer.param_groups:
            group["lr"] = hyperparams["learning_rate"]

    def _policy(self) -> PolicyWeights:
        spec = checkpointing.policy_spec(self.cfg, self.scenario, self.model, self.member.env_frames,
                                         self.member.train_step)
        return PolicyWeights(spec=spec, tensors={k: v.detach().clone() for k, v in self.model.state_dict().items()})

    def _reply(self, result: MatchResult | None = None, losses: dict[str, float] | None = None
               ) -> tuple[Reply, PolicyWeights, dict[str, Any]]:
        reply = Reply(member=self.member.id, train_step=self.member.train_step, env_frames=self.member.env_frames,
                      node=self.node, pid=os.getpid(), restarted=self.restarted,
                      result=result.to_json() if result is not None else None, losses=dict(losses or {}))
        return reply, self._policy(), self.learner.optimizer.state_dict()

    def _checkpoint(self, train_seconds: float, resumes: int) -> None:
        m = self.member
        state = checkpointing.TrainState(train_step=m.train_step, env_frames=m.env_frames, train_seconds=train_seconds,
                                         resumes=resumes, optimizer=self.learner.optimizer.state_dict(),
                                         torch_rng=torch.get_rng_state(), sampler_rng=self.generator.get_state())
        checkpointing.save(self.dir, self.cfg, self.scenario, self.model, state)

    def state(self, hyperparams: dict[str, float], train_seconds: float, resumes: int
              ) -> tuple[Reply, PolicyWeights, dict[str, Any]]:
        """Take ``hyperparams``; make sure a checkpoint exists (a restart resumes from it); return the state."""
        self._apply(hyperparams)
        if latest_policy_path(self.dir) is None:
            self._checkpoint(train_seconds, resumes)
        return self._reply()

    def exploit(self, hyperparams: dict[str, float], donor: PolicyWeights, donor_optimizer: dict[str, Any],
                train_seconds: float, resumes: int) -> tuple[Reply, PolicyWeights, dict[str, Any]]:
        """PBT: copy a donor's weights and Adam state, take the mutated ``hyperparams``, drop pending experience."""
        self.model.load_state_dict(donor.tensors)
        self.learner.load_optimizer_state(donor_optimizer)
        self._apply(hyperparams)
        self.chunks.clear()
        self._checkpoint(train_seconds, resumes)
        return self._reply()

    # -- matches --------------------------------------------------------------------------------------------
    def play(self, order: MatchOrder, *opponents: PolicyWeights | None) -> tuple[Reply, PolicyWeights, dict[str, Any]]:
        """Play ``order`` as its learning slot, train on the experience, checkpoint, and reply.

        ``opponents`` holds a policy per slot in slot order, None at the learner's slot. A voided match changes
        nothing. Every other slot plays frozen: only this member learns from the match.
        """
        self._apply(order.hyperparams)
        workdir = self.work / order.match_id
        workdir.mkdir(parents=True, exist_ok=True)
        try:
            result = self._run(order, opponents, workdir)
            losses: dict[str, float] = {}
            if result.outcome == "played":
                losses = self._learn(order, result, workdir)
                self._checkpoint(order.train_seconds, order.resumes)
        finally:
            shutil.rmtree(workdir, ignore_errors=True)
        return self._reply(result, losses)

    def _run(self, order: MatchOrder, opponents: tuple[PolicyWeights | None, ...], workdir: Path) -> MatchResult:
        agents: list[str] = []
        extras: list[dict[str, Any]] = []
        for i, policy in enumerate(opponents):
            if i == order.learner_slot:
                agents.append(self._policy().save(workdir / f"slot{i}"))
                extras.append({"selfplay": {"trajectory": str(workdir / f"slot{i}.npz"), "rollout": self.cfg.rollout,
                                            "encoder_precision": self.cfg.encoder_precision,
                                            "reward_shaping": shaping_of(order.hyperparams,
                                                                         dict(self.scenario.reward_shaping))}})
            else:
                if policy is None:
                    raise ValueError(f"match {order.match_id}: slot {i} has no policy (only the learner's slot may)")
                agents.append(policy.save(workdir / f"slot{i}"))
                extras.append({"selfplay": None})
        spec = MatchSpec(match_id=order.match_id, agents=tuple(agents), bots=bot_names()[:self.scenario.bots],
                         map=self.sp.map, seed=order.seed, timelimit_min=self.sp.match_minutes,
                         frameskip=self.scenario.frameskip)
        return run_match(spec, workdir=self.work, timeout_s=self.sp.match_timeout_s, player_module=PLAYER_MODULE,
                         player_extras=extras, pool=self.players)

    def _learn(self, order: MatchOrder, result: MatchResult, workdir: Path) -> dict[str, float]:
        agents = [p for p in result.participants if p["kind"] == "agent"]
        self.member.env_frames += int(agents[order.learner_slot]["decisions"]) * self.scenario.frameskip
        recorded = trajectory.load(workdir / f"slot{order.learner_slot}.npz")
        self.chunks.extend(trajectory.to_chunks(recorded, self.cfg.rollout, self.member.train_step))
        for stem in (self.work / "logs").glob(f"{order.match_id}.*"):
            stem.unlink(missing_ok=True)
        return trajectory.train_chunks(self.learner, self.chunks, self.cfg.batch_trajectories, self.sp.epochs,
                                       self.member)

    def close(self) -> None:
        """End this member's player processes (the driver calls it before ``ray.kill``)."""
        if self.players is not None:
            self.players.close()
            self.players = None
