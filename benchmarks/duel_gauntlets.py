"""Compare agents' duels against the bots from their gauntlet results: wins with Wilson intervals, frags a minute.

Each argument is the ``--out`` folder (or its ``results.jsonl``) of one ``evaltk tournament gauntlet`` run; the first
is the reference (e.g. ``builtin:scripted``). Every agent should have played the same ``--seed`` and ``--matches``
(the same bots and engine seeds); a mismatch is printed. For each agent: W-D-L, the win rate with its Wilson 95%
interval, frags a minute (mean over matches, with the 95% t interval), and the difference in frags a minute
from the reference: Welch's 95% interval and the one-sided p-value of "more than the reference".

    python benchmarks/duel_gauntlets.py G_SCRIPTED G_AGENT [G_OTHER ...] [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import numpy as np
from scipy import stats

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # this checkout first (not an installed copy): a run measures the code beside it
    sys.path.insert(0, str(ROOT))

from conformance.bots_case import frags_per_minute  # noqa: E402
from evaltk.stats.tests_two_sample import welch_ci, welch_t  # noqa: E402
from evaltk.tournament.formats import gauntlet_outcome  # noqa: E402
from evaltk.tournament.ratings import wilson_interval  # noqa: E402


@dataclass(frozen=True)
class Gauntlet:
    """One agent's played gauntlet matches: per-match frags a minute and outcome (1 win, 0.5 draw, 0 loss)."""

    agent: str
    seeds: tuple[int, ...]
    frags_per_min: tuple[float, ...]
    outcomes: tuple[float, ...]


def load(path: Path) -> Gauntlet:
    """Read a gauntlet's played rows (``results.jsonl`` or its folder) in match order."""
    file = path / "results.jsonl" if path.is_dir() else path
    if not file.is_file():
        raise SystemExit(f"{path}: no results.jsonl; pass the --out folder of an evaltk tournament gauntlet run")
    rows = sorted((json.loads(line) for line in file.read_text().splitlines() if line.strip()),
                  key=lambda r: r["match_id"])
    rows = [r for r in rows if r["outcome"] == "played"]
    if not rows:
        raise SystemExit(f"{file}: no played match")
    agent = next(p for p in rows[0]["participants"] if p["kind"] == "agent")
    return Gauntlet(str(agent["agent"]), tuple(int(r["spec"]["seed"]) for r in rows),
                    tuple(float(x) for x in frags_per_minute(rows)), tuple(gauntlet_outcome(r) for r in rows))


@dataclass(frozen=True)
class Row:
    """One agent's line of the table; the ``diff_*`` fields are None for the reference."""

    agent: str
    matches: int
    wdl: tuple[int, int, int]
    win_rate: float
    win_wilson95: tuple[float, float]
    frags_per_min: float
    frags_per_min_t95: tuple[float, float]
    same_seeds: bool = True
    diff: float | None = None
    diff_welch95: tuple[float, float] | None = None
    p_more_frags: float | None = None


def row(g: Gauntlet, ref: Gauntlet | None) -> Row:
    """Return the table row of ``g`` (differences against ``ref`` unless ``g`` is the reference)."""
    n = len(g.outcomes)
    wins, draws = g.outcomes.count(1.0), g.outcomes.count(0.5)
    x = np.asarray(g.frags_per_min)
    mean = float(x.mean())
    half = float(stats.t.ppf(0.975, n - 1) * x.std(ddof=1) / np.sqrt(n)) if n > 1 else float("nan")
    base = Row(g.agent, n, (wins, draws, n - wins - draws), wins / n, wilson_interval(wins, n), mean,
               (mean - half, mean + half))
    if ref is None:
        return base
    ci = welch_ci(x, ref.frags_per_min)
    return replace(base, same_seeds=g.seeds == ref.seeds, diff=ci.estimate, diff_welch95=(ci.low, ci.high),
                   p_more_frags=welch_t(x, ref.frags_per_min, alternative="greater").pvalue)


def markdown(rows: list[Row]) -> str:
    """Render the rows as a markdown table (the first row is the reference)."""
    lines = ["| agent | W–D–L | win rate [Wilson 95%] | frags/min [t 95%] | − reference [Welch 95%] | p (more) |",
             "|---|---|---|---|---|---|"]
    for r in rows:
        diff = "reference"
        if r.diff is not None and r.diff_welch95 is not None:
            diff = f"{r.diff:+.3f} [{r.diff_welch95[0]:+.3f}, {r.diff_welch95[1]:+.3f}]"
        p = "" if r.p_more_frags is None else f"{r.p_more_frags:.3g}"
        seeds = "" if r.same_seeds else " (other seeds!)"
        lines.append(f"| {r.agent}{seeds} | {r.wdl[0]}–{r.wdl[1]}–{r.wdl[2]} | {r.win_rate:.2f} "
                     f"[{r.win_wilson95[0]:.2f}, {r.win_wilson95[1]:.2f}] | {r.frags_per_min:.3f} "
                     f"[{r.frags_per_min_t95[0]:.3f}, {r.frags_per_min_t95[1]:.3f}] | {diff} | {p} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Print the comparison table (or JSON) of the gauntlets named on the command line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("gauntlets", nargs="+", type=Path, help="gauntlet --out folders; the first is the reference")
    parser.add_argument("--json", action="store_true", help="print the rows as JSON")
    args = parser.parse_args(argv)
    loaded = [load(p) for p in args.gauntlets]
    rows = [row(g, None if i == 0 else loaded[0]) for i, g in enumerate(loaded)]
    print(json.dumps([asdict(r) for r in rows]) if args.json else markdown(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
