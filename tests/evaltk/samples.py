"""Comparisons of plain arrays in tests: the returns (and optional seeds and digests) as two samples and a rule."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from evaltk.verdict import Comparison, Sample, VerdictRule, compare
from evaltk.verdict.sequential import FixedSource, SequentialComparison, compare_sequential


def compare_arrays(a: Any, b: Any, margin: float, kind: str, *, bootstrap_seed: int = 0, resamples: int = 9999,
                   seeds_a: Any = None, seeds_b: Any = None, digests_a: Sequence[Mapping[str, str]] | None = None,
                   digests_b: Sequence[Mapping[str, str]] | None = None, paired: bool = True,
                   min_episodes: int = 10, alpha: float = 0.05) -> Comparison:
    """Return :func:`evaltk.verdict.compare` of ``a`` (reference) and ``b`` under the rule the keywords make."""
    rule = VerdictRule(margin=margin, kind=kind, alpha=alpha, resamples=resamples,  # type: ignore[arg-type]
                       bootstrap_seed=bootstrap_seed, paired=paired, min_episodes=min_episodes)
    return compare(Sample.of(a, seeds=seeds_a, digests=digests_a), Sample.of(b, seeds=seeds_b, digests=digests_b),
                   rule)


def sequential_arrays(a: Any, b: Any, margin: float, kind: str, *, looks: int = 10, seeds_a: Any = None,
                      seeds_b: Any = None, digests_a: Sequence[Mapping[str, str]] | None = None,
                      digests_b: Sequence[Mapping[str, str]] | None = None, paired: bool = True,
                      min_episodes: int = 10, alpha: float = 0.05) -> SequentialComparison:
    """Return the sequential comparison of two complete arrays read as if they had arrived in batches."""
    rule = VerdictRule(margin=margin, kind=kind, alpha=alpha, sequential=True, looks=looks,  # type: ignore[arg-type]
                       paired=paired, min_episodes=min_episodes)
    return compare_sequential(FixedSource(Sample.of(a, seeds=seeds_a, digests=digests_a)),
                              FixedSource(Sample.of(b, seeds=seeds_b, digests=digests_b)), rule)
