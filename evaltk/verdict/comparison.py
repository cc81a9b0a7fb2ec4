"""What :func:`evaltk.verdict.compare` returns: the :class:`Comparison` of two samples, as every door reports it.

The verdict line (:meth:`Comparison.verdict_line`) quotes the interval the decision used: the ``1 - 2 alpha``
TOST interval for ``equivalent`` (and for ``inconclusive``, whose TOST did not pass), the ``1 - alpha``
interval for ``different``. The secondary tests and the bootstrap interval follow the design: on the per-seed
differences for a paired design, on the two samples for an unpaired one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from evaltk.stats.checks import FloatArray
from evaltk.stats.results import ConfidenceInterval, TestResult
from evaltk.verdict.differences import Differences, EnvCheck
from evaltk.verdict.result import (
    Decision,
    EpisodeMatch,
    IdenticalRows,
    InformationCheck,
    Pairing,
    Recommendation,
    Verdict,
    fmt,
)


def deciding_interval(decision: Decision) -> dict[str, Any]:
    """Return the interval the decision used: ``{"level", "ci", "role"}`` (``role``: what it was checked for)."""
    d = decision
    if d.verdict is Verdict.DIFFERENT or d.tost is None:
        ci = d.ci
        role = "outside the margin region" if d.verdict is Verdict.DIFFERENT else "exact"
    else:
        ci = d.tost.ci
        role = "inside the margin region" if d.verdict in (Verdict.EQUIVALENT, Verdict.IDENTICAL) else \
            "not inside the margin region"
    return {"level": ci.level, "ci": [ci.low, ci.high], "method": ci.method, "role": role}


@dataclass(frozen=True)
class Comparison:
    """Everything a verdict between two samples reports: the checks, the decision, diagnostics and a plan.

    Attributes:
        decision: verdict and primary tests.
        tests: secondary tests by name (B vs A), each with its own p-value: on the per-seed differences when the
            design is paired (paired t, Wilcoxon signed-rank, sign-flip permutation), else on the two samples.
        holm: Holm-Bonferroni adjusted p-values of the secondary tests, by name.
        bootstrap_ci: BCa bootstrap ``1 - alpha`` CI of ``mean(B) - mean(A)`` (resampling pairs when paired).
        recommendation: episodes needed when inconclusive.
        describe_a: summary statistics of A.
        describe_b: summary statistics of B.
        bootstrap_seed: the base seed of the resampling generator (stream ``verdict.bootstrap``).
        a: the reference scores.
        b: the candidate scores.
        env_check: whether the sides were asked to play the same environment.
        differences: what each side ran, side by side (the one settings diff).
        identical: set when every shared seed gives the same episode in A and B (verdict ``identical``).
        pairing: how the rows matched by seed (``None`` without seeds).
        information: set when the minimum-information rule withheld the verdict.
        episodes: the rows matched by seed and compared through their digests (``None`` without seeds).

    """

    decision: Decision
    tests: dict[str, TestResult]
    holm: dict[str, float]
    bootstrap_ci: ConfidenceInterval
    recommendation: Recommendation | None
    describe_a: dict[str, float | int]
    describe_b: dict[str, float | int]
    bootstrap_seed: int
    a: FloatArray = field(repr=False)
    b: FloatArray = field(repr=False)
    env_check: EnvCheck
    differences: Differences
    identical: IdenticalRows | None = None
    pairing: Pairing | None = None
    information: InformationCheck | None = None
    episodes: EpisodeMatch | None = None

    @property
    def verdict(self) -> Verdict:
        """Shortcut for ``decision.verdict``."""
        return self.decision.verdict

    @property
    def labels(self) -> tuple[str, str]:
        """How the sides are named (A, B)."""
        return self.differences.names

    def headline(self) -> str:
        """Return the text after ``verdict:``: the identical finding and its bound, or why not identical."""
        if self.identical is not None:
            return self.identical.summary()
        if self.episodes is not None and self.episodes.note() is not None:
            return f"{self.verdict.value}; not identical: {self.episodes.short()}"
        return self.verdict.value

    def summary(self) -> str:
        """One line: verdict and the reason."""
        line = f"{self.verdict.value}: {self.decision.explanation}"
        if self.information is not None:
            line += f"; {self.information.reason}"
        elif self.recommendation is not None:
            line += f"; {self.recommendation.summary()}"
        return line

    def verdict_line(self) -> str:
        """Return the one line that ends every door's summary; it quotes the interval the decision used."""
        d = self.decision
        if self.identical is not None:
            return f"verdict: {self.identical.summary()} ({self.labels[1]} vs {self.labels[0]})"
        if d.too_little_information and self.information is not None:
            line = f"verdict: {d.verdict.value} (margin {d.margin:g}, {d.kind.value}, {d.design}; too few episodes)"
        else:
            iv = deciding_interval(d)
            region = f"({fmt(d.low)}, {fmt(d.high)})"
            if iv["role"] == "exact":
                why = f"{d.quantity} = {fmt(d.estimate)} exactly (constant samples), region {region}"
            else:
                why = (f"{iv['level']:.0%} CI of {d.quantity} [{iv['ci'][0]:.4g}, {iv['ci'][1]:.4g}] {iv['role']} "
                       f"{region}")
            line = f"verdict: {d.verdict.value} (margin {d.margin:g}, {d.kind.value}, {d.design}; {why})"
        if self.episodes is not None and self.episodes.note() is not None:
            line += f"; not identical: {self.episodes.short()}"
        if self.information is not None:
            line += f"; {self.information.episodes_to_decide} episodes per side would decide"
        elif self.recommendation is not None:
            line += f"; about {self.recommendation.episodes_per_side} episodes per side would decide"
        return line

    def to_dict(self) -> dict[str, Any]:
        """Return the JSON object ``evaltk compare --json`` prints (``verdict``, ``margin``, ``ci``, ``tests``...)."""
        d = self.decision
        tests: dict[str, Any] = {}
        for name, res in self.tests.items():
            entry = res.to_dict()
            entry["p_holm"] = self.holm.get(name)
            tests[name] = entry
        if d.tost is not None:
            tests["tost"] = d.tost.to_dict()
        return {
            "verdict": d.verdict.value,
            "verdict_line": self.verdict_line(),
            "margin": d.margin,
            "margin_kind": d.kind.value,
            "margin_region": [d.low, d.high],
            "quantity": d.quantity,
            "estimate": d.estimate,
            "alpha": d.alpha,
            "n_a": d.n_a,
            "n_b": d.n_b,
            "ci": [d.ci.low, d.ci.high],
            "ci_level": d.ci.level,
            "ci_method": d.ci.method,
            "ci_tost": [d.tost.ci.low, d.tost.ci.high] if d.tost is not None else [d.ci.low, d.ci.high],
            "ci_tost_level": 1.0 - 2.0 * d.alpha,
            "decision_interval": deciding_interval(d),
            "primary_difference_test": d.difference.name if d.difference is not None else None,
            "tests": tests,
            "bootstrap_ci_mean_difference": self.bootstrap_ci.to_dict(),
            "recommendation": None if self.recommendation is None else self.recommendation.to_dict(),
            "explanation": d.explanation,
            "constant_samples": d.constant,
            "design": d.design,
            "identical": None if self.identical is None else self.identical.to_dict(),
            "pairing": None if self.pairing is None else self.pairing.to_dict(),
            "information": None if self.information is None else self.information.to_dict(),
            "episodes": None if self.episodes is None else {**self.episodes.to_dict(), "compared_words":
                                                            self.episodes.what, "note": self.episodes.note()},
            "environments": self.env_check.to_dict(),
            "settings": self.differences.to_dict(),
            "a": self.describe_a,
            "b": self.describe_b,
            "bootstrap_seed": self.bootstrap_seed,
        }
