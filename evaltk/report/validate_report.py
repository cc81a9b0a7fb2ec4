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
from evaltk.evaluation.validate import Validation

FILE_NAMES = {"json": "report.json", "markdown": "report.md", "png": "report.png", "pairs_png": "pairs.png",
              "html": "report.html"}


def _num(v: Any) -> str:
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return "-"
    return f"{v:,.4g}" if isinstance(v, float) else str(v)


def _spec_text(v: Any) -> str:
    return v if isinstance(v, str) else json.dumps(v)


def differs_text(environments: dict[str, Any]) -> str:
    """Name the settings that differ between the two sides, then those a side did not report."""
    differs = environments["differs"]
    text = ", ".join(differs) if differs else "nothing among the settings both sides report"
    for role, keys in environments["not_reported"].items():
        if keys:
            text += f"; not reported by {role}: {', '.join(keys)}"
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


def alignment_lines(section: dict[str, Any]) -> list[str]:
    """Lines for people: what ``--align`` aligned and what it could not (none without ``--align``)."""
    if section["aligned"] is None:
        return []
    aligned = ", ".join(section["aligned"]["settings"]) or "nothing"
    return [f"aligned (--align): {aligned}",
            *(f"not aligned: {a['setting']}: {a['why']}" for a in section["aligned"]["not_aligned"])]


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
    lines += ["", "## What each side ran", "", f"| setting | {sim} | {ref} | |", "| --- | --- | --- | --- |"]
    for row in report["environments"]["rows"]:
        lines.append(f"| `{row['setting']}` | {_spec_text(row['sim'])} | {_spec_text(row['reference'])} | "
                     f"{'**differs**' if row['differs'] else ''} |")
    envs = report["environments"]
    check = envs["check"]
    asked = "the same on both sides" if check["same"] else "different: " + "; ".join(check["differences"])
    lines += ["", f"Environment asked for: {asked}.", "", f"What differs in what each side ran: {differs_text(envs)}.",
              ""]
    lines += [f"- {line}" for line in alignment_lines(report["simulator_settings"])]
    if envs["note"]:
        lines += ["", f"Note: {envs['note']}.", ""]
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
    body = compare_markdown(validation.comparison, label_a=ref, label_b=sim, with_sides=False)
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

    out = validation.config.report_dir
    out.mkdir(parents=True, exist_ok=True)
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
