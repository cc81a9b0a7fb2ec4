"""Input checks shared by the statistics functions.

Every public function in :mod:`evaltk.stats` passes its samples through :func:`as_sample`, so a
bad argument fails early with one line naming the problem and the fix.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from evaltk.errors import EvaltkError

ArrayLike = npt.ArrayLike
FloatArray = npt.NDArray[np.float64]


class StatsInputError(EvaltkError, ValueError):
    """A statistics function got an argument it cannot use (too few values, NaN, bad level...)."""


def as_sample(values: ArrayLike, name: str, *, min_n: int = 2) -> FloatArray:
    """Return ``values`` as a 1-D ``float64`` array after checking it.

    Args:
        values: a 1-D sequence of finite numbers.
        name: how to call the sample in error messages (e.g. ``"A"``).
        min_n: the fewest values the caller can work with.

    Raises:
        StatsInputError: not 1-D, fewer than ``min_n`` values, or a NaN/infinite value.

    """
    arr = np.asarray(values, dtype=np.float64)
    if arr.ndim != 1:
        raise StatsInputError(f"sample {name} must be 1-D, got shape {arr.shape}; pass one score per episode")
    if arr.size < min_n:
        raise StatsInputError(
            f"sample {name} has {arr.size} value(s) but at least {min_n} are needed; run more episodes"
        )
    bad = ~np.isfinite(arr)
    if bad.any():
        index = int(np.flatnonzero(bad)[0])
        raise StatsInputError(
            f"sample {name} has a non-finite value {arr[index]!r} at position {index}; remove or fix that episode"
        )
    return arr


def check_alpha(alpha: float) -> float:
    """Return ``alpha`` if it lies in (0, 0.5), else raise :class:`StatsInputError`."""
    if not 0.0 < alpha < 0.5:
        raise StatsInputError(f"alpha must be in (0, 0.5), got {alpha!r}; the usual choice is 0.05")
    return float(alpha)


def check_level(level: float) -> float:
    """Return a confidence ``level`` if it lies in (0, 1), else raise :class:`StatsInputError`."""
    if not 0.0 < level < 1.0:
        raise StatsInputError(f"confidence level must be in (0, 1), got {level!r}; e.g. 0.95")
    return float(level)


def check_alternative(alternative: str) -> str:
    """Return ``alternative`` if it is one of scipy's three names, else raise."""
    allowed: Sequence[str] = ("two-sided", "less", "greater")
    if alternative not in allowed:
        raise StatsInputError(f"alternative must be one of {list(allowed)}, got {alternative!r}")
    return alternative


def check_generator(rng: object) -> np.random.Generator:
    """Return ``rng`` if it is a ``numpy.random.Generator``; evaltk never uses a global RNG."""
    if not isinstance(rng, np.random.Generator):
        raise StatsInputError(
            f"rng must be a numpy.random.Generator, got {type(rng).__name__}; pass np.random.default_rng(seed)"
        )
    return rng
