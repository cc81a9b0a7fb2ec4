"""The one sequential comparison: looks in episode order over two sources, three outcomes, one engine.

:func:`compare_sequential` takes two :class:`Source` s (reference A, candidate B) and a sequential
:class:`~evaltk.verdict.VerdictRule` and makes the looks of a group-sequential design
(:mod:`evaltk.stats.group_sequential`: equivalent, different, or inconclusive when the budget is spent or, by the
default design's non-binding futility stop, when an interim estimate sits on a margin point). Every
sequential door is this call with its own sources: ``evaltk compare --sequential`` reads two complete tables as if
their episodes had arrived in batches (:class:`FixedSource` ``grows=True``), ``evaltk evaluate --until-verdict``
evaluates B against a complete baseline (``grows=False``), and ``evaltk validate --sequential`` evaluates both
(:class:`evaltk.evaluation.run.PlanSource`: one live plan per side, each look only runs more episodes).

Pairing (one rule): when the rule pairs and both sources know their seeds, the looks run on the seeds both share,
in B's episode order (look ``k`` uses the first ``s_k`` shared seeds); else each look takes the first episodes of a
growing source and all of a fixed one. A paired look whose returns are equal seed for seed ends the run with
``identical`` when the episodes' digests confirm it (:func:`rows_identical`); equal returns alone go on to the tests.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

import numpy as np

from evaltk.stats.checks import FloatArray, StatsInputError
from evaltk.stats.group_sequential import (
    Look,
    LookDecision,
    SequentialDesign,
    first_deciding_look,
    information_fraction,
    run_sequence,
)
from evaltk.stats.look_statistics import SD_KURTOSIS_LIMIT
from evaltk.stats.paired import pair_by_seed
from evaltk.verdict.decision import identical_finding, match_episodes
from evaltk.verdict.differences import Differences, EnvCheck, check_envs, differences
from evaltk.verdict.result import MIN_EPISODES, CompareError, IdenticalRows, Pairing, Verdict
from evaltk.verdict.rule import VerdictRule, check_looks
from evaltk.verdict.sample import Sample

DECISION_VERDICT = {LookDecision.EQUIVALENT: Verdict.EQUIVALENT, LookDecision.DIFFERENT: Verdict.DIFFERENT,
                   LookDecision.INCONCLUSIVE: Verdict.INCONCLUSIVE, LookDecision.CONTINUE: Verdict.INCONCLUSIVE,
                   LookDecision.FUTILITY: Verdict.INCONCLUSIVE}
LookFn = Callable[[Look], None]


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
        identical: set when a look's shared seeds gave the same episodes step for step.
        pairing: how the rows matched by seed.
        env_check: whether the sides were asked to play the same environment.
        differences: what each side ran, side by side (the one settings diff).
        used: the samples of A and B the verdict used (the episodes of the last look).

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
    env_check: EnvCheck | None = None
    differences: Differences | None = None
    used: tuple[Sample, Sample] | None = field(default=None, repr=False)

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
        stop = {LookDecision.INCONCLUSIVE: "the budget was spent: a larger --episodes would decide",
                LookDecision.FUTILITY: "stopped early for futility (non-binding): the estimate sat on a margin point"}\
            .get(self.outcome, "the design decided")
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
                "pairing": None if self.pairing is None else self.pairing.to_dict(),
                "verdict_line": self.verdict_line(),
                "environments": None if self.env_check is None else self.env_check.to_dict(),
                "settings": None if self.differences is None else self.differences.to_dict()}

    def verdict_line(self) -> str:
        """Return the one line that ends every sequential door's summary; it quotes the interval that decided."""
        names = self.differences.names if self.differences is not None else ("A", "B")
        if self.identical is not None:
            return f"verdict: {self.identical.summary()} ({names[1]} vs {names[0]})"
        design = "paired" if self.paired else "unpaired"
        iv = self.interval()
        if iv is None:
            return (f"verdict: {self.verdict.value} (sequential, margin {self.margin:g}, {self.kind}, {design}; "
                    f"{self.reason})")
        region = f"({-self.margin:g}, {self.margin:g})"
        if self.verdict is Verdict.DIFFERENT:
            why = (f"{iv['level']:.0%} repeated CI [{iv['ci'][0]:.4g}, {iv['ci'][1]:.4g}] outside {region}")
        else:
            where = "inside" if self.verdict is Verdict.EQUIVALENT else "not inside"
            why = (f"{iv['level_equivalence']:.0%} repeated CI [{iv['ci_equivalence'][0]:.4g}, "
                   f"{iv['ci_equivalence'][1]:.4g}] {where} {region}")
        used = self.episodes_used
        unit = f"{used[1]} pairs" if self.paired else f"{used[0]} / {used[1]} episodes (A / B)"
        if self.outcome is LookDecision.FUTILITY:
            why += ", stopped early for futility (non-binding)"
        return (f"verdict: {self.verdict.value} (sequential, margin {self.margin:g}, {self.kind}, {design}; {why} at "
                f"look {iv['look']} of {iv['looks_planned']} after {unit})")


