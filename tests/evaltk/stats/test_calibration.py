"""Fast calibration checks (the full tables come from benchmarks/stats_calibration.py).

Each simulation uses a fixed generator, so the rates are reproducible; the tolerances are
Monte-Carlo error bands around the target (about 2 standard errors).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from evaltk.compare import Verdict, decide
from evaltk.stats import brunner_munzel, mann_whitney_u, welch_t

ALPHA = 0.05


def _mc_band(sims: int) -> float:
    return 2.0 * math.sqrt(ALPHA * (1 - ALPHA) / sims)


def test_difference_tests_hold_their_level_on_equal_distributions() -> None:
    sims, n = 1000, 30
    rng = np.random.default_rng(2024)
    rejections = {"welch_t": 0, "mann_whitney_u": 0, "brunner_munzel": 0}
    for _ in range(sims):
        a, b = rng.normal(10, 2, n), rng.normal(10, 2, n)
        rejections["welch_t"] += welch_t(b, a).rejects(ALPHA)
        rejections["mann_whitney_u"] += mann_whitney_u(b, a).rejects(ALPHA)
        rejections["brunner_munzel"] += brunner_munzel(b, a).rejects(ALPHA)
    for name, count in rejections.items():
        assert 0.03 <= count / sims <= 0.07, (name, count / sims)


@pytest.mark.parametrize(("kind", "margin", "shift", "sims"), [
    ("sd", 0.5, 0.5, 600),          # true difference = 0.5 SD = the margin
    ("prob", 0.1, 0.3582869, 500),  # sqrt(2) * Phi^-1(0.6): P(B > A) = 0.6 = 0.5 + margin
])
def test_tost_false_equivalence_at_the_margin(kind: str, margin: float, shift: float, sims: int) -> None:
    rng = np.random.default_rng(7)
    n = 150
    hits = 0
    for _ in range(sims):
        a, b = rng.normal(0, 1, n), rng.normal(shift, 1, n)
        hits += decide(a + 10, b + 10, margin, kind, rng=rng).verdict is Verdict.EQUIVALENT
    assert hits / sims <= ALPHA + _mc_band(sims)

