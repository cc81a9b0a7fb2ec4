"""What the local and the Ray population runner share: set-up, members' configs, initial weights, PBT bookkeeping.

:class:`PopulationSetup` checks the configs, resolves the scenario and the PBT search space, reads or creates
the population state (:func:`load_or_create`), loads ``--init-from`` once (:func:`initial_weights`), checks
``--bc-demos`` against the scenario, restores the match generator and keeps the run's clock; its methods make
each PBT decision (check, donor, exploit event), record an exploit and build a member's metrics line, the same
way for both runners, which only apply an exploit (:meth:`PopulationSetup.apply_exploit`) their own way.
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

from evaltk import locations, seeding
from evaltk.envs.doom import DoomScenario
from trainers.appo import bc
from trainers.appo.config import AppoConfig, ConfigError
from trainers.appo.runner import build_model, load_initial_weights
from trainers.appo.scenario import resolve_scenario
from trainers.appo.selfplay import pbt
from trainers.appo.selfplay import population as pop
from trainers.appo.selfplay.config import SelfPlayConfig
from trainers.appo.selfplay.population import Member, PopulationError, PopulationState
from trainers.common.run import ProcessSettings
from trainers.common.state_io import latest_policy_path

PLAYER_MODULE = "trainers.appo.selfplay.player"


def shaping_of(hyperparams: dict[str, float], base: dict[str, float]) -> dict[str, float]:
    """Return the member's reward shaping: each base weight's sign with the member's magnitude (``reward.<VAR>``)."""
    return {k: math.copysign(hyperparams.get(f"reward.{k}", abs(v)), v) if v else 0.0 for k, v in base.items()}


def member_config(cfg: AppoConfig, member: Member) -> AppoConfig:
    """Return the APPO config of one member: the run's, with the member's learning rate and entropy coefficient."""
    return dataclasses.replace(cfg, learning_rate=member.hyperparams["learning_rate"],
                               entropy_coef=member.hyperparams["entropy_coef"],
                               seed=seeding.seed(cfg.seed, "selfplay.member", member.id))


def load_or_create(run_dir: Path, cfg: AppoConfig, sp: SelfPlayConfig, scenario_name: str,
                   space: tuple[pbt.HyperRange, ...], log: Callable[[str], None]) -> PopulationState:
    """Read ``population.json`` (resume; the member count must match) or create the members.

    New members: m0 with the default hyperparameters, the others mutated from them; each records the
    ``--init-from`` checkpoint it starts from (:func:`init_source`, '' for random initialisation).
    """
    if (run_dir / pop.FILENAME).is_file():
        state = pop.read(run_dir)
        if len(state.members) != sp.population:
            raise PopulationError(f"{run_dir} holds a population of {len(state.members)}, not --population "
                                  f"{sp.population}: pass --population {len(state.members)} to resume it")
        state.resumes += 1
        log(f"resuming {run_dir}: {state.total_frames} frames, {state.matches_played} matches")
        return state
    if (run_dir / "config.json").is_file():
        raise ConfigError(f"--out {run_dir} holds a run that is not a population run; choose another --out")
    rng = seeding.rng(cfg.seed, "selfplay.population")
    base = pbt.defaults(space)
    init_from = init_source(cfg.init_from) if cfg.init_from else ""
    members = [Member(id=i, init_from=init_from, hyperparams=base if i == 0 else pbt.mutate(
        base, space, rng, mutation_rate=sp.pbt_mutation_rate, perturb_min=sp.pbt_perturb_min,
        perturb_max=sp.pbt_perturb_max)) for i in range(sp.population)]
    return PopulationState(scenario=scenario_name, appo=cfg.to_dict(), selfplay=sp.to_dict(), members=members)


def init_source(location: str) -> str:
    """Return the ``--init-from`` a member records: an ``hf://`` location pinned to its commit, else the absolute path.

    The pin is :func:`evaltk.locations.pin` (the checkpoint is fetched into the Hub cache, where it then loads from).
    """
    return locations.pin(location) if locations.is_remote(location) else str(Path(location).resolve())


