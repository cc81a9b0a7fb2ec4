"""One-command transfer validation: a policy on the simulator and on the reference, compared in one report.

``evaltk validate CKPT --episodes N --margin M --out DIR`` (documented in ``docs/validate.md``):

* the simulator side (``--sim``, default ``gpu_env``) and the reference side (``--reference``, default
  ``gym``) are two runs of the :mod:`evaltk.evaluation.run` engine with the same base seed, so episode ``i``
  has the same recorded seed on both and the rows pair by seed. Each side's score table lives in
  ``DIR/<simulator>/`` (``episodes.csv``, ``evaluation.json``, ``summary.json``) and is resumed on a re-run
  exactly as ``evaltk evaluate`` resumes; a re-run with another margin only re-compares.
* ``--baseline TABLE`` replaces the reference run by a table of baseline scores (any table
  :func:`evaltk.evaluation.samples.load_sample` reads), checked against the checkpoint's env before any episode.
* Each side is a :class:`~evaltk.verdict.Sample` and :func:`evaltk.verdict.compare` gives the verdict (A =
  reference, B = simulator): the same comparison ``evaltk compare`` makes of the two tables. ``--sequential``
  runs :func:`evaltk.verdict.sequential.compare_sequential` on one live plan per side. This module adds the
  per-seed pairing of rows and the sides' records; :mod:`evaltk.report.validate_report` writes the report
  (with ``--align`` into ``DIR/aligned/``, beside the unaligned report).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evaltk import package_versions
from evaltk.envs import EnvInfo, EnvSpec
from evaltk.envs.atari_settings import UNKNOWN
from evaltk.errors import EvaltkError
from evaltk.evaluation.plan import EvalConfig, EvalRequest, EvaluationPlan, plan_all
from evaltk.evaluation.records import ScoreRow
from evaltk.evaluation.run import EvalResult, PlanSource, ProgressFn, run_plan, summarize, summarize_episodes
from evaltk.evaluation.samples import load_sample
from evaltk.evaluation.scores import ENVIRONMENT_FILE, TABLE_FILE
from evaltk.locations import table_provenance
from evaltk.simulators import resolve_all
from evaltk.simulators.align import Alignment, align_env
from evaltk.verdict import Comparison, Sample, Verdict, check_envs, compare
from evaltk.verdict.rule import VerdictRule
from evaltk.verdict.sequential import FixedSource, SequentialComparison, check_budget, compare_sequential

DEFAULT_SIM = "gpu_env"
"""The simulator validated when ``--sim`` is not given."""
DOOM_FIX = ("validate a Doom policy with --sim gym --baseline TABLE (gym runs ViZDoom, and no other simulator runs "
            "Doom envs to compare it with)")
"""What a user validating a Doom policy does instead of a simulator that runs Atari only."""
ALIGNED_FOLDER = "aligned"
"""With ``--align`` the report goes to ``OUT/aligned/``, beside the unaligned one in ``OUT``."""


class ValidateError(EvaltkError):
    """A validation cannot be set up as asked (same simulator twice, mismatched baseline, ...).

    A bad verdict option (margin, alpha, looks, ...) is refused earlier, by :class:`~evaltk.verdict.VerdictRule`.
    """


@dataclass(frozen=True)
class ValidateConfig(EvalRequest):
    """What ``evaltk validate`` was asked to do (see :func:`prepare_validation`).

    ``out`` is the report directory; each evaluated side's score table goes to ``out/<simulator>/``, run with
    this request's checkpoint, episodes, seed, envs and workers.
    """

    rule: VerdictRule = field(kw_only=True)
    """What the verdict is decided by: margin, level, pairing, sequential looks (checked when it is made)."""
    sim: str | None = None
    """The simulator validated; None: :data:`DEFAULT_SIM`, which messages then call the default (not typed)."""
    reference: str = "gym"
    baseline: Path | None = None
    """A baseline score table used as the reference instead of running ``reference``."""
    align: bool = False
    """Run the reference with the simulator's settings where gymnasium + ale-py can express them."""

    @property
    def report_dir(self) -> Path:
        """Where the report files go: ``out``, or ``out/aligned`` with ``--align``."""
        return self.out / ALIGNED_FOLDER if self.align else self.out


def side_label(role: str, simulator: str | None, baseline: bool = False) -> str:
    """How a side is named in every door's report: ``sim (gpu_env)``, ``reference (gym)``, ``reference (baseline)``."""
    return f"{role} ({'baseline' if baseline else simulator})"


