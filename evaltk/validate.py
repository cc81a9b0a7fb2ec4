"""One-command transfer validation: a policy on the simulator and on the reference, compared in one report.

``evaltk validate CKPT --episodes N --margin M --out DIR`` (documented in ``docs/validate.md``):

* the simulator side (``--sim``, default ``gpu_env``) and the reference side (``--reference``, default
  ``gym``) are two runs of the :mod:`evaltk.evaluate` engine with the same base seed, so episode ``i``
  has the same recorded seed on both and the rows pair by seed. Each side's score table lives in
  ``DIR/<simulator>/`` (``episodes.csv``, ``evaluation.json``, ``summary.json``) and is resumed on a re-run
  exactly as ``evaltk evaluate`` resumes; a re-run with another margin only re-compares.
* ``--baseline TABLE`` replaces the reference run by a table of baseline scores (any table
  :func:`evaltk.scores.read_scores` reads); its env id, where recorded, must be the checkpoint's.
* :func:`evaltk.verdict.compare` gives the verdict (A = reference, B = simulator); this module adds
  the two environment specs side by side and the per-seed pairing of rows;
  :mod:`evaltk.report.validate_report` writes the report files.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import platform
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from evaltk import installed_versions
from evaltk.envs import EnvInfo
from evaltk.envs.atari_settings import UNKNOWN
from evaltk.errors import EvaltkError
from evaltk.evaluate import EvalResult, ProgressFn, run_plan, summarize
from evaltk.locations import table_provenance
from evaltk.plan import EvalConfig, EvalRequest, EvaluationPlan, plan, plan_all
from evaltk.scores import TABLE_FILE, read_table, row_digests
from evaltk.simulators import Simulator, resolve_all
from evaltk.simulators.settings_diff import Alignment, align_env, settings_section
from evaltk.stats.group_sequential import SequentialDesign
from evaltk.table_comparison import spec_rows
from evaltk.verdict import Comparison, Pairing, Verdict, compare
from evaltk.verdict import sequential as verdict_sequential
from evaltk.verdict.result import IdenticalRows
from evaltk.verdict.rule import VerdictRule

ENVIRONMENT_FILE = "environment.json"
"""Per side: the env spec and the package versions of the run that wrote the side's first rows."""
VERSIONED_PACKAGES = ("evaltk", "gymnasium", "ale-py", "numpy", "torch")
SIMULATOR_PACKAGES = {"gym": "gymnasium + ale-py", "gpu_env": "gpu_env (CPU backend)", "vizdoom": "ViZDoom"}
"""The package that runs each simulator's games: the ``package`` row of a side (the settings diff's ``package``
adds its version)."""


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
    sim: str = "gpu_env"
    reference: str = "gym"
    baseline: Path | None = None
    """A baseline score table used as the reference instead of running ``reference``."""
    align: bool = False
    """Run the reference with the simulator's settings where gymnasium + ale-py can express them."""


@dataclass
class Side:
    """One side of the comparison: its rows (sorted by index; ``seed`` may be absent for a baseline) and spec."""

    role: str
    """``"sim"`` or ``"reference"``."""
    source: str
    """``"evaluated"`` (run here, resumably) or ``"baseline"`` (a table read from disk)."""
    table: Path
    rows: list[dict[str, Any]]
    spec: dict[str, Any]
    """``env_id``, ``simulator``, ``package`` (what runs the games), ``env`` (the env less its id), ``versions``."""
    result: EvalResult | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def returns(self) -> np.ndarray:
        """``float64[n]`` episode returns in row order."""
        return np.array([float(r["return"]) for r in self.rows], dtype=np.float64)

    @property
    def seeds(self) -> list[int] | None:
        """Per-row seeds, or None when the table records none."""
        if not self.rows or any(r.get("seed") is None for r in self.rows):
            return None
        return [int(r["seed"]) for r in self.rows]

    @property
    def digests(self) -> list[dict[str, str]] | None:
        """Per-row digests (:func:`evaltk.scores.row_digests`), or None when the table records none."""
        return row_digests(self.rows)


