"""The files of one validation (``evaltk validate``), written into its ``--out`` folder.

``report.json``, ``report.md``, ``report.png``, ``pairs.png`` (rows paired by seed) and
``report.html`` (self-contained, :mod:`evaltk.report.html_report`).

``report.png`` is :func:`evaltk.report.comparison_report.render_png` of the comparison (ECDFs and the
CI against the margin); ``pairs.png`` plots each shared seed's simulator return against its
reference return. Every file is written to a temporary name and renamed.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np

from evaltk.atomic import write_bytes_atomic
from evaltk.validate import Validation

FILE_NAMES = {"json": "report.json", "markdown": "report.md", "png": "report.png", "pairs_png": "pairs.png",
              "html": "report.html"}


def _num(v: Any) -> str:
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return "-"
    return f"{v:,.4g}" if isinstance(v, float) else str(v)


def _spec_text(v: Any) -> str:
    return v if isinstance(v, str) else json.dumps(v)


def differs_text(environments: dict[str, Any]) -> str:
    """Name the settings that differ between the two sides, and those one side does not record."""
    differs, unknown = environments["differs"], environments["not_recorded"]
    text = ", ".join(differs) if differs else ("nothing among the settings both record" if unknown else "nothing")
    if unknown:
        text += f" ({len(unknown)} settings not recorded by one side: {', '.join(unknown)})"
    return text


def side_table(report: dict[str, Any]) -> list[tuple[str, str, str]]:
    """Rows ``(metric, sim, reference)`` of the per-side summary the stdout table, Markdown and HTML show."""
    s, r = report["sides"]["sim"]["summary"], report["sides"]["reference"]["summary"]

    def episodes(x: dict[str, Any]) -> str:
        if "new_episodes" not in x:
            return f"{x['n_episodes']} (baseline table)"
        return f"{x['n_episodes']} ({x['new_episodes']} new, {x['resumed_episodes']} resumed)"

    def ci(x: dict[str, Any]) -> str:
        return "-" if x["ci"] is None else f"[{_num(x['ci'][0])}, {_num(x['ci'][1])}]"

    return [
        ("episodes", episodes(s), episodes(r)),
        ("mean return", _num(s["mean_return"]), _num(r["mean_return"])),
        (f"{s['ci_level']:.0%} CI of the mean", ci(s), ci(r)),
        ("sd / median", f"{_num(s['std_return'])} / {_num(s['median_return'])}",
         f"{_num(r['std_return'])} / {_num(r['median_return'])}"),
        ("min / max", f"{_num(s['min_return'])} / {_num(s['max_return'])}",
         f"{_num(r['min_return'])} / {_num(r['max_return'])}"),
        ("mean length (frames)", _num(s["mean_frames"]), _num(r["mean_frames"])),
        ("score table", report["sides"]["sim"]["table"], report["sides"]["reference"]["table"]),
    ]


def simulator_settings_lines(section: dict[str, Any] | None) -> list[str]:
    """Markdown lines: the simulator settings that differ, the note, and what ``--align`` could not align."""
    if section is None:
        return []
    lines = ["## Simulator settings that differ", ""]
    differing = [r for r in section["rows"] if r["differs"]]
    if differing:
        lines += ["| setting | sim | reference |", "| --- | --- | --- |"]
        lines += [f"| `{r['setting']}` | {r['sim']} | {r['reference']} |" for r in differing]
    else:
        lines.append("None.")
    if section["aligned"] is not None:
        aligned = ", ".join(section["aligned"]["settings"]) or "nothing"
        lines += ["", f"Aligned with --align: {aligned}."]
        lines += [f"Not aligned: `{a['setting']}`: {a['why']}." for a in section["aligned"]["not_aligned"]]
    if section["note"]:
        lines += ["", f"Note: {section['note']}."]
    return [*lines, ""]


def render_markdown(validation: Validation, report: dict[str, Any]) -> str:
    """Return ``report.md``: verdict, per-side summary, specs side by side, pairing, then compare's Markdown."""
    from evaltk.report.comparison_report import render_markdown as compare_markdown

    sim, ref = validation.label("sim"), validation.label("reference")
    lines = [f"# evaltk validate: `{report['checkpoint']}` on {report['env_id']}", ""]
    src = report.get("provenance", {}).get("checkpoint")
    if src is not None:  # a Hub checkpoint: the repo and the exact commit it was read from
        file = f", file `{src['path']}`" if src["path"] else ""
        lines += [f"Checkpoint from the Hugging Face Hub: repo `{src['repo']}` at revision `{src['revision']}`{file}.",
                  ""]
    lines += [f"**{report['verdict_line']}**", "", report["explanation"], "",
              f"Episodes needed: {report['episodes_needed_line']}.", "",
              f"| metric | {sim} | {ref} |", "| --- | --- | --- |"]
    lines += [f"| {m} | {a} | {b} |" for m, a, b in side_table(report)]
    lines += ["", "## Environments side by side", "", f"| setting | {sim} | {ref} | |", "| --- | --- | --- | --- |"]
    for row in report["environments"]["rows"]:
        lines.append(f"| `{row['setting']}` | {_spec_text(row['sim'])} | {_spec_text(row['reference'])} | "
                     f"{'**differs**' if row['differs'] else ''} |")
    lines += ["", f"What differs: {differs_text(report['environments'])}.", ""]
    lines += simulator_settings_lines(report.get("simulator_settings"))
    pairs = report["pairs"]
    if pairs is None:
        lines += ["Rows do not pair by seed (the reference table records no seeds): the comparison is unpaired.", ""]
    else:
        same = pairs["same"]
        lines += ["## Pairing by seed", "",
                  f"{pairs['n_shared']} shared seeds ({pairs['only_sim']} only in sim, {pairs['only_reference']} "
                  f"only in the reference); same return on {same['return']}, same frames on {same['frames']}, "
                  f"same steps on {same['steps']}.", ""]
    for side in ("sim", "reference"):
        lines += [f"Note ({side}): {n}" for n in report["sides"][side]["notes"]]
    body = compare_markdown(validation.comparison, label_a=ref, label_b=sim)
    heading = "## Comparison (A = reference, B = sim)"
    if report.get("fixed_n_note"):  # a sequential verdict: its looks first, the fixed-N analysis labelled as such
        from evaltk.report.comparison_report import sequential_look_lines

        lines += ["## Sequential looks", "", report["sequential"]["interval_line"] + ".", "",
                  *sequential_look_lines(report["sequential"])]
        heading = ("## Fixed-N analysis of the episodes the looks used (ignores the stopping rule; not the verdict's "
                   "analysis)")
    lines += ["", body.replace("# evaltk compare", heading, 1)]
    return "\n".join(lines)


