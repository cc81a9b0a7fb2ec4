"""The one sequential comparison: looks in episode order, three outcomes, behind every sequential entry point.

:func:`run_sequential` takes the looks (cumulative samples, produced lazily if the caller likes) and
the design (:mod:`evaltk.stats.group_sequential`: equivalent, different, or inconclusive only when the
budget is spent) and returns a :class:`SequentialComparison`. ``evaltk compare --sequential``
(:func:`compare_sequential`, over two complete samples as if they had arrived in batches) and
``evaltk evaluate --until-verdict`` (:mod:`evaltk.until_verdict`, evaluating each batch only when
the previous look continued) both call it, so they decide and explain alike.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from evaltk.margin import MarginKind
from evaltk.stats.boundaries import Spending
from evaltk.stats.checks import FloatArray, StatsInputError
from evaltk.stats.group_sequential import (
    SD_KURTOSIS_LIMIT,
    SEQUENTIAL_KINDS,
    Look,
    LookDecision,
    SequentialDesign,
    information_fraction,
    run_sequence,
)
from evaltk.verdict.decision import check_margin, identical_finding, margin_kind, match_episodes, pair_rows
from evaltk.verdict.result import MIN_EPISODES, CompareError, IdenticalRows, Pairing, Verdict

DECISION_VERDICT = {LookDecision.EQUIVALENT: Verdict.EQUIVALENT, LookDecision.DIFFERENT: Verdict.DIFFERENT,
                   LookDecision.INCONCLUSIVE: Verdict.INCONCLUSIVE, LookDecision.CONTINUE: Verdict.INCONCLUSIVE}
LookFn = Callable[[Look], None]
IdenticalFn = Callable[[int], IdenticalRows | None]
"""``identical(n)``: the finding when the first ``n`` episodes of both sides are the same step for step, else None."""
MAX_LOOKS = 50
"""Most looks a sequential comparison makes (``--looks``)."""


@dataclass(frozen=True)
class SequentialComparison:
    """A sequential verdict over samples in episode order.

    Attributes:
        verdict: the verdict (``identical`` rows, or equivalent / different / inconclusive).
        outcome: what the last look decided.
        looks: the looks made, in order.
        design: the boundaries (``None`` when no look was made).
        kind: margin kind (``absolute`` or ``sd``).
        margin: the margin.
        paired: True when the looks used the per-seed differences.
        budget: A's and B's budgets (episodes, or pairs when paired).
        reason: why, in words.
        identical: set when every shared seed gave the same return.
        pairing: how the rows matched by seed.

    """

    verdict: Verdict
    outcome: LookDecision
    looks: list[Look]
    design: SequentialDesign | None
    kind: str
    margin: float
    paired: bool
    budget: tuple[int, int]
    reason: str
    identical: IdenticalRows | None = None
    pairing: Pairing | None = None

    @property
    def episodes_used(self) -> tuple[int, int]:
        """Episodes of A and of B the verdict used (pairs when paired)."""
        if self.identical is not None:
            return self.identical.n_shared, self.identical.n_shared
        if not self.looks:
            return self.budget
        return self.looks[-1].n_a, self.looks[-1].n_b

    def summary(self) -> str:
        """One line: verdict and reason."""
        return f"{self.verdict.value}: {self.reason}"

    def interval(self) -> dict[str, Any] | None:
        """Return the design's interval at the look that ended the sequence (``None`` without looks).

        ``ci`` is the repeated confidence interval from the "different" boundaries: over all looks
        it covers the true quantity with probability at least ``1 - alpha`` (Jennison and Turnbull
        2000, ch. 9), so it stays valid at a data-dependent stopping look, unlike a fixed-N CI.
        ``ci_equivalence`` is the one from the equivalence boundaries (``1 - 2 alpha``).
        """
        if not self.looks or self.design is None:
            return None
        last = self.looks[-1]
        return {"method": "repeated confidence interval at the stopping look", "look": last.k,
                "looks_planned": self.design.looks, "level": 1.0 - self.design.alpha,
                "ci": list(last.ci_difference), "level_equivalence": 1.0 - 2.0 * self.design.alpha,
                "ci_equivalence": list(last.ci_equivalence), "estimate": last.estimate}

    def interval_line(self) -> str:
        """One line: the design's interval, the look it stopped at and the episodes it used ("" without looks)."""
        iv = self.interval()
        if iv is None:
            return ""
        used = self.episodes_used
        unit = f"{used[1]} pairs" if self.paired else f"{used[0]} / {used[1]} episodes (A / B)"
        return (f"stopped at look {iv['look']} of {iv['looks_planned']} after {unit}; {iv['level']:.0%} repeated CI "
                f"[{iv['ci'][0]:.4g}, {iv['ci'][1]:.4g}], {iv['level_equivalence']:.0%} repeated CI "
                f"[{iv['ci_equivalence'][0]:.4g}, {iv['ci_equivalence'][1]:.4g}] (valid at a sequential stop)")

    def report_fields(self) -> dict[str, Any]:
        """Return the fields of a report whose verdict is this sequential one (``evaltk validate --sequential``).

        The interval is the design's (:meth:`interval`); no fixed-N sample size is given for a
        sequentially stopped sample. Empty for ``identical`` rows and runs without looks.
        """
        iv = self.interval()
        if iv is None or self.verdict is Verdict.IDENTICAL:
            return {}
        used = self.episodes_used
        stop = "the budget was spent: a larger --episodes would decide" if self.outcome is LookDecision.INCONCLUSIVE \
            else "the design decided"
        return {"ci": iv["ci"], "ci_level": iv["level"], "ci_tost": iv["ci_equivalence"],
                "ci_method": f"repeated confidence interval at look {iv['look']} of {iv['looks_planned']}",
                "episodes_needed": None,
                "episodes_needed_line": (f"none from a fixed-N formula: a sequential run stopped at look {iv['look']} "
                                         f"of {iv['looks_planned']} after {used[1]} episodes per side; {stop}"),
                "fixed_n_note": ("'comparison' analyses the episodes the looks used as if their number had been "
                                 "fixed in advance; it ignores the stopping rule and is not the verdict's analysis")}

    def to_dict(self) -> dict[str, Any]:
        """Plain dict for JSON output."""
        used = self.episodes_used
        return {"verdict": self.verdict.value, "outcome": self.outcome.value, "sequential": True,
                "margin": self.margin, "margin_kind": self.kind, "design": "paired" if self.paired else "unpaired",
                "episodes_used": {"a": used[0], "b": used[1]}, "budget": {"a": self.budget[0], "b": self.budget[1]},
                "stopped_at_look": self.looks[-1].k if self.looks else None, "interval": self.interval(),
                "interval_line": self.interval_line(),
                "looks": [look.to_dict() for look in self.looks],
                "boundaries": None if self.design is None else self.design.to_dict(),
                "explanation": self.reason,
                "identical": None if self.identical is None else self.identical.to_dict(),
                "pairing": None if self.pairing is None else self.pairing.to_dict()}