def package_versions() -> dict[str, str]:
    """Installed versions of the packages that decide an episode's outcome (``not installed``), and Python's."""
    found = {package: version or "not installed" for package, version in installed_versions(VERSIONED_PACKAGES).items()}
    return {**found, "python": platform.python_version()}


def _eval_config(config: ValidateConfig, name: str, sim: Simulator, env: dict[str, Any] | None = None) -> EvalConfig:
    """Return the evaluation of one side, in ``out/<simulator>/`` (``out/<simulator>-aligned/`` for an aligned env).

    The side takes every :class:`~evaltk.plan.EvalRequest` field of ``config`` but ``out``.
    """
    folder = sim.name.replace(":", "_") + ("" if env is None else "-aligned")
    request = {f.name: getattr(config, f.name) for f in dataclasses.fields(EvalRequest)}
    return EvalConfig(**{**request, "out": config.out / folder}, simulator=name, env=env)


def _side_spec(config: EvalConfig, simulator: str, info: EnvInfo, rows: list[dict[str, Any]],
               versions_now: dict[str, str]) -> tuple[dict[str, Any], bool]:
    """Return an evaluated side's env spec and versions, and whether to write them (:data:`ENVIRONMENT_FILE`).

    A side with rows and the file keeps the versions of the run that wrote its first rows (``versions``) beside
    ``versions_now``; any other side records ``versions_now`` and writes the file.
    """
    path = config.out / ENVIRONMENT_FILE
    current = {"env_id": info.env["env_id"], "simulator": simulator,
               "package": SIMULATOR_PACKAGES.get(simulator, simulator),
               "env": {k: v for k, v in info.env.items() if k != "env_id"}, "versions": versions_now}
    if path.exists() and rows:
        try:
            stored = json.loads(path.read_text(encoding="utf-8"))
            stored["versions"] = dict(stored["versions"])
        except (json.JSONDecodeError, KeyError, TypeError, ValueError):
            raise ValidateError(f"{path} is corrupt: delete it (the next run rewrites it) and re-run") from None
        return {**current, "versions": stored["versions"], "versions_now": current["versions"]}, False
    return current, True


class _Environments:
    """Each evaluated side's spec (:func:`_side_spec`), by output folder, decided while its table is opened.

    The package versions are read once, when it is made.
    """

    def __init__(self) -> None:
        self.versions = package_versions()
        self.specs: dict[Path, dict[str, Any]] = {}

    def __call__(self, config: EvalConfig, simulator: str, info: EnvInfo,
                 rows: list[dict[str, Any]]) -> dict[Path, Any]:
        """Return the side's ``environment.json`` where it is written (validate's :data:`~evaltk.plan.SideFiles`)."""
        spec, write = _side_spec(config, simulator, info, rows, self.versions)
        self.specs[config.out] = spec
        return {config.out / ENVIRONMENT_FILE: spec} if write else {}


@dataclass
class PreparedValidation:
    """A validated request: the evaluations to run (one or two) and the baseline table, if any."""

    config: ValidateConfig
    sim: EvaluationPlan
    reference: EvaluationPlan | Side
    """The reference evaluation to run, or the baseline table read as the reference side."""
    environments: dict[Path, dict[str, Any]]
    """Each evaluated side's env spec and versions (:data:`ENVIRONMENT_FILE`), by its output folder."""
    alignment: Alignment | None = None
    """With ``--align``: the reference's env rewritten to the simulator's settings, and what was not aligned."""

    @property
    def evaluations(self) -> dict[str, EvaluationPlan]:
        """The evaluations this validation runs, by role (``sim``, and ``reference`` unless a baseline)."""
        runs = {"sim": self.sim}
        if not isinstance(self.reference, Side):
            runs["reference"] = self.reference
        return runs


