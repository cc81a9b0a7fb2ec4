"""Calibration of evaltk's two-sample tests and of the compare verdict, by simulation.

Run: ``python benchmarks/stats_calibration.py`` (``--sims 2000`` pairs per row by default;
``--quick`` for 300). Prints three tables:

1. Type-I error of every difference test on *equal* distributions (alpha = 0.05): the rejection
   rate should lie in [0.03, 0.07]. The reference column is ``scipy.stats.ks_2samp``'s own p-value,
   which assumes continuous data and is conservative with ties (evaltk switches to a permutation
   p-value there).
2. False-equivalence rate of ``evaltk.compare.decide`` when the true difference sits exactly on
   the margin (the worst case for a TOST): it should be at most alpha = 0.05. The reference
   column is the naive plug-in alternative (Welch TOST against a margin computed from the
   estimated SD or reference mean), which ignores the margin's own uncertainty.
3. How often each verdict comes out for the must-show cases (identical distributions and a +1 SD
   shift at n = 300, identical at n = 6) over ``--seeds`` seeds, for normal, lognormal and discrete
   scores.
4. ``--only sequential``: the group-sequential TOST (:mod:`evaltk.stats.sequential`, margin 0.5 SD,
   ``--looks`` looks (default 10), O'Brien-Fleming alpha-spending, Pocock beta-spending binding
   futility, budget planned for beta = 0.16) next to the fixed-N TOST:
   false "equivalent" at the margin, false "different" at equality, power at equality, average
   episodes per side, for normal, t3 and Atari-like bimodal scores (vectorised: all sequences at once).
5. ``--only design``: the design search for the "30 % fewer episodes" must-show: the shipped
   design and per-side group-sequential TOSTs (each one-sided test with its own efficacy and
   beta-spending futility boundaries, :func:`evaltk.stats.boundaries.efficacy_futility_bounds`),
   5 and 10 looks, at 10,000 sequences per cell by default, with expected episodes over a grid of
   true differences (see :func:`design_table` for what "average" means).
6. ``--only paired``: paired (per-seed differences) vs unpaired designs when the per-seed scores
   correlate (rho = 0.75, 0.9): error rates and average episodes.

Every row uses its own ``numpy.random.Generator`` seeded from ``--seed`` and the row, so a rerun
prints the same numbers. MC SE = sqrt(r (1 - r) / sims).
"""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy import optimize, stats
from statsmodels.stats.weightstats import ttost_ind

from evaltk.compare import Verdict, decide
from evaltk.stats import brunner_munzel, ks_test, mann_whitney_u, permutation_test, welch_t

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


def _standard_normal(rng: np.random.Generator, shape: tuple[int, int]) -> np.ndarray:
    return rng.standard_normal(shape)


def _standard_t3(rng: np.random.Generator, shape: tuple[int, int]) -> np.ndarray:
    return rng.standard_t(3, shape) / math.sqrt(3.0)


BIMODAL = (0.7, 2.0, 1.0, 12.0, 3.0)  # P(low mode), low mean, low SD, high mean, high SD


def _standard_bimodal(rng: np.random.Generator, shape: tuple[int, int]) -> np.ndarray:
    """Atari-like scores: most episodes end early (low mode), some clear a level (high mode); mean 0, SD 1."""
    p, m1, s1, m2, s2 = BIMODAL
    mean = p * m1 + (1 - p) * m2
    var = p * (s1**2 + m1**2) + (1 - p) * (s2**2 + m2**2) - mean**2
    low = rng.random(shape) < p
    x = np.where(low, rng.normal(m1, s1, shape), rng.normal(m2, s2, shape))
    return (x - mean) / math.sqrt(var)


SEQ_DISTS: list[tuple[str, Callable[[np.random.Generator, tuple[int, int]], np.ndarray]]] = [
    ("normal", _standard_normal), ("t3 (heavy tails)", _standard_t3), ("Atari-like bimodal", _standard_bimodal)]


def _fixed_tost_rate(a: np.ndarray, b: np.ndarray, n: int, kind: str, margin: float, paired: bool) -> float:
    from evaltk.stats.sequential import look_stats

    st = look_stats(a[:, :n], b[:, :n], -margin, margin, kind, paired=paired)
    return float(np.mean(np.maximum(st.p_lower, st.p_upper) < ALPHA))


SEQ_LOOKS = 10
"""Looks of the benchmarked sequential design (the 30 % must-show needs 10; 5 is the CLI default)."""
PLAN_BETA = 0.16
"""Futility spending used to size the budget: planned power 0.82, since the fixed-N TOST's n = 70 is
rounded up and its t-test power at 0 is 0.80-0.82; the sequential design must not have less."""