def _eval_config(config: ValidateConfig, name: str, folder: str, env: EnvSpec | None = None) -> EvalConfig:
    """Return the evaluation of one side, in ``out/<folder>/``; it takes every request field of ``config``."""
    request = {f.name: getattr(config, f.name) for f in dataclasses.fields(EvalRequest)}
    return EvalConfig(**{**request, "out": config.out / folder}, simulator=name, env=env)


class _Environments:
    """Each evaluated side's ``environment.json`` (env spec, package and versions), by output folder.

    A side whose table already has rows keeps the versions of the run that wrote them (``versions``) beside those of
    this run (``versions_now``); any other side records this run's versions and writes the file.
    """

    def __init__(self) -> None:
        self.versions = package_versions()
        self.specs: dict[Path, dict[str, Any]] = {}

    def __call__(self, config: EvalConfig, simulator: str, settings: dict[str, Any], info: EnvInfo,
                 rows: list[ScoreRow]) -> dict[Path, Any]:
        """Return the side's file where it is written (validate's :data:`~evaltk.evaluation.plan.SideFiles`).

        Its ``package`` is the one the simulator reported running the env with (its settings' ``package``).
        """
        path = config.out / ENVIRONMENT_FILE
        spec = {"env_id": info.env.env_id, "simulator": simulator, "package": settings.get("package", UNKNOWN),
                "env": {k: v for k, v in info.env.to_json().items() if k != "env_id"}, "versions": self.versions}
        if path.exists() and rows:
            try:
                stored = dict(json.loads(path.read_text(encoding="utf-8"))["versions"])
            except (json.JSONDecodeError, KeyError, TypeError, ValueError):
                raise ValidateError(f"{path} is corrupt: delete it (the next run rewrites it) and re-run") from None
            self.specs[config.out] = {**spec, "versions": stored, "versions_now": self.versions}
            return {}
        self.specs[config.out] = spec
        return {path: spec}


@dataclass
class PreparedValidation:
    """A checked request: the evaluations to run (one or two) and the baseline sample, if any."""

    config: ValidateConfig
    sim: EvaluationPlan
    reference: EvaluationPlan | Sample
    """The reference evaluation to run, or the baseline table read as a sample."""
    environments: dict[Path, dict[str, Any]]
    """Each evaluated side's ``environment.json`` record, by its output folder."""
    alignment: Alignment | None = None
    """With ``--align``: the reference's env rewritten to the simulator's settings, and what was not aligned."""

    @property
    def evaluations(self) -> dict[str, EvaluationPlan]:
        """The evaluations this validation runs, by role (``sim``, and ``reference`` unless a baseline)."""
        runs = {"sim": self.sim}
        if isinstance(self.reference, EvaluationPlan):
            runs["reference"] = self.reference
        return runs


def prepare_validation(config: ValidateConfig) -> PreparedValidation:
    """Check every input, plan both sides and open (or resume) their score tables; raises before anything runs."""
    if config.episodes < 2:
        raise ValidateError(f"--episodes must be at least 2 for a comparison, got {config.episodes}")
    if config.align and config.baseline is not None:
        raise ValidateError("--align re-runs the reference with the simulator's settings: drop --baseline or --align")
    if config.rule.sequential:
        if config.baseline is not None:
            raise ValidateError("--sequential evaluates both sides in batches and cannot use a --baseline table: drop "
                                "--sequential, or run evaltk evaluate --until-verdict --baseline TABLE")
        check_budget("--episodes", config.episodes, config.rule.min_episodes)
    sim_name = config.sim or DEFAULT_SIM
    names = [sim_name] if config.baseline is not None else [sim_name, config.reference]
    options = ["--sim" if config.sim else "validate's default --sim", "--reference"][:len(names)]
    sims = resolve_all(names, options)
    if len(sims) == 2 and sims[0].name == sims[1].name:
        raise ValidateError(f"--sim and --reference are both {sim_name}: validate one simulator against another "
                            "(e.g. --sim gpu_env --reference gym) or against --baseline TABLE")
    folders = [sim.name.replace(":", "_") for sim in sims]
    environments = _Environments()
    if config.baseline is not None:
        baseline = load_sample(config.baseline, label=side_label("reference", None, baseline=True))
        sim = plan_all([_eval_config(config, names[0], folders[0])], options=options, simulators=sims,
                       side_files=environments, doom_fix=DOOM_FIX)[0]
        sim_header = _source("sim", sim, environments.specs, None).header()
        check_envs(baseline, sim_header, allow_different_envs=config.rule.allow_different_envs)
        if baseline.n < 2:
            raise ValidateError(f"baseline {config.baseline} has {baseline.n} episode; a comparison needs at least 2")
        return PreparedValidation(config, sim, baseline, environments.specs)
    sides = [_eval_config(config, name, folder) for name, folder in zip(names, folders, strict=True)]
    if not config.align:
        sim, reference = plan_all(sides, options=options, simulators=sims, side_files=environments, doom_fix=DOOM_FIX)
        return PreparedValidation(config, sim, reference, environments.specs)
    sim = plan_all(sides[:1], options=options[:1], simulators=sims[:1], side_files=environments, doom_fix=DOOM_FIX)[0]
    alignment = align_env(sim.info.env, sim.simulator_settings, sim.info.settings or {})
    aligned = _eval_config(config, config.reference, f"{folders[1]}-{ALIGNED_FOLDER}", alignment.env)
    reference = plan_all([aligned], options=options[1:], simulators=sims[1:], side_files=environments,
                         doom_fix=DOOM_FIX)[0]
    return PreparedValidation(config, sim, reference, environments.specs, alignment)


