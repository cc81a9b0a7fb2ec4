"""Comparing score *tables*: env checks, seeds for pairing, episode order, and the sequential verdict.

:func:`compare_tables` reads two tables (:func:`evaltk.scores.read_scores`), refuses tables of
different env ids or env specs unless ``allow_different_envs`` (the finding is kept and shown in the
report), pairs rows by their ``seed`` column and calls :func:`evaltk.compare.compare`.

:func:`compare_sequential` runs the group-sequential TOST (:mod:`evaltk.stats.sequential`) over
two samples in episode order, as if the episodes had arrived in ``looks`` batches, and stops at the
first look that decides.

A table's env spec is the ``env`` entry of the ``evaluation.json`` that ``evaltk evaluate`` writes
next to ``episodes.csv``; its env id is the table's ``env_id`` column. Rows are put in episode order
by the ``index`` column when there is one (``evaltk evaluate`` writes rows as episodes finish).
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from evaltk.compare import (
    MIN_EPISODES,
    CompareError,
    Comparison,
    IdenticalRows,
    Pairing,
    Verdict,
    _kind,
    _pairing,
    compare,
)
from evaltk.errors import ScoreTableError
from evaltk.margin import MarginKind
from evaltk.scores import ScoreTable, read_scores
from evaltk.stats.boundaries import Spending
from evaltk.stats.sequential import (
    SEQUENTIAL_KINDS,
    Look,
    Outcome,
    SequentialDesign,
    information_fraction,
    run_sequence,
)
from evaltk.stats.validate import FloatArray, StatsInputError

SETTINGS_FILE = "evaluation.json"
OUTCOME_VERDICT = {Outcome.EQUIVALENT: Verdict.EQUIVALENT, Outcome.DIFFERENT: Verdict.DIFFERENT,
                   Outcome.FUTILE: Verdict.INCONCLUSIVE, Outcome.INCONCLUSIVE: Verdict.INCONCLUSIVE,
                   Outcome.CONTINUE: Verdict.INCONCLUSIVE}


@dataclass(frozen=True)
class LoadedTable:
    """A score table with what comparing needs besides the returns.

    Attributes:
        table: the table as :func:`evaltk.scores.read_scores` returns it.
        returns: returns in episode order (by ``index`` when the table has that column).
        seeds: episode seeds in the same order (``None`` without a ``seed`` column).
        env_id: the table's single ``env_id`` (``None`` if absent; ``"A,B"`` if it holds several).
        env: the env spec from ``evaluation.json`` next to the table (``None`` if there is none).

    """

    table: ScoreTable
    returns: FloatArray = field(repr=False)
    seeds: np.ndarray | None = field(repr=False)
    env_id: str | None
    env: dict[str, Any] | None


def _optional_column(path: Path, column: str) -> FloatArray | None:
    try:
        return read_scores(path, column=column).returns
    except ScoreTableError:
        return None


def load_table(path: str | Path, *, column: str = "return") -> LoadedTable:
    """Read ``path`` with its seeds, episode order and env spec (see the module docstring)."""
    table = read_scores(path, column=column)
    returns = table.returns
    seeds = _optional_column(table.path, "seed")
    index = _optional_column(table.path, "index")
    if index is not None and index.size == returns.size:
        order = np.argsort(index, kind="stable")
        returns = returns[order]
        seeds = None if seeds is None else seeds[order]
    if seeds is not None and (seeds.size != returns.size or np.unique(seeds).size != seeds.size):
        seeds = None  # not one seed per episode: cannot pair
    env_ids = table.labels.get("env_id")
    env_id = ",".join(env_ids) if env_ids else None
    env: dict[str, Any] | None = None
    settings = table.path.parent / SETTINGS_FILE
    if settings.is_file():
        try:
            loaded = json.loads(settings.read_text(encoding="utf-8"))["settings"]["env"]
            env = loaded if isinstance(loaded, dict) else None
        except (json.JSONDecodeError, KeyError, TypeError, OSError):
            env = None
    return LoadedTable(table, returns, None if seeds is None else seeds.astype(np.int64), env_id, env)


def _flatten(prefix: str, value: Any, out: dict[str, Any]) -> None:
    if isinstance(value, dict):
        for key in sorted(value):
            _flatten(f"{prefix}.{key}" if prefix else str(key), value[key], out)
    else:
        out[prefix] = value


@dataclass(frozen=True)
class EnvCheck:
    """Whether two tables come from the same environment.

    Attributes:
        env_id_a: A's env id (``None`` if the table has no ``env_id`` column).
        env_id_b: B's env id.
        differences: each difference in words (env id, then spec fields), empty when the same.
        allowed: True when the user accepted different envs (``--allow-different-envs``).
        spec_known: True when both tables had an ``evaluation.json`` with the env spec.

    """

    env_id_a: str | None
    env_id_b: str | None
    differences: list[str]
    allowed: bool
    spec_known: bool

    @property
    def same(self) -> bool:
        """True when no difference was found."""
        return not self.differences

    def summary(self) -> str:
        """One line for people."""
        if self.same:
            what = "same env id and spec" if self.spec_known else "same env id (no env spec to compare)"
            return f"environments: {what}" if self.env_id_a or self.spec_known else "environments: not recorded"
        return ("DIFFERENT ENVIRONMENTS (compared because --allow-different-envs was given): "
                + "; ".join(self.differences))

    def to_dict(self) -> dict[str, Any]:
        """Plain dict for JSON output (with ``same``)."""
        return {**asdict(self), "same": self.same}


def check_envs(a: LoadedTable, b: LoadedTable, *, allow_different_envs: bool = False) -> EnvCheck:
    """Compare env ids and env specs; raise :class:`CompareError` on a difference unless allowed."""
    differences: list[str] = []
    if a.env_id is not None and b.env_id is not None and a.env_id != b.env_id:
        differences.append(f"env id {a.env_id!r} (A) vs {b.env_id!r} (B)")
    if a.env is not None and b.env is not None:
        fa: dict[str, Any] = {}
        fb: dict[str, Any] = {}
        _flatten("", a.env, fa)
        _flatten("", b.env, fb)
        for key in sorted(set(fa) | set(fb)):
            if key != "env_id" and fa.get(key) != fb.get(key):
                differences.append(f"{key} = {fa.get(key)!r} (A) vs {fb.get(key)!r} (B)")
    check = EnvCheck(a.env_id, b.env_id, differences, allow_different_envs, a.env is not None and b.env is not None)
    if differences and not allow_different_envs:
        raise CompareError(f"the tables come from different environments ({'; '.join(differences)}): a verdict "
                           "between them compares the environments, not the agents; pass --allow-different-envs "
                           "if that is what you mean")
    return check


@dataclass(frozen=True)
class TableComparison:
    """:func:`evaltk.compare.compare` on two tables, with the env check.

    Attributes:
        comparison: the comparison (``comparison.identical`` / ``.pairing`` for seeds).
        table_a: A as loaded.
        table_b: B as loaded.
        env_check: the env id / spec check.

    """

    comparison: Comparison
    table_a: LoadedTable
    table_b: LoadedTable
    env_check: EnvCheck

    def to_dict(self) -> dict[str, Any]:
        """Return the comparison's JSON object plus ``environments`` and ``inputs``."""
        payload = self.comparison.to_dict()
        payload["environments"] = self.env_check.to_dict()
        payload["inputs"] = {"a": str(self.table_a.table.path), "b": str(self.table_b.table.path)}
        return payload