def look_sizes(n: int, looks: int, min_episodes: int) -> list[int]:
    """Episodes at each of ``looks`` equally spaced looks over ``n``, dropping looks below ``min_episodes``."""
    sizes = sorted({max(1, round(n * k / looks)) for k in range(1, looks + 1)})
    return [s for s in sizes if s >= min_episodes]


def sequential_kind(kind: MarginKind | str, what: str) -> MarginKind:
    """Return the margin kind after checking that the sequential design supports it (``what`` names the option)."""
    kind_ = margin_kind(kind)
    if kind_.value not in SEQUENTIAL_KINDS:
        raise CompareError(f"{what} supports margin kinds {list(SEQUENTIAL_KINDS)}, got {kind_.value!r}; "
                           "use --margin-kind absolute or sd")
    return kind_


def check_looks(kind: MarginKind | str, looks: int, what: str) -> MarginKind:
    """Check a sequential request's margin kind and number of looks (``what`` names the option); returns the kind."""
    kind_ = sequential_kind(kind, what)
    if not (isinstance(looks, int) and 1 <= looks <= MAX_LOOKS):
        raise CompareError(f"--looks must be in [1, {MAX_LOOKS}], got {looks!r}; 10 is the default")
    return kind_


def check_budget(option: str, episodes: int, min_episodes: int) -> None:
    """Check that an episode budget (``option`` names its flag) leaves room for a verdict."""
    if episodes < min_episodes:
        raise CompareError(f"{option} {episodes} is below the {min_episodes} episodes a verdict needs; raise it "
                           f"(e.g. {option} 100)")