def _source(role: str, plan: EvaluationPlan, specs: Mapping[Path, dict[str, Any]], progress: ProgressFn | None,
            asked: dict[str, Any] | None = None, not_aligned: tuple[str, ...] = ()) -> PlanSource:
    """Return an evaluated side as a source, named and versioned (``environment.json``) as reports show it."""
    return PlanSource(plan, progress=progress, label=side_label(role, plan.simulator_name),
                      versions=specs[plan.config.out]["versions"], asked=asked, not_aligned=not_aligned)


@dataclass
class Validation:
    """The outcome of :func:`run_validation`: both samples, compare's result and the rows paired by seed."""

    config: ValidateConfig
    sim: Sample
    reference: Sample
    comparison: Comparison
    """Reference (A) against simulator (B): its verdict is the report's unless the looks decided."""
    pairs: dict[str, Any] | None
    sides: dict[str, dict[str, Any]]
    """Per role: ``source`` (``evaluated``/``baseline``), ``table``, ``summary`` and ``notes`` (:func:`side_record`)."""
    checkpoint: str
    """The checkpoint as the simulator side's table records it (pinned for ``hf://``)."""
    environments: dict[str, dict[str, Any]]
    """Per role: the ``environment.json`` record (a baseline: what its table records)."""
    settings: dict[str, Any]
    """Both simulators' settings and the alignment (``--align``)."""
    files: dict[str, Path] = field(default_factory=dict)
    sequential: SequentialComparison | None = None
    """Set with ``--sequential``: the looks and their verdict, which is the report's; ``comparison`` then
    analyses the episodes the looks used as if their number had been fixed."""

    @property
    def verdict(self) -> str:
        """The verdict: ``identical``, ``equivalent``, ``different`` or ``inconclusive``."""
        return str((self.sequential or self.comparison).verdict.value)

    @property
    def identical(self) -> dict[str, Any] | None:
        """The identical-episodes finding (``n_shared``, ``upper_bound``, ``message``...), if any."""
        found = self.sequential.identical if self.sequential is not None else self.comparison.identical
        return None if found is None else found.to_dict()

    def label(self, role: str) -> str:
        """How a side is named in reports: ``sim (gpu_env)``, ``reference (gym)``, ``reference (baseline)``."""
        return self.sim.label if role == "sim" else self.reference.label

    def verdict_line(self) -> str:
        """Return the one line that ends the printed summary (the deciding comparison's)."""
        return (self.sequential or self.comparison).verdict_line()

    def episodes_needed_line(self) -> str:
        """How many episodes per side would decide, in words (compare's recommendation)."""
        if self.sequential is not None and self.sequential.report_fields():
            return str(self.sequential.report_fields()["episodes_needed_line"])
        rec, info = self.comparison.recommendation, self.comparison.information
        if info is not None:
            return f"{info.episodes_to_decide} per side would decide: {info.reason}"
        if rec is not None:
            return rec.summary()
        if self.identical is not None:
            return "none: identical episodes are an exact finding, no statistics needed"
        return "none: the verdict is reached with these episodes"

    def to_dict(self) -> dict[str, Any]:
        """Return the ``report.json`` object (also what ``--json`` prints)."""
        comparison = self.comparison.to_dict()
        rec = self.comparison.recommendation
        c = self.config
        checkpoint = self.checkpoint
        seq = self.sequential
        report = {
            "command": "validate", "format": "evaltk-validate/2",
            "verdict": self.verdict, "verdict_line": self.verdict_line(), "identical": self.identical,
            "explanation": comparison["explanation"] if seq is None else seq.reason,
            "design": comparison["design"] if seq is None else ("paired" if seq.paired else "unpaired"),
            "sequential": None if seq is None else seq.to_dict(),
            "checkpoint": checkpoint, "provenance": table_provenance(checkpoint),
            "env_id": self.sim.env_id, "episodes": c.episodes, "seed": c.seed,
            "margin": c.rule.margin, "margin_kind": comparison["margin_kind"], "alpha": c.rule.alpha,
            "bootstrap_seed": c.rule.bootstrap_seed,
            "ci": comparison["ci"], "ci_level": comparison["ci_level"], "ci_tost": comparison["ci_tost"],
            "decision_interval": comparison["decision_interval"],
            "episodes_needed": None if rec is None else rec.to_dict(),
            "episodes_needed_line": self.episodes_needed_line(), "information": comparison["information"],
            "sides": self.sides,
            "environments": environments_section(self.environments, self.comparison, self.settings["aligned"]),
            "simulator_settings": self.settings, "pairs": self.pairs, "comparison": comparison,
            "files": {k: str(v) for k, v in self.files.items()},
        }
        return report if seq is None else {**report, **seq.report_fields()}


