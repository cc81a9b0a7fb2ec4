"""Calibration of evaltk's two-sample tests and of the compare verdict, by simulation.

Run: ``python benchmarks/stats_calibration.py`` (``--sims 2000`` pairs per row by default;
``--quick`` for 300). Prints these tables (``--only`` picks one):

1. Type-I error of every difference test on *equal* distributions (alpha = 0.05): the rejection
   rate should lie in [0.03, 0.07]. The reference column is ``scipy.stats.ks_2samp``'s own p-value,
   which assumes continuous data and is conservative with ties (evaltk switches to a permutation
   p-value there).
2. False-equivalence rate of ``evaltk.verdict.decide`` when the true difference sits exactly on
   the margin (the worst case for a TOST): it should be at most alpha = 0.05. The reference
   column is the naive plug-in alternative (Welch TOST against a margin computed from the
   estimated SD or reference mean), which ignores the margin's own uncertainty.
3. How often each verdict comes out for the must-show cases (identical distributions and a +1 SD
   shift at n = 300, identical at n = 6) over ``--seeds`` seeds, for normal, lognormal and discrete
   scores.
4. ``--only sequential``: the three-outcome sequential comparison at true differences 0, 0.25,
   0.5 (the margin) and 1.0 SD for normal, t3, bimodal and resampled real score tables, both
   margin kinds, each error rate checked against its own bound (``stats_calibration_sequential.py``).
5. ``--only paired``: paired (per-seed differences) vs unpaired designs when the per-seed scores
   correlate (rho = 0.75, 0.9): error rates and average episodes.
6. ``--only design``: the former and the current sequential designs by the recursion (normal
   approximation, no sampling): budget, power, expected episodes and the saving at equal power.

The script exits 1 when a sequential error rate is above its bound plus 3 Monte-Carlo SEs.
Every row uses its own ``numpy.random.Generator`` seeded from ``--seed`` and the row, so a rerun
prints the same numbers. MC SE = sqrt(r (1 - r) / sims).
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy import optimize, stats
from statsmodels.stats.weightstats import ttost_ind

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # this checkout first (not an installed copy): a run measures the code beside it
    sys.path.insert(0, str(ROOT))

from evaltk.stats import brunner_munzel, ks_test, mann_whitney_u, permutation_test, welch_t  # noqa: E402
from evaltk.verdict import Verdict, decide  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from stats_calibration_sequential import SEQ_LOOKS, design_table, paired_table, sequential_table  # noqa: E402 (a sibling)

ALPHA = 0.05
KINDS = ["absolute", "relative", "sd", "prob"]
Sampler = Callable[[np.random.Generator, int, float], np.ndarray]


@dataclass(frozen=True)
class Dist:
    """A score distribution with a location parameter ``shift`` (added on the latent scale)."""

    name: str
    sample: Sampler
    mean: float
    sd: float
    prob_shift: Callable[[float], float]  # shift giving P(B > A) + 0.5 P(B = A) = 0.5 + m


def _normal(rng: np.random.Generator, n: int, shift: float) -> np.ndarray:
    return rng.normal(10.0 + shift, 2.0, n)


def _lognormal(rng: np.random.Generator, n: int, shift: float) -> np.ndarray:
    return np.exp(rng.normal(0.0, 1.0, n)) + shift


def _rounded(rng: np.random.Generator, n: int, shift: float) -> np.ndarray:
    return np.round(rng.normal(5.0 + shift, 1.5, n))


def _rounded_prob(shift: float) -> float:
    ks = np.arange(-10, 21)
    def pmf(mu: float) -> np.ndarray:
        out: np.ndarray = stats.norm.cdf(ks + 0.5, mu, 1.5) - stats.norm.cdf(ks - 0.5, mu, 1.5)
        return out
    pa, pb = pmf(5.0), pmf(5.0 + shift)
    cum_a = np.cumsum(pa) - pa  # P(A < k)
    return float(np.sum(pb * (cum_a + 0.5 * pa)))


def _lognormal_prob_shift(m: float) -> float:
    """Additive shift d with P(exp(Z1) + d > exp(Z2)) = 0.5 + m, by quadrature over Z1."""
    z = np.linspace(-8, 8, 4001)
    w = stats.norm.pdf(z) * (z[1] - z[0])

    def prob(d: float) -> float:
        upper = np.exp(z) + d
        return float(np.sum(w * stats.norm.cdf(np.log(np.maximum(upper, 1e-300))) * (upper > 0)))

    return float(optimize.brentq(lambda d: prob(d) - (0.5 + m), 0.0, 20.0))


LOGNORMAL_SD = math.sqrt((math.e - 1.0) * math.e)
DISTS = [
    Dist("normal(10, 2)", _normal, 10.0, 2.0, lambda m: 2.0 * math.sqrt(2.0) * float(stats.norm.ppf(0.5 + m))),
    Dist("lognormal(0, 1)", _lognormal, math.exp(0.5), LOGNORMAL_SD, _lognormal_prob_shift),
    Dist("round(normal(5, 1.5))", _rounded, 5.0, math.sqrt(1.5**2 + 1.0 / 12.0),
         lambda m: float(optimize.brentq(lambda d: _rounded_prob(d) - (0.5 + m), 0.0, 10.0))),
]


def _rate(hits: int, sims: int) -> str:
    r = hits / sims
    return f"{r:.4f} ± {math.sqrt(max(r * (1 - r), 1e-12) / sims):.4f}"


def type_one_error(sims: int, sizes: list[int], seed: int, resamples: int) -> None:
    """Print the rejection rate of every difference test on equal distributions."""
    names = ["welch_t", "mann_whitney_u", "brunner_munzel", "ks", "permutation", "scipy ks_2samp (ref)"]
    print(f"\n## Difference tests on equal distributions: rejection rate at alpha={ALPHA} ({sims} pairs per row)")
    print("| distribution | n per side | " + " | ".join(names) + " | CPU s |")
    print("| --- | ---: |" + " ---: |" * (len(names) + 1))
    for row, (dist, n) in enumerate((d, n) for d in DISTS for n in sizes if n > 0):
        rng = np.random.default_rng([seed, 1, row])
        hits = dict.fromkeys(names, 0)
        t0 = time.process_time()
        for _ in range(sims):
            a, b = dist.sample(rng, n, 0.0), dist.sample(rng, n, 0.0)
            results = {
                "welch_t": welch_t(b, a).pvalue,
                "mann_whitney_u": mann_whitney_u(b, a).pvalue,
                "brunner_munzel": brunner_munzel(b, a).pvalue,
                "ks": ks_test(b, a, rng=rng, n_resamples=resamples).pvalue,
                "permutation": permutation_test(b, a, rng=rng, n_resamples=resamples).pvalue,
                "scipy ks_2samp (ref)": float(stats.ks_2samp(b, a).pvalue),
            }
            for name, p in results.items():
                hits[name] += int(p < ALPHA)
        cpu = time.process_time() - t0
        print(f"| {dist.name} | {n} | " + " | ".join(_rate(hits[k], sims) for k in names) + f" | {cpu:.1f} |",
              flush=True)


def _naive(kind: str, a: np.ndarray, b: np.ndarray, margin: float) -> bool:
    """Plug-in reference: Welch TOST against a margin computed from the data as if it were known."""
    if kind == "sd":
        pooled = math.sqrt(((a.size - 1) * a.var(ddof=1) + (b.size - 1) * b.var(ddof=1)) / (a.size + b.size - 2))
        bound = margin * pooled
    elif kind == "relative":
        bound = margin * abs(float(a.mean()))
    elif kind == "absolute":
        bound = margin
    else:
        return False
    p = float(ttost_ind(b, a, -bound, bound, usevar="unequal")[0])
    return p < ALPHA


def false_equivalence(sims: int, sizes: list[int], seed: int, only_kinds: list[str] | None = None) -> None:
    """Print how often the verdict is 'equivalent' when the true difference equals the margin.

    A size of 0 stands for the unequal-size case (lognormal, A = 300, B = 50 episodes).
    """
    kinds = [(k, m) for k, m in (("absolute", 0.5), ("relative", 0.1), ("sd", 0.5), ("prob", 0.1))
             if only_kinds is None or k in only_kinds]
    print(f"\n## compare verdict 'equivalent' when the true difference equals the margin ({sims} pairs per row)")
    print("(last rows: lognormal with unequal sizes, A = 300 and B = 50 episodes, B shifted up by the margin)")
    print("| distribution | n per side | kind | margin | true shift (score units) | evaltk rate | "
          "plug-in Welch TOST (ref) | CPU s |")
    print("| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: |")
    rows = [(dist, n) for n in sizes for dist in (DISTS if n > 0 else DISTS[1:2])]
    for dist, n in rows:
        for kind, m in kinds:
            if kind == "absolute":
                m_abs = m * dist.sd  # margin of half an SD, in score units
                shift, margin = m_abs, m_abs
            elif kind == "relative":
                shift, margin = m * abs(dist.mean), m
            elif kind == "sd":
                shift, margin = m * dist.sd, m
            else:
                shift, margin = dist.prob_shift(m), m
            rng = np.random.default_rng([seed, 2, DISTS.index(dist), n, KINDS.index(kind)])
            hits = naive = 0
            t0 = time.process_time()
            n_a, n_b = (n, n) if n > 0 else (300, 50)
            for _ in range(sims):
                a, b = dist.sample(rng, n_a, 0.0), dist.sample(rng, n_b, shift)
                verdict = decide(a, b, margin, kind, alpha=ALPHA, rng=rng).verdict
                hits += int(verdict is Verdict.EQUIVALENT)
                naive += int(_naive(kind, a, b, margin))
            cpu = time.process_time() - t0
            ref = _rate(naive, sims) if kind != "prob" else "-"
            size = f"{n_a}" if n_a == n_b else f"{n_a} / {n_b}"
            print(f"| {dist.name} | {size} | {kind} | {margin:.4g} | {shift:.4g} | {_rate(hits, sims)} | {ref} | "
                  f"{cpu:.1f} |", flush=True)


def verdict_sweep(seeds: int) -> None:
    """Print how often each verdict comes out for the must-show cases, over ``seeds`` seeds."""
    def normal(rng: np.random.Generator, n: int) -> np.ndarray:
        return rng.normal(100.0, 20.0, n)

    def lognormal(rng: np.random.Generator, n: int) -> np.ndarray:
        return rng.lognormal(3.0, 1.0, n)

    def discrete(rng: np.random.Generator, n: int) -> np.ndarray:
        return rng.choice([0.0, 1.0, 2.0, 5.0, 21.0], p=[0.3, 0.3, 0.2, 0.15, 0.05], size=n)

    sd_lognormal = math.sqrt((math.e - 1.0) * math.e) * math.exp(3.0)
    probs, values = np.array([0.3, 0.3, 0.2, 0.15, 0.05]), np.array([0.0, 1.0, 2.0, 5.0, 21.0])
    sd_discrete = math.sqrt(float(probs @ values**2 - (probs @ values) ** 2))
    cases: list[tuple[str, Callable[[np.random.Generator, int], np.ndarray], float, list[tuple[str, float]],
                      list[int]]] = [
        ("normal(100, 20)", normal, 20.0, [("sd", 0.5), ("absolute", 10.0), ("prob", 0.1)], [300, 6]),
        ("lognormal(3, 1)", lognormal, sd_lognormal, [("sd", 0.5), ("prob", 0.1)], [300]),
        ("discrete {0,1,2,5,21}", discrete, sd_discrete, [("sd", 0.5), ("prob", 0.1), ("absolute", 1.0)], [300, 6]),
    ]
    print(f"\n## Verdicts over {seeds} seeds (identical distributions, and B shifted by +1 SD)")
    print("| data | n per side | B | margin | equivalent | different | inconclusive |")
    print("| --- | ---: | --- | --- | ---: | ---: | ---: |")
    for label, gen, sd, kinds, sizes in cases:
        for kind, margin in kinds:
            for n in sizes:
                for shift in ([0.0, sd] if n >= 300 else [0.0]):
                    counts = dict.fromkeys(("equivalent", "different", "inconclusive"), 0)
                    for seed in range(seeds):
                        rng = np.random.default_rng([seed, 99])
                        a, b = gen(rng, n), gen(rng, n) + shift
                        counts[decide(a, b, margin, kind, rng=rng).verdict.value] += 1
                    what = "identical" if shift == 0.0 else "+1 SD"
                    print(f"| {label} | {n} | {what} | {kind} {margin:g} | " + " | ".join(map(str, counts.values()))
                          + " |", flush=True)


def main() -> None:
    """Parse arguments and print both tables."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--sims", type=int, default=2000, help="simulated pairs per row (default 2000)")
    parser.add_argument("--sizes", type=int, nargs="+", default=[300, 30, 0],
                        help="episodes per side; 0 = lognormal with A = 300, B = 50 (TOST table only)")
    parser.add_argument("--kinds", nargs="+", choices=["absolute", "relative", "sd", "prob"],
                        help="margin kinds in the TOST table (default: all)")
    parser.add_argument("--seed", type=int, default=0, help="base seed (default 0)")
    parser.add_argument("--resamples", type=int, default=499, help="permutation resamples (default 499)")
    parser.add_argument("--quick", action="store_true", help="300 pairs per row")
    parser.add_argument("--only", choices=["type1", "tost", "verdicts", "sequential", "paired", "design"],
                        help="run one table only")
    parser.add_argument("--looks", type=int, default=SEQ_LOOKS,
                        help=f"looks of the sequential design in --only sequential (default {SEQ_LOOKS})")
    parser.add_argument("--seeds", type=int, default=200, help="seeds per case in the verdict table (default 200)")
    args = parser.parse_args()
    sims = 300 if args.quick else args.sims
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    print(f"stats calibration: sims={sims} sizes={args.sizes} seed={args.seed} alpha={ALPHA} "
          f"(machine shared; CPU seconds per row shown); started {started}; command: python {' '.join(sys.argv)}")
    if args.only in (None, "type1"):
        type_one_error(sims, args.sizes, args.seed, args.resamples)
    if args.only in (None, "tost"):
        false_equivalence(sims, args.sizes, args.seed, args.kinds)
    if args.only in (None, "verdicts"):
        verdict_sweep(args.seeds)
    ok = True
    if args.only in (None, "sequential"):
        ok &= sequential_table(sims, args.seed, args.looks)
    if args.only in (None, "paired"):
        ok &= paired_table(sims, args.seed)
    if args.only in (None, "design"):
        design_table(args.looks)
    if not ok:
        print("error: a sequential error rate is above its bound plus 3 Monte-Carlo SEs (rows marked MISS)")
        raise SystemExit(1)


if __name__ == "__main__":
    main()