def explain(look: Look, total_looks: int, paired: bool, heavy: bool = False) -> str:
    """Why the sequence ended at ``look``, in words (``heavy``: some look's "different" was not allowed)."""
    unit = "pairs" if paired else f"{look.n_a} / {look.n_b} episodes (A / B)"
    where = (f"at look {look.k} of {total_looks} after {look.n_b} {unit}" if paired
             else f"at look {look.k} of {total_looks} after {unit}")
    if look.outcome is LookDecision.EQUIVALENT:
        return (f"equivalent {where}: both one-sided tests reject (TOST p = {look.p_tost:.3g} < nominal "
                f"{look.nominal_alpha:.3g} from the alpha-spending boundary)")
    if look.outcome is LookDecision.DIFFERENT:
        return (f"different {where}: the difference is shown to lie beyond the margin (p = {look.p_beyond:.3g} < "
                f"nominal {look.nominal_alpha_beyond:.3g}; estimate {look.estimate:.4g})")
    text = (f"inconclusive {where}: the budget is spent without a decision (TOST p = {look.p_tost:.3g} needs < "
            f"{look.nominal_alpha:.3g}; beyond-margin p = {look.p_beyond:.3g} needs < "
            f"{look.nominal_alpha_beyond:.3g})")
    return text + (heavy_tails_note() if heavy else "; a larger budget would decide")


def heavy_tails_note() -> str:
    """Why an ``sd`` margin did not say "different" on heavy-tailed scores, and what to use instead."""
    return (f"; the sd margin may not say \"different\" for scores this heavy-tailed (pooled sample kurtosis above "
            f"{SD_KURTOSIS_LIMIT:g}: the delta-method SE of the standardized difference needs a finite fourth "
            "moment), use --margin-kind absolute with the margin in score units")


def rows_identical(seeds_a: Any, digests_a: Any, seeds_b: Any, digests_b: Any,
                   min_episodes: int = MIN_EPISODES) -> IdenticalRows | None:
    """Return the ``identical`` finding for a look whose returns were equal seed for seed: only the digests decide.

    ``seeds_b``/``digests_b``: B's rows of the look; ``seeds_a``/``digests_a``: A's rows, holding those seeds.
    """
    return identical_finding(match_episodes(seeds_b, seeds_a, seeds_b, digests_a, digests_b,
                                            min_episodes=min_episodes))


def run_sequential(looks: Iterable[tuple[FloatArray, FloatArray]], design: SequentialDesign, kind: MarginKind,
                   margin: float, *, paired: bool, budget: tuple[int, int], pairing: Pairing | None = None,
                   on_look: LookFn | None = None, identical: IdenticalFn | None = None) -> SequentialComparison:
    """Make the looks in order until one decides; the one sequential comparison every entry point calls.

    ``looks`` yields the cumulative samples ``(a_k, b_k)`` (reference, candidate; ``float64[n]``), at
    most ``design.looks`` of them, and is consumed lazily. A paired look whose returns are equal seed for
    seed ends the run with the verdict ``identical`` only when ``identical(n)`` confirms that its first ``n``
    episodes are the same step for step (per-episode digests on enough seeds, :func:`rows_identical`);
    equal returns alone go on to the tests. ``on_look`` sees each look as it is made.
    """
    made: list[Look] = []
    identical_at: list[IdenticalRows] = []

    def until_identical() -> Iterator[tuple[FloatArray, FloatArray]]:
        for a_k, b_k in looks:
            rows = (identical(int(a_k.size)) if paired and identical is not None and np.array_equal(a_k, b_k)
                    else None)
            if rows is not None:
                identical_at.append(rows)
                return
            yield a_k, b_k

    try:
        for look in run_sequence(design, until_identical(), kind.value, float(margin), paired=paired):
            made.append(look)
            if on_look is not None:
                on_look(look)
    except StatsInputError as exc:
        if not identical_at:
            raise CompareError(str(exc)) from exc
    if identical_at:
        rows = identical_at[0]
        where = f" (at look {len(made) + 1})"
        return SequentialComparison(Verdict.IDENTICAL, LookDecision.EQUIVALENT, made, design, kind.value,
                                    float(margin), True, budget,
                                    f"{rows.summary()}{where}: no test needed", rows, pairing)
    last = made[-1]
    return SequentialComparison(DECISION_VERDICT[last.outcome], last.outcome, made, design, kind.value, float(margin),
                                paired, budget,
                                explain(last, design.looks, paired, any(look.heavy_tails for look in made)), None,
                                pairing)