def initial_weights(cfg: AppoConfig, scenario: DoomScenario, run_dir: Path, members: list[Member]
                    ) -> dict[str, torch.Tensor] | None:
    """Return the ``--init-from`` tensors that members without a checkpoint start from (None: nothing to load).

    Loaded once, with single-agent APPO's loader (:func:`trainers.appo.runner.load_initial_weights`), from the
    location the members record (:func:`init_source`: an ``hf://`` one pinned), else ``--init-from``: a
    checkpoint of another size is one :class:`~evaltk.errors.CheckpointError` naming the options to match.
    Members that have a checkpoint resume from it, so a resumed run loads nothing.
    """
    if not cfg.init_from or all(latest_policy_path(pop.member_dir(run_dir, m)) is not None for m in members):
        return None
    model = build_model(cfg, scenario)
    load_initial_weights(model, next((m.init_from for m in members if m.init_from), cfg.init_from))
    return {k: v.detach().clone() for k, v in model.state_dict().items()}


class PopulationSetup:
    """Set up what the local and the Ray runner share (see the module docstring)."""

    def __init__(self, cfg: AppoConfig, sp: SelfPlayConfig, log: Callable[[str], None], process: ProcessSettings,
                 run_dir: Path) -> None:
        cfg.check()
        sp.check()
        self.cfg, self.sp, self.log, self.process = cfg, sp, log, process
        self.run_dir = run_dir
        self.scenario = resolve_scenario(cfg, self_play=True)
        if cfg.bc_coef > 0:
            bc.check_demos(Path(cfg.bc_demos), self.scenario)
        self.space = pbt.search_space(cfg.learning_rate, cfg.entropy_coef, dict(self.scenario.reward_shaping))
        self.state = load_or_create(self.run_dir, cfg, sp, self.scenario.name, self.space, log)
        self.initial = initial_weights(cfg, self.scenario, self.run_dir, self.state.members)
        self.rng = seeding.rng(cfg.seed, "selfplay.matches", self.state.resumes)
        if self.state.rng_state:
            self.rng.bit_generator.state = dict(self.state.rng_state)
        self.t0 = time.monotonic()
        self.prior_seconds = self.state.train_seconds
        self.frames_at_start = self.state.total_frames

    def seconds(self) -> float:
        """Training wall seconds of the run (all starts together)."""
        return self.prior_seconds + time.monotonic() - self.t0

    # -- PBT: the decision here, once; each runner applies an exploit its own way ---------------------------
    def pbt_if_due(self, m: Member, members: list[Member]) -> None:
        """Run :meth:`pbt_step` for ``m`` when PBT is on, ``m`` has rivals and ``pbt_period`` frames have passed."""
        if self.sp.pbt_period and len(members) > 1 and m.env_frames - m.last_pbt_frames >= self.sp.pbt_period:
            self.pbt_step(m, members)

    def pbt_step(self, m: Member, members: list[Member]) -> None:
        """One PBT decision for ``m``: check it, and when a donor beats it, build the exploit and apply it.

        ``members`` is every member, indexed by id. The donor is first offered to :meth:`donor_ready` (a runner
        may decline it; nothing is drawn then); the event (:meth:`exploit_event`) goes to :meth:`apply_exploit`.
        """
        donor_id, objectives = self.pbt_check(m, members)
        if donor_id is None:
            return
        donor = members[donor_id]
        if self.donor_ready(m, donor):
            self.apply_exploit(m, donor, self.exploit_event(m, donor, objectives))

    def donor_ready(self, m: Member, donor: Member) -> bool:
        """Return whether ``m`` may copy ``donor`` now (here: always; a runner whose members can be away says no)."""
        return True

    def apply_exploit(self, m: Member, donor: Member, event: dict[str, Any]) -> None:
        """Copy ``donor``'s weights and optimizer state into ``m`` and record ``event`` (each runner's own way)."""
        raise NotImplementedError(f"{type(self).__name__} does not apply PBT exploits")

    def pbt_check(self, m: Member, members: list[Member]) -> tuple[int | None, dict[str, float | None]]:
        """Run one PBT check of ``m`` (:func:`pbt.check`), record it in ``objective_history``.

        Returns the donor (None: no copy) and every member's objective, keyed by the member id as text.
        """
        sp = self.sp
        m.last_pbt_frames = m.env_frames
        entry, donor_id = pbt.check(m.id, {x.id: x.recent for x in members}, self.rng,
                                    kind=sp.pbt_objective, min_matches=sp.pbt_min_matches,
                                    fraction=sp.pbt_replace_fraction, gap=sp.pbt_replace_gap,
                                    total_frames=self.state.total_frames, seconds=round(self.seconds(), 1))
        self.state.objective_history.append(entry)
        return donor_id, entry["objectives"]

    def exploit_event(self, m: Member, donor: Member, objectives: dict[str, float | None]) -> dict[str, Any]:
        """Return the ``events`` entry of ``m`` copying ``donor``, its hyperparameters mutated (:func:`pbt.mutate`).

        Every hyperparameter of the search space (learning rate, entropy, each shaping weight) may be perturbed,
        clipped to its declared range; ``hyperparams_before``/``donor_hyperparams``/``hyperparams_after`` record it.
        """
        sp = self.sp
        after = pbt.mutate(donor.hyperparams, self.space, self.rng, mutation_rate=sp.pbt_mutation_rate,
                           perturb_min=sp.pbt_perturb_min, perturb_max=sp.pbt_perturb_max)
        return {"kind": "exploit_explore", "member": m.id, "donor": donor.id, "donor_train_step": donor.train_step,
                "donor_generation": donor.generation, "member_frames": m.env_frames,
                "total_frames": self.state.total_frames, "seconds": round(self.seconds(), 1),
                "objectives": objectives, "hyperparams_before": dict(m.hyperparams),
                "donor_hyperparams": dict(donor.hyperparams), "hyperparams_after": after}

    def record_exploit(self, m: Member, event: dict[str, Any]) -> dict[str, Any]:
        """Append ``event`` (numbered) to ``events`` and give ``m`` its hyperparameters, lineage and a new generation.

        The member's recent matches and scores are cleared (they were another policy's). Returns the numbered event.
        """
        event = {"event": len(self.state.events), **event}
        self.state.events.append(event)
        m.hyperparams = dict(event["hyperparams_after"])
        m.lineage.append({"event": event["event"], "donor": event["donor"],
                          "donor_generation": event["donor_generation"], "member_frames": m.env_frames,
                          "hyperparams": m.hyperparams})
        m.parent, m.generation = event["donor"], m.generation + 1
        m.recent, m.vs = [], {}
        mutated = ", ".join(f"{k} {event['donor_hyperparams'][k]:.3g}->{v:.3g}" for k, v in m.hyperparams.items()
                            if v != event["donor_hyperparams"].get(k))
        objectives = event["objectives"]
        self.log(f"PBT: m{m.id} (objective {objectives[str(m.id)]:.3f}) copies m{event['donor']} (objective "
                 f"{objectives[str(event['donor'])]:.3f}) and mutates: {mutated or 'nothing drawn'}")
        return event

    def metrics_record(self, m: Member, losses: dict[str, float]) -> dict[str, Any]:
        """Return a member's ``metrics.jsonl`` line: counters, recent win rate and frags, hyperparameters, losses."""
        record: dict[str, Any] = {"env_frames": m.env_frames, "seconds": round(self.seconds(), 3),
                                  "train_step": m.train_step, "charts/matches": m.tally.matches,
                                  "pbt/generation": m.generation}
        if m.recent:
            record["charts/win_rate_recent"] = sum(s for s, _ in m.recent) / len(m.recent)
            record["charts/frags_recent"] = sum(f for _, f in m.recent) / len(m.recent)
        record.update({f"hyper/{k}": v for k, v in m.hyperparams.items()})
        record.update(losses)
        return record
