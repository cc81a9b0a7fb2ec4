"""rliable-style aggregates over score matrices ``float[runs, tasks]`` with a stratified bootstrap.

* :func:`iqm` - interquartile mean of all runs x tasks (``scipy.stats.trim_mean(.., 0.25)``).
* :func:`optimality_gap` - ``gamma - mean(min(scores, gamma))``.
* :func:`probability_of_improvement` - per task ``P(X > Y) + 0.5 P(X = Y)`` (Mann-Whitney
  ``U / (n_x n_y)``), averaged over tasks.
* :func:`stratified_bootstrap` - percentile CI of any of these: runs are resampled with
  replacement *within each task* (the task set stays fixed), each matrix independently, as in
  rliable's ``StratifiedBootstrap``; but with an explicit ``numpy.random.Generator``, so intervals
  repeat exactly.

The aggregate functions are vectorised: leading batch axes ``[..., runs, tasks]`` are kept.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from scipy import stats

from evaltk.stats.checks import ArrayLike, FloatArray, StatsInputError, check_generator, check_level
from evaltk.stats.results import AggregateEstimate, ConfidenceInterval

Aggregate = Callable[..., FloatArray]


def as_score_matrix(scores: ArrayLike, name: str = "scores") -> FloatArray:
    """Return ``scores`` as ``float64[runs, tasks]`` (a 1-D input is one task), checking it is finite."""
    arr = np.asarray(scores, dtype=np.float64)
    if arr.ndim == 1:
        arr = arr[:, None]
    if arr.ndim != 2 or arr.shape[0] < 1 or arr.shape[1] < 1:
        raise StatsInputError(f"{name} must be a [runs, tasks] matrix, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise StatsInputError(f"{name} contains NaN or infinite values; fill in or drop those runs")
    return arr


def iqm(scores: FloatArray) -> FloatArray:
    """Interquartile mean over the last two axes (runs x tasks): the 25 % trimmed mean."""
    flat = scores.reshape(*scores.shape[:-2], -1)
    out: FloatArray = np.asarray(stats.trim_mean(flat, 0.25, axis=-1), dtype=np.float64)
    return out


def optimality_gap(scores: FloatArray, gamma: float = 1.0) -> FloatArray:
    """``gamma - mean(min(scores, gamma))`` over the last two axes; ``gamma`` is the target score."""
    out: FloatArray = gamma - np.mean(np.minimum(scores, gamma), axis=(-2, -1))
    return out


def probability_of_improvement(x: FloatArray, y: FloatArray) -> FloatArray:
    """Average over tasks of ``P(X > Y) + 0.5 P(X = Y)``; ``x: [..., runs_x, tasks]``, ``y: [..., runs_y, tasks]``."""
    if x.shape[-1] != y.shape[-1]:
        raise StatsInputError(f"x has {x.shape[-1]} tasks but y has {y.shape[-1]}; both need the same task columns")
    sign = np.sign(x[..., :, None, :] - y[..., None, :, :])
    per_task = 0.5 + 0.5 * sign.mean(axis=(-3, -2))
    out: FloatArray = per_task.mean(axis=-1)
    return out


def stratified_bootstrap(
    func: Aggregate,
    *score_matrices: ArrayLike,
    rng: np.random.Generator,
    reps: int = 2000,
    level: float = 0.95,
    name: str = "",
) -> AggregateEstimate:
    """Percentile CI of ``func(*score_matrices)`` by resampling runs within each task.

    Args:
        func: vectorised aggregate taking one ``[..., runs, tasks]`` array per matrix.
        *score_matrices: ``float[runs_i, tasks]`` each (same number of tasks).
        rng: the only source of randomness.
        reps: bootstrap replicates.
        level: confidence level of the percentile interval.
        name: label of the result (defaults to ``func.__name__``).

    """
    check_generator(rng)
    check_level(level)
    if reps < 100:
        raise StatsInputError(f"reps must be >= 100, got {reps!r}; 2000 or more is usual")
    if not score_matrices:
        raise StatsInputError("give at least one score matrix")
    mats = [as_score_matrix(m, f"score matrix {i}") for i, m in enumerate(score_matrices)]
    n_tasks = mats[0].shape[1]
    if any(m.shape[1] != n_tasks for m in mats):
        raise StatsInputError(f"all score matrices need the same number of tasks, got {[m.shape[1] for m in mats]}")
    estimate = float(func(*mats))
    cols = np.arange(n_tasks)[None, None, :]
    per_rep = max(1, max(m.size for m in mats))
    chunk = max(1, 4_000_000 // (per_rep * max(1, len(mats)) * 8))
    values: list[FloatArray] = []
    done = 0
    while done < reps:
        k = min(chunk, reps - done)
        resampled = [m[rng.integers(0, m.shape[0], size=(k, *m.shape)), cols] for m in mats]
        values.append(np.asarray(func(*resampled), dtype=np.float64).reshape(k))
        done += k
    dist = np.concatenate(values)
    tail = (1.0 - level) / 2.0
    low, high = np.quantile(dist, [tail, 1.0 - tail])
    label = name or getattr(func, "__name__", "aggregate")
    ci = ConfidenceInterval(estimate, float(low), float(high), level, "stratified-bootstrap-percentile", label)
    return AggregateEstimate(label, ci, tuple(m.shape[0] for m in mats), n_tasks, reps)
