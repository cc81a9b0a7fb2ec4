"""The fixed-N decision rule: the verdict from the primary tests, and how rows pair by seed.

See :mod:`evaltk.verdict` for the rule (equivalent / different / inconclusive / identical) and the
tests behind each margin kind. :func:`decide` runs only the primary tests (fast enough for
calibration simulations); :func:`pair_rows` matches rows by episode seed and says whether the
paired tests apply; :func:`check_margin` is the one check of a margin and its kind (:func:`margin_region` applies it).
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np

from evaltk.margin import MarginKind
from evaltk.stats import equivalence
from evaltk.stats.bootstrap_t import BootstrapMoments
from evaltk.stats.checks import FloatArray, StatsInputError, as_sample, check_alpha
from evaltk.stats.paired import (
    PairedSample,
    pair_by_seed,
    paired_ci,
    paired_t,
    standardized_paired_ci,
    tost_paired,
    tost_paired_standardized,
)
from evaltk.stats.rank import prob_superior_ci
from evaltk.stats.results import ConfidenceInterval, EquivalenceResult, TestResult
from evaltk.stats.tests_two_sample import brunner_munzel, welch_t
from evaltk.verdict.result import (
    MIN_EPISODES,
    PAIRED_KINDS,
    QUANTITY,
    CompareError,
    Decision,
    EpisodeMatch,
    IdenticalRows,
    Pairing,
    Verdict,
    fmt,
    upper_bound,
)


def margin_kind(kind: MarginKind | str) -> MarginKind:
    """Return ``kind`` as a :class:`MarginKind`, or raise :class:`CompareError` naming the choices."""
    try:
        return MarginKind(kind)
    except ValueError:
        raise CompareError(f"margin kind must be one of {[k.value for k in MarginKind]}, got {kind!r}") from None


def pair_rows(a: Any, b: Any, seeds_a: Any, seeds_b: Any, paired: str,
             kind: MarginKind) -> tuple[PairedSample | None, Pairing | None]:
    """Match rows by seed and decide whether the verdict uses the paired tests."""
    if paired not in ("auto", "yes", "no"):
        raise CompareError(f"paired must be 'auto', 'yes' or 'no', got {paired!r}")
    if seeds_a is None or seeds_b is None:
        if paired == "yes":
            raise CompareError("a paired comparison needs the episode seeds of both sides (a 'seed' column); "
                               "evaluate both sides with evaltk evaluate, or compare unpaired")
        return None, None
    xa, xb = sample_scores(a, "A"), sample_scores(b, "B")
    try:
        pairs = pair_by_seed(xa, xb, seeds_a, seeds_b)
    except StatsInputError as exc:
        raise CompareError(str(exc)) from exc
    if pairs.n < 2:
        if paired == "yes":
            raise CompareError(f"A and B share {pairs.n} episode seeds, a paired comparison needs at least 2: "
                               "evaluate both with the same --seed")
        return pairs, Pairing(pairs.n, pairs.only_a, pairs.only_b, False, None, "fewer than 2 shared seeds")
    if paired == "no":
        note, used = "pairing turned off (--unpaired)", False
    elif kind not in PAIRED_KINDS:
        note, used = f"no paired test for a {kind.value} margin: the tables were compared unpaired", False
    else:
        note, used = f"tests on the per-seed differences over {pairs.n} shared seeds", True
    return pairs, Pairing(pairs.n, pairs.only_a, pairs.only_b, used, pairs.correlation(), note)


def match_episodes(shared_seeds: Any, seeds_a: Any, seeds_b: Any, digests_a: Any, digests_b: Any, *,
                   min_episodes: int = MIN_EPISODES) -> EpisodeMatch:
    """Compare the episodes of ``shared_seeds`` (seeds both sides ran) through their digests.

    ``digests_a``/``digests_b`` (``{"steps": hex, "obs": hex}`` per row, ``None``: the side recorded none) run
    parallel to ``seeds_a``/``seeds_b``. A digest key counts as compared when both sides have it on every shared
    seed; ``identical`` also needs the ``steps`` digest and at least ``max(min_episodes, MIN_EPISODES)`` seeds.
    """
    need = max(int(min_episodes), MIN_EPISODES)
    shared = [int(s) for s in shared_seeds]
    if digests_a is None or digests_b is None:
        return EpisodeMatch(len(shared), 0, 0, (), (), need)
    by_a = {int(s): dict(d or {}) for s, d in zip(seeds_a, digests_a, strict=True)}
    by_b = {int(s): dict(d or {}) for s, d in zip(seeds_b, digests_b, strict=True)}
    keys = tuple(k for k in ("steps", "obs") if all(by_a[s].get(k) and by_b[s].get(k) for s in shared))
    if not keys:
        return EpisodeMatch(len(shared), 0, 0, (), (), need)
    differ = [s for s in shared if any(by_a[s][k] != by_b[s][k] for k in keys)]
    return EpisodeMatch(len(shared), len(shared), len(shared) - len(differ), keys, tuple(differ[:5]), need)


def identical_finding(match: EpisodeMatch, only_a: int = 0, only_b: int = 0) -> IdenticalRows | None:
    """Return the ``identical`` finding when ``match`` says every shared episode is the same step for step, else None.

    ``only_a``/``only_b``: rows whose seed the other side lacks (reported, not part of the finding).
    """
    if not match.identical:
        return None
    return IdenticalRows(match.n_shared, only_a, only_b, match.what, upper_bound(match.n_shared))


def sample_scores(values: Any, name: str) -> FloatArray:
    """Check one side's scores (``float[n]``, n >= 2, finite); raise :class:`CompareError` otherwise."""
    try:
        return as_sample(values, name)
    except StatsInputError as exc:
        raise CompareError(f"{exc} (a comparison needs at least 2 episodes per side)") from exc