def _baseline_side(path: Path, sim: EvaluationPlan, *, allow_different_envs: bool) -> Side:
    """Read a baseline score table; refuse one of another env id (or env spec, unless allowed)."""
    from evaltk.scores import ScoreTable
    from evaltk.table_comparison import LoadedTable, check_envs, load_table

    loaded = load_table(path)
    env_id = sim.info.env["env_id"]
    if loaded.env_id is not None and loaded.env_id != env_id:
        raise ValidateError(f"baseline {loaded.table.path} holds {loaded.env_id} episodes but "
                            f"{sim.config.checkpoint} plays {env_id}: give a baseline table of {env_id} episodes "
                            f"(or pass --env-id {loaded.env_id.split(',')[0]} if the policy fits that env)")
    planned = LoadedTable(ScoreTable(sim.config.out / TABLE_FILE, "return", np.empty(0), {"env_id": [env_id]}),
                          np.empty(0), None, env_id, sim.settings["env"])  # as tables store it (JSON lists)
    check_envs(loaded, planned, allow_different_envs=allow_different_envs)
    simulator = ",".join(loaded.table.labels.get("simulator", [])) or UNKNOWN
    spec: dict[str, Any] = {"env_id": loaded.env_id or UNKNOWN, "simulator": simulator,
                            "package": SIMULATOR_PACKAGES.get(simulator, UNKNOWN)}
    if loaded.env is not None:
        spec["env"] = {k: v for k, v in loaded.env.items() if k != "env_id"}
    environment = loaded.table.path.parent / ENVIRONMENT_FILE
    if environment.exists():  # the table is a side of an earlier `evaltk validate`
        with contextlib.suppress(json.JSONDecodeError, KeyError, TypeError, ValueError):  # else: not recorded
            spec["versions"] = dict(json.loads(environment.read_text(encoding="utf-8"))["versions"])
    if loaded.table.path.name == TABLE_FILE and loaded.table.settings is not None:
        rows = sorted(read_table(loaded.table.path), key=lambda r: r["index"])  # with frames and steps
    else:
        seeds = [None] * loaded.returns.size if loaded.seeds is None else [int(x) for x in loaded.seeds]
        digests = loaded.digests or [{}] * loaded.returns.size
        rows = [{"index": i, "seed": seed, "return": float(v), "digest": d.get("steps", ""),
                 "obs_digest": d.get("obs", "")}
                for i, (v, seed, d) in enumerate(zip(loaded.returns, seeds, digests, strict=True))]
    if len(rows) < 2:
        raise ValidateError(f"baseline {loaded.table.path} has {len(rows)} episode; a comparison needs at least 2")
    return Side(role="reference", source="baseline", table=loaded.table.path, rows=rows, spec=spec)


def prepare_validation(config: ValidateConfig) -> PreparedValidation:
    """Check every input, plan both sides and open (or resume) their score tables; raises before anything runs."""
    if config.episodes < 2:
        raise ValidateError(f"--episodes must be at least 2 for a comparison, got {config.episodes}")
    if config.align and config.baseline is not None:
        raise ValidateError("--align re-runs the reference with the simulator's settings: drop --baseline or --align")
    if config.rule.sequential:
        _check_sequential(config)
    names = [config.sim] if config.baseline is not None else [config.sim, config.reference]
    options = ["--sim", "--reference"][:len(names)]
    sims = resolve_all(names, options)
    if len(sims) == 2 and sims[0].name == sims[1].name:
        raise ValidateError(f"--sim and --reference are both {config.sim}: validate one simulator against another "
                            "(e.g. --sim gpu_env --reference gym) or against --baseline TABLE")
    sides = [_eval_config(config, name, sim) for name, sim in zip(names, sims, strict=True)]
    environments = _Environments()
    if config.baseline is not None:
        sim = plan_all(sides, simulators=sims, side_files=environments)[0]
        baseline = _baseline_side(config.baseline, sim, allow_different_envs=config.rule.allow_different_envs)
        return PreparedValidation(config, sim, baseline, environments.specs)
    if not config.align:
        sim, reference = plan_all(sides, options=options, simulators=sims, side_files=environments)
        return PreparedValidation(config, sim, reference, environments.specs)
    sim = plan_all(sides[:1], simulators=sims[:1], side_files=environments)[0]
    alignment = align_env(sim.info.env, sim.simulator_settings, sim.info.settings or {})
    reference = plan_all([_eval_config(config, config.reference, sims[1], alignment.env)], options=options[1:],
                         simulators=sims[1:], side_files=environments)[0]
    return PreparedValidation(config, sim, reference, environments.specs, alignment)


