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

Paired designs: with ``seeds_a`` and ``seeds_b`` the rows are matched by episode seed
(:mod:`evaltk.stats.paired`). With the per-episode digests of both sides (``digests_a``/``digests_b``,
:mod:`evaltk.episode_digest`: rewards, actions and episode end per step, and the observations) the
verdict is ``identical`` when every shared seed's episode is the same step for step on at least
``max(min_episodes, MIN_EPISODES)`` shared seeds - a fact about these episodes, stated with the rule of
three's 95 % upper bound on the rate of differing episodes (3/n): "identical on 30/30 seeds: fewer than
10% of episodes differ (95%)" (:attr:`Comparison.identical`). Anything less - fewer seeds, an episode
that differs, or tables without digests (older tables: compared on returns only) - gets the ordinary
statistics, and :attr:`Comparison.episodes` says why in the explanation. For ``absolute`` and ``sd``
margins the verdict then comes from the paired TOST on the per-seed differences (``relative`` and
``prob`` stay unpaired, with a note).

Modules: :mod:`evaltk.verdict.result` (result types), :mod:`evaltk.verdict.decision` (the rule,
pairing, margins), :mod:`evaltk.verdict.recommendation` (power and recommendation),
:mod:`evaltk.verdict.sequential` (the one sequential comparison), :mod:`evaltk.verdict.rule` (:class:`VerdictRule`,
the options a verdict is decided by, as every command builds them). :func:`compare` puts them together.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from evaltk.margin import MarginKind
from evaltk.stats.bootstrap import bootstrap_diff_ci
from evaltk.stats.multiple import holm_bonferroni
from evaltk.stats.results import ConfidenceInterval
from evaltk.stats.tests_two_sample import brunner_munzel, ks_test, mann_whitney_u, permutation_test, welch_t
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
from evaltk.verdict.recommendation import information_check, recommend
from evaltk.verdict.result import (
    MIN_EPISODES,
    PAIRED_KINDS,
    QUANTITY,
    TARGET_POWER,
    CompareError,
    Comparison,
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

__all__ = [
    "MIN_EPISODES",
    "PAIRED_KINDS",
    "QUANTITY",
    "TARGET_POWER",
    "CompareError",
    "Comparison",
    "Decision",
    "EpisodeMatch",
    "IdenticalRows",
    "InformationCheck",
    "MarginKind",
    "Pairing",
    "Recommendation",
    "Verdict",
    "VerdictRule",
    "check_margin",
    "compare",
    "decide",
    "information_check",
    "margin_kind",
    "margin_region",
    "pair_rows",
    "recommend",
]


def compare(
    a: Any,
    b: Any,
    margin: float,
    kind: MarginKind | str,
    *,
    alpha: float = 0.05,
    seed: int = 0,
    n_resamples: int = 9999,
    seeds_a: Any = None,
    seeds_b: Any = None,
    paired: str = "auto",
    min_episodes: int = MIN_EPISODES,
    digests_a: Any = None,
    digests_b: Any = None,
) -> Comparison:
    """Full comparison of reference scores ``a`` with candidate scores ``b`` (``float[n]``, n >= 2 each).

    ``seed`` makes the one ``numpy.random.Generator`` used for the bootstrap-t part of the verdict,
    the permutation test, the KS permutation p-value (with ties) and the BCa bootstrap CI, so a
    rerun gives identical numbers. ``seeds_a``/``seeds_b`` (the episode seeds, in the same order
    as ``a``/``b``) enable pairing: ``paired="auto"`` pairs when at least 2 seeds are shared,
    ``"yes"`` requires it, ``"no"`` never pairs (identical episodes are still reported).
    ``digests_a``/``digests_b`` (per row ``{"steps": hex, "obs": hex}`` or ``None``, parallel to the seeds)
    are what ``identical`` is decided on (module docstring).
    """
    rng = np.random.default_rng(seed)
    kind_ = margin_kind(kind)
    pairs, pairing = pair_rows(a, b, seeds_a, seeds_b, paired, kind_)
    match = (None if pairs is None or pairs.n == 0 else
             match_episodes(pairs.seeds, seeds_a, seeds_b, digests_a, digests_b, min_episodes=min_episodes))
    identical = (identical_finding(match, pairs.only_a, pairs.only_b)
                 if pairs is not None and match is not None and pairs.identical else None)
    if pairs is not None and match is not None and identical is not None:
        decision = identical_decision(pairs, match, kind_, margin, alpha)
        if pairing is not None:
            pairing = dataclasses.replace(pairing, used=False,
                                          note="every shared seed gives the same episode: reported as identical")
    else:
        use = pairs if pairing is not None and pairing.used else None
        decision = decide(a, b, margin, kind_, alpha=alpha, rng=rng, min_episodes=min_episodes, pairs=use)
        note = None if match is None else match.note()
        if note is not None:
            decision = dataclasses.replace(decision, explanation=f"{decision.explanation} [episodes: {note}]")
    xa, xb = sample_scores(a, "A"), sample_scores(b, "B")
    tests = {name: sized(res, xa.size, xb.size) for name, res in {
        "welch_t": welch_t(xb, xa),
        "mann_whitney_u": mann_whitney_u(xb, xa),
        "brunner_munzel": brunner_munzel(xb, xa),
        "ks": ks_test(xb, xa, rng=rng, n_resamples=n_resamples),
        "permutation": permutation_test(xb, xa, rng=rng, n_resamples=n_resamples),
    }.items()}
    if decision.design == "paired" and decision.difference is not None:
        tests["paired_t"] = decision.difference
    adjusted, _ = holm_bonferroni([t.pvalue for t in tests.values()], alpha=alpha)
    holm = dict(zip(tests, adjusted, strict=True))
    boot = bootstrap_diff_ci(xb, xa, rng=rng, method="bca", n_resamples=n_resamples, level=1.0 - alpha)
    boot = ConfidenceInterval(boot.estimate, boot.low, boot.high, boot.level, boot.method, "mean(B) - mean(A)")
    rec = recommend(xa, xb, decision, pairs)
    return Comparison(decision, tests, holm, boot, rec, describe(xa), describe(xb), seed, xa, xb, identical,
                      pairing, information_check(decision, rec, min_episodes), match)