def check_margin(margin: float, kind: MarginKind | str) -> MarginKind:
    """Check a margin and its kind, the one rule every command applies; return the kind.

    The kind must be a :class:`MarginKind`, the margin a finite number > 0, and a ``prob`` margin below 0.5.
    """
    kind_ = margin_kind(kind)
    if not (isinstance(margin, int | float) and math.isfinite(margin) and margin > 0):
        raise CompareError(f"--margin must be a positive number, got {margin!r}; e.g. --margin 5 (absolute, score "
                           "units) or --margin 0.5 --margin-kind sd")
    if kind_ is MarginKind.PROB and margin >= 0.5:
        raise CompareError(f"a prob margin must be below 0.5, got {margin!r}; 0.1 is common")
    return kind_


def margin_region(kind: MarginKind, margin: float) -> tuple[float, float]:
    """Return the equivalence region ``(low, high)`` of a margin, after checking it (:func:`check_margin`)."""
    if check_margin(margin, kind) is MarginKind.PROB:
        return 0.5 - margin, 0.5 + margin
    return -float(margin), float(margin)




def _constant_decision(a: FloatArray, b: FloatArray, kind: MarginKind, margin: float, alpha: float) -> Decision:
    """Both samples constant: the quantity is known exactly, no test is needed (or defined)."""
    low, high = margin_region(kind, margin)
    va, vb = float(a[0]), float(b[0])
    diff = vb - va
    if kind is MarginKind.ABSOLUTE:
        value = diff
    elif kind is MarginKind.RELATIVE:
        if va == 0.0 and diff != 0.0:
            raise CompareError("a relative margin needs a nonzero mean of A, but every A return is 0; "
                               "use --margin-kind absolute")
        value = 0.0 if diff == 0.0 else diff / abs(va)
    elif kind is MarginKind.SD:
        value = 0.0 if diff == 0.0 else math.copysign(math.inf, diff)
    else:
        value = 0.5 if diff == 0.0 else (1.0 if diff > 0 else 0.0)
    if low < value < high:
        verdict = Verdict.EQUIVALENT
    elif value < low or value > high:
        verdict = Verdict.DIFFERENT
    else:
        verdict = Verdict.INCONCLUSIVE
    explanation = (
        f"all {a.size} returns of A equal {fmt(va)} and all {b.size} returns of B equal {fmt(vb)}: with no "
        f"variability the {QUANTITY[kind]} is known exactly ({fmt(value)}), so the verdict follows from the "
        f"margin region ({fmt(low)}, {fmt(high)}); the statistical tests are undefined here. This assumes "
        "the scores really are deterministic; if rare other values are possible, run more episodes."
    )
    ci = ConfidenceInterval(value, value, value, 1.0 - alpha, "exact (constant samples)", QUANTITY[kind])
    return Decision(verdict, kind, float(margin), low, high, QUANTITY[kind], value, None, None, ci, alpha,
                    explanation, a.size, b.size, constant=True)