def _check_sequential(config: ValidateConfig) -> None:
    if config.baseline is not None:
        raise ValidateError("--sequential evaluates both sides in batches and cannot use a --baseline table: drop "
                            "--sequential, or run evaltk evaluate --until-verdict --baseline TABLE")
    verdict_sequential.check_budget("--episodes", config.episodes, config.rule.min_episodes)


def _evaluated_side(role: str, prep: EvaluationPlan, spec: dict[str, Any], progress: ProgressFn | None) -> Side:
    result = run_plan(prep, progress)
    side = Side(role=role, source="evaluated", table=prep.config.out / TABLE_FILE, rows=result.rows, spec=spec,
                result=result)
    if "versions_now" in spec and spec["versions_now"] != spec["versions"]:
        changed = sorted(k for k in spec["versions"] if spec["versions"].get(k) != spec["versions_now"].get(k))
        side.notes.append(f"{len(prep.old_rows)} resumed rows were written under other versions of "
                          f"{', '.join(changed)} (see versions vs versions_now); delete {prep.config.out} to rerun")
    return side


def pair_rows(reference: Side, sim: Side) -> dict[str, Any] | None:
    """Rows of the two sides matched by seed: counts and how many agree in return, frames and steps."""
    if reference.seeds is None or sim.seeds is None:
        return None
    by_seed = {int(r["seed"]): r for r in reference.rows}
    pairs = [(by_seed[int(r["seed"])], r) for r in sim.rows if int(r["seed"]) in by_seed]
    same = {key: sum(a.get(key) == b.get(key) for a, b in pairs) for key in ("return", "frames", "steps")}
    same["episode"] = sum(bool(a.get("digest")) and (a.get("digest"), a.get("obs_digest"))
                          == (b.get("digest"), b.get("obs_digest")) for a, b in pairs)
    return {"n_shared": len(pairs), "only_reference": len(reference.rows) - len(pairs),
            "only_sim": len(sim.rows) - len(pairs), "same": same,
            "rows": [{"seed": int(b["seed"]), "index": b.get("index"), "reference_return": a["return"],
                      "sim_return": b["return"], "reference_frames": a.get("frames"), "sim_frames": b.get("frames")}
                     for a, b in pairs]}


def _side_dict(side: Side) -> dict[str, Any]:
    if all("frames" in r for r in side.rows):
        summary = summarize(side.rows)
    else:  # a baseline table of returns only: no lengths or truncation flags recorded
        filled = [{**r, "frames": 0, "truncated": False} for r in side.rows]
        summary = {**summarize(filled), "mean_frames": None, "n_truncated": None}
    if side.result is not None:
        summary.update({k: side.result.summary[k] for k in ("new_episodes", "resumed_episodes", "wall_s",
                                                            "env_steps")})
    return {"role": side.role, "source": side.source, "simulator": side.spec["simulator"],
            "env_id": side.spec["env_id"], "table": str(side.table), "summary": summary, "notes": side.notes}


