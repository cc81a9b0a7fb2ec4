"""Statistics for comparing episode scores and aggregating runs x tasks.

Every random step takes an explicit ``numpy.random.Generator``; every result is a small frozen
dataclass from :mod:`evaltk.stats.results`. Where scipy or statsmodels implement a test, evaltk
calls them (and the tests check agreement); see each function's docstring.
"""

from evaltk.stats.aggregate import iqm, optimality_gap, probability_of_improvement, stratified_bootstrap
from evaltk.stats.bootstrap import bootstrap_ci, bootstrap_diff_ci
from evaltk.stats.checks import StatsInputError
from evaltk.stats.equivalence import (
    mean_difference_ci,
    relative_ci,
    standardized_ci,
    tost_prob_superior,
    tost_relative,
    tost_standardized,
    tost_welch,
)
from evaltk.stats.multiple import holm_bonferroni
from evaltk.stats.power import (
    beyond_margin_sample_size,
    simulate_tost_power,
    tost_power,
    tost_sample_size,
)
from evaltk.stats.results import AggregateEstimate, ConfidenceInterval, EquivalenceResult, PowerResult, TestResult
from evaltk.stats.tests_two_sample import (
    brunner_munzel,
    ks_test,
    mann_whitney_u,
    permutation_test,
    welch_ci,
    welch_t,
)

__all__ = [
    "AggregateEstimate",
    "ConfidenceInterval",
    "EquivalenceResult",
    "PowerResult",
    "StatsInputError",
    "TestResult",
    "beyond_margin_sample_size",
    "bootstrap_ci",
    "bootstrap_diff_ci",
    "brunner_munzel",
    "holm_bonferroni",
    "iqm",
    "ks_test",
    "mann_whitney_u",
    "mean_difference_ci",
    "optimality_gap",
    "permutation_test",
    "probability_of_improvement",
    "relative_ci",
    "simulate_tost_power",
    "standardized_ci",
    "stratified_bootstrap",
    "tost_power",
    "tost_prob_superior",
    "tost_relative",
    "tost_sample_size",
    "tost_standardized",
    "tost_welch",
    "welch_ci",
    "welch_t",
]