def compare_sequential(a: Any, b: Any, margin: float, kind: MarginKind | str, *, looks: int = 10,
                       alpha: float = 0.05, spending: Spending | str = Spending.OBRIEN_FLEMING,
                       seeds_a: Any = None, seeds_b: Any = None, paired: str = "auto",
                       min_episodes: int = MIN_EPISODES, digests_a: Any = None,
                       digests_b: Any = None) -> SequentialComparison:
    """Sequential comparison over ``a`` and ``b`` taken in the given (episode) order, ``looks`` equal batches.

    ``identical`` is decided as in :func:`evaltk.verdict.compare`: every shared seed's episode the same step
    for step (``digests_a``/``digests_b``, per row ``{"steps": hex, "obs": hex}``) on at least
    ``max(min_episodes, MIN_EPISODES)`` seeds; equal returns without digests are tested like any others.

    The budget is the samples' lengths (pairs when paired); the first looks are dropped when they
    would have fewer than ``min_episodes`` per side.
    """
    kind_ = check_margin(margin, check_looks(kind, looks, "--sequential"))
    xa, xb = np.asarray(a, np.float64), np.asarray(b, np.float64)
    pairs, pairing = pair_rows(xa, xb, seeds_a, seeds_b, paired, kind_)
    rows = None if pairs is None or not pairs.identical else identical_finding(
        match_episodes(pairs.seeds, seeds_a, seeds_b, digests_a, digests_b, min_episodes=min_episodes),
        pairs.only_a, pairs.only_b)
    if pairs is not None and rows is not None:
        return SequentialComparison(Verdict.IDENTICAL, LookDecision.EQUIVALENT, [], None, kind_.value,
                                    float(margin), True, (pairs.n, pairs.n), rows.summary() + ": no test needed", rows,
                                    pairing)
    use_pairs = pairs is not None and pairing is not None and pairing.used
    if use_pairs and pairs is not None:
        xa, xb = pairs.a, pairs.b
        plan = [(s, s) for s in look_sizes(pairs.n, looks, min_episodes)]
    else:
        plan = [(round(xa.size * s / xb.size), s) for s in look_sizes(xb.size, looks, min_episodes)]
        plan = [(na, nb) for na, nb in plan if na >= min_episodes]
    if not plan:
        return SequentialComparison(Verdict.INCONCLUSIVE, LookDecision.INCONCLUSIVE, [], None, kind_.value,
                                    float(margin), use_pairs, (xa.size, xb.size),
                                    f"too little information: {xa.size} vs {xb.size} episodes, a verdict needs at "
                                    f"least {min_episodes} per side", None, pairing)
    fractions = [information_fraction(na, nb, xa.size, xb.size, paired=use_pairs) for na, nb in plan]
    try:
        design = SequentialDesign.build(fractions, alpha=alpha, spending=spending)
    except StatsInputError as exc:
        raise CompareError(str(exc)) from exc
    return run_sequential(((xa[:na], xb[:nb]) for na, nb in plan), design, kind_, float(margin), paired=use_pairs,
                          budget=(xa.size, xb.size), pairing=pairing)
