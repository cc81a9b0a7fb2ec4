"""Files for one comparison: ``compare.json`` (machines), ``compare.md`` (CI logs), ``compare.png`` (people).

The PNG has two panels: the empirical CDFs of both samples, and the compared quantity's
estimate with its ``1 - alpha`` CI (thick) and ``1 - 2 alpha`` TOST CI (thin) against the shaded
margin region.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

from evaltk.atomic import write_bytes_atomic
from evaltk.cli.output import to_json_line
from evaltk.compare import Comparison

FILE_NAMES = {"json": "compare.json", "markdown": "compare.md", "png": "compare.png"}


def _num(v: Any) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-"
    if isinstance(v, float):
        return f"{v:.4g}"
    return str(v)


def render_markdown(result: Comparison, label_a: str = "A", label_b: str = "B") -> str:
    """Return the Markdown summary of ``result`` (``label_a``/``label_b`` name the two score tables)."""
    d = result.to_dict()
    lines = [
        "# evaltk compare",
        "",
        f"**Verdict: {d['verdict']}** (margin {d['margin']:g}, kind `{d['margin_kind']}`, alpha {d['alpha']:g})",
        "",
        d["explanation"],
        "",
    ]
    if result.recommendation is not None:
        lines += [f"Recommendation: {result.recommendation.summary()}.", ""]
    lines += [
        f"- A (reference): `{label_a}`", f"- B (candidate): `{label_b}`",
        f"- Quantity: `{d['quantity']}` = {_num(d['estimate'])}; margin region "
        f"({_num(d['margin_region'][0])}, {_num(d['margin_region'][1])})",
        f"- {d['ci_level']:.0%} CI: [{_num(d['ci'][0])}, {_num(d['ci'][1])}] ({d['ci_method']}); "
        f"{d['ci_tost_level']:.0%} TOST CI: [{_num(d['ci_tost'][0])}, {_num(d['ci_tost'][1])}]",
        f"- Bootstrap (BCa) {d['ci_level']:.0%} CI of mean(B) - mean(A): "
        f"[{_num(d['bootstrap_ci_mean_difference']['low'])}, {_num(d['bootstrap_ci_mean_difference']['high'])}]",
        "",
        "| sample | n | mean | sd | median | min | max |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for name, s in (("A", d["a"]), ("B", d["b"])):
        lines.append(f"| {name} | {s['n']} | {_num(s['mean'])} | {_num(s['sd'])} | {_num(s['median'])} | "
                     f"{_num(s['min'])} | {_num(s['max'])} |")
    lines += ["", "| test | statistic | p | Holm p | note |", "| --- | ---: | ---: | ---: | --- |"]
    for name, t in d["tests"].items():
        lines.append(f"| {name} | {_num(t.get('statistic', t.get('estimate')))} | {_num(t['pvalue'])} | "
                     f"{_num(t.get('p_holm'))} | {t.get('note', '')} |")
    lines += ["", f"Primary difference test: `{d['primary_difference_test']}`; Holm p-values adjust the "
              "diagnostic difference tests as one family. Seed: " + str(d["seed"]) + ".", ""]
    return "\n".join(lines)


def render_png(result: Comparison, path: Path, label_a: str = "A", label_b: str = "B") -> None:
    """Draw ECDFs of both samples and the CI of the compared quantity into ``path`` (PNG)."""
    d = result.decision
    fig, (ax_cdf, ax_ci) = plt.subplots(1, 2, figsize=(11, 4), gridspec_kw={"width_ratios": [3, 2]})
    for values, label in ((result.a, f"A: {label_a}"), (result.b, f"B: {label_b}")):
        xs = np.sort(values)
        ax_cdf.step(xs, np.arange(1, xs.size + 1) / xs.size, where="post", label=f"{label} (n={xs.size})")
    ax_cdf.set_xlabel("episode return")
    ax_cdf.set_ylabel("fraction of episodes <= x")
    ax_cdf.set_title("Empirical CDFs")
    ax_cdf.legend(fontsize=8)
    ax_ci.axvspan(d.low, d.high, color="tab:green", alpha=0.15, label="margin region")
    ax_ci.axvline((d.low + d.high) / 2.0, color="grey", lw=0.8, ls="--")
    tost_ci = d.tost.ci if d.tost is not None else d.ci

    def finite(v: float, fallback: float) -> float:
        return v if math.isfinite(v) else fallback

    span = max(d.high - d.low, 1e-12)
    lo_fb, hi_fb = d.low - 2 * span, d.high + 2 * span
    est = finite(d.estimate, hi_fb if d.estimate > 0 else lo_fb)
    ax_ci.hlines(0, finite(d.ci.low, lo_fb), finite(d.ci.high, hi_fb), lw=6, color="tab:blue",
                 label=f"{d.ci.level:.0%} CI")
    ax_ci.hlines(0, finite(tost_ci.low, lo_fb), finite(tost_ci.high, hi_fb), lw=2, color="black",
                 label=f"{1 - 2 * d.alpha:.0%} TOST CI")
    ax_ci.plot([est], [0], "o", color="tab:red", label="estimate")
    shown = [v for v in (d.low, d.high, d.ci.low, d.ci.high, tost_ci.low, tost_ci.high, est) if math.isfinite(v)]
    pad = 0.1 * (max(shown) - min(shown) or span)
    ax_ci.set_xlim(min(shown) - pad, max(shown) + pad)
    ax_ci.set_yticks([])
    ax_ci.set_xlabel(d.quantity)
    ax_ci.set_title(f"verdict: {d.verdict.value}")
    ax_ci.legend(fontsize=8, loc="upper right")
    fig.tight_layout()
    tmp = path.with_name(f".{path.name}.tmp.png")
    try:
        fig.savefig(tmp, dpi=100)
        os.replace(tmp, path)
    finally:
        plt.close(fig)
        tmp.unlink(missing_ok=True)


def write_compare_report(result: Comparison, out_dir: str | Path, *, label_a: str = "A",
                         label_b: str = "B") -> dict[str, Path]:
    """Write ``compare.json``, ``compare.md`` and ``compare.png`` into ``out_dir`` (created if needed).

    Returns the paths by kind (``"json"``, ``"markdown"``, ``"png"``). Each file is written to a
    temporary name and renamed, so a reader never sees a half-written file.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = {kind: out / name for kind, name in FILE_NAMES.items()}
    payload = result.to_dict()
    payload["inputs"] = {"a": label_a, "b": label_b}
    pretty = json.dumps(json.loads(to_json_line(payload)), indent=2)
    write_bytes_atomic(paths["json"], (pretty + "\n").encode())
    write_bytes_atomic(paths["markdown"], render_markdown(result, label_a, label_b).encode())
    render_png(result, paths["png"], label_a, label_b)
    return paths
