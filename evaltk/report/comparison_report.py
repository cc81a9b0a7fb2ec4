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
from evaltk.report.jsonline import to_json_line
from evaltk.stats.boundaries import NEVER_Z
from evaltk.verdict import Comparison

FILE_NAMES = {"json": "compare.json", "markdown": "compare.md", "png": "compare.png"}
SEQUENTIAL_FILE_NAMES = {"json": "sequential.json", "markdown": "sequential.md"}


def _num(v: Any) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-"
    if isinstance(v, float):
        return f"{v:.4g}"
    return str(v)


def _environment_lines(environments: dict[str, Any] | None) -> list[str]:
    if environments is None:
        return []
    if environments["same"]:
        return [f"Environment asked for: the same on both sides (`{environments['env_id_a']}`).", ""]
    return ["**Different environments** (compared because different envs were allowed):", ""] + [
        f"- {diff}" for diff in environments["differences"]] + [""]


def settings_lines(settings: dict[str, Any] | None) -> list[str]:
    """Markdown lines of the one settings diff (``Differences.to_dict()``): what differs, what was not reported."""
    if settings is None:
        return []
    names = settings["names"]
    rows = [r for r in settings["rows"] if r["differs"]]
    lines = ["What each side ran: " + (", ".join(f"`{r['setting']}`" for r in rows) + " differ" if rows
                                      else "no difference among the settings both sides report") + ".", ""]
    if rows:
        lines += [f"| setting | {names[0]} | {names[1]} |", "| --- | --- | --- |"]
        lines += [f"| `{r['setting']}` | {r['a']} | {r['b']} |" for r in rows] + [""]
    for key, name in zip(("a", "b"), names, strict=True):
        if settings["not_reported"][key]:
            lines += [f"Not reported by {name}: {', '.join(settings['not_reported'][key])}.", ""]
    if settings.get("note"):
        lines += [f"Note: {settings['note']}.", ""]
    return lines


