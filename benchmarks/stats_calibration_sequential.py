"""Calibration of the three-outcome sequential comparison (``stats_calibration.py --only sequential / paired``).

Each row runs the design of :mod:`evaltk.stats.group_sequential` (margin 0.5 SD, ``looks`` looks,
the default ``delayed-equivalence`` spending with its non-binding futility stop, budget planned for
90 % power to show equivalence at a true 0) on many simulated sequences at true differences 0,
0.25, 0.5 (on the margin) and 1.0 SD, and
checks each error rate against its own bound: false "equivalent" on the margin <= alpha, false
"different" inside or on the margin <= alpha / 2, each within 3 Monte-Carlo SEs (the SE of a
rate equal to the bound). Score distributions: normal, t3 (heavy tails), an Atari-like bimodal
mixture, and three real score tables resampled with replacement (``benchmarks/data/scores``:
``builtin:random`` on ALE/Breakout-v5 and ALE/Pong-v5, and on the ViZDoom ``basic`` scenario, made
with ``evaltk evaluate``), each standardized to mean 0 and SD 1. Vectorised: all sequences of a
cell at once. Every cell has its own ``numpy.random.Generator`` seeded from ``--seed`` and the
cell, so a rerun prints the same numbers.
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache, partial
from pathlib import Path

import numpy as np
from scipy import stats

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # this checkout first (not an installed copy): a run measures the code beside it
    sys.path.insert(0, str(ROOT))

from evaltk.evaluation.scores import read_scores  # noqa: E402
from evaltk.stats.boundaries import Spending  # noqa: E402
from evaltk.stats.group_sequential import (  # noqa: E402
    LookDecision,
    SequentialDesign,
    decide_look,
    design_max_episodes,
    first_deciding_look,
    simulate,
)
from evaltk.stats.look_statistics import look_stats  # noqa: E402
from evaltk.stats.power import beyond_margin_sample_size, tost_sample_size  # noqa: E402
from evaltk.verdict.sequential import look_sizes  # noqa: E402

ALPHA = 0.05
SEQ_POWER = 0.9
"""Power to show equivalence at a true 0 that the benchmarked budget is planned for."""
SEQ_LOOKS = 10
"""Looks of the benchmarked sequential design (``evaltk compare --sequential``'s default)."""
SEQ_MARGIN = 0.5
"""Margin of the sequential table, in SD units of the scores."""
SEQ_DELTAS = (0.0, 0.25, 0.5, 1.0)
"""True differences (SD units): equality, inside the margin, on it, and twice it."""
MC_SES = 3.0
"""A rate passes when it is at most its bound plus this many Monte-Carlo SEs."""
DATA = Path(__file__).resolve().parent / "data" / "scores"
REAL_TABLES = (("Breakout (real, resampled)", "breakout_random.csv"), ("Pong (real, resampled)", "pong_random.csv"),
               ("Doom basic (real, resampled)", "doom_basic_random.csv"))
Draw = Callable[[np.random.Generator, tuple[int, int]], np.ndarray]


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


def _resample(values: np.ndarray, rng: np.random.Generator, shape: tuple[int, int]) -> np.ndarray:
    out: np.ndarray = rng.choice(values, size=shape, replace=True)
    return out


def real_table(name: str) -> np.ndarray:
    """Return the returns of ``benchmarks/data/scores/NAME``, standardized to mean 0 and SD 1 (population)."""
    returns = np.asarray(read_scores(DATA / name).returns, np.float64)
    if returns.size < 2 or returns.std() == 0.0:
        raise SystemExit(f"error: {DATA / name} needs at least 2 distinct returns; regenerate it with evaltk evaluate")
    out: np.ndarray = (returns - returns.mean()) / returns.std()
    return out


def seq_dists() -> list[tuple[str, Draw]]:
    """Return the score distributions of the sequential table, synthetic and resampled from real tables."""
    out: list[tuple[str, Draw]] = [("normal", _standard_normal), ("t3 (heavy tails)", _standard_t3),
                                   ("Atari-like bimodal", _standard_bimodal)]
    out += [(label, partial(_resample, real_table(name))) for label, name in REAL_TABLES]
    return out


@dataclass(frozen=True)
class SequentialRow:
    """The measurements of one (scores, kind, design) row of the sequential table; rates per true difference."""

    n_max: int
    sims: int
    equivalent: dict[float, float]
    different: dict[float, float]
    inconclusive: dict[float, float]
    futility: dict[float, float]
    episodes: dict[float, float]
    fixed_n_equivalence: int
    fixed_n_difference: int
    fixed_equivalent_power: float
    fixed_different_power: float
    simulated_n_equivalence: int | None
    simulated_n_difference: int | None

    def savings(self) -> tuple[float, float, float | None, float | None]:
        """``1 - avg N / fixed N`` at 0 and at 1.0 SD: closed-form fixed N, then simulated (``None``: not reached)."""
        closed = (1.0 - self.episodes[0.0] / self.fixed_n_equivalence,
                  1.0 - self.episodes[1.0] / self.fixed_n_difference)
        sim = tuple(None if n is None else 1.0 - self.episodes[d] / n
                    for d, n in ((0.0, self.simulated_n_equivalence), (1.0, self.simulated_n_difference)))
        return closed[0], closed[1], sim[0], sim[1]

    def misses(self) -> list[str]:
        """Each error rate above its bound plus :data:`MC_SES` Monte-Carlo SEs, in words."""
        out = []
        for bound, what, rates, deltas in ((ALPHA, "equivalent", self.equivalent, (SEQ_MARGIN,)),
                                           (ALPHA / 2, "different", self.different,
                                            [d for d in SEQ_DELTAS if d <= SEQ_MARGIN])):
            limit = bound + MC_SES * math.sqrt(bound * (1 - bound) / self.sims)
            out += [f"false {what} {rates[d]:.4f} at d = {d:g} > {limit:.4f}" for d in deltas if rates[d] > limit]
        return out


def _fixed_rates(a: np.ndarray, b: np.ndarray, n: int, kind: str, paired: bool) -> tuple[float, float]:
    """Rates of the fixed-N rule at ``n`` per side (one look, the sequential statistic and its ``sd`` guard).

    Returns the rates of "equivalent" (TOST at alpha) and "different" ("beyond the margin" at alpha / 2).
    """
    design = SequentialDesign.build([1.0], alpha=ALPHA)
    codes = decide_look(design, 0, look_stats(a[:, :n], b[:, :n], -SEQ_MARGIN, SEQ_MARGIN, kind, paired=paired))
    outcomes = list(LookDecision)
    return (float(np.mean(codes == outcomes.index(LookDecision.EQUIVALENT))),
            float(np.mean(codes == outcomes.index(LookDecision.DIFFERENT))))


def fixed_n_at_power(a: np.ndarray, b: np.ndarray, kind: str, paired: bool, target: float,
                     which: int) -> int | None:
    """Smallest ``n`` whose simulated fixed-N rate (``which``: 0 equivalent, 1 different) reaches ``target``.

    Searched by bisection over ``[2, a.shape[1]]`` on the same sequences; ``None`` when even all
    columns fall short.
    """
    lo, hi = 2, a.shape[1]
    if _fixed_rates(a, b, hi, kind, paired)[which] < target:
        return None
    while lo < hi:
        mid = (lo + hi) // 2
        if _fixed_rates(a, b, mid, kind, paired)[which] >= target:
            hi = mid
        else:
            lo = mid + 1
    return lo


@cache
def planned_budget(looks: int, rho: float) -> int:
    """Episodes per side for :data:`SEQ_POWER` at a true 0 (at least 10): ``design_max_episodes``, computed once."""
    return max(design_max_episodes(SEQ_MARGIN, looks=looks, alpha=ALPHA, beta=1.0 - SEQ_POWER, rho=rho), 10)


def sequential_row(code: int, draw: Draw, kind: str, sims: int, seed: int, *, rho: float = 0.0,
                   paired: bool = False, looks: int = SEQ_LOOKS) -> SequentialRow:
    """Run the three-outcome sequential design at each true difference of :data:`SEQ_DELTAS`.

    The budget is planned for :data:`SEQ_POWER` power to show equivalence at a true 0
    (:func:`evaltk.stats.group_sequential.design_max_episodes`); looks below 10 episodes are dropped
    and the interim looks below 20 decide nothing (as ``evaltk compare --sequential``). The fixed-N
    comparators have the same power as the design measured here: the closed-form TOST size at the
    design's power at 0, and the closed-form "beyond the margin" size at its power at twice the
    margin; their own simulated power on the same sequences is reported next to them. ``code``
    numbers the distribution in the seed.
    """
    plan_rho = rho if paired else 0.0
    n_max = planned_budget(looks, plan_rho)
    sizes = look_sizes(n_max, looks, 10)
    design = SequentialDesign.build([s / n_max for s in sizes], alpha=ALPHA, spending=Spending.DELAYED_EQUIVALENCE,
                                    first_look=first_deciding_look(sizes))
    rates: dict[LookDecision, dict[float, float]] = {o: {} for o in LookDecision}
    episodes: dict[float, float] = {}
    data: dict[float, tuple[np.ndarray, np.ndarray]] = {}
    for delta in SEQ_DELTAS:
        rng = np.random.default_rng([seed, 31, int(1000 * rho), int(paired), code, int(1000 * delta),
                                     {"absolute": 0, "sd": 1}[kind], looks])
        z, e = draw(rng, (sims, 4 * n_max)), draw(rng, (sims, 4 * n_max))
        a, b = z, rho * z + math.sqrt(1.0 - rho**2) * e + delta
        res = simulate(design, a, b, sizes, kind, SEQ_MARGIN, paired=paired)
        for outcome in LookDecision:
            rates[outcome][delta] = res.rate(outcome)
        rates[LookDecision.INCONCLUSIVE][delta] += rates[LookDecision.FUTILITY][delta]  # the verdict
        episodes[delta] = float(res.episodes.mean())
        data[delta] = (a, b)
    power_eq = min(max(rates[LookDecision.EQUIVALENT][0.0], 0.05), 0.999)
    power_diff = min(max(rates[LookDecision.DIFFERENT][1.0], 0.05), 0.999)
    sd_plan = math.sqrt(1.0 - plan_rho)
    n_eq = tost_sample_size(SEQ_MARGIN, sd=sd_plan, alpha=ALPHA, power=power_eq).n_per_side
    n_diff = beyond_margin_sample_size(SEQ_MARGIN, 1.0, sd=sd_plan, alpha=ALPHA, power=power_diff).n_per_side
    fixed_eq = _fixed_rates(*data[0.0], min(n_eq, 4 * n_max), kind, paired)[0]
    fixed_diff = _fixed_rates(*data[1.0], min(n_diff, 4 * n_max), kind, paired)[1]
    sim_eq = fixed_n_at_power(*data[0.0], kind, paired, rates[LookDecision.EQUIVALENT][0.0], 0)
    sim_diff = fixed_n_at_power(*data[1.0], kind, paired, rates[LookDecision.DIFFERENT][1.0], 1)
    return SequentialRow(n_max, sims, rates[LookDecision.EQUIVALENT], rates[LookDecision.DIFFERENT],
                         rates[LookDecision.INCONCLUSIVE], rates[LookDecision.FUTILITY], episodes, n_eq, n_diff,
                         fixed_eq, fixed_diff,
                         sim_eq, sim_diff)


def _print_row(label: str, kind: str, r: SequentialRow, cpu: float) -> None:
    cells = [f"{r.equivalent[d]:.4f} / {r.different[d]:.4f} / {r.inconclusive[d]:.3f} ({r.futility[d]:.3f})"
             for d in SEQ_DELTAS]
    closed_eq, closed_diff, sim_eq, sim_diff = r.savings()

    def pct(v: float | None) -> str:
        return "n/a" if v is None else f"{v:.1%}"

    def size(n: int | None) -> str:
        return f"> {r.n_max * 4}" if n is None else str(n)

    check = "ok" if not r.misses() else "MISS: " + "; ".join(r.misses())
    print(f"| {label} | {kind} | {r.n_max} | " + " | ".join(cells) + " | "
          + " / ".join(f"{r.episodes[d]:.1f}" for d in SEQ_DELTAS)
          + f" | {r.fixed_n_equivalence} ({r.fixed_equivalent_power:.3f}) / {size(r.simulated_n_equivalence)} | "
          f"{r.fixed_n_difference} ({r.fixed_different_power:.3f}) / {size(r.simulated_n_difference)} | "
          f"{closed_eq:.1%} / {closed_diff:.1%} | {pct(sim_eq)} / {pct(sim_diff)} | {check} | {cpu:.1f} |", flush=True)


UNCOVERED = {("t3 (heavy tails)", "sd")}
"""Rows the savings target leaves out (their error checks stay): the sd margin withholds "different" on t3 scores."""


def worst_savings(rows: list[tuple[str, str, SequentialRow]]) -> tuple[float, float, float, float, float]:
    """Worst saving over the rows the target covers, against each comparator.

    Against the simulated fixed N: at 0, at 1.0 SD, at 1.0 SD for the absolute margin only; against
    the closed form: at 0 (every covered row) and at 1.0 SD (absolute rows, where the closed form is
    that test's size). A simulated fixed N beyond the searched range counts as the range's end (a
    lower bound on the saving).
    """
    def sim(r: SequentialRow, delta: float) -> float:
        n = r.simulated_n_equivalence if delta == 0.0 else r.simulated_n_difference
        return 1.0 - r.episodes[delta] / (n if n is not None else 4 * r.n_max)

    covered = [(kind, r) for label, kind, r in rows if (label, kind) not in UNCOVERED]
    return (min(sim(r, 0.0) for _, r in covered), min(sim(r, 1.0) for _, r in covered),
            min(sim(r, 1.0) for kind, r in covered if kind == "absolute"),
            min(r.savings()[0] for _, r in covered),
            min(r.savings()[1] for kind, r in covered if kind == "absolute"))


def sequential_table(sims: int, seed: int, looks: int = SEQ_LOOKS) -> bool:
    """Print the sequential table (unpaired) next to the fixed-N rule at equal power; True when every rate passes."""
    print(f"\n## Sequential comparison ({looks} looks, delayed-equivalence spending with its futility stop, margin "
          f"{SEQ_MARGIN} SD, unpaired, budget for {SEQ_POWER:.0%} power) vs fixed N at equal power, {sims} sequences "
          f"per cell, seed {seed}")
    se_eq, se_diff = (math.sqrt(b * (1 - b) / sims) for b in (ALPHA, ALPHA / 2))
    print(f"Checks: false equivalent on the margin <= {ALPHA} + {MC_SES:g} x {se_eq:.4f}; false different at "
          f"d = 0, 0.25, 0.5 <= {ALPHA / 2} + {MC_SES:g} x {se_diff:.4f}. Cells: equivalent / different / "
          "inconclusive (of which stopped early for futility).\n")
    print("| scores | kind | max N | d = 0 (power eq.) | d = 0.25 | d = 0.5 (margin) | d = 1.0 (power diff.) | "
          "avg N at d = 0 / 0.25 / 0.5 / 1.0 | fixed N eq.: closed form (its power) / simulated | fixed N diff.: "
          "closed form (its power) / simulated | saving at 0 / 1.0 vs closed form | saving at 0 / 1.0 vs simulated | "
          "check | CPU s |")
    print("| --- | --- | ---: | --- | --- | --- | --- | --- | ---: | ---: | --- | --- | --- | ---: |")
    rows = []
    for code, (label, draw) in enumerate(seq_dists()):
        for kind in ("absolute", "sd"):
            t0 = time.process_time()
            r = sequential_row(code, draw, kind, sims, seed, looks=looks)
            _print_row(label, kind, r, time.process_time() - t0)
            rows.append((label, kind, r))
    worst_eq = max(r.equivalent[SEQ_MARGIN] for _, _, r in rows)
    worst_diff = max(max(r.different[d] for d in SEQ_DELTAS if d <= SEQ_MARGIN) for _, _, r in rows)
    misses = sum(len(r.misses()) for _, _, r in rows)
    print(f"\nworst false equivalent on the margin: {worst_eq:.4f} (bound {ALPHA}, MC SE {se_eq:.4f}); worst false "
          f"different inside or on the margin: {worst_diff:.4f} (bound {ALPHA / 2}, MC SE {se_diff:.4f}); "
          f"{misses} rate(s) over their bound + {MC_SES:g} SE", flush=True)
    at_0, at_1, at_1_abs, closed_0, closed_1_abs = worst_savings(rows)
    print(f"worst saving at 0: {at_0:.1%}; worst saving at 1 SD: {at_1:.1%}")
    print(f"(against the simulated fixed N at equal power, every row but {', '.join(' '.join(u) for u in UNCOVERED)}; "
          f"absolute margin at 1 SD: {at_1_abs:.1%}; against the closed-form fixed N: {closed_0:.1%} at 0, "
          f"{closed_1_abs:.1%} at 1 SD for the absolute margin)", flush=True)
    return misses == 0


def paired_table(sims: int, seed: int) -> bool:
    """Print paired vs unpaired sequential designs when per-seed scores correlate; True when every rate passes."""
    print(f"\n## Paired vs unpaired sequential comparison, margin {SEQ_MARGIN} SD, absolute, {sims} sequences per cell")
    print("| scores | rho | design | max N | false equiv. at margin | false diff. at margin | power eq. at 0 | "
          "power diff. at 1.0 | avg N at 0 / 0.5 / 1.0 | check |")
    print("| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | --- | --- |")
    ok = True
    for code, (label, draw) in enumerate(seq_dists()[:2]):
        # unpaired: A and B on different seeds, i.e. independent episodes (what pairing replaces)
        for rho, paired in ((0.0, False), (0.75, True), (0.9, True)):
            r = sequential_row(code, draw, "absolute", sims, seed, rho=rho, paired=paired)
            ok &= not r.misses()
            print(f"| {label} | {rho:g} | {'paired' if paired else 'unpaired'} | {r.n_max} | "
                  f"{r.equivalent[0.5]:.4f} | {r.different[0.5]:.4f} | {r.equivalent[0.0]:.3f} | "
                  f"{r.different[1.0]:.3f} | {r.episodes[0.0]:.1f} / {r.episodes[0.5]:.1f} / "
                  f"{r.episodes[1.0]:.1f} | {'ok' if not r.misses() else 'MISS'} |", flush=True)
    return ok


def design_table(looks: int = SEQ_LOOKS) -> None:
    """Print each design's budget, power and expected episodes by the recursion (normal approximation, no sampling).

    The former design (O'Brien-Fleming, budget 72 per side planned for 80 % power by one TOST half's
    power), O'Brien-Fleming at 90 % power, and the default design at 90 % power; the fixed N at each
    design's own power is the closed-form normal size, ``2 ((z + z_power) / margin)^2``.
    """
    print(f"\n## Designs by the recursion ({looks} looks, margin {SEQ_MARGIN} SD, normal approximation)")
    print("| design | max N | power eq. at 0 | power diff. at 1 SD | false eq. / diff. on the margin | avg N at 0 / "
          "0.25 / 0.5 / 1.0 SD | fixed N at equal power, 0 / 1 SD | saving at 0 / 1 SD |")
    print("| --- | ---: | ---: | ---: | --- | --- | --- | --- |")
    for label, spending, budget in (("O'Brien-Fleming, 80 % (before)", Spending.OBRIEN_FLEMING, 72),
                                    ("O'Brien-Fleming, 90 %", Spending.OBRIEN_FLEMING, None),
                                    ("delayed-equivalence, 90 % (now)", Spending.DELAYED_EQUIVALENCE, None)):
        n = budget or design_max_episodes(SEQ_MARGIN, looks=looks, alpha=ALPHA, beta=1.0 - SEQ_POWER, spending=spending)
        sizes = look_sizes(n, looks, 10)
        first = first_deciding_look(sizes) if spending is Spending.DELAYED_EQUIVALENCE else 0
        design = SequentialDesign.build([s / n for s in sizes], alpha=ALPHA, spending=spending, first_look=first)
        m = SEQ_MARGIN / math.sqrt(2.0 / n)
        out = {d: design.outcomes_at(m, m * (1.0 - d / SEQ_MARGIN)) for d in SEQ_DELTAS}
        p_eq, p_diff = out[0.0].equivalent, out[1.0].different
        fixed_eq = 2.0 * ((stats.norm.isf(ALPHA) + stats.norm.isf((1.0 - p_eq) / 2.0)) / SEQ_MARGIN) ** 2
        fixed_diff = 2.0 * ((stats.norm.isf(ALPHA / 2.0) + stats.norm.ppf(p_diff)) / SEQ_MARGIN) ** 2
        avg = {d: out[d].expected_fraction * n for d in SEQ_DELTAS}
        print(f"| {label} | {n} | {p_eq:.3f} | {p_diff:.3f} | {out[SEQ_MARGIN].equivalent:.4f} / "
              f"{out[SEQ_MARGIN].different:.4f} | " + " / ".join(f"{avg[d]:.1f}" for d in SEQ_DELTAS)
              + f" | {fixed_eq:.1f} / {fixed_diff:.1f} | {1 - avg[0.0] / fixed_eq:.1%} / "
              f"{1 - avg[1.0] / fixed_diff:.1%} |", flush=True)