def look_sizes(n: int, looks: int, min_episodes: int) -> list[int]:
    """Episodes at each of ``looks`` equally spaced looks over ``n``, dropping looks below ``min_episodes``."""
    sizes = sorted({max(1, round(n * k / looks)) for k in range(1, looks + 1)})
    return [s for s in sizes if s >= min_episodes]


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
    if look.outcome is LookDecision.FUTILITY:
        return (f"inconclusive {where}, stopped early for futility (non-binding): the estimate {look.estimate:.4g} "
                f"sits on a margin point (both one-sided tests there have p >= {look.p_near:.3g} > "
                f"{look.futility_level:.3g}), where neither verdict is likely within the budget; the error rates "
                "are computed as if the design had gone on, so this stop leaves them as stated; the true "
                "difference is probably close to the margin, where a verdict needs far more episodes")
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


class Source(Protocol):
    """One side of a sequential comparison: a sample that may grow look by look."""

    @property
    def budget(self) -> int:
        """The most episodes this side may have."""

    @property
    def planned_seeds(self) -> tuple[int, ...] | None:
        """The seeds of the budget's episodes in episode order, known before they run (``None``: not recorded)."""

    @property
    def grows(self) -> bool:
        """True when looks see more of it (an evaluation, a table read as if it arrived in batches)."""

    def header(self) -> Sample:
        """Return the side with no episodes: its env, settings and label, for the checks made before any look."""

    def sample(self, n: int) -> Sample:
        """Return the first ``n`` episodes (an evaluation runs the ones it lacks); a fixed source returns all."""


@dataclass(frozen=True)
class FixedSource:
    """A complete sample as a :class:`Source`: ``grows`` reads it as if its episodes arrived in batches."""

    whole: Sample
    grows: bool = True

    @property
    def budget(self) -> int:
        """The sample's size."""
        return self.whole.n

    @property
    def planned_seeds(self) -> tuple[int, ...] | None:
        """The sample's seeds."""
        return self.whole.seeds

    def header(self) -> Sample:
        """Return the sample with no episodes."""
        return self.whole.header()

    def sample(self, n: int) -> Sample:
        """Return the first ``n`` episodes when it grows, else all of them."""
        return self.whole.head(n) if self.grows else self.whole


@dataclass(frozen=True)
class _Plan:
    """Where the looks fall: per look ``(n_a, n_b)`` to draw from the sources, and the design's fractions."""

    draws: list[tuple[int, int]]
    fractions: list[float]
    budget: tuple[int, int]
    shared: list[int] | None
    """Paired: the shared seeds in B's episode order (look ``k`` uses the first ``sizes[k]``); unpaired: None."""
    sizes: list[int]


def _shared_seeds(a: Source, b: Source, rule: VerdictRule) -> list[int] | None:
    """Return the seeds both sides plan, in B's order, when the looks pair (the rule pairs, >= 2 shared)."""
    seeds_a, seeds_b = a.planned_seeds, b.planned_seeds
    if not rule.paired or seeds_a is None or seeds_b is None:
        return None
    in_a = set(seeds_a)
    shared = [s for s in seeds_b if s in in_a]
    return shared if len(shared) >= 2 else None


def _plan(a: Source, b: Source, rule: VerdictRule) -> _Plan:
    shared = _shared_seeds(a, b, rule)
    if shared is not None:
        pos_a = {s: i for i, s in enumerate(a.planned_seeds or ())}
        pos_b = {s: i for i, s in enumerate(b.planned_seeds or ())}
        sizes = look_sizes(len(shared), rule.looks, rule.min_episodes)
        draws = [(pos_a[shared[n - 1]] + 1 if a.grows else a.budget, pos_b[shared[n - 1]] + 1) for n in sizes]
        return _Plan(draws, [n / len(shared) for n in sizes], (len(shared), len(shared)), shared, sizes)
    sizes_b = look_sizes(b.budget, rule.looks, rule.min_episodes)
    draws = [(round(a.budget * n / b.budget) if a.grows else a.budget, n) for n in sizes_b]
    draws = [(na, nb) for na, nb in draws if na >= rule.min_episodes]
    fractions = [information_fraction(na, nb, a.budget, b.budget, paired=False) for na, nb in draws]
    return _Plan(draws, fractions, (a.budget, b.budget), None, [nb for _, nb in draws])


