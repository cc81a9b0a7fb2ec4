"""``report.html``: one self-contained page for a validation report (``evaltk validate``).

Everything the page shows is inside the file: the plots are base64 PNG ``data:`` URLs, the style
and the one small script are inline, and a Content-Security-Policy forbids every other source, so
the page renders the same offline, attached to a CI run or mailed. The script marks the root
element ``data-images="loaded N/N"`` once every image has decoded (``"broken K/N"`` otherwise),
which is what the headless-browser test reads back.
"""

from __future__ import annotations

import base64
import html
import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

from evaltk.envs.atari_settings import UNKNOWN

CSP = "default-src 'none'; img-src data:; style-src 'unsafe-inline'; script-src 'unsafe-inline'"
MAX_PAIR_ROWS = 500
"""Per-seed rows listed in the page (all of them are in ``report.json``)."""
VERDICT_COLOURS = {"identical": "#1a7f37", "equivalent": "#1a7f37", "different": "#cf222e",
                   "inconclusive": "#9a6700"}

STYLE = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2rem auto; max-width: 72rem;
       color: #1f2328; line-height: 1.45; padding: 0 1rem; }
h1 { font-size: 1.6rem; margin-bottom: 0.2rem; } h2 { font-size: 1.2rem; margin-top: 2rem; }
.sub { color: #59636e; margin-top: 0; }
.verdict { border-left: 0.5rem solid var(--c); background: #f6f8fa; padding: 0.8rem 1.2rem; border-radius: 4px; }
.verdict .line { font-size: 1.25rem; font-weight: 600; color: var(--c); margin: 0 0 0.4rem 0; }
table { border-collapse: collapse; margin: 0.5rem 0; font-size: 0.92rem; }
th, td { border: 1px solid #d1d9e0; padding: 0.25rem 0.6rem; text-align: left; vertical-align: top; }
th { background: #f6f8fa; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
tr.differs td { background: #fff8c5; } .badge { font-size: 0.75rem; font-weight: 600; color: #9a6700; }
code { font-size: 0.88em; } figure { margin: 1rem 0; } img { max-width: 100%; border: 1px solid #d1d9e0; }
figcaption { color: #59636e; font-size: 0.88rem; } .figs { display: flex; flex-wrap: wrap; gap: 1rem; }
"""

SCRIPT = """
window.addEventListener("load", function () {
  var imgs = Array.prototype.slice.call(document.images);
  var ok = imgs.filter(function (i) { return i.complete && i.naturalWidth > 0; }).length;
  var state = ok === imgs.length ? "loaded " : "broken ";
  document.documentElement.setAttribute("data-images", state + (ok === imgs.length ? ok : imgs.length - ok) +
                                        "/" + imgs.length);
});
"""


def _e(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _value(v: Any) -> str:
    """Format a spec or statistic value as page text: numbers to 4 significant digits, JSON for the rest."""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return "-" if not math.isfinite(v) else f"{v:,.4g}"
    if isinstance(v, int | str):
        return str(v)
    return json.dumps(v)


def _table(header: Sequence[str], rows: Sequence[Sequence[Any]], *, row_classes: Sequence[str] | None = None,
           numeric: Sequence[int] = ()) -> str:
    head = "".join(f"<th>{_e(h)}</th>" for h in header)
    body = []
    for i, row in enumerate(rows):
        cls = f' class="{row_classes[i]}"' if row_classes and row_classes[i] else ""
        cells = "".join(f'<td{" class=num" if j in numeric else ""}>{cell}</td>' for j, cell in enumerate(row))
        body.append(f"<tr{cls}>{cells}</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def _ci(pair: Sequence[float] | None) -> str:
    return "-" if pair is None else f"[{_value(pair[0])}, {_value(pair[1])}]"


def _key_numbers(report: Mapping[str, Any]) -> str:
    c = report["comparison"]
    boot = c["bootstrap_ci_mean_difference"]
    fixed = "fixed-N (ignores the stopping rule) " if _sequential_rows(report) else ""
    rows = [
        ("verdict", f"<strong>{_e(report['verdict'])}</strong>"),
        ("design", _e(report["design"])),
        ("margin", f"{_e(_value(report['margin']))} ({_e(report['margin_kind'])}); region "
                   f"{_e(_ci(c['margin_region']))}"),
        ("alpha", _e(_value(report["alpha"]))),
        ("quantity", f"<code>{_e(c['quantity'])}</code> = {_e(_value(c['estimate']))}"),
        *_sequential_rows(report),
        (f"{fixed}{c['ci_level']:.0%} CI", f"{_e(_ci(c['ci']))} ({_e(c['ci_method'])})"),
        (f"{fixed}{c['ci_tost_level']:.0%} TOST CI", _e(_ci(c["ci_tost"]))),
        (f"{fixed}bootstrap {boot['level']:.0%} CI of {boot['quantity']}",
         f"{_e(_ci([boot['low'], boot['high']]))} ({_e(boot['method'])})"),
        ("episodes needed", _e(report["episodes_needed_line"])),
    ]
    return _table(("", "value"), [(f"<strong>{_e(k)}</strong>", v) for k, v in rows])


def _sequential_rows(report: Mapping[str, Any]) -> list[tuple[str, str]]:
    """Key-number rows of a sequential verdict: its repeated CIs and where it stopped (none otherwise)."""
    seq = report.get("sequential")
    if not seq or not seq.get("interval") or report.get("verdict") == "identical":
        return []
    iv = seq["interval"]
    return [("sequential stop", _e(seq["interval_line"])),
            (f"{iv['level']:.0%} repeated CI (the verdict's)", _e(_ci(iv["ci"]))),
            (f"{iv['level_equivalence']:.0%} repeated CI (equivalence)", _e(_ci(iv["ci_equivalence"])))]


def _environments(report: Mapping[str, Any], labels: tuple[str, str]) -> str:
    envs = report["environments"]
    rows, classes = [], []
    for r in envs["rows"]:
        badge = ' <span class="badge">differs</span>' if r["differs"] else ""
        rows.append((f"<code>{_e(r['setting'])}</code>{badge}", _e(_value(r["sim"])), _e(_value(r["reference"]))))
        classes.append("differs" if r["differs"] else "")
    differs = envs["differs"]
    words = (", ".join(f"<code>{_e(d)}</code>" for d in differs) if differs
             else "nothing among the settings both sides report")
    unreported = "".join(f"<p>Not reported by {_e(role)}: {', '.join(f'<code>{_e(k)}</code>' for k in keys)}.</p>"
                         for role, keys in envs["not_reported"].items() if keys)
    check = envs["check"]
    asked = "the same on both sides" if check["same"] else "different: " + "; ".join(check["differences"])
    note = f"<p>Note: {_e(envs['note'])}.</p>" if envs.get("note") else ""
    return (f"<p>Environment asked for: {_e(asked)}.</p>"
            f'<p id="differs">What differs in what each side ran: {words}.</p>{unreported}{note}'
            + _table(("setting", labels[0], labels[1]), rows, row_classes=classes))


def _pairs(report: Mapping[str, Any]) -> str:
    pairs = report["pairs"]
    if pairs is None:
        return "<p>The reference table records no seeds, so rows do not pair: the comparison is unpaired.</p>"
    same = pairs["same"]
    text = (f"<p>{pairs['n_shared']} shared seeds ({pairs['only_sim']} only in sim, {pairs['only_reference']} only "
            f"in the reference); same return on {same['return']}, same frames on {same['frames']}, same steps on "
            f"{same['steps']}.</p>")
    shown = pairs["rows"][:MAX_PAIR_ROWS]
    rows = [(_e(r["index"]), _e(r["seed"]), _e(_value(r["sim_return"])), _e(_value(r["reference_return"])),
             _e(_value(r["sim_frames"])), _e(_value(r["reference_frames"]))) for r in shown]
    more = f" (first {MAX_PAIR_ROWS}; all in report.json)" if len(pairs["rows"]) > MAX_PAIR_ROWS else ""
    table = _table(("index", "seed", "sim return", "reference return", "sim frames", "reference frames"), rows,
                   numeric=(0, 1, 2, 3, 4, 5))
    return text + f"<details><summary>per-seed rows ({len(pairs['rows'])}){more}</summary>{table}</details>"


def _tests_design(report: Mapping[str, Any]) -> str:
    """How the secondary tests treat the rows: on the per-seed differences (paired) or as independent samples."""
    paired = report["comparison"]["design"] == "paired"
    return "on the per-seed differences, the design is paired" if paired else "unpaired: independent samples"


def _tests(report: Mapping[str, Any]) -> str:
    rows = []
    for name, t in report["comparison"]["tests"].items():
        rows.append((_e(name), _e(_value(t.get("statistic", t.get("estimate")))), _e(_value(t.get("pvalue"))),
                     _e(_value(t.get("p_holm"))), _e(t.get("note") or "")))
    return _table(("test", "statistic", "p", "Holm p", "note"), rows, numeric=(1, 2, 3))


def _figures(images: Mapping[str, bytes]) -> str:
    captions = {"report.png": "Empirical CDFs of both sides (one curve hides the other when the rows are identical), "
                              "and the compared quantity's CI against the margin.",
                "pairs.png": "Each shared seed's return on the simulator against the reference (dashed: equal)."}
    figs = []
    for name, data in images.items():
        src = "data:image/png;base64," + base64.b64encode(data).decode("ascii")
        figs.append(f'<figure><img src="{src}" alt="{_e(name)}"><figcaption>{_e(name)}: '
                    f"{_e(captions.get(name, ''))}</figcaption></figure>")
    return f'<div class="figs">{"".join(figs)}</div>'


def render_html(report: Mapping[str, Any], images: Mapping[str, bytes],
                summary_rows: Sequence[tuple[str, str, str]]) -> str:
    """Return the page for a validation ``report`` (the ``report.json`` object).

    ``images`` maps file names to PNG bytes, embedded in that order; ``summary_rows`` are the
    ``(metric, sim, reference)`` rows of the per-side summary.
    """
    ref = report["sides"]["reference"]
    ref_words = [w for w in (ref["simulator"], "baseline" if ref["source"] == "baseline" else "") if w and
                 w != UNKNOWN]
    labels = (f"sim ({report['sides']['sim']['simulator']})", f"reference ({', '.join(ref_words)})")
    colour = VERDICT_COLOURS.get(report["verdict"], "#59636e")
    notes = [n for side in ("sim", "reference") for n in report["sides"][side]["notes"]]
    files = "".join(f"<li><code>{_e(v)}</code></li>" for v in report["files"].values())
    summary = _table(("metric", *labels), [tuple(_e(c) for c in row) for row in summary_rows])
    return "\n".join([
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>evaltk validate: {_e(report['verdict'])} - {_e(report['checkpoint'])} on {_e(report['env_id'])}"
        "</title>",
        f"<style>{STYLE}</style>",
        "</head>",
        "<body>",
        "<h1>evaltk validate</h1>",
        f'<p class="sub"><code>{_e(report["checkpoint"])}</code> on {_e(report["env_id"])}: {_e(labels[0])} vs '
        f'{_e(labels[1])}, {report["episodes"]} episodes, base seed {report["seed"]}</p>',
        f'<section id="verdict" class="verdict" style="--c: {colour}">',
        f'<p class="line">{_e(report["verdict_line"])}</p>',
        f"<p>{_e(report['explanation'])}</p>",
        "</section>",
        "<h2>Key numbers</h2>", _key_numbers(report),
        "<h2>Each side</h2>", summary,
        "<h2>Plots</h2>", _figures(images),
        "<h2>What each side ran</h2>", _environments(report, labels),
        "<h2>Pairing by seed</h2>", _pairs(report),
        f"<h2>Secondary tests (B = sim vs A = reference; {_e(_tests_design(report))})</h2>", _tests(report),
        *(["<h2>Notes</h2>", "<ul>" + "".join(f"<li>{_e(n)}</li>" for n in notes) + "</ul>"] if notes else []),
        "<h2>Files</h2>", f"<ul>{files}</ul>",
        f"<script>{SCRIPT}</script>",
        "</body>",
        "</html>",
        "",
    ])
