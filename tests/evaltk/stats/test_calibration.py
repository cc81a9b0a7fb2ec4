"""Fast calibration checks (the full tables come from benchmarks/stats_calibration.py).

Each simulation uses a fixed generator, so the rates are reproducible; the tolerances are
Monte-Carlo error bands around the target (about 2 standard errors).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from evaltk.stats import brunner_munzel, mann_whitney_u, welch_t
from evaltk.verdict import Verdict, decide
from tests.benchmark_modules import load_benchmark

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



@pytest.mark.parametrize("dist", [0, 2])  # normal and Atari-like bimodal scores
def test_sequential_calibration_benchmark_small(dist: int) -> None:
    """The benchmark's sequential row at 600 sequences: each outcome's error rate and the saving against fixed N."""
    bench = load_benchmark("stats_calibration_sequential")
    _, draw = bench.seq_dists()[dist]
    sims = 600
    row = bench.sequential_row(dist, draw, "absolute", sims, 0)
    band = 3.0 * math.sqrt(ALPHA * (1 - ALPHA) / sims)
    assert row.equivalent[0.5] <= ALPHA + band  # false "equivalent" on the margin
    assert row.different[0.5] <= ALPHA / 2 + band  # false "different" on the margin
    assert row.different[0.0] == 0.0
    assert row.equivalent[0.0] > 0.85  # planned 0.9
    assert row.different[1.0] > 0.85
    assert row.equivalent[1.0] == 0.0
    assert row.futility[0.5] > 0.5  # on the margin most sequences stop early for futility (non-binding) ...
    assert row.inconclusive[0.5] > row.futility[0.5]  # ... and are counted as inconclusive
    assert row.episodes[0.5] < 0.8 * row.n_max
    assert row.episodes[1.0] < 0.8 * row.fixed_n_difference  # fewer episodes than fixed N at equal power
    assert row.episodes[0.0] < 0.85 * row.fixed_n_equivalence


def test_sequential_benchmark_checks_each_outcome_against_its_own_bound() -> None:
    """At 10,000 sequences a false 'different' of 0.03 misses alpha/2 + 3 SE (0.0297); 0.029 passes."""
    bench = load_benchmark("stats_calibration_sequential")

    def row(eq_margin: float, diff_margin: float) -> Any:
        rates = dict.fromkeys(bench.SEQ_DELTAS, 0.0)
        return bench.SequentialRow(72, 10_000, {**rates, 0.5: eq_margin}, {**rates, 0.5: diff_margin}, rates,
                                   rates, rates, 69, 69, 0.8, 0.8, 69, 69)

    assert row(0.05, 0.029).misses() == []
    assert row(0.05, 0.030).misses() == ["false different 0.0300 at d = 0.5 > 0.0297"]
    assert row(0.057, 0.02).misses() == ["false equivalent 0.0570 at d = 0.5 > 0.0565"]


def test_sequential_benchmark_worst_saving_covers_every_row_but_t3_with_the_sd_margin() -> None:
    """The summary line's figures by hand: 1 - avg N / fixed N, the worst over the covered rows, per comparator."""
    bench = load_benchmark("stats_calibration_sequential")
    zero = dict.fromkeys(bench.SEQ_DELTAS, 0.0)

    def row(avg_0: float, avg_1: float, sim_0: int | None, sim_1: int | None) -> Any:
        episodes = {**zero, 0.0: avg_0, 1.0: avg_1}
        return bench.SequentialRow(100, 1000, zero, zero, zero, zero, episodes, 80, 90, 0.9, 0.9, sim_0, sim_1)

    rows = [("normal", "absolute", row(60.0, 60.0, 80, 100)),  # 25 %, 40 % (closed form 25 %, 33.3 %)
            ("normal", "sd", row(64.0, 70.0, 80, 100)),  # 20 %, 30 %
            ("t3 (heavy tails)", "sd", row(90.0, 95.0, 80, None)),  # not covered
            ("Breakout (real, resampled)", "sd", row(60.0, 80.0, 80, None))]  # fixed N beyond 400: > 80 %
    at_0, at_1, at_1_abs, closed_0, closed_1_abs = bench.worst_savings(rows)
    assert at_0 == pytest.approx(0.20)
    assert at_1 == pytest.approx(0.30)
    assert at_1_abs == pytest.approx(0.40)
    assert closed_0 == pytest.approx(0.20)
    assert closed_1_abs == pytest.approx(1 - 60 / 90)