def compare_sequential(a: Source, b: Source, rule: VerdictRule, *,
                       on_look: LookFn | None = None) -> SequentialComparison:
    """Make the looks of ``rule``'s design over ``a`` (reference) and ``b`` until one decides (module docstring).

    Before any episode is drawn: the env check (refused unless ``rule.allow_different_envs``) and the settings
    diff of the sources' headers. ``on_look`` sees each look as it is made. A budget that leaves no look of
    ``rule.min_episodes`` episodes per side gives ``inconclusive`` with the reason and no look.
    """
    kind = check_looks(rule.kind, rule.looks, "a sequential verdict")
    head_a, head_b = a.header(), b.header()
    env_check = check_envs(head_a, head_b, allow_different_envs=rule.allow_different_envs)
    diff = differences(head_a, head_b)
    plan = _plan(a, b, rule)
    paired = plan.shared is not None
    note = f"looks on the per-seed differences over {plan.budget[1]} shared seeds"
    pairing = Pairing(len(plan.shared or ()), 0, 0, True, None, note) if paired else None
    if not plan.draws:
        return SequentialComparison(Verdict.INCONCLUSIVE, LookDecision.INCONCLUSIVE, [], None, kind.value,
                                    float(rule.margin), paired, plan.budget,
                                    f"too little information: {a.budget} vs {b.budget} episodes, a verdict needs at "
                                    f"least {rule.min_episodes} per side", pairing=pairing, env_check=env_check,
                                    differences=diff)
    try:
        design = SequentialDesign.build(plan.fractions, alpha=rule.alpha, spending=rule.spending,
                                        first_look=first_deciding_look(plan.sizes if paired else
                                                                       [min(na, nb) for na, nb in plan.draws]))
    except StatsInputError as exc:
        raise CompareError(str(exc)) from exc
    state = _LookState(plan, rule.min_episodes)
    made: list[Look] = []
    try:
        for look in run_sequence(design, state.looks(a, b), kind.value, float(rule.margin), paired=paired):
            made.append(look)
            if on_look is not None:
                on_look(look)
    except StatsInputError as exc:
        if state.identical is None:
            raise CompareError(str(exc)) from exc
    if state.identical is not None:
        return SequentialComparison(Verdict.IDENTICAL, LookDecision.EQUIVALENT, made, design, kind.value,
                                    float(rule.margin), True, plan.budget,
                                    f"{state.identical.summary()} (at look {len(made) + 1}): no test needed",
                                    state.identical, pairing, env_check, diff, state.used)
    last = made[-1]
    return SequentialComparison(DECISION_VERDICT[last.outcome], last.outcome, made, design, kind.value,
                                float(rule.margin), paired, plan.budget,
                                explain(last, design.looks, paired, any(look.heavy_tails for look in made)), None,
                                pairing, env_check, diff, state.used)


@dataclass
class _LookState:
    """The looks' samples as they are drawn: the last look's samples, and an ``identical`` finding if one stopped."""

    plan: _Plan
    min_episodes: int
    used: tuple[Sample, Sample] | None = None
    identical: IdenticalRows | None = None

    def looks(self, a: Source, b: Source) -> Iterator[tuple[FloatArray, FloatArray]]:
        """Yield each look's ``(a_k, b_k)``, drawing each source only as far as the look needs."""
        for (na, nb), size in zip(self.plan.draws, self.plan.sizes, strict=True):
            sa, sb = a.sample(na), b.sample(nb)
            if self.plan.shared is None:
                self.used = (sa, sb)
                yield sa.returns, sb.returns
                continue
            keep = set(self.plan.shared[:size])
            sa, sb = _only(sa, keep), _only(sb, keep)
            pairs = pair_by_seed(sb.returns, sa.returns, sb.seeds or (), sa.seeds or ())  # in B's order
            self.used = (sa, sb)
            if np.array_equal(pairs.a, pairs.b):
                found = rows_identical(sa.seeds, sa.digests, sb.seeds, sb.digests, self.min_episodes)
                if found is not None:
                    self.identical = found
                    return
            yield pairs.b, pairs.a


def _only(sample: Sample, seeds: set[int]) -> Sample:
    """Return the episodes of ``sample`` whose seed is in ``seeds``, in its own order."""
    keep = [i for i, s in enumerate(sample.seeds or ()) if s in seeds]

    def pick(values: tuple[Any, ...] | None) -> tuple[Any, ...] | None:
        return None if values is None else tuple(values[i] for i in keep)

    return replace(sample, returns=sample.returns[keep], seeds=pick(sample.seeds), digests=pick(sample.digests),
                   frames=pick(sample.frames), steps=pick(sample.steps))
