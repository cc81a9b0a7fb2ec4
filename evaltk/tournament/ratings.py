"""Match statistics: W/D/L with Wilson intervals, Elo ± CI and LOS, GSPRT, Bradley–Terry.

Pure functions over counts; no I/O, no global RNG (bootstraps take a ``numpy.random.Generator``).
Conventions follow cutechess-cli and fishtest (docs/tournament.md §Statistics):

* score ``p = (W + D/2) / N``; logistic Elo ``elo = -400 log10(1/p - 1)``;
* Elo 95 % CI from the normal approximation of the per-game score: ``p ± z·sd/√N`` mapped to Elo;
* LOS (likelihood of superiority) ``Φ((W - L) / √(W + L))`` (draws ignored), pentanomial: ``Φ((μ-½)/se)``;
* GSPRT: the log-likelihood ratio of the multinomial MLE constrained to score ``s(elo1)`` vs ``s(elo0)``
  (fishtest's "logistic" model), on trinomial W/D/L counts or pentanomial game-pair counts;
  bounds ``log(β/(1-α))`` and ``log((1-β)/α)``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import optimize, stats

#: Per-game scores of trinomial counts ordered (losses, draws, wins).
TRINOMIAL_SCORES: tuple[float, ...] = (0.0, 0.5, 1.0)
#: Per-game scores of pentanomial game-pair counts ordered by pair score 0, ½, 1, 1½, 2 (halved).
PENTANOMIAL_SCORES: tuple[float, ...] = (0.0, 0.25, 0.5, 0.75, 1.0)
ELO_PER_NATURAL = 400.0 / math.log(10.0)
_PDF_EPSILON = 1e-3  # fishtest regularises empty cells the same way


def wilson_interval(successes: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion; ``(0, 1)`` when ``n == 0``."""
    if n < 0 or not 0 <= successes <= max(n, 0):
        raise ValueError(f"need 0 <= successes <= n, got successes={successes}, n={n}")
    if n == 0:
        return 0.0, 1.0
    z = float(stats.norm.ppf(0.5 + confidence / 2.0))
    phat = successes / n
    denom = 1.0 + z * z / n
    centre = (phat + z * z / (2 * n)) / denom
    half = z * math.sqrt(phat * (1 - phat) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


def elo_from_score(score: float) -> float:
    """Logistic Elo of an expected score in [0, 1] (±inf at the ends)."""
    if score <= 0.0:
        return -math.inf
    if score >= 1.0:
        return math.inf
    return -400.0 * math.log10(1.0 / score - 1.0)


def score_from_elo(elo: float) -> float:
    """Return the expected score of a logistic Elo difference."""
    return float(1.0 / (1.0 + 10.0 ** (-elo / 400.0)))


@dataclass(frozen=True)
class EloEstimate:
    """Elo difference with a two-sided confidence interval, LOS and the underlying score."""

    elo: float
    ci_low: float
    ci_high: float
    los: float
    score: float
    n: int

    @property
    def margin(self) -> float:
        """Half-width of the Elo interval (cutechess's "±")."""
        return (self.ci_high - self.ci_low) / 2.0


def _pdf(counts: Sequence[float] | np.ndarray, scores: Sequence[float]) -> tuple[float, np.ndarray, np.ndarray]:
    c = np.asarray(counts, dtype=np.float64)
    a = np.asarray(scores, dtype=np.float64)
    if c.shape != a.shape or np.any(c < 0):
        raise ValueError(f"counts must be {len(scores)} non-negative numbers, got {list(counts)}")
    n = float(c.sum())
    return n, c / n if n > 0 else c, a


def elo_estimate(counts: Sequence[float], scores: Sequence[float] = TRINOMIAL_SCORES,
                 confidence: float = 0.95) -> EloEstimate:
    """Elo difference from outcome counts (trinomial (L, D, W) or pentanomial pair counts)."""
    n, p, a = _pdf(counts, scores)
    if n == 0:
        return EloEstimate(0.0, -math.inf, math.inf, 0.5, 0.5, 0)
    mu = float(np.dot(p, a))
    var = float(np.dot(p, (a - mu) ** 2))
    z = float(stats.norm.ppf(0.5 + confidence / 2.0))
    se = math.sqrt(var / n)
    units = n if len(a) == 3 else 2 * n
    los = (1.0 if mu > 0.5 else 0.0 if mu < 0.5 else 0.5) if se == 0 else float(stats.norm.cdf((mu - 0.5) / se))
    if len(a) == 3:
        wins, losses = float(counts[2]), float(counts[0])
        los = 0.5 if wins + losses == 0 else float(stats.norm.cdf((wins - losses) / math.sqrt(wins + losses)))
    return EloEstimate(elo=elo_from_score(mu), ci_low=elo_from_score(mu - z * se), ci_high=elo_from_score(mu + z * se),
                       los=los, score=mu, n=int(units))


def _constrained_mle(p: np.ndarray, a: np.ndarray, s: float) -> np.ndarray:
    """Return the distribution closest (KL) to ``p`` with mean score ``s``: ``p / (1 + λ(a - s))``."""
    d = a - s
    if np.all(d[p > 0] >= 0) or np.all(d[p > 0] <= 0):
        raise ValueError(f"score {s} lies outside the support of the observed outcomes")
    lo = -1.0 / float(d.max()) + 1e-12
    hi = 1.0 / float(-d.min()) - 1e-12

    def f(lam: float) -> float:
        return float(np.sum(p * d / (1.0 + lam * d)))

    lam = optimize.brentq(f, lo, hi, xtol=1e-14)
    q: np.ndarray = p / (1.0 + lam * d)
    out: np.ndarray = q / q.sum()
    return out


def llr(counts: Sequence[float], elo0: float, elo1: float, scores: Sequence[float] = TRINOMIAL_SCORES) -> float:
    """GSPRT log-likelihood ratio of H1 (Elo = elo1) against H0 (Elo = elo0).

    ``counts``: trinomial (L, D, W) or pentanomial (pair scores 0..2) counts. Empty cells are
    regularised to 1e-3 as fishtest does. Returns 0 with no games.
    """
    c = np.maximum(np.asarray(counts, dtype=np.float64), _PDF_EPSILON)
    n_real = float(np.sum(counts))
    if n_real == 0:
        return 0.0
    n, p, a = _pdf(c, scores)
    q0 = _constrained_mle(p, a, score_from_elo(elo0))
    q1 = _constrained_mle(p, a, score_from_elo(elo1))
    return float(n * np.sum(p * (np.log(q1) - np.log(q0))))


def llr_normal_approx(counts: Sequence[float], elo0: float, elo1: float,
                      scores: Sequence[float] = TRINOMIAL_SCORES) -> float:
    """Brownian-motion approximation ``N (s1-s0)(2μ-s0-s1) / (2σ²)`` of :func:`llr` (a cross-check)."""
    n, p, a = _pdf(np.maximum(np.asarray(counts, dtype=np.float64), _PDF_EPSILON), scores)
    mu = float(np.dot(p, a))
    var = float(np.dot(p, (a - mu) ** 2))
    s0, s1 = score_from_elo(elo0), score_from_elo(elo1)
    return n * (s1 - s0) * (2 * mu - s0 - s1) / (2 * var)


@dataclass(frozen=True)
class SprtResult:
    """State of a sequential probability ratio test."""

    llr: float
    lower: float
    upper: float
    elo0: float
    elo1: float
    alpha: float
    beta: float
    model: str  # "trinomial" or "pentanomial"

    @property
    def decision(self) -> str:
        """``"H1"`` (accept elo1), ``"H0"`` (accept elo0) or ``"continue"``."""
        if self.llr >= self.upper:
            return "H1"
        if self.llr <= self.lower:
            return "H0"
        return "continue"


def sprt(counts: Sequence[float], *, elo0: float, elo1: float, alpha: float = 0.05, beta: float = 0.05) -> SprtResult:
    """GSPRT on trinomial (3 counts: L, D, W) or pentanomial (5 counts) outcomes."""
    if not (0 < alpha < 1 and 0 < beta < 1):
        raise ValueError(f"alpha and beta must lie in (0, 1), got alpha={alpha}, beta={beta}")
    if elo1 <= elo0:
        raise ValueError(f"need elo0 < elo1, got elo0={elo0}, elo1={elo1}")
    if len(counts) == 3:
        model, scores = "trinomial", TRINOMIAL_SCORES
    elif len(counts) == 5:
        model, scores = "pentanomial", PENTANOMIAL_SCORES
    else:
        raise ValueError(f"need 3 (L, D, W) or 5 (pentanomial) counts, got {len(counts)}")
    return SprtResult(llr=llr(counts, elo0, elo1, scores), lower=math.log(beta / (1 - alpha)),
                      upper=math.log((1 - beta) / alpha), elo0=elo0, elo1=elo1, alpha=alpha, beta=beta, model=model)


def bradley_terry(comparisons: np.ndarray, num_players: int, *, prior_sd: float | None = 4.0) -> np.ndarray:
    """Bradley–Terry ratings in Elo units, centred to mean 0.

    ``comparisons``: ``float64[M, 3]`` rows ``(i, j, score_i)`` with score 1 (i won), ½ (draw), 0.
    ``prior_sd``: a N(0, prior_sd²) prior on each natural-unit rating (≈ 700 Elo for 4) keeps
    ratings finite when a player wins or loses everything; ``None`` gives the plain MLE.
    Returns ``float64[num_players]``.
    """
    comp = np.asarray(comparisons, dtype=np.float64).reshape(-1, 3)
    i, j, s = comp[:, 0].astype(np.int64), comp[:, 1].astype(np.int64), comp[:, 2]
    if comp.size and (i.min() < 0 or j.min() < 0 or max(i.max(), j.max()) >= num_players):
        raise ValueError(f"player index outside 0..{num_players - 1}")
    inv_var = 0.0 if prior_sd is None else 1.0 / prior_sd**2

    def objective(r: np.ndarray) -> float:
        x = r[i] - r[j]
        return float(np.sum(np.logaddexp(0.0, -x) * s + np.logaddexp(0.0, x) * (1 - s))) + 0.5 * inv_var * float(r @ r)

    # Newton's method with step halving on the (convex) negative log-likelihood; the pseudo-inverse
    # handles the all-equal direction, which is unidentified without a prior.
    r = np.zeros(num_players)
    for _ in range(200):
        x = r[i] - r[j]
        prob = 1.0 / (1.0 + np.exp(-x))
        g_x = prob - s
        grad = np.bincount(i, g_x, num_players) - np.bincount(j, g_x, num_players) + inv_var * r
        w = prob * (1.0 - prob)
        hess = np.diag(np.bincount(i, w, num_players) + np.bincount(j, w, num_players) + inv_var)
        np.add.at(hess, (i, j), -w)
        np.add.at(hess, (j, i), -w)
        step = np.linalg.pinv(hess, hermitian=True) @ grad
        current = objective(r)
        t = 1.0
        while objective(r - t * step) > current + 1e-12 and t > 1e-8:
            t *= 0.5
        r = r - t * step
        if float(np.max(np.abs(t * step))) < 1e-10:
            break
    centred: np.ndarray = r - r.mean()
    return centred * ELO_PER_NATURAL


def bradley_terry_bootstrap(groups: Sequence[np.ndarray], num_players: int, rng: np.random.Generator, *,
                            num_resamples: int = 200, confidence: float = 0.95,
                            prior_sd: float | None = 4.0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Bradley–Terry ratings with percentile bootstrap CIs, resampling whole matches.

    ``groups``: one ``float64[k, 3]`` comparison array per match (a free-for-all match gives all
    its pairs, so resampling matches keeps their correlation). Returns ``(ratings, ci_low, ci_high)``,
    each ``float64[num_players]`` in Elo.
    """
    if not groups:
        raise ValueError("no matches to rate")
    full = np.concatenate(groups)
    ratings = bradley_terry(full, num_players, prior_sd=prior_sd)
    boots = np.empty((num_resamples, num_players))
    for b in range(num_resamples):
        pick = rng.integers(0, len(groups), len(groups))
        boots[b] = bradley_terry(np.concatenate([groups[k] for k in pick]), num_players, prior_sd=prior_sd)
    tail = (1.0 - confidence) / 2.0 * 100.0
    low, high = np.percentile(boots, [tail, 100.0 - tail], axis=0)
    return ratings, low, high


def pentanomial(pair_scores: Sequence[float]) -> list[int]:
    """Return the counts of game-pair scores 0, ½, 1, 1½, 2 (each pair score = the sum of two per-game scores)."""
    counts = [0] * 5
    for score in pair_scores:
        k = round(score * 2)
        if not 0 <= k <= 4 or abs(k / 2 - score) > 1e-9:
            raise ValueError(f"pair score {score} is not one of 0, 0.5, 1, 1.5, 2")
        counts[k] += 1
    return counts