def environments_section(records: dict[str, dict[str, Any]], comparison: Comparison,
                         aligned: dict[str, Any] | None = None) -> dict[str, Any]:
    """Return the report's ``environments``: both sides' records, the env check and the one settings diff.

    ``rows`` are :attr:`Comparison.differences`' rows with the sides named by role (``sim`` = B, ``reference`` =
    A); ``not_reported`` lists, per role, the settings that side did not report; ``aligned`` is ``--align``'s
    record (what it aligned and what it could not), which the note takes into account.
    """
    diff = comparison.differences
    note = diff.note()
    if note is not None and aligned is None:
        note += "; re-run with --align to compare on aligned settings"
    elif note is not None and aligned is not None:
        done = ", ".join(aligned["settings"]) or "nothing"
        note = f"{note} (--align aligned {done})"
    return {"sim": records["sim"], "reference": records["reference"], "check": comparison.env_check.to_dict(),
            "rows": [{"setting": r["setting"], "sim": r["b"], "reference": r["a"], "differs": r["differs"]}
                     for r in diff.rows],
            "differs": diff.differs,
            "not_reported": {"sim": diff.not_reported["b"], "reference": diff.not_reported["a"]}, "note": note}


def pair_rows(reference: Sample, sim: Sample) -> dict[str, Any] | None:
    """Rows of the two sides matched by seed: counts and how many agree in return, frames, steps and episode."""
    if reference.seeds is None or sim.seeds is None:
        return None

    def by_seed(s: Sample) -> dict[int, dict[str, Any]]:
        digests = s.digests or ({},) * s.n
        return {seed: {"return": float(s.returns[i]), "frames": None if s.frames is None else s.frames[i],
                       "steps": None if s.steps is None else s.steps[i], "digest": digests[i], "index": i}
                for i, seed in enumerate(s.seeds or ())}

    ref, run = by_seed(reference), by_seed(sim)
    shared = [seed for seed in run if seed in ref]
    same = {key: sum(ref[s][key] == run[s][key] for s in shared) for key in ("return", "frames", "steps")}
    same["episode"] = sum(bool(ref[s]["digest"]) and ref[s]["digest"] == run[s]["digest"] for s in shared)
    return {"n_shared": len(shared), "only_reference": reference.n - len(shared), "only_sim": sim.n - len(shared),
            "same": same,
            "rows": [{"seed": s, "index": run[s]["index"], "reference_return": ref[s]["return"],
                      "sim_return": run[s]["return"], "reference_frames": ref[s]["frames"],
                      "sim_frames": run[s]["frames"]} for s in shared]}


def side_record(role: str, source: str, table: Path, result: EvalResult | None, sample: Sample,
                notes: list[str]) -> dict[str, Any]:
    """Return a side's ``sides`` entry of the report: where it came from and the summary of its episodes."""
    if result is not None:
        summary = {**summarize(result.rows), **{k: result.summary[k] for k in ("new_episodes", "resumed_episodes",
                                                                              "wall_s", "env_steps")}}
    else:  # a baseline table: no truncation flags recorded, lengths where the table has them
        frames = [0] * sample.n if sample.frames is None else list(sample.frames)
        summary = summarize_episodes([float(v) for v in sample.returns], frames, None)
        summary["mean_frames"] = summary["mean_frames"] if sample.frames is not None else None
    return {"role": role, "source": source, "simulator": sample.simulator or UNKNOWN,
            "env_id": sample.env_id or UNKNOWN, "table": str(table), "summary": summary, "notes": notes}


