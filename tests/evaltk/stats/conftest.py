"""The two samples the stats tests compare against scipy and statsmodels."""

from __future__ import annotations

import numpy as np
import pytest


@pytest.fixture
def samples() -> tuple[np.ndarray, np.ndarray]:
    """Two independent samples without ties, of unequal size and spread: N(10.2, 2.0) x 60 and N(10.0, 2.5) x 45."""
    rng = np.random.default_rng(5)
    return rng.normal(10.2, 2.0, 60), rng.normal(10.0, 2.5, 45)