def render_markdown(result: Comparison, label_a: str = "A", label_b: str = "B", *, with_sides: bool = True) -> str:
    """Return the Markdown summary of ``result`` (``label_a``/``label_b`` name the two score tables).

    ``with_sides=False`` leaves out the env check and the settings diff (a report that shows them already).
    """
    d = result.to_dict()
    lines = [
        "# evaltk compare",
        "",
        f"**Verdict: {d['verdict']}** (margin {d['margin']:g}, kind `{d['margin_kind']}`, alpha {d['alpha']:g}, "
        f"{d['design']})",
        "",
        d["explanation"],
        "",
    ]
    if with_sides:
        lines += _environment_lines(d["environments"]) + settings_lines(d["settings"])
    if result.identical is not None:
        lines += [f"**{result.identical.summary()}** - a fact about these episodes, not a statistical finding.", ""]
    elif result.episodes is not None and result.episodes.note() is not None:
        lines += [f"Not identical: {result.episodes.note()}.", ""]
    if result.pairing is not None:
        corr = "-" if result.pairing.correlation is None else f"{result.pairing.correlation:.3f}"
        lines += [f"Pairing: {result.pairing.n_shared} shared seeds (per-seed correlation {corr}); "
                  f"{result.pairing.note}.", ""]
    if result.information is not None:
        lines += [f"Why inconclusive: {result.information.reason}.", ""]
    elif result.recommendation is not None:
        lines += [f"Recommendation: {result.recommendation.summary()}.", ""]
    lines += [
        f"- A (reference): `{label_a}`", f"- B (candidate): `{label_b}`",
        f"- Quantity: `{d['quantity']}` = {_num(d['estimate'])}; margin region "
        f"({_num(d['margin_region'][0])}, {_num(d['margin_region'][1])})",
        f"- {d['ci_level']:.0%} CI: [{_num(d['ci'][0])}, {_num(d['ci'][1])}] ({d['ci_method']}); "
        f"{d['ci_tost_level']:.0%} TOST CI: [{_num(d['ci_tost'][0])}, {_num(d['ci_tost'][1])}]",
        f"- Bootstrap {d['ci_level']:.0%} CI of {d['bootstrap_ci_mean_difference']['quantity']} "
        f"({d['bootstrap_ci_mean_difference']['method']}): "
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
    family = ("on the per-seed differences B - A (the design is paired)" if d["design"] == "paired"
              else "on the two samples as independent (the design is unpaired)")
    lines += ["", f"Secondary tests {family}. Primary difference test: `{d['primary_difference_test']}`; Holm "
              "p-values adjust the secondary tests as one family. Bootstrap seed: " + str(d["bootstrap_seed"]) + ".",
              ""]
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


def sequential_look_lines(payload: dict[str, Any]) -> list[str]:
    """Markdown table of the looks of ``SequentialComparison.to_dict()`` (empty without looks)."""
    if not payload["looks"]:
        return []
    lines = ["| look | n A | n B | info fraction | estimate | SE | TOST p | needs < | beyond-margin p | needs < | "
             "repeated CI (verdict's level) | outcome |",
             "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- |"]
    for look in payload["looks"]:
        ci = look.get("ci_difference") or [math.nan, math.nan]
        lines.append(f"| {look['k']} | {look['n_a']} | {look['n_b']} | {look['fraction']:.3f} | "
                     f"{_num(look['estimate'])} | {_num(look['se'])} | {_num(look['p_tost'])} | "
                     f"{_num(look['nominal_alpha'])} | {_num(look['p_beyond'])} | "
                     f"{_num(look['nominal_alpha_beyond'])} | [{_num(ci[0])}, {_num(ci[1])}] | {look['outcome']} |")
    return [*lines, ""]


def render_sequential_markdown(payload: dict[str, Any]) -> str:
    """Markdown for a sequential comparison (``SequentialComparison.to_dict()`` plus ``environments``/``inputs``)."""
    lines = ["# evaltk compare --sequential", "",
             f"**Verdict: {payload['verdict']}** (margin {payload['margin']:g}, kind `{payload['margin_kind']}`, "
             f"{payload['design']}; episodes used A {payload['episodes_used']['a']} / B {payload['episodes_used']['b']}"
             f" of a budget of {payload['budget']['a']} / {payload['budget']['b']})", "", payload["explanation"], ""]
    lines += _environment_lines(payload.get("environments"))
    lines += settings_lines(payload.get("settings"))
    if payload.get("inputs"):
        lines += [f"- A (reference): `{payload['inputs']['a']}`", f"- B (candidate): `{payload['inputs']['b']}`", ""]
    if payload.get("interval_line"):
        lines += [payload["interval_line"] + ".", ""]
    lines += sequential_look_lines(payload)
    if payload.get("boundaries"):
        b = payload["boundaries"]
        lines += [f"Boundaries: {b['spending']} alpha-spending, alpha {b['alpha']:g} per TOST side and "
                  f"{b['alpha'] / 2:g} for \"beyond the margin\"; equivalence Z boundaries "
                  + ", ".join(map(_z_text, b["equivalence_z"])) + "; difference Z boundaries "
                  + ", ".join(map(_z_text, b["difference_z"])) + "; " + _futility_words(b), ""]
    return "\n".join(lines)


def _z_text(z: float) -> str:
    """Return a boundary for people: ``none`` where the look may not stop that way (:data:`NEVER_Z`)."""
    return "none" if z >= NEVER_Z else f"{z:.3f}"


def _futility_words(boundaries: dict[str, Any]) -> str:
    """How the design ends undecided: only at the last look, or also by its non-binding futility stop."""
    stops = [k + 1 for k, c in enumerate(boundaries.get("futility_z") or ()) if c > 0]
    if not stops:
        return "inconclusive only at the last look."
    c = max(boundaries["futility_z"])
    return (f"inconclusive at the last look, or at looks {stops[0]}-{stops[-1]} by the non-binding futility stop "
            f"(estimate within {c:g} SE of a margin point; the error rates hold as if the design had gone on).")


def write_sequential_report(payload: dict[str, Any], out_dir: str | Path) -> dict[str, Path]:
    """Write ``sequential.json`` and ``sequential.md`` (the looks and the verdict) into ``out_dir``."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = {kind: out / name for kind, name in SEQUENTIAL_FILE_NAMES.items()}
    pretty = json.dumps(json.loads(to_json_line(payload)), indent=2)
    write_bytes_atomic(paths["json"], (pretty + "\n").encode())
    write_bytes_atomic(paths["markdown"], render_sequential_markdown(payload).encode())
    return paths


def write_comparison_report(result: Comparison, out_dir: str | Path, *, label_a: str = "A",
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
