"""Small frozen result types shared by every function in :mod:`evaltk.stats`.

Each result carries its numbers (statistic, p-value, confidence interval, sample sizes) and a
one-line human summary (``summary()``), and converts to a plain JSON-ready dict (``to_dict()``).
Undefined values (a test on zero-variance data) are ``nan``, never an exception.
"""

from __future__ import annotations

import math
from dataclasses import Field, asdict, dataclass
from typing import Any, ClassVar


def _fmt(value: float, digits: int = 4) -> str:
    """Format a float compactly; ``nan`` and infinities as words."""
    if math.isnan(value):
        return "undefined"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return f"{value:.{digits}g}"


class JsonResult:
    """Base of the frozen result dataclasses: :meth:`to_dict` gives their fields as a plain, JSON-ready dict."""

    __dataclass_fields__: ClassVar[dict[str, Field[Any]]]  # set by @dataclass on each subclass

    def to_dict(self) -> dict[str, Any]:
        """Plain dict for JSON output (nested result dataclasses become dicts too)."""
        return asdict(self)


@dataclass(frozen=True)
class ConfidenceInterval(JsonResult):
    """A two-sided confidence interval for one quantity.

    Attributes:
        estimate: point estimate of the quantity.
        low: lower limit (may be ``-inf`` for an unbounded interval).
        high: upper limit (may be ``inf``).
        level: coverage, e.g. ``0.95``.
        method: how it was computed, e.g. ``"welch-t"``, ``"bootstrap-bca"``.
        quantity: what it is an interval for, e.g. ``"mean(B) - mean(A)"``.

    """

    estimate: float
    low: float
    high: float
    level: float
    method: str
    quantity: str

    def contains(self, value: float) -> bool:
        """Return True when ``low <= value <= high``."""
        return self.low <= value <= self.high

    def summary(self) -> str:
        """One line: quantity, estimate and interval."""
        return (
            f"{self.quantity} = {_fmt(self.estimate)}, {self.level:.0%} CI "
            f"[{_fmt(self.low)}, {_fmt(self.high)}] ({self.method})"
        )


@dataclass(frozen=True)
class TestResult(JsonResult):
    """Result of a two-sample test of "no difference".

    Attributes:
        name: short test name, e.g. ``"welch_t"``.
        statistic: the test statistic (its meaning depends on the test).
        pvalue: p-value for the stated alternative; ``nan`` when undefined.
        n_a: size of sample A.
        n_b: size of sample B.
        alternative: ``"two-sided"``, ``"less"`` or ``"greater"``.
        estimate: the effect the test is about (e.g. the mean difference), ``nan`` if none.
        method: the implementation used, e.g. ``"scipy.stats.ttest_ind(equal_var=False)"``.
        note: extra information (ties, fallbacks), empty when none.

    """

    __test__ = False  # not a pytest test class

    name: str
    statistic: float
    pvalue: float
    n_a: int
    n_b: int
    alternative: str
    estimate: float
    method: str
    note: str = ""

    def rejects(self, alpha: float) -> bool:
        """Return True when the p-value is defined and below ``alpha``."""
        return not math.isnan(self.pvalue) and self.pvalue < alpha

    def summary(self) -> str:
        """One line: name, statistic, p-value and sizes."""
        extra = f"; {self.note}" if self.note else ""
        return (
            f"{self.name}: statistic={_fmt(self.statistic)}, p={_fmt(self.pvalue)} "
            f"({self.alternative}, n_a={self.n_a}, n_b={self.n_b}){extra}"
        )


@dataclass(frozen=True)
class EquivalenceResult(JsonResult):
    """Result of a TOST equivalence test: H0 is "quantity <= low or quantity >= high".

    Attributes:
        name: e.g. ``"tost_welch"``.
        estimate: point estimate of the quantity.
        low: lower equivalence bound (in the quantity's units).
        high: upper equivalence bound.
        pvalue: the TOST p-value, ``max(p_lower, p_upper)``.
        p_lower: p-value of the one-sided test of H0 "quantity <= low".
        p_upper: p-value of the one-sided test of H0 "quantity >= high".
        ci: the ``1 - 2 alpha`` interval dual to the test (inside the bounds iff equivalent at alpha).
        n_a: size of sample A.
        n_b: size of sample B.
        alpha: level the ``ci`` was built for.
        method: implementation used.
        note: extra information (fallbacks for degenerate data), empty when none.

    """

    name: str
    estimate: float
    low: float
    high: float
    pvalue: float
    p_lower: float
    p_upper: float
    ci: ConfidenceInterval
    n_a: int
    n_b: int
    alpha: float
    method: str
    note: str = ""

    @property
    def equivalent(self) -> bool:
        """True when both one-sided tests reject at ``alpha``."""
        return not math.isnan(self.pvalue) and self.pvalue < self.alpha

    def summary(self) -> str:
        """One line: estimate, bounds, p-value and decision."""
        word = "equivalent" if self.equivalent else "not shown equivalent"
        return (
            f"{self.name}: estimate={_fmt(self.estimate)} within ({_fmt(self.low)}, {_fmt(self.high)})? "
            f"p={_fmt(self.pvalue)} -> {word} at alpha={self.alpha:g} (n_a={self.n_a}, n_b={self.n_b})"
        )

    def to_dict(self) -> dict[str, Any]:
        """Plain dict for JSON output (``equivalent`` included)."""
        return {**super().to_dict(), "equivalent": self.equivalent}


@dataclass(frozen=True)
class PowerResult(JsonResult):
    """Power of, or sample size for, an equivalence test.

    Attributes:
        power: probability that the test declares equivalence.
        n_per_side: sample size per side the power refers to.
        margin: equivalence margin (symmetric, in the same units as ``true_difference`` and ``sd``).
        true_difference: the assumed true difference.
        sd: the assumed per-observation standard deviation (1.0 when working in SD units).
        alpha: level of each one-sided test.
        method: ``"closed-form"`` or ``"simulation"``.
        n_sims: number of simulated pairs (0 for the closed form).

    """

    power: float
    n_per_side: int
    margin: float
    true_difference: float
    sd: float
    alpha: float
    method: str
    n_sims: int = 0

    def summary(self) -> str:
        """One line: power at n and the assumptions."""
        return (
            f"power={self.power:.3f} at n={self.n_per_side} per side (margin={_fmt(self.margin)}, "
            f"true difference={_fmt(self.true_difference)}, sd={_fmt(self.sd)}, alpha={self.alpha:g}, {self.method})"
        )


@dataclass(frozen=True)
class AggregateEstimate(JsonResult):
    """An aggregate score (IQM, optimality gap, ...) with a stratified-bootstrap interval.

    Attributes:
        name: aggregate name, e.g. ``"iqm"``.
        ci: point estimate and percentile interval.
        n_runs: runs per task (a tuple when several score matrices were resampled).
        n_tasks: number of tasks.
        reps: bootstrap replicates.

    """

    name: str
    ci: ConfidenceInterval
    n_runs: tuple[int, ...]
    n_tasks: int
    reps: int

    def summary(self) -> str:
        """One line: name, estimate and interval."""
        return f"{self.name}: {self.ci.summary()} (runs={self.n_runs}, tasks={self.n_tasks}, reps={self.reps})"