@dataclass
class Validation:
    """The outcome of :func:`run_validation`: both sides, compare's result and the rows paired by seed."""

    config: ValidateConfig
    sim: Side
    reference: Side
    comparison: Comparison
    """Reference (A) against simulator (B), with the episode seeds: its verdict is the report's."""
    pairs: dict[str, Any] | None
    files: dict[str, Path] = field(default_factory=dict)
    settings: dict[str, Any] | None = None  # both simulators' settings: evaltk.simulators.settings_diff
    sequential: verdict_sequential.SequentialComparison | None = None
    """Set with ``--sequential``: the looks and their verdict, which is the report's; ``comparison`` then
    describes the episodes the looks used."""

    @property
    def _sequential_decides(self) -> bool:
        """The looks' verdict is the report's, unless they stopped on equal returns that are not equal episodes."""
        if self.sequential is None:
            return False
        return self.sequential.verdict is not Verdict.IDENTICAL or self.comparison.identical is not None

    @property
    def verdict(self) -> str:
        """The verdict: ``identical``, ``equivalent``, ``different`` or ``inconclusive``.

        ``identical`` needs every shared seed's episode to be the same step for step (compare's digests);
        looks that stopped on equal returns whose episodes differ give the comparison's verdict instead.
        """
        if self.sequential is not None and self._sequential_decides:
            return str(self.sequential.verdict.value)
        return str(self.comparison.verdict.value)

    @property
    def identical(self) -> dict[str, Any] | None:
        """Compare's identical-episodes finding (``n_shared``, ``upper_bound``, ``message``...), if any."""
        if self.sequential is not None and self.sequential.verdict is not Verdict.IDENTICAL:
            return None
        return None if self.comparison.identical is None else self.comparison.identical.to_dict()

    def label(self, role: str) -> str:
        """How a side is named in reports: ``sim (gpu_env)``, ``reference (gym)``, ``reference (baseline)``."""
        side = self.sim if role == "sim" else self.reference
        return f"{role} ({side.spec['simulator'] if side.source == 'evaluated' else 'baseline'})"

    def verdict_line(self) -> str:
        """Return the one line that ends the printed summary."""
        d = self.comparison.decision
        identical = self.identical
        if self.sequential is not None and identical is None and self._sequential_decides:
            return (f"verdict: {self.verdict} (sequential, margin {d.margin:g}, {d.kind.value}; "
                    f"{self.sequential.reason})")
        if identical is not None:
            return f"verdict: {identical['message']} ({self.label('sim')} vs {self.label('reference')})"
        line = (f"verdict: {self.verdict} (margin {d.margin:g}, {d.kind.value}; {d.ci.level:.0%} CI of "
                f"{d.quantity} [{d.ci.low:.4g}, {d.ci.high:.4g}])")
        episodes = self.comparison.episodes
        if episodes is not None and episodes.note() is not None:
            line += f"; not identical: {episodes.short()}"
        if self.comparison.information is not None:
            line += f"; too few episodes: {self.comparison.information.episodes_to_decide} per side would decide"
        elif self.comparison.recommendation is not None:
            line += f"; about {self.comparison.recommendation.episodes_per_side} episodes per side would decide"
        return line

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
        rows = spec_rows(self.sim.spec, self.reference.spec)
        c = self.config
        checkpoint = self.sim.rows[0]["checkpoint"] if self.sim.rows else c.checkpoint
        report = {
            "command": "validate", "format": "evaltk-validate/1",
            "verdict": self.verdict, "verdict_line": self.verdict_line(), "identical": self.identical,
            "explanation": comparison["explanation"] if self.sequential is None else self.sequential.reason,
            "design": comparison["design"],
            "sequential": None if self.sequential is None else self.sequential.to_dict(),
            "checkpoint": checkpoint, "provenance": table_provenance(checkpoint),
            "env_id": self.sim.spec["env_id"], "episodes": c.episodes, "seed": c.seed,
            "margin": c.rule.margin, "margin_kind": comparison["margin_kind"], "alpha": c.rule.alpha,
            "ci": comparison["ci"], "ci_level": comparison["ci_level"], "ci_tost": comparison["ci_tost"],
            "episodes_needed": None if rec is None else rec.to_dict(),
            "episodes_needed_line": self.episodes_needed_line(), "information": comparison["information"],
            "sides": {"sim": _side_dict(self.sim), "reference": _side_dict(self.reference)},
            "environments": {"sim": self.sim.spec, "reference": self.reference.spec, "rows": rows,
                             "differs": [r["setting"] for r in rows if r["differs"]],
                             "not_recorded": [r["setting"] for r in rows
                                              if UNKNOWN in (r["sim"], r["reference"])]},
            "simulator_settings": self.settings, "pairs": self.pairs, "comparison": comparison,
            "files": {k: str(v) for k, v in self.files.items()},
        }
        return report if self.sequential is None else {**report, **self.sequential.report_fields()}


