"""Tournament reports: ``summary.json`` (machines), ``report.md`` (CI logs), ``report.png`` (people)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from evaltk.report.jsonline import to_json_line
from evaltk.tournament.summary import SPRT_WORDS, UNDECIDED


def _fmt(x: Any, digits: int = 1) -> str:
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "inf" if isinstance(x, float) and x > 0 else "-inf" if isinstance(x, float) and x < 0 else "n/a"
    if isinstance(x, float):
        return f"{x:.{digits}f}"
    return str(x)


def _interval(iv: list[float]) -> str:
    return f"[{iv[0]:.2f}, {iv[1]:.2f}]"


def markdown(summary: dict[str, Any]) -> str:
    """Render a summary as Markdown."""
    lines = [f"# evaltk tournament: {summary['format']}", "",
             f"Agents: {', '.join(summary['agents'])}. Matches played: {summary['matches_played']} "
             f"(planned {summary['matches_planned']}). Results: `{summary['results']}`.", ""]
    if summary.get("inputs"):
        lines += [f"## Inputs (rules: {summary.get('rules', 'open')})", "", "| agent | inputs |", "|---|---|"]
        lines += [f"| {ref} | {i['text']} |" for ref, i in summary["inputs"].items()]
        lines.append("")
    if "wins" in summary:
        opponent = summary.get("opponent") or summary["agents"][1]
        lines += [f"## {summary['agents'][0]} vs {opponent}", "",
                  "| | count | rate 95% Wilson interval |", "|---|---|---|"]
        for key, iv in (("wins", "win_interval"), ("draws", "draw_interval"), ("losses", "loss_interval")):
            lines.append(f"| {key} | {summary[key]} | {_interval(summary[iv])} |")
        lines += ["", f"Elo difference: {_fmt(summary['elo'])} (95% CI {_fmt(summary['elo_ci'][0])} .. "
                      f"{_fmt(summary['elo_ci'][1])}), LOS {100 * summary['los']:.1f}%.", ""]
    if "sprt" in summary:
        s = summary["sprt"]
        lines += [f"SPRT ({s['model']}, elo0={s['elo0']:g}, elo1={s['elo1']:g}, alpha={s['alpha']:g}, "
                  f"beta={s['beta']:g}): LLR {s['llr']:.2f} in [{s['lower']:.2f}, {s['upper']:.2f}] → "
                  f"**{SPRT_WORDS[s['decision']]}**{_budget_note(summary)}.", ""]
    if summary.get("pairs") and summary["format"] == "round-robin":
        lines += ["## Pairs", "", "| A | B | W | D | L | Elo (A−B) | 95% CI | LOS |",
                  "|---|---|---|---|---|---|---|---|"]
        for p in summary["pairs"]:
            lines.append(f"| {p['a']} | {p['b']} | {p['wins']} | {p['draws']} | {p['losses']} | {_fmt(p['elo'])} | "
                         f"{_fmt(p['elo_ci'][0])} .. {_fmt(p['elo_ci'][1])} | {100 * p['los']:.1f}% |")
        lines.append("")
    if summary.get("bradley_terry"):
        lines += ["## Bradley–Terry ratings (Elo, mean 0, bootstrap 95% CI over matches)", "",
                  "| agent | rating | 95% CI | inputs |", "|---|---|---|---|"]
        for r in summary["bradley_terry"]:
            lo, mid, hi = (round(x) + 0 for x in (r["ci"][0], r["rating"], r["ci"][1]))
            lines.append(f"| {r['agent']} | {mid} | {lo} .. {hi} | {r.get('inputs', 'n/a')} |")
        lines.append("")
    return "\n".join(lines)


def _budget_note(summary: dict[str, Any]) -> str:
    """Say, for an SPRT undecided after every planned game, how to go on."""
    if summary["sprt"]["decision"] != UNDECIDED:
        return ""
    return (f" after all {summary['matches_planned']} planned games (a larger --matches with the same --out "
            "continues the test)")


def plot(summary: dict[str, Any], path: Path) -> None:
    """Write a PNG: W/D/L rates with Wilson intervals, and Bradley–Terry ratings with CIs when present."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = int("wins" in summary) + int(bool(summary.get("bradley_terry")))
    fig, axes = plt.subplots(1, max(panels, 1), figsize=(5 * max(panels, 1), 3.5), squeeze=False)
    k = 0
    if "wins" in summary and summary["matches_played"]:
        ax = axes[0][k]
        n = summary["matches_played"]
        keys = [("wins", "win_interval"), ("draws", "draw_interval"), ("losses", "loss_interval")]
        rates = [summary[c] / n for c, _ in keys]
        err = [[max(0.0, r - summary[iv][0]) for r, (_, iv) in zip(rates, keys, strict=True)],
               [max(0.0, summary[iv][1] - r) for r, (_, iv) in zip(rates, keys, strict=True)]]
        ax.bar(["win", "draw", "loss"], rates, yerr=err, capsize=4, color=["tab:green", "tab:gray", "tab:red"])
        ax.set_ylim(0, 1)
        ax.set_title(f"{summary['agents'][0]}: {n} matches (Wilson 95%)")
        k += 1
    if summary.get("bradley_terry"):
        ax = axes[0][min(k, len(axes[0]) - 1)]
        bt = summary["bradley_terry"]
        y = list(range(len(bt)))
        xerr = [[max(0.0, r["rating"] - r["ci"][0]) for r in bt], [max(0.0, r["ci"][1] - r["rating"]) for r in bt]]
        ax.errorbar([r["rating"] for r in bt], y, xerr=xerr, fmt="o", capsize=4)
        ax.set_yticks(y, [r["agent"] for r in bt])
        ax.invert_yaxis()
        ax.set_xlabel("Bradley–Terry rating (Elo)")
        ax.set_title("ratings (bootstrap 95% CI)")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def write_reports(summary: dict[str, Any], out: Path) -> dict[str, str]:
    """Write ``summary.json``, ``report.md`` and ``report.png`` into ``out``; return their paths."""
    paths = {"json": out / "summary.json", "markdown": out / "report.md", "png": out / "report.png"}
    paths["json"].write_text(to_json_line(summary) + "\n")
    paths["markdown"].write_text(markdown(summary))
    plot(summary, paths["png"])
    return {k: str(v) for k, v in paths.items()}