def _sequential_rows(label: str, draw: Callable[[np.random.Generator, tuple[int, int]], np.ndarray], kind: str,
                     sims: int, seed: int, rho: float, paired: bool, looks: int = SEQ_LOOKS,
                     futility: str = "pocock") -> dict[str, float]:
    """Run the sequential design and the fixed-N TOST at delta = margin and delta = 0; return the measurements."""
    from evaltk.compare_tables import look_sizes
    from evaltk.stats.power import tost_sample_size
    from evaltk.stats.sequential import Outcome, SequentialDesign, design_max_episodes, simulate

    margin = 0.5
    plan_rho = rho if paired else 0.0
    n_max = max(design_max_episodes(margin, looks=looks, beta=PLAN_BETA, futility_spending=futility, rho=plan_rho),
                10)
    sizes = look_sizes(n_max, looks, 10)
    design = SequentialDesign.build([s / n_max for s in sizes], alpha=ALPHA, beta=PLAN_BETA,
                                    futility_spending=futility)
    sd_plan = math.sqrt(1.0 - plan_rho)
    n_fixed = tost_sample_size(margin, sd=sd_plan, alpha=ALPHA, power=0.8).n_per_side
    n_draw = max(n_max, n_fixed)
    out: dict[str, float] = {"n_max": n_max, "n_fixed": n_fixed}
    for name, delta in (("margin", margin), ("zero", 0.0)):
        rng = np.random.default_rng([seed, 17, int(1000 * rho), int(paired), len(label), int(delta * 10),
                                     SEQUENTIAL_KIND_CODE[kind]])
        z = draw(rng, (sims, n_draw))
        e = draw(rng, (sims, n_draw))
        a = z
        b = rho * z + math.sqrt(1.0 - rho**2) * e + delta
        res = simulate(design, a, b, sizes, kind, margin, paired=paired)
        out[f"{name}_equivalent"] = res.rate(Outcome.EQUIVALENT)
        out[f"{name}_different"] = res.rate(Outcome.DIFFERENT)
        out[f"{name}_episodes"] = float(res.episodes.mean())
        out[f"{name}_fixed_equivalent"] = _fixed_tost_rate(a, b, n_fixed, kind, margin, paired)
    power = out["zero_equivalent"]
    out["n_fixed_same_power"] = tost_sample_size(margin, sd=sd_plan, alpha=ALPHA,
                                                 power=min(max(power, 0.05), 0.999)).n_per_side
    return out


SEQUENTIAL_KIND_CODE = {"absolute": 0, "sd": 1}


def sequential_table(sims: int, seed: int, looks: int = SEQ_LOOKS) -> None:
    """Table 4: sequential TOST vs fixed-N TOST (unpaired), margin 0.5 SD."""
    print(f"\n## Sequential TOST ({looks} looks, OBF / Pocock, planned beta {PLAN_BETA}) vs fixed-N TOST, "
          f"margin 0.5 SD, unpaired, {sims} sequences per cell")
    print("| scores | kind | max N | false equiv. at margin (seq / fixed) | false different at 0 | power at 0 "
          "(seq / fixed N=70) | avg episodes at margin | avg episodes at 0 | fixed N at equal power | saving at "
          "margin / at 0 / mean | CPU s |")
    print("| --- | --- | ---: | --- | ---: | --- | ---: | ---: | ---: | --- | ---: |")
    for label, draw in SEQ_DISTS:
        for kind in ("absolute", "sd"):
            t0 = time.process_time()
            r = _sequential_rows(label, draw, kind, sims, seed, 0.0, False, looks)
            n_eq = r["n_fixed_same_power"]
            s_m, s_0 = 1 - r["margin_episodes"] / n_eq, 1 - r["zero_episodes"] / n_eq
            print(f"| {label} | {kind} | {r['n_max']:.0f} | {r['margin_equivalent']:.4f} / "
                  f"{r['margin_fixed_equivalent']:.4f} | {r['zero_different']:.4f} | {r['zero_equivalent']:.3f} / "
                  f"{r['zero_fixed_equivalent']:.3f} | {r['margin_episodes']:.1f} | {r['zero_episodes']:.1f} | "
                  f"{n_eq:.0f} | {s_m:.1%} / {s_0:.1%} / {(s_m + s_0) / 2:.1%} | {time.process_time() - t0:.1f} |",
                  flush=True)