def run_validation(prep: PreparedValidation, progress: dict[str, ProgressFn] | None = None) -> Validation:
    """Run (or resume) the evaluations, compare them and pair the rows by seed; no files besides the tables."""
    progress = progress or {}
    c = prep.config
    rule = c.rule
    seq = _run_looks(prep, progress) if rule.sequential else None
    sim_prep, ref_prep = prep.sim, prep.reference
    if seq is not None:  # the sides are the episodes the looks used
        used = seq.episodes_used[1]
        sim_prep = plan(dataclasses.replace(prep.sim.config, episodes=used))
        if not isinstance(prep.reference, Side):
            ref_prep = plan(dataclasses.replace(prep.reference.config, episodes=used))
    specs = prep.environments
    sim = _evaluated_side("sim", sim_prep, specs[sim_prep.config.out], progress.get("sim"))
    reference = (ref_prep if isinstance(ref_prep, Side)
                 else _evaluated_side("reference", ref_prep, specs[ref_prep.config.out], progress.get("reference")))
    comparison = compare(reference.returns, sim.returns, rule.margin, rule.kind, alpha=rule.alpha, seed=c.seed,
                         n_resamples=rule.resamples, seeds_a=reference.seeds, seeds_b=sim.seeds,
                         paired=rule.pairing, min_episodes=rule.min_episodes,
                         digests_a=reference.digests, digests_b=sim.digests)
    ref_settings = None if isinstance(prep.reference, Side) else prep.reference.simulator_settings
    settings = settings_section(prep.sim.simulator_settings, ref_settings, prep.alignment)
    return Validation(c, sim, reference, comparison, pair_rows(reference, sim), settings=settings, sequential=seq)


def validate(config: ValidateConfig,
             start: Callable[[PreparedValidation], dict[str, ProgressFn]] | None = None) -> Validation:
    """Run a validation: :func:`prepare_validation` (every bad-input error first), then :func:`run_validation`.

    ``start`` gets the prepared validation and returns the progress callbacks, by role.
    """
    prep = prepare_validation(config)
    return run_validation(prep, None if start is None else start(prep))


def _run_looks(prep: PreparedValidation, progress: dict[str, ProgressFn]) -> verdict_sequential.SequentialComparison:
    """Evaluate both sides in batches (same seeds, so looks pair episode for episode) until a look decides."""
    c, rule = prep.config, prep.config.rule
    if isinstance(prep.reference, Side):
        raise ValidateError("--sequential needs two evaluated sides, not a --baseline table")
    sides = {"sim": prep.sim.config, "reference": prep.reference.config}
    sizes = verdict_sequential.look_sizes(c.episodes, rule.looks, rule.min_episodes)

    looked: dict[str, list[dict[str, Any]]] = {}

    def looks() -> Iterator[tuple[np.ndarray, np.ndarray]]:
        for size in sizes:
            returns = {}
            for role, config in sides.items():
                rows = run_plan(plan(dataclasses.replace(config, episodes=size)), progress.get(role)).rows
                looked[role] = rows[:size]
                returns[role] = np.array([float(r["return"]) for r in rows[:size]], dtype=np.float64)
            yield returns["reference"], returns["sim"]

    def identical(n: int) -> IdenticalRows | None:
        ref, sim = looked["reference"][:n], looked["sim"][:n]
        return verdict_sequential.rows_identical([int(r["seed"]) for r in ref], row_digests(ref),
                                                 [int(r["seed"]) for r in sim], row_digests(sim), rule.min_episodes)

    design = SequentialDesign.build([s / c.episodes for s in sizes], alpha=rule.alpha, spending=rule.spending)
    pairing = Pairing(c.episodes, 0, 0, True, None, "both sides run the same episode seeds") if rule.paired else None
    return verdict_sequential.run_sequential(looks(), design, rule.kind, rule.margin, paired=rule.paired,
                                             budget=(c.episodes, c.episodes), pairing=pairing, identical=identical)
