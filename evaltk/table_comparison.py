"""Comparing score *tables*: env checks, seeds for pairing and episode order.

:func:`compare_tables` reads two tables (:func:`evaltk.scores.read_scores`), refuses tables of
different env ids or env specs unless ``allow_different_envs`` (the finding is kept and shown in the
report), pairs rows by their ``seed`` column and calls :func:`evaltk.verdict.compare`.

:func:`load_table` gives the returns and seeds in episode order, which the sequential comparison
(:func:`evaltk.verdict.sequential.compare_sequential`) reads as if the episodes had arrived in batches.

A table's env spec is the ``env`` entry of the ``evaluation.json`` that ``evaltk evaluate`` writes
next to ``episodes.csv``; its env id is the table's ``env_id`` column. Rows are put in episode order
by the ``index`` column when there is one (``evaltk evaluate`` writes rows as episodes finish).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from evaltk.envs.atari_settings import UNKNOWN
from evaltk.margin import MarginKind
from evaltk.scores import ScoreTable, read_scores
from evaltk.simulators.settings_diff import difference_rows, flatten
from evaltk.stats.checks import FloatArray
from evaltk.verdict import MIN_EPISODES, CompareError, Comparison, compare


@dataclass(frozen=True)
class LoadedTable:
    """A score table with what comparing needs besides the returns.

    Attributes:
        table: the table as :func:`evaltk.scores.read_scores` returns it.
        returns: returns in episode order (by ``index`` when the table has that column).
        seeds: episode seeds in the same order (``None`` without a ``seed`` column).
        env_id: the table's single ``env_id`` (``None`` if absent; ``"A,B"`` if it holds several).
        env: the env spec from ``evaluation.json`` next to the table (``None`` if there is none).
        digests: per-episode digests in the same order (``None`` when the table records none).

    """

    table: ScoreTable
    returns: FloatArray = field(repr=False)
    seeds: np.ndarray | None = field(repr=False)
    env_id: str | None
    env: dict[str, Any] | None
    digests: list[dict[str, str]] | None = field(default=None, repr=False)


def load_table(path: str | Path, *, column: str = "return") -> LoadedTable:
    """Read ``path`` with its seeds, episode order and env spec (see the module docstring)."""
    table = read_scores(path, column=column)
    returns, seeds, index, digests = table.returns, table.seeds, table.index, table.digests
    if index is not None:
        order = np.argsort(index, kind="stable")
        returns = returns[order]
        seeds = None if seeds is None else seeds[order]
        digests = None if digests is None else [digests[i] for i in order.tolist()]
    if seeds is not None and np.unique(seeds).size != seeds.size:
        seeds = None  # not one seed per episode: cannot pair
    env_ids = table.labels.get("env_id")
    env_id = ",".join(env_ids) if env_ids else None
    env = table.settings.get("env") if table.settings is not None else None
    return LoadedTable(table, returns, seeds, env_id, env if isinstance(env, dict) else None, digests)


def spec_rows(sim: dict[str, Any], reference: dict[str, Any]) -> list[dict[str, Any]]:
    """Put the two specs side by side (flattened): one row per setting, ``differs`` True where the values differ.

    ``versions_now`` is left out (it only explains resumed rows). Settings a baseline does not record
    show :data:`~evaltk.envs.atari_settings.UNKNOWN` and are not counted as differences
    (:func:`~evaltk.simulators.settings_diff.difference_rows`, the one settings diff).
    """
    a = flatten({k: v for k, v in sim.items() if k != "versions_now"})
    b = flatten({k: v for k, v in reference.items() if k != "versions_now"})
    return difference_rows(a, b, keys=())


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
        for row in sorted(spec_rows(a.env, b.env), key=lambda r: str(r["setting"])):
            key, va, vb = row["setting"], row["sim"], row["reference"]
            if key != "env_id" and va != vb:  # a key only one spec has counts here: the specs are both known
                differences.append(f"{key} = {None if va == UNKNOWN else va!r} (A) vs "
                                   f"{None if vb == UNKNOWN else vb!r} (B)")
    check = EnvCheck(a.env_id, b.env_id, differences, allow_different_envs, a.env is not None and b.env is not None)
    if differences and not allow_different_envs:
        raise CompareError(f"the tables come from different environments ({'; '.join(differences)}): a verdict "
                           "between them compares the environments, not the agents; pass --allow-different-envs "
                           "if that is what you mean")
    return check


@dataclass(frozen=True)
class TableComparison:
    """:func:`evaltk.verdict.compare` on two tables, with the env check.

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
                     seeds_a=a.seeds, seeds_b=b.seeds, paired=paired, min_episodes=min_episodes,
                     digests_a=a.digests, digests_b=b.digests)
    return TableComparison(result, a, b, env_check)