def compare_tables(path_a: str | Path, path_b: str | Path, margin: float, kind: MarginKind | str, *,
                   column: str = "return", allow_different_envs: bool = False, paired: str = "auto",
                   alpha: float = 0.05, seed: int = 0, n_resamples: int = 9999,
                   min_episodes: int = MIN_EPISODES) -> TableComparison:
    """Load both tables, check their envs, pair by seed and compare (A = reference, B = candidate)."""
    a, b = load_table(path_a, column=column), load_table(path_b, column=column)
    env_check = check_envs(a, b, allow_different_envs=allow_different_envs)
    result = compare(a.returns, b.returns, margin, kind, alpha=alpha, seed=seed, n_resamples=n_resamples,
                     seeds_a=a.seeds, seeds_b=b.seeds, paired=paired, min_episodes=min_episodes)
    return TableComparison(result, a, b, env_check)


@dataclass(frozen=True)
class SequentialComparison:
    """A group-sequential verdict over samples in episode order.

    Attributes:
        verdict: the verdict (``identical`` rows, or equivalent / different / inconclusive).
        outcome: what the last look decided (``futile``: cannot be shown equivalent within the budget).
        looks: the looks made, in order.
        design: the boundaries.
        kind: margin kind (``absolute`` or ``sd``).
        margin: the margin.
        paired: True when the looks used the per-seed differences.
        max_a: A's budget (episodes, or pairs when paired).
        max_b: B's budget.
        reason: why, in words.
        identical: set when every shared seed gave the same return.
        pairing: how the rows matched by seed.

    """

    verdict: Verdict
    outcome: Outcome
    looks: list[Look]
    design: SequentialDesign | None
    kind: str
    margin: float
    paired: bool
    max_a: int
    max_b: int
    reason: str
    identical: IdenticalRows | None = None
    pairing: Pairing | None = None

    @property
    def episodes_used(self) -> tuple[int, int]:
        """Episodes of A and of B the verdict used (pairs when paired)."""
        if not self.looks:
            return self.max_a, self.max_b
        return self.looks[-1].n_a, self.looks[-1].n_b

    def summary(self) -> str:
        """One line: verdict and reason."""
        return f"{self.verdict.value}: {self.reason}"

    def to_dict(self) -> dict[str, Any]:
        """Plain dict for JSON output."""
        used = self.episodes_used
        return {"verdict": self.verdict.value, "outcome": self.outcome.value, "sequential": True,
                "margin": self.margin, "margin_kind": self.kind, "design": "paired" if self.paired else "unpaired",
                "episodes_used": {"a": used[0], "b": used[1]}, "budget": {"a": self.max_a, "b": self.max_b},
                "looks": [look.to_dict() for look in self.looks],
                "boundaries": None if self.design is None else self.design.to_dict(),
                "explanation": self.reason,
                "identical": None if self.identical is None else self.identical.to_dict(),
                "pairing": None if self.pairing is None else self.pairing.to_dict()}


