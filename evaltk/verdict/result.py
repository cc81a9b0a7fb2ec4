"""Result types of a transfer comparison: the verdict, the decision behind it, pairing, information and plans.

Plain frozen dataclasses with ``to_dict`` for JSON; no statistics run here (:mod:`evaltk.verdict.decision`
decides, :mod:`evaltk.verdict.recommendation` plans, :mod:`evaltk.verdict.comparison` holds what
:func:`evaltk.verdict.compare` assembles).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any

import numpy as np

from evaltk.errors import EvaltkError
from evaltk.margin import MarginKind
from evaltk.stats.checks import FloatArray
from evaltk.stats.results import ConfidenceInterval, EquivalenceResult, JsonResult, TestResult

TARGET_POWER = 0.8
MIN_EPISODES = 10
"""Fewest episodes per side (pairs when paired) for any verdict but ``inconclusive``, and fewest equal episodes
for ``identical`` (rule of three: ten equal episodes still leave room for outcomes of probability up to 0.3 that
were never seen)."""
PAIRED_KINDS = (MarginKind.ABSOLUTE, MarginKind.SD)


class CompareError(EvaltkError):
    """The comparison cannot be made as asked (bad margin, too few episodes, undefined relative margin)."""


class Verdict(Enum):
    """The three possible outcomes of a comparison."""

    EQUIVALENT = "equivalent"
    DIFFERENT = "different"
    INCONCLUSIVE = "inconclusive"
    IDENTICAL = "identical"


QUANTITY = {
    MarginKind.ABSOLUTE: "mean(B) - mean(A)",
    MarginKind.RELATIVE: "(mean(B) - mean(A)) / |mean(A)|",
    MarginKind.SD: "(mean(B) - mean(A)) / pooled SD",
    MarginKind.PROB: "P(B > A) + 0.5 P(B = A)",
}


@dataclass(frozen=True)
class Recommendation(JsonResult):
    """How many episodes per side would give 80 % power to reach a conclusion.

    Attributes:
        target: ``"equivalence"`` (show the TOST passes) or ``"difference"`` (show it exceeds the margin).
        episodes_per_side: total episodes needed per side for ``target``.
        more_a: additional episodes for A (``episodes_per_side - n_a``, at least 0).
        more_b: additional episodes for B.
        assumption: what ``episodes_per_side`` assumes (true difference, SD).
        equivalence_if_no_difference: episodes per side for 80 % TOST power if the true difference is 0.
        equivalence_if_observed: the same if the true difference equals the observed one (``None`` when the
            observed difference is not inside the margin).

    """

    target: str
    episodes_per_side: int
    more_a: int
    more_b: int
    assumption: str
    equivalence_if_no_difference: int | None = None
    equivalence_if_observed: int | None = None

    def summary(self) -> str:
        """One line for people."""
        extra = ""
        if self.target == "equivalence" and self.equivalence_if_observed is not None:
            extra = f" ({self.equivalence_if_observed} per side if the true difference equals the observed one)"
        elif self.target == "difference" and self.equivalence_if_no_difference is not None:
            extra = f" (to show equivalence if the true difference is 0: {self.equivalence_if_no_difference} per side)"
        return (f"for 80% power to show {self.target}: {self.episodes_per_side} episodes per side "
                f"(+{self.more_a} for A, +{self.more_b} for B), assuming {self.assumption}{extra}")


@dataclass(frozen=True)
class Decision:
    """The verdict and the two primary tests behind it.

    Attributes:
        verdict: the outcome.
        kind: margin kind.
        margin: ``M`` as given.
        low: lower bound of the equivalence region (quantity units).
        high: upper bound.
        quantity: what is compared (see module docstring).
        estimate: point estimate of the quantity.
        tost: the equivalence test (its ``ci`` is the ``1 - 2 alpha`` interval).
        difference: the primary difference test (Welch t, or Brunner-Munzel for ``prob``).
        ci: ``1 - alpha`` interval of the quantity.
        alpha: the level.
        explanation: why this verdict, in words.
        n_a: episodes in A.
        n_b: episodes in B.
        constant: True when both samples were constant (quantity known exactly).
        design: ``"unpaired"`` or ``"paired"`` (tests on the per-seed differences; ``n_a == n_b`` pairs).
        too_little_information: True when the minimum-information rule withheld a verdict.

    """

    verdict: Verdict
    kind: MarginKind
    margin: float
    low: float
    high: float
    quantity: str
    estimate: float
    tost: EquivalenceResult | None
    difference: TestResult | None
    ci: ConfidenceInterval
    alpha: float
    explanation: str
    n_a: int
    n_b: int
    constant: bool = False
    design: str = "unpaired"
    too_little_information: bool = False


DIGEST_WORDS = {"steps": "rewards, actions and episode ends", "obs": "observations"}
"""What each per-episode digest (:mod:`evaltk.evaluation.digests`) covers, in words."""


def upper_bound(n: int) -> float:
    """95 % upper bound on the rate of differing episodes when ``n`` compared episodes were all equal (3/n)."""
    return min(1.0, 3.0 / n)


def percent(rate: float) -> str:
    """Return a rate as a percentage with up to three significant digits (``0.1`` -> ``10%``, ``3/14`` -> ``21.4%``)."""
    return f"{100.0 * rate:.3g}%"


@dataclass(frozen=True)
class EpisodeMatch(JsonResult):
    """Rows of A and B matched by seed and compared step for step through their digests.

    Attributes:
        n_shared: seeds present on both sides.
        n_compared: shared seeds whose digests both sides recorded (0 for tables without digests).
        n_same: compared seeds whose digests all agree.
        compared: the digest keys compared (``steps``, ``obs``), the ones both sides recorded for every seed.
        differing_seeds: up to 5 seeds whose episodes differ.
        min_episodes: fewest equal episodes for the verdict ``identical``.

    """

    n_shared: int
    n_compared: int
    n_same: int
    compared: tuple[str, ...]
    differing_seeds: tuple[int, ...]
    min_episodes: int

    @property
    def what(self) -> str:
        """What was compared, in words (``rewards, actions and episode ends, and observations``)."""
        return ", and ".join(DIGEST_WORDS[k] for k in self.compared) or "returns only"

    @property
    def identical(self) -> bool:
        """Every shared seed's episode is the same step for step, on at least ``min_episodes`` seeds."""
        return (self.n_compared == self.n_shared >= self.min_episodes and self.n_same == self.n_compared
                and "steps" in self.compared)

    def short(self) -> str:
        """Why not ``identical``, in a few words for a verdict line (``""`` when identical)."""
        if self.identical:
            return ""
        if self.n_compared < self.n_shared or "steps" not in self.compared:
            return "compared on returns only (the tables record no per-step digests)"
        if self.n_same < self.n_compared:
            return f"{self.n_compared - self.n_same} of {self.n_compared} shared episodes differ step for step"
        return (f"all {self.n_same} shared episodes are the same step for step, but 'identical' needs at least "
                f"{self.min_episodes}")

    def note(self) -> str | None:
        """Why the episodes are not reported ``identical`` (``None`` when they are)."""
        if self.identical:
            return None
        if self.n_compared < self.n_shared or "steps" not in self.compared:
            return ("the tables hold no per-step digests for every shared seed (written by an older evaltk, or not "
                    "by evaltk evaluate): compared on returns only, so equal returns do not show the episodes are "
                    "the same step for step; evaluate into a new --out to record digests")
        if self.n_same < self.n_compared:
            seeds = ", ".join(str(s) for s in self.differing_seeds)
            return (f"{self.n_compared - self.n_same} of {self.n_compared} shared episodes differ step for step "
                    f"({self.what}; seeds {seeds}{', ...' if self.n_compared - self.n_same > 5 else ''})")
        return (f"all {self.n_same} shared episodes are the same step for step ({self.what}), but 'identical' needs "
                f"at least {self.min_episodes} (with {self.n_same}, up to {percent(upper_bound(max(1, self.n_same)))}"
                " of episodes could differ unseen): the ordinary statistics apply")