def paired_table(sims: int, seed: int) -> None:
    """Table 5: paired vs unpaired sequential designs when per-seed scores correlate."""
    print(f"\n## Paired vs unpaired sequential TOST, margin 0.5 SD, {sims} sequences per cell")
    print("| scores | rho | design | max N | false equiv. at margin | power at 0 | avg episodes at margin | "
          "avg episodes at 0 | fixed-N TOST n (power 0.8) |")
    print("| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for label, draw in SEQ_DISTS[:2]:
        for rho in (0.75, 0.9):
            for paired in (False, True):
                # unpaired: A and B on different seeds, i.e. independent episodes (what pairing replaces)
                r = _sequential_rows(label, draw, "absolute", sims, seed, rho if paired else 0.0, paired)
                print(f"| {label} | {rho:g} | {'paired' if paired else 'unpaired'} | {r['n_max']:.0f} | "
                      f"{r['margin_equivalent']:.4f} | {r['zero_equivalent']:.3f} | {r['margin_episodes']:.1f} | "
                      f"{r['zero_episodes']:.1f} | {r['n_fixed']:.0f} |", flush=True)


GRID = (0.0, 0.125, 0.25, 0.375, 0.5)
"""True differences (SD units) of the design table; 0.5 is the margin."""


@dataclass(frozen=True)
class PerSide:
    """A per-side group-sequential TOST: each one-sided test has its own efficacy / futility boundaries."""

    name: str
    looks: int
    beta_side: float
    binding: bool
    separate: bool  # a side that has rejected stays rejected ("both rejected, at possibly different looks")


def _per_side_run(a: np.ndarray, b: np.ndarray, sizes: list[int], upper: np.ndarray, lower: np.ndarray,
                  separate: bool) -> tuple[np.ndarray, np.ndarray]:
    """Return (equivalent?, episodes used) per sequence for the per-side design (absolute margin 0.5)."""
    from evaltk.stats.sequential import look_stats

    n_seq = a.shape[0]
    live_mask = np.ones(n_seq, bool)
    equivalent = np.zeros(n_seq, bool)
    used = np.zeros(n_seq, np.int64)
    rej_low, rej_up = np.zeros(n_seq, bool), np.zeros(n_seq, bool)
    for k, n in enumerate(sizes):
        live = np.flatnonzero(live_mask)
        if live.size == 0:
            break
        st = look_stats(a[live, :n], b[live, :n], -0.5, 0.5, "absolute", paired=False)
        z_low, z_up = stats.norm.isf(st.p_lower), stats.norm.isf(st.p_upper)
        used[live] = n
        if separate:
            rej_low[live] |= z_low >= upper[k]
            rej_up[live] |= z_up >= upper[k]
            rl, ru = rej_low[live], rej_up[live]
        else:
            rl, ru = z_low >= upper[k], z_up >= upper[k]
        eq = rl & ru
        futile = (~rl & (z_low <= lower[k])) | (~ru & (z_up <= lower[k]))
        equivalent[live[eq]] = True
        stop = eq | futile | (k == len(sizes) - 1)
        live_mask[live[stop]] = False
    return equivalent, used


def design_table(sims: int, seed: int) -> None:
    """Table: shipped design vs per-side designs, margin 0.5 SD, absolute kind, unpaired.

    "Average episodes" is defined two ways, both printed: (1) the mean of the expected episodes per
    side at a true difference equal to the margin and at 0 (the must-show's two cases); (2) the mean
    over the grid ``GRID`` of true differences (0, 1/4, 1/2, 3/4 and 1 times the margin). Savings are
    against the fixed-N TOST whose (closed-form) power equals the design's measured power at 0; the
    fixed-N column "power at 0" is the fixed-N TOST with 70 per side (power 0.8 planned) on the same data.
    """
    from evaltk.compare_tables import look_sizes
    from evaltk.stats.boundaries import efficacy_futility_bounds
    from evaltk.stats.power import tost_sample_size
    from evaltk.stats.sequential import Outcome, SequentialDesign, design_max_episodes, simulate

    margin = 0.5
    designs: list[PerSide | tuple[str, int, str]] = [
        ("shipped, K=5, OBF / Pocock", 5, "pocock"), ("shipped, K=10, OBF / Pocock", 10, "pocock"),
        ("shipped, K=10, OBF / linear", 10, "linear"),
        PerSide("per-side non-binding OBF / linear, K=5, beta 0.1", 5, 0.1, False, True),
        PerSide("per-side binding OBF / linear, K=10, beta 0.09, drop a rejected side", 10, 0.09, True, True)]
    print(f"\n## Design search: sequential TOST designs vs fixed-N TOST, margin 0.5 SD, absolute, unpaired, "
          f"{sims} sequences per cell")
    print("| design | scores | max N | false equiv. at margin | power at 0 (seq / fixed N=70) | E[N] at "
          + " / ".join(f"{d:g}" for d in GRID)
          + " | fixed N at equal power | saving: margin & 0 mean / grid mean | CPU s |")
    print("| --- | --- | ---: | ---: | --- | --- | ---: | --- | ---: |")
    n_fixed = tost_sample_size(margin, alpha=ALPHA, power=0.8).n_per_side
    for design in designs:
        if isinstance(design, PerSide):
            t = np.arange(1, design.looks + 1) / design.looks
            _, _, theta = efficacy_futility_bounds(t, ALPHA, design.beta_side, "obrien-fleming", "linear",
                                                   binding=design.binding)
            n_max = math.ceil(2.0 * (theta / margin) ** 2)
            sizes = look_sizes(n_max, design.looks, 10)
            upper, lower, _ = efficacy_futility_bounds([s / n_max for s in sizes], ALPHA, design.beta_side,
                                                       "obrien-fleming", "linear", binding=design.binding)
            name = design.name
        else:
            name, looks, futility = design
            n_max = design_max_episodes(margin, looks=looks, beta=PLAN_BETA, futility_spending=futility)
            sizes = look_sizes(n_max, looks, 10)
            shipped = SequentialDesign.build([s / n_max for s in sizes], alpha=ALPHA, beta=PLAN_BETA,
                                             futility_spending=futility)
        for label, draw in SEQ_DISTS:
            t0 = time.process_time()
            equiv: dict[float, float] = {}
            episodes: dict[float, float] = {}
            fixed_power = 0.0
            for delta in GRID:
                rng = np.random.default_rng([seed, 23, SEQ_DISTS.index((label, draw)), int(1000 * delta)])
                n_draw = max(n_max, n_fixed)
                a, b = draw(rng, (sims, n_draw)), draw(rng, (sims, n_draw)) + delta
                if isinstance(design, PerSide):
                    eq, used = _per_side_run(a, b, sizes, upper, lower, design.separate)
                    equiv[delta], episodes[delta] = float(eq.mean()), float(used.mean())
                else:
                    res = simulate(shipped, a, b, sizes, "absolute", margin, paired=False)
                    equiv[delta], episodes[delta] = res.rate(Outcome.EQUIVALENT), float(res.episodes.mean())
                if delta == 0.0:
                    fixed_power = _fixed_tost_rate(a, b, n_fixed, "absolute", margin, False)
            power = equiv[0.0]
            n_eq = tost_sample_size(margin, alpha=ALPHA, power=min(max(power, 0.05), 0.999)).n_per_side
            two = 1 - (episodes[0.0] + episodes[margin]) / 2 / n_eq
            grid = 1 - float(np.mean(list(episodes.values()))) / n_eq
            se = math.sqrt(power * (1 - power) / sims)
            print(f"| {name} | {label} | {n_max} | {equiv[margin]:.4f} | {power:.3f} ± {se:.3f} / "
                  f"{fixed_power:.3f} | " + " / ".join(f"{episodes[d]:.1f}" for d in GRID)
                  + f" | {n_eq} | {two:.1%} / {grid:.1%} | {time.process_time() - t0:.0f} |", flush=True)


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
    parser.add_argument("--only", choices=["type1", "tost", "verdicts", "sequential", "design", "paired"],
                        help="run one table only")
    parser.add_argument("--looks", type=int, default=SEQ_LOOKS,
                        help=f"looks of the sequential design in --only sequential (default {SEQ_LOOKS})")
    parser.add_argument("--seeds", type=int, default=200, help="seeds per case in the verdict table (default 200)")
    args = parser.parse_args()
    sims = 300 if args.quick else args.sims
    print(f"stats calibration: sims={sims} sizes={args.sizes} seed={args.seed} alpha={ALPHA} "
          "(machine shared; CPU seconds per row shown)")
    if args.only in (None, "type1"):
        type_one_error(sims, args.sizes, args.seed, args.resamples)
    if args.only in (None, "tost"):
        false_equivalence(sims, args.sizes, args.seed, args.kinds)
    if args.only in (None, "verdicts"):
        verdict_sweep(args.seeds)
    if args.only in (None, "sequential"):
        sequential_table(sims, args.seed, args.looks)
    if args.only == "design":
        design_table(args.sims, args.seed)
    if args.only in (None, "paired"):
        paired_table(sims, args.seed)


if __name__ == "__main__":
    main()