def look_sizes(n: int, looks: int, min_episodes: int) -> list[int]:
    """Episodes at each of ``looks`` equally spaced looks over ``n``, dropping looks below ``min_episodes``."""
    sizes = sorted({max(1, round(n * k / looks)) for k in range(1, looks + 1)})
    return [s for s in sizes if s >= min_episodes]


def _reason(outcome: Outcome, look: Look, total_looks: int, paired: bool) -> str:
    unit = "pairs" if paired else f"{look.n_a} / {look.n_b} episodes (A / B)"
    where = (f"at look {look.k} of {total_looks} after {look.n_b} {unit}" if paired
             else f"at look {look.k} of {total_looks} after {unit}")
    if outcome is Outcome.EQUIVALENT:
        return (f"equivalent {where}: both one-sided tests reject (TOST p = {look.p_tost:.3g} < nominal "
                f"{look.nominal_alpha:.3g} from the alpha-spending boundary)")
    if outcome is Outcome.DIFFERENT:
        return (f"different {where}: the difference is shown to exceed the margin (p = {look.p_beyond:.3g} < "
                f"nominal {look.nominal_alpha_beyond:.3g})")
    if outcome is Outcome.FUTILE:
        return (f"cannot be shown equivalent within the budget: stopped {where}; the estimate {look.estimate:.4g} "
                f"leaves the weaker one-sided test at Z = {look.z0:.2f}, at or below its futility boundary "
                f"{look.futility_z:.2f}")
    return f"inconclusive {where}: the budget is spent without a decision (TOST p = {look.p_tost:.3g})"