def _notes(prep: EvaluationPlan, spec: dict[str, Any], result: EvalResult) -> list[str]:
    """Why a resumed side's rows may not be this run's: they were written under other package versions."""
    if "versions_now" not in spec or spec["versions_now"] == spec["versions"]:
        return []
    changed = sorted(k for k in spec["versions"] if spec["versions"].get(k) != spec["versions_now"].get(k))
    resumed = result.summary["resumed_episodes"]
    return [f"{resumed} resumed rows were written under other versions of {', '.join(changed)} (see versions vs "
            f"versions_now); delete {prep.config.out} to rerun"]


def run_validation(prep: PreparedValidation, progress: Mapping[str, ProgressFn] | None = None) -> Validation:
    """Run (or resume) the evaluations, compare them and pair the rows by seed; no files besides the tables."""
    progress = progress or {}
    c, rule = prep.config, prep.config.rule
    specs = prep.environments
    asked = None if prep.alignment is None else prep.sim.info.env.to_json()
    unaligned = () if prep.alignment is None else tuple(k for k, _ in prep.alignment.not_aligned)
    sim_source = _source("sim", prep.sim, specs, progress.get("sim"))
    if isinstance(prep.reference, Sample):
        ref_source: PlanSource | FixedSource = FixedSource(prep.reference, grows=False)
    else:
        ref_source = _source("reference", prep.reference, specs, progress.get("reference"), asked, unaligned)
    seq = None
    if rule.sequential:
        seq = compare_sequential(ref_source, sim_source, rule)
        used = seq.used
        n = c.episodes if used is None else max(used[1].n, used[0].n)
    else:
        n = c.episodes
    results: dict[str, EvalResult] = {}
    samples: dict[str, Sample] = {}
    for role, source in (("reference", ref_source), ("sim", sim_source)):
        if isinstance(source, PlanSource):
            results[role] = source.result(n)
            samples[role] = results[role].sample
        else:
            samples[role] = source.whole
    if seq is not None and seq.used is not None:
        samples = {"reference": seq.used[0], "sim": seq.used[1]}
    comparison = compare(samples["reference"], samples["sim"], rule)
    sides, environments = {}, {}
    for role in ("sim", "reference"):
        result = results.get(role)
        plan = prep.evaluations.get(role)
        if plan is not None and result is not None:
            spec = specs[plan.config.out]
            sides[role] = side_record(role, "evaluated", plan.config.out / TABLE_FILE, result, samples[role],
                                      _notes(plan, spec, result))
            environments[role] = spec
        else:
            base = samples[role]
            sides[role] = side_record(role, "baseline", Path(str(c.baseline)), None, base, [])
            environments[role] = _baseline_environment(base)
    settings = {"sim": prep.sim.simulator_settings,
                "reference": {} if isinstance(prep.reference, Sample) else prep.reference.simulator_settings,
                "aligned": None if prep.alignment is None else {
                    "settings": list(prep.alignment.aligned),
                    "not_aligned": [{"setting": k, "why": why} for k, why in prep.alignment.not_aligned]}}
    sim_rows = results["sim"].rows
    checkpoint = sim_rows[0].checkpoint if sim_rows else prep.sim.config.checkpoint
    return Validation(c, samples["sim"], samples["reference"], comparison, pair_rows(samples["reference"],
                      samples["sim"]), sides, checkpoint, environments, settings, sequential=seq)


def _baseline_environment(sample: Sample) -> dict[str, Any]:
    """Return what a baseline table records of its environment, shaped as an evaluated side's record."""
    record: dict[str, Any] = {"env_id": sample.env_id or UNKNOWN, "simulator": sample.simulator or UNKNOWN,
                              "package": (sample.settings or {}).get("package", UNKNOWN)}
    if sample.env is not None:
        record["env"] = {k: v for k, v in sample.env.items() if k != "env_id"}
    if sample.versions is not None:
        record["versions"] = sample.versions
    return record


def validate(config: ValidateConfig,
             start: Callable[[PreparedValidation], Mapping[str, ProgressFn]] | None = None) -> Validation:
    """Run a validation: :func:`prepare_validation` (every bad-input error first), then :func:`run_validation`.

    ``start`` gets the prepared validation and returns the progress callbacks, by role.
    """
    prep = prepare_validation(config)
    return run_validation(prep, None if start is None else start(prep))


__all__ = ["ALIGNED_FOLDER", "DEFAULT_SIM", "DOOM_FIX", "PreparedValidation", "ValidateConfig", "ValidateError",
           "Validation", "Verdict", "pair_rows", "prepare_validation", "run_plan", "run_validation", "side_label",
           "validate"]
