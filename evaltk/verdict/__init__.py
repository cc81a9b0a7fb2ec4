"""The transfer verdict: whether two samples of episode scores agree within a declared margin.

``A`` is the reference (e.g. scores on the reference environment) and ``B`` the candidate; every
quantity is "B relative to A". The margin ``M`` is given in the units of the quantity its kind
compares:

============  =======================================  =========================  ==============================
kind          quantity                                 equivalence region         TOST / difference test
============  =======================================  =========================  ==============================
absolute      ``mean(B) - mean(A)`` (score units)      ``(-M, M)``                Welch + bootstrap-t / Welch t
relative      ``(mean(B) - mean(A)) / |mean(A)|``      ``(-M, M)``                contrast + bootstrap-t / Welch
sd            ``(mean(B) - mean(A)) / pooled SD``      ``(-M, M)``                nct + delta method / Welch t
prob          ``P(B > A) + 0.5 P(B = A)``              ``(0.5 - M, 0.5 + M)``     rank TOST / Brunner-Munzel
============  =======================================  =========================  ==============================

Where two methods are named, each one-sided p-value is the larger of the two (an
intersection-union test: it keeps its level when either method is accurate, e.g. the t test for
normal scores and the bootstrap-t for skewed ones), and the interval is the union of the two.

Decision rule at level ``alpha`` (checked in this order):

* ``equivalent`` - the TOST rejects both one-sided nulls, i.e. the ``1 - 2 alpha`` CI lies inside
  the region.
* ``different`` - the primary difference test rejects at ``alpha`` *and* the ``1 - alpha`` CI lies
  entirely outside the region (the difference is shown to exceed the margin).
* ``inconclusive`` - anything else, with the number of episodes per side that would give 80 %
  power (:mod:`evaltk.stats.power`). A non-significant difference is never called equivalent.

Minimum information: no verdict without at least ``min_episodes`` (default
:data:`MIN_EPISODES` = 10) episodes per side (pairs, for a paired design). Below that the verdict
is ``inconclusive`` whatever the data look like - constant, near-constant or spread out - with
the reason and the number of episodes per side that would decide. The rule depends on counts
only, so a tiny perturbation of the values cannot change the kind of answer. From
``min_episodes`` on, two constant samples make the quantity known exactly (the verdict follows
from where it lies relative to the margin, and the explanation says so); near-constant ones get
Welch's test, whose verdict tends to the same answer as the variance goes to 0.

Paired designs: when both samples record seeds (:class:`~evaltk.verdict.sample.Sample`) the rows are matched by
episode seed (:mod:`evaltk.stats.paired`), unless the rule turns pairing off. With the per-episode digests of both
sides (:mod:`evaltk.evaluation.digests`: rewards, actions and episode end per step, and the observations) the
verdict is ``identical`` when every shared seed's episode is the same step for step on at least
``max(min_episodes, MIN_EPISODES)`` shared seeds - a fact about these episodes, stated with the rule of
three's 95 % upper bound on the rate of differing episodes (3/n): "identical on 30/30 seeds: fewer than
10% of episodes differ (95%)" (:attr:`Comparison.identical`). Anything less - fewer seeds, an episode
that differs, or tables without digests (older tables: compared on returns only) - gets the ordinary
statistics, and :attr:`Comparison.episodes` says why in the explanation. For ``absolute`` and ``sd``
margins the verdict then comes from the paired TOST on the per-seed differences (``relative`` and
``prob`` stay unpaired, with a note), and the secondary tests and bootstrap interval are paired too.

Modules: :mod:`evaltk.verdict.sample` (:class:`Sample`, one side), :mod:`evaltk.verdict.differences` (the env
check and the one settings diff), :mod:`evaltk.verdict.result` (result types), :mod:`evaltk.verdict.comparison`
(:class:`Comparison`, what :func:`compare` returns), :mod:`evaltk.verdict.decision` (the rule, pairing, margins),
:mod:`evaltk.verdict.recommendation` (power and recommendation), :mod:`evaltk.verdict.sequential` (the one
sequential comparison), :mod:`evaltk.verdict.rule` (:class:`VerdictRule`, the options a verdict is decided by, as
every command builds them). :func:`compare` puts them together for every door.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from evaltk import seeding
from evaltk.margin import MarginKind
from evaltk.stats.bootstrap import bootstrap_diff_ci
from evaltk.stats.multiple import holm_bonferroni
from evaltk.stats.paired import (
    PairedSample,
    paired_bootstrap_ci,
    paired_t,
    sign_flip_permutation,
    wilcoxon_signed_rank,
)
from evaltk.stats.results import ConfidenceInterval, TestResult
from evaltk.stats.tests_two_sample import brunner_munzel, ks_test, mann_whitney_u, permutation_test, welch_t
from evaltk.verdict.comparison import Comparison
from evaltk.verdict.decision import (
    check_margin,
    decide,
    identical_decision,
    identical_finding,
    margin_kind,
    margin_region,
    match_episodes,
    pair_rows,
    sample_scores,
    sized,
)
from evaltk.verdict.differences import Differences, EnvCheck, check_envs, differences
from evaltk.verdict.recommendation import information_check, recommend
from evaltk.verdict.result import (
    MIN_EPISODES,
    PAIRED_KINDS,
    QUANTITY,
    TARGET_POWER,
    CompareError,
    Decision,
    EpisodeMatch,
    IdenticalRows,
    InformationCheck,
    Pairing,
    Recommendation,
    Verdict,
    describe,
)
from evaltk.verdict.rule import VerdictRule
from evaltk.verdict.sample import Sample

__all__ = [
    "MIN_EPISODES",
    "PAIRED_KINDS",
    "QUANTITY",
    "TARGET_POWER",
    "CompareError",
    "Comparison",
    "Decision",
    "Differences",
    "EnvCheck",
    "EpisodeMatch",
    "IdenticalRows",
    "InformationCheck",
    "MarginKind",
    "Pairing",
    "Recommendation",
    "Sample",
    "Verdict",
    "VerdictRule",
    "check_envs",
    "check_margin",
    "compare",
    "decide",
    "differences",
    "information_check",
    "margin_kind",
    "margin_region",
    "pair_rows",
    "recommend",
]


def compare(a: Sample, b: Sample, rule: VerdictRule) -> Comparison:
    """Compare reference sample ``a`` with candidate sample ``b`` under ``rule``: the one comparison of every door.

    In order: the env check (:func:`~evaltk.verdict.differences.check_envs`: refused unless
    ``rule.allow_different_envs``), the settings diff, the pairing by seed (``rule.paired``), the ``identical``
    finding from the digests, then the statistics at ``rule``'s margin and level. The secondary tests and the
    bootstrap interval follow the design (paired: on the per-seed differences). One generator, stream
    ``verdict.bootstrap`` of ``rule.bootstrap_seed``, drives every resampling step, so a rerun gives identical
    numbers. A ``different`` or ``inconclusive`` explanation ends with what a side did not report and what
    ``--align`` could not align.
    """
    env_check = check_envs(a, b, allow_different_envs=rule.allow_different_envs)
    diff = differences(a, b)
    rng = seeding.rng(rule.bootstrap_seed, "verdict.bootstrap")
    kind, alpha, n_resamples = rule.kind, rule.alpha, rule.resamples
    xa, xb = sample_scores(a.returns, "A"), sample_scores(b.returns, "B")
    pairs, pairing = pair_rows(xa, xb, a.seeds, b.seeds, rule.pairing, kind)
    match = (None if pairs is None or pairs.n == 0 else
             match_episodes(pairs.seeds, a.seeds, b.seeds, a.digests, b.digests, min_episodes=rule.min_episodes))
    identical = (identical_finding(match, pairs.only_a, pairs.only_b)
                 if pairs is not None and match is not None and pairs.identical else None)
    if pairs is not None and match is not None and identical is not None:
        decision = identical_decision(pairs, match, kind, rule.margin, alpha)
        if pairing is not None:
            pairing = dataclasses.replace(pairing, used=False,
                                          note="every shared seed gives the same episode: reported as identical")
    else:
        use = pairs if pairing is not None and pairing.used else None
        decision = decide(xa, xb, rule.margin, kind, alpha=alpha, rng=rng, min_episodes=rule.min_episodes, pairs=use)
        note = None if match is None else match.note()
        if note is not None:
            decision = dataclasses.replace(decision, explanation=f"{decision.explanation} [episodes: {note}]")
    caveats = _caveats(decision, diff, a, b)
    if caveats:
        decision = dataclasses.replace(decision, explanation=f"{decision.explanation}; {caveats}")
    if decision.design == "paired" and pairs is not None:
        tests, boot = _paired_diagnostics(pairs, decision, rng, n_resamples, alpha)
    else:
        tests, boot = _unpaired_diagnostics(xa, xb, rng, n_resamples, alpha)
    adjusted, _ = holm_bonferroni([t.pvalue for t in tests.values()], alpha=alpha)
    holm = dict(zip(tests, adjusted, strict=True))
    rec = recommend(xa, xb, decision, pairs)
    return Comparison(decision, tests, holm, boot, rec, describe(xa), describe(xb), rule.bootstrap_seed, xa, xb,
                      env_check, diff, identical, pairing, information_check(decision, rec, rule.min_episodes), match)


def _caveats(decision: Decision, diff: Differences, a: Sample, b: Sample) -> str:
    """Return what an undecided or ``different`` verdict did not see (unreported or unaligned settings)."""
    if decision.verdict not in (Verdict.DIFFERENT, Verdict.INCONCLUSIVE):
        return ""
    parts = []
    for role, sample in (("a", a), ("b", b)):
        name = role.upper() + (f" ({sample.simulator})" if sample.simulator else "")  # the same through every door
        if diff.not_reported[role]:
            parts.append(f"not reported by {name}: {', '.join(diff.not_reported[role])}")
        if sample.not_aligned:
            parts.append(f"not aligned by --align on {name}: {', '.join(sample.not_aligned)}")
    return "; ".join(parts)


def _unpaired_diagnostics(xa: Any, xb: Any, rng: np.random.Generator, n_resamples: int,
                          alpha: float) -> tuple[dict[str, TestResult], ConfidenceInterval]:
    """Secondary tests and the bootstrap CI of an unpaired design: the two samples as independent."""
    tests = {name: sized(res, xa.size, xb.size) for name, res in {
        "welch_t": welch_t(xb, xa),
        "mann_whitney_u": mann_whitney_u(xb, xa),
        "brunner_munzel": brunner_munzel(xb, xa),
        "ks": ks_test(xb, xa, rng=rng, n_resamples=n_resamples),
        "permutation": permutation_test(xb, xa, rng=rng, n_resamples=n_resamples),
    }.items()}
    boot = bootstrap_diff_ci(xb, xa, rng=rng, method="bca", n_resamples=n_resamples, level=1.0 - alpha)
    return tests, ConfidenceInterval(boot.estimate, boot.low, boot.high, boot.level, f"unpaired {boot.method}",
                                     "mean(B) - mean(A)")


def _paired_diagnostics(pairs: PairedSample, decision: Decision, rng: np.random.Generator, n_resamples: int,
                        alpha: float) -> tuple[dict[str, TestResult], ConfidenceInterval]:
    """Secondary tests and the bootstrap CI of a paired design, all on the per-seed differences ``B - A``."""
    a, b, n = pairs.a, pairs.b, pairs.n
    t_test = decision.difference if decision.difference is not None else sized(paired_t(b, a), n, n)
    tests = {"paired_t": t_test,
             "wilcoxon_signed_rank": sized(wilcoxon_signed_rank(b, a), n, n),
             "sign_flip_permutation": sized(sign_flip_permutation(b, a, rng=rng, n_resamples=n_resamples), n, n)}
    boot = paired_bootstrap_ci(b, a, rng=rng, n_resamples=n_resamples, level=1.0 - alpha)
    return tests, ConfidenceInterval(boot.estimate, boot.low, boot.high, boot.level, boot.method, "mean(B - A)")