def compare_sequential(a: Any, b: Any, margin: float, kind: MarginKind | str, *, looks: int = 10,
                       alpha: float = 0.05, beta: float = 0.2,
                       spending: Spending | str = Spending.OBRIEN_FLEMING,
                       futility_spending: Spending | str = Spending.POCOCK, seeds_a: Any = None,
                       seeds_b: Any = None, paired: str = "auto",
                       min_episodes: int = MIN_EPISODES) -> SequentialComparison:
    """Group-sequential TOST over ``a`` and ``b`` taken in the given (episode) order, ``looks`` equal batches.

    The budget is the samples' lengths (pairs when paired); the first looks are dropped when they
    would have fewer than ``min_episodes`` per side.
    """
    kind_ = _kind(kind)
    if kind_.value not in SEQUENTIAL_KINDS:
        raise CompareError(f"--sequential supports margin kinds {list(SEQUENTIAL_KINDS)}, got {kind_.value!r}")
    if not (isinstance(looks, int) and 1 <= looks <= 50):
        raise CompareError(f"looks must be an integer in [1, 50], got {looks!r}; 10 is the default")
    if not (math.isfinite(margin) and margin > 0):
        raise CompareError(f"margin must be a positive number, got {margin!r}")
    xa, xb = np.asarray(a, np.float64), np.asarray(b, np.float64)
    pairs, pairing = _pairing(xa, xb, seeds_a, seeds_b, paired, kind_)
    if pairs is not None and pairs.n >= 2 and pairs.identical:
        rows = IdenticalRows(pairs.n, pairs.only_a, pairs.only_b)
        return SequentialComparison(Verdict.IDENTICAL, Outcome.EQUIVALENT, [], None, kind_.value, float(margin), True,
                                    pairs.n, pairs.n, rows.summary() + ": no test needed", rows, pairing)
    use_pairs = pairs is not None and pairing is not None and pairing.used
    if use_pairs and pairs is not None:
        xa, xb = pairs.a, pairs.b
        sizes = look_sizes(pairs.n, looks, min_episodes)
        plan = [(s, s) for s in sizes]
    else:
        plan = [(round(xa.size * s / xb.size), s) for s in look_sizes(xb.size, looks, min_episodes)]
        plan = [(na, nb) for na, nb in plan if na >= min_episodes]
    if not plan:
        return SequentialComparison(Verdict.INCONCLUSIVE, Outcome.INCONCLUSIVE, [], None, kind_.value, float(margin),
                                    use_pairs, xa.size, xb.size,
                                    f"too little information: {xa.size} vs {xb.size} episodes, a verdict needs at "
                                    f"least {min_episodes} per side", None, pairing)
    fractions = [information_fraction(na, nb, xa.size, xb.size, paired=use_pairs) for na, nb in plan]
    try:
        design = SequentialDesign.build(fractions, alpha=alpha, beta=beta, spending=spending,
                                        futility_spending=futility_spending)
        made = run_sequence(design, [(xa[:na], xb[:nb]) for na, nb in plan], kind_.value, float(margin),
                            paired=use_pairs)
    except StatsInputError as exc:
        raise CompareError(str(exc)) from exc
    last = made[-1]
    return SequentialComparison(OUTCOME_VERDICT[last.outcome], last.outcome, made, design, kind_.value, float(margin),
                                use_pairs, xa.size, xb.size, _reason(last.outcome, last, design.looks, use_pairs),
                                None, pairing)