def render_pairs_png(pairs: dict[str, Any], path: Path, label_sim: str, label_reference: str) -> None:
    """Scatter of each shared seed's sim return against its reference return, with the diagonal, into ``path``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    xs = np.array([r["reference_return"] for r in pairs["rows"]], np.float64)
    ys = np.array([r["sim_return"] for r in pairs["rows"]], np.float64)
    fig, ax = plt.subplots(figsize=(5, 4.5))
    try:
        lo, hi = float(min(xs.min(), ys.min())), float(max(xs.max(), ys.max()))
        pad = 0.05 * (hi - lo or 1.0)
        ax.plot([lo - pad, hi + pad], [lo - pad, hi + pad], color="grey", lw=0.8, ls="--", label="same return")
        ax.scatter(xs, ys, s=24, color="tab:blue", label=f"episodes (n={xs.size})")
        ax.set_xlim(lo - pad, hi + pad)
        ax.set_ylim(lo - pad, hi + pad)
        ax.set_xlabel(f"return on {label_reference}")
        ax.set_ylabel(f"return on {label_sim}")
        ax.set_title(f"per seed: {pairs['same']['return']}/{pairs['n_shared']} returns equal")
        ax.legend(fontsize=8, loc="upper left")
        fig.tight_layout()
        tmp = path.with_name(f".{path.name}.tmp.png")
        fig.savefig(tmp, dpi=100)
        tmp.replace(path)
    finally:
        plt.close(fig)


def write_report(validation: Validation) -> dict[str, Path]:
    """Write ``report.json``, ``report.md``, ``report.png``, ``pairs.png`` (paired rows) and ``report.html``."""
    from evaltk.report.comparison_report import render_png
    from evaltk.report.html_report import render_html
    from evaltk.report.jsonline import to_json_line

    out = validation.config.out
    paired = validation.pairs is not None and validation.pairs["n_shared"] > 0
    paths = {k: out / v for k, v in FILE_NAMES.items() if k != "pairs_png" or paired}
    validation.files = paths
    report = validation.to_dict()
    sim, ref = validation.label("sim"), validation.label("reference")
    render_png(validation.comparison, paths["png"], label_a=ref, label_b=sim)
    images = {"report.png": paths["png"].read_bytes()}
    if paired and validation.pairs is not None:
        render_pairs_png(validation.pairs, paths["pairs_png"], sim, ref)
        images["pairs.png"] = paths["pairs_png"].read_bytes()
    else:  # an earlier paired report in the same folder must not leave its plot behind
        (out / FILE_NAMES["pairs_png"]).unlink(missing_ok=True)
    write_bytes_atomic(paths["markdown"], render_markdown(validation, report).encode())
    write_bytes_atomic(paths["html"], render_html(report, images, side_table(report)).encode())
    pretty = json.dumps(json.loads(to_json_line(report)), indent=2)
    write_bytes_atomic(paths["json"], (pretty + "\n").encode())
    return paths