def _primary(a: FloatArray, b: FloatArray, kind: MarginKind, low: float, high: float, alpha: float,
             rng: np.random.Generator, n_boot: int) -> tuple[EquivalenceResult, TestResult, ConfidenceInterval]:
    level = 1.0 - alpha
    try:
        if kind is MarginKind.ABSOLUTE:
            moments = BootstrapMoments.draw(b, a, rng=rng, n_resamples=n_boot)
            tost = equivalence.tost_welch(b, a, low, high, alpha=alpha, moments=moments)
            ci = equivalence.mean_difference_ci(b, a, level=level, moments=moments)
        elif kind is MarginKind.RELATIVE:
            moments = BootstrapMoments.draw(b, a, rng=rng, n_resamples=n_boot)
            tost = equivalence.tost_relative(b, a, low, high, alpha=alpha, moments=moments)
            ci = equivalence.relative_ci(b, a, level=level, moments=moments)
        elif kind is MarginKind.SD:
            tost = equivalence.tost_standardized(b, a, low, high, alpha=alpha)
            ci = equivalence.standardized_ci(b, a, level=level)
        else:
            tost = equivalence.tost_prob_superior(b, a, low, high, alpha=alpha)
            ci = prob_superior_ci(b, a, level=level)
    except StatsInputError as exc:
        raise CompareError(str(exc)) from exc
    difference = brunner_munzel(b, a) if kind is MarginKind.PROB else welch_t(b, a)
    ci = ConfidenceInterval(ci.estimate, ci.low, ci.high, ci.level, ci.method, QUANTITY[kind])
    return tost, difference, ci


def _primary_paired(pairs: PairedSample, kind: MarginKind, low: float, high: float,
                    alpha: float) -> tuple[EquivalenceResult, TestResult, ConfidenceInterval]:
    """Paired TOST, paired t and the ``1 - alpha`` CI on the per-seed differences ``B - A``."""
    a, b = pairs.a, pairs.b
    try:
        if kind is MarginKind.ABSOLUTE:
            tost = tost_paired(b, a, low, high, alpha=alpha)
            ci = paired_ci(b, a, level=1.0 - alpha)
        else:
            tost = tost_paired_standardized(b, a, low, high, alpha=alpha)
            ci = standardized_paired_ci(b, a, level=1.0 - alpha)
    except StatsInputError as exc:
        raise CompareError(str(exc)) from exc
    ci = ConfidenceInterval(ci.estimate, ci.low, ci.high, ci.level, ci.method, QUANTITY[kind])
    return sized(tost, pairs.n, pairs.n), sized(paired_t(b, a), pairs.n, pairs.n), ci


def sized(result: Any, n_a: int, n_b: int) -> Any:
    """Return ``result`` with ``n_a``/``n_b`` naming A's and B's sizes (the stats functions take B first)."""
    return dataclasses.replace(result, n_a=n_a, n_b=n_b)


def _withhold(decision: Decision, min_episodes: int) -> Decision:
    """Apply the minimum-information rule: fewer than ``min_episodes`` per side gives no verdict."""
    if min(decision.n_a, decision.n_b) >= min_episodes:
        return decision
    unit = "pairs" if decision.design == "paired" else "episodes per side"
    why = (f"too little information: {decision.n_a} episodes of A and {decision.n_b} of B"
           f"{' (shared seeds)' if decision.design == 'paired' else ''}, but a verdict needs at least "
           f"{min_episodes} {unit} (with fewer, rare outcomes may simply not have been seen yet, and the spread "
           f"cannot be estimated); the data alone would say {decision.verdict.value}: {decision.explanation}")
    return dataclasses.replace(decision, verdict=Verdict.INCONCLUSIVE, explanation=why, too_little_information=True)


def decide(
    a: Any,
    b: Any,
    margin: float,
    kind: MarginKind | str,
    *,
    alpha: float = 0.05,
    rng: np.random.Generator | None = None,
    n_boot: int = 1999,
    min_episodes: int = MIN_EPISODES,
    pairs: PairedSample | None = None,
) -> Decision:
    """Return the verdict for reference scores ``a`` and candidate scores ``b`` (``float[n]``, n >= 2 each).

    Only the primary tests run here (fast enough for calibration simulations); :func:`compare`
    adds the diagnostics, bootstrap interval and episode recommendation. ``rng`` drives the
    bootstrap-t part of the absolute and relative tests (``n_boot`` resamples); ``None`` means
    ``numpy.random.default_rng(0)``, so the same inputs always give the same verdict. With
    ``pairs`` (rows matched by seed, :func:`evaltk.stats.paired.pair_by_seed`) and an ``absolute``
    or ``sd`` margin the tests are paired. Fewer than ``min_episodes`` per side (pairs) give
    ``inconclusive`` (module docstring).
    """
    kind = margin_kind(kind)
    try:
        check_alpha(alpha)
    except StatsInputError as exc:
        raise CompareError(str(exc)) from exc
    if not (isinstance(min_episodes, int) and min_episodes >= 2):
        raise CompareError(f"min_episodes must be an integer >= 2, got {min_episodes!r}; the default is {MIN_EPISODES}")
    xa, xb = sample_scores(a, "A"), sample_scores(b, "B")
    low, high = margin_region(kind, margin)
    if pairs is not None and kind in PAIRED_KINDS:
        if pairs.n < 2:
            raise CompareError(f"a paired comparison needs at least 2 shared seeds, got {pairs.n}; "
                               "run both sides with the same --seed, or compare unpaired")
        tost, difference, ci = _primary_paired(pairs, kind, low, high, alpha)
        return _withhold(_verdict(tost, difference, ci, kind, margin, alpha, pairs.n, pairs.n, "paired"),
                         min_episodes)
    if xa.var() == 0.0 and xb.var() == 0.0:
        return _withhold(_constant_decision(xa, xb, kind, margin, alpha), min_episodes)
    generator = np.random.default_rng(0) if rng is None else rng
    tost, difference, ci = _primary(xa, xb, kind, low, high, alpha, generator, n_boot)
    tost, difference = sized(tost, xa.size, xb.size), sized(difference, xa.size, xb.size)
    return _withhold(_verdict(tost, difference, ci, kind, margin, alpha, xa.size, xb.size, "unpaired"),
                     min_episodes)


