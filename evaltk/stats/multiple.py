"""Holm-Bonferroni adjustment of a family of p-values (``statsmodels multipletests(method="holm")``)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from statsmodels.stats.multitest import multipletests

from evaltk.stats.checks import StatsInputError, check_alpha


def holm_bonferroni(pvalues: Sequence[float], *, alpha: float = 0.05) -> tuple[list[float], list[bool]]:
    """Return ``(adjusted p-values, rejected)`` in the input order (step-down Holm, family-wise ``alpha``).

    ``nan`` p-values (undefined tests) are left out of the family and stay ``nan`` / not rejected.
    """
    check_alpha(alpha)
    values = [float(p) for p in pvalues]
    for p in values:
        if not math.isnan(p) and not 0.0 <= p <= 1.0:
            raise StatsInputError(f"p-values must lie in [0, 1], got {p!r}")
    keep = [i for i, p in enumerate(values) if not math.isnan(p)]
    adjusted = [math.nan] * len(values)
    rejected = [False] * len(values)
    if keep:
        rej, adj, _, _ = multipletests(np.asarray([values[i] for i in keep]), alpha=alpha, method="holm")
        for j, i in enumerate(keep):
            adjusted[i] = float(adj[j])
            rejected[i] = bool(rej[j])
    return adjusted, rejected
