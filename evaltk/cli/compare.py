"""``evaltk compare A B``: the transfer verdict between two score tables.

A is the reference (e.g. the reference environment's scores), B the candidate. Prints the verdict
and why; writes ``compare.json``, ``compare.md`` and ``compare.png`` when ``--out`` is given; with
``--json`` the last stdout line is the JSON object (``verdict``, ``margin``, ``n_a``, ``n_b``, ``ci``,
``tests``, ...).
"""

from __future__ import annotations

import argparse
from typing import Any

from evaltk.cli.output import emit_json
from evaltk.errors import EvaltkError
from evaltk.margin import MarginKind

DESCRIPTION = """Compare two score tables (A = reference, B = candidate) and give a verdict:
  equivalent    TOST passes: the (1-2*alpha) CI lies inside the margin region;
  different     the difference test rejects AND the (1-alpha) CI lies entirely outside the margin region;
  inconclusive  neither; says how many more episodes per side give 80% power.
A non-significant difference is never reported as equivalence.

Margin kinds (the margin M is in the units of the compared quantity):
  absolute  mean(B) - mean(A) in score units, region (-M, M)     [Welch + bootstrap-t TOST; Welch t]
  relative  (mean(B) - mean(A)) / |mean(A)|, region (-M, M)      [contrast + bootstrap-t TOST; Welch t]
  sd        (mean(B) - mean(A)) / pooled SD, region (-M, M)      [noncentral-t + delta-method TOST; Welch t]
  prob      P(B > A) + 0.5 P(B = A), region (0.5 - M, 0.5 + M)   [rank TOST; Brunner-Munzel]
Use prob for skewed or heavily discrete scores. Methods and calibration: docs/statistics.md."""


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``compare`` subcommand."""
    parser = subparsers.add_parser(
        "compare", help="transfer verdict between two score tables (equivalent / different / inconclusive)",
        description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("a", metavar="A", help="reference score table: evaluate's --out DIR, its episodes.csv, "
                        "or any CSV/JSONL with a 'return' column")
    parser.add_argument("b", metavar="B", help="candidate score table (same formats as A)")
    parser.add_argument("--margin", type=float, required=True, help="equivalence margin M (see margin kinds)")
    parser.add_argument("--margin-kind", choices=[k.value for k in MarginKind], default="absolute",
                        help="units of the margin (default: absolute)")
    parser.add_argument("--alpha", type=float, default=0.05, help="significance level of each test (default: 0.05)")
    parser.add_argument("--column", default="return", help="score column to read (default: return)")
    parser.add_argument("--seed", type=int, default=0,
                        help="seed of the generator for permutation and bootstrap steps (default: 0)")
    parser.add_argument("--resamples", type=int, default=9999,
                        help="permutation/bootstrap resamples (default: 9999)")
    parser.add_argument("--out", metavar="DIR", help="write compare.json, compare.md and compare.png here")
    parser.add_argument("--json", action="store_true", help="print one JSON object as the last line of stdout")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Read both tables, compare them, print (and optionally write) the result; returns 0."""
    if args.resamples < 100:
        raise EvaltkError(f"--resamples must be at least 100, got {args.resamples}; the default is 9999")
    from evaltk.compare import compare  # scipy and statsmodels: imported only when comparing
    from evaltk.scores import read_scores

    table_a = read_scores(args.a, column=args.column)
    table_b = read_scores(args.b, column=args.column)
    result = compare(table_a.returns, table_b.returns, args.margin, args.margin_kind, alpha=args.alpha,
                     seed=args.seed, n_resamples=args.resamples)
    payload: dict[str, Any] = result.to_dict()
    payload["inputs"] = {"a": str(table_a.path), "b": str(table_b.path)}
    print(f"A (reference): {table_a.describe()}")
    print(f"B (candidate): {table_b.describe()}")
    for test in result.tests.values():
        print(f"  {test.summary()}")
    if result.decision.tost is not None:
        print(f"  {result.decision.tost.summary()}")
    print(f"verdict: {result.verdict.value}")
    print(f"  {result.decision.explanation}")
    if result.recommendation is not None:
        print(f"  {result.recommendation.summary()}")
    if args.out:
        from evaltk.report.compare_report import write_compare_report  # matplotlib only when asked for

        paths = write_compare_report(result, args.out, label_a=str(table_a.path), label_b=str(table_b.path))
        payload["files"] = {k: str(v) for k, v in paths.items()}
        print("wrote " + ", ".join(str(p) for p in paths.values()))
    if args.json:
        emit_json(payload)
    return 0