@dataclass(frozen=True)
class IdenticalRows(JsonResult):
    """Every shared seed gave the same episode in A and in B, step for step (e.g. frame-exact simulators).

    Attributes:
        n_shared: number of shared seeds (each compared through its digests).
        only_a: rows of A whose seed B lacks (not part of the finding).
        only_b: rows of B whose seed A lacks.
        compared: what the digests cover, in words.
        upper_bound: 95 % upper bound on the rate of episodes that differ (3 / ``n_shared``).

    """

    n_shared: int
    only_a: int = 0
    only_b: int = 0
    compared: str = DIGEST_WORDS["steps"]
    upper_bound: float = 1.0

    def summary(self) -> str:
        """One line, e.g. ``identical on 30/30 seeds: fewer than 10% of episodes differ (95%)``."""
        extra = ""
        if self.only_a or self.only_b:
            extra = f" ({self.only_a} rows of A and {self.only_b} of B have seeds the other side lacks)"
        return (f"identical on {self.n_shared}/{self.n_shared} seeds: fewer than {percent(self.upper_bound)} of "
                f"episodes differ (95%); compared step for step: {self.compared}{extra}")

    def to_dict(self) -> dict[str, Any]:
        """Plain dict for JSON output (with the one-line ``message``)."""
        return {**super().to_dict(), "message": self.summary()}


@dataclass(frozen=True)
class Pairing(JsonResult):
    """How the rows of A and B matched by episode seed.

    Attributes:
        n_shared: seeds present on both sides.
        only_a: rows of A whose seed B lacks.
        only_b: rows of B whose seed A lacks.
        used: True when the verdict came from the paired tests.
        correlation: Pearson correlation of the paired returns (``None`` if undefined).
        note: why pairing was or was not used.

    """

    n_shared: int
    only_a: int
    only_b: int
    used: bool
    correlation: float | None
    note: str


@dataclass(frozen=True)
class InformationCheck(JsonResult):
    """Why the minimum-information rule withheld a verdict, and what would decide.

    Attributes:
        n_a: episodes of A (pairs when paired).
        n_b: episodes of B.
        min_episodes: the rule's minimum per side.
        episodes_to_decide: episodes per side that would decide (at least ``min_episodes``).
        reason: in words.

    """

    n_a: int
    n_b: int
    min_episodes: int
    episodes_to_decide: int
    reason: str


def fmt(v: float) -> str:
    """Four significant digits, as every explanation prints its numbers."""
    return f"{v:.4g}"


def describe(x: FloatArray) -> dict[str, float | int]:
    """Summary statistics of one sample (``n``, ``mean``, ``sd``, ``median``, ``min``, ``max``)."""
    return {"n": int(x.size), "mean": float(x.mean()), "sd": float(x.std(ddof=1)), "median": float(np.median(x)),
            "min": float(x.min()), "max": float(x.max())}
