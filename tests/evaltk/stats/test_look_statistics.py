"""Per-look statistics of the sequential comparison (evaltk.stats.look_statistics) against statsmodels."""

from __future__ import annotations

import numpy as np
import pytest
from statsmodels.stats.weightstats import ttost_ind, ttost_paired

from evaltk.stats.equivalence import tost_standardized
from evaltk.stats.look_statistics import look_stats


def test_look_stats_match_statsmodels_and_fixed_tests() -> None:
    rng = np.random.default_rng(0)
    a, b = rng.normal(0, 1, 30), rng.normal(0.2, 1.5, 40)
    st = look_stats(a[None], b[None], -0.5, 0.5, "absolute", paired=False)
    _, lower, upper = ttost_ind(b, a, -0.5, 0.5, usevar="unequal")
    assert st.p_lower[0] == pytest.approx(float(lower[1]), rel=1e-10)
    assert st.p_upper[0] == pytest.approx(float(upper[1]), rel=1e-10)
    sd = look_stats(a[None], b[None], -0.5, 0.5, "sd", paired=False)
    ref = tost_standardized(b, a, -0.5, 0.5)
    assert sd.p_lower[0] == pytest.approx(ref.p_lower, rel=1e-6)
    assert sd.p_upper[0] == pytest.approx(ref.p_upper, rel=1e-6)
    pa = look_stats(a[None], b[None, :30], -0.5, 0.5, "absolute", paired=True)
    _, lower, upper = ttost_paired(b[:30], a, -0.5, 0.5)
    assert pa.p_lower[0] == pytest.approx(float(lower[1]), rel=1e-10)