def _verdict(tost: EquivalenceResult, difference: TestResult, ci: ConfidenceInterval, kind: MarginKind,
             margin: float, alpha: float, n_a: int, n_b: int, design: str) -> Decision:
    """Apply the decision rule of the module docstring and explain it."""
    low, high = margin_region(kind, margin)
    region = f"({fmt(low)}, {fmt(high)})"
    tost_ci = f"{1 - 2 * alpha:.0%} CI [{fmt(tost.ci.low)}, {fmt(tost.ci.high)}]"
    full_ci = f"{1 - alpha:.0%} CI [{fmt(ci.low)}, {fmt(ci.high)}]"
    beyond = ci.low > high or ci.high < low
    if tost.equivalent:
        verdict = Verdict.EQUIVALENT
        why = (f"TOST passes: the {tost_ci} of {QUANTITY[kind]} lies inside the margin region {region} "
               f"(p={fmt(tost.pvalue)} < {alpha:g})")
    elif difference.rejects(alpha) and beyond:
        verdict = Verdict.DIFFERENT
        why = (f"{difference.name} rejects equality (p={fmt(difference.pvalue)}) and the {full_ci} of "
               f"{QUANTITY[kind]} lies entirely outside the margin region {region}")
    else:
        verdict = Verdict.INCONCLUSIVE
        if difference.rejects(alpha):
            diff_part = (f"{difference.name} finds a difference (p={fmt(difference.pvalue)}) but the {full_ci} "
                         f"overlaps the margin region {region}, so it is not shown to exceed the margin")
        else:
            diff_part = (f"{difference.name} does not reject equality (p={fmt(difference.pvalue)}); "
                         "that alone is not evidence of equivalence")
        why = (f"TOST does not pass: the {tost_ci} of {QUANTITY[kind]} is not inside {region} "
               f"(p={fmt(tost.pvalue)}); {diff_part}")
    notes = "; ".join(n for n in (tost.note, difference.note) if n)
    if notes:
        why += f" [{notes}]"
    if design == "paired":
        why = f"paired on {n_a} shared seeds (tests on the per-seed differences B - A): {why}"
    return Decision(verdict, kind, float(margin), low, high, QUANTITY[kind], tost.estimate, tost, difference, ci,
                    alpha, why, n_a, n_b, design=design)


def identical_decision(pairs: PairedSample, match: EpisodeMatch, kind: MarginKind, margin: float,
                       alpha: float) -> Decision:
    """Every shared seed gave the same episode step for step (``match.identical``): report the fact, no test."""
    low, high = margin_region(kind, margin)
    value = 0.5 if kind is MarginKind.PROB else 0.0
    rows = IdenticalRows(pairs.n, pairs.only_a, pairs.only_b, match.what, upper_bound(pairs.n))
    why = (f"{rows.summary()}: A and B produced the same episode on every shared seed (the same {match.what}); "
           "this is a fact about these episodes, not a statistical inference, and the bound is the rule of three "
           "(3/n) on how often episodes not run here could differ")
    ci = ConfidenceInterval(value, value, value, 1.0 - alpha, "exact (identical episodes)", QUANTITY[kind])
    return Decision(Verdict.IDENTICAL, kind, float(margin), low, high, QUANTITY[kind], value, None, None, ci, alpha,
                    why, pairs.n, pairs.n, design="paired")
