"""``evaltk compare A B``: the transfer verdict between two score tables.

A is the reference (e.g. the reference environment's scores), B the candidate. Prints the verdict
and why; writes ``compare.json``, ``compare.md`` and ``compare.png`` when ``--out`` is given; with
``--json`` the last stdout line is the JSON object (``verdict``, ``margin``, ``n_a``, ``n_b``, ``ci``,
``tests``, ...).
"""

from __future__ import annotations

import argparse
from typing import Any

from evaltk.cli.args import add_command, seed_type, verdict_rule
from evaltk.cli.output import emit_json
from evaltk.errors import EvaltkError
from evaltk.margin import MarginKind

DESCRIPTION = """Compare two score tables (A = reference, B = candidate) and give a verdict:
  equivalent    TOST passes: the (1-2*alpha) CI lies inside the margin region;
  different     the difference test rejects AND the (1-alpha) CI lies entirely outside the margin region;
  inconclusive  neither; says how many more episodes per side give 80% power.
  identical     both tables ran the same seeds and every shared seed's episode is the same step for step
                (per-episode digests: rewards, actions, episode end, observations) on at least 10 seeds; printed
                with the 95% upper bound 3/n on the rate of differing episodes (a fact, no test). Tables
                without digests (older evaltk) are compared on returns only, and say so.
A non-significant difference is never reported as equivalence. No verdict from fewer than --min-episodes
(default 10) episodes per side: that is inconclusive, with the number of episodes that would decide.

Tables with a 'seed' column (as evaltk evaluate writes) are paired by seed: the tests run on the per-seed
differences (absolute and sd margins), which needs far fewer episodes when the seeds correlate; --unpaired
turns it off. Tables of different env ids or env specs are refused unless --allow-different-envs.

--sequential reads both tables in episode order as if they arrived in --looks batches and stops at the first
look that decides: equivalent (both one-sided tests cross their alpha-spending boundaries) or different (the
difference is shown beyond the margin, at alpha/2 as the fixed-N rule); inconclusive when the last look is
reached undecided, or earlier by the non-binding futility stop (the estimate sits on a margin point; the error
rates hold as if it had gone on). Margin kinds absolute and sd.

Margin kinds (the margin M is in the units of the compared quantity):
  absolute  mean(B) - mean(A) in score units, region (-M, M)     [Welch + bootstrap-t TOST; Welch t]
  relative  (mean(B) - mean(A)) / |mean(A)|, region (-M, M)      [contrast + bootstrap-t TOST; Welch t]
  sd        (mean(B) - mean(A)) / pooled SD, region (-M, M)      [noncentral-t + delta-method TOST; Welch t]
  prob      P(B > A) + 0.5 P(B = A), region (0.5 - M, 0.5 + M)   [rank TOST; Brunner-Munzel]
Use prob for skewed or heavily discrete scores. Methods and calibration: docs/statistics.md."""


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``compare`` subcommand."""
    parser = add_command(subparsers, "compare",
                         help="transfer verdict between two score tables (equivalent / different / inconclusive)",
                         description=DESCRIPTION)
    parser.add_argument("a", metavar="A", help="reference score table: evaluate's --out DIR, its episodes.csv, "
                        "or any CSV/JSONL with a 'return' column")
    parser.add_argument("b", metavar="B", help="candidate score table (same formats as A)")
    parser.add_argument("--margin", type=float, required=True, help="equivalence margin M (see margin kinds)")
    parser.add_argument("--margin-kind", choices=[k.value for k in MarginKind], default="absolute",
                        help="units of the margin (default: absolute)")
    parser.add_argument("--alpha", type=float, default=0.05, help="significance level of each test (default: 0.05)")
    parser.add_argument("--column", default="return", help="score column to read (default: return)")
    parser.add_argument("--bootstrap-seed", type=seed_type, default=0,
                        help="base seed of the generator for the permutation and bootstrap steps (seed stream "
                             "verdict.bootstrap; default: 0)")
    parser.add_argument("--seed", type=seed_type, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--resamples", type=int, default=9999,
                        help="permutation/bootstrap resamples (default: 9999)")
    parser.add_argument("--unpaired", action="store_true", help="do not pair rows by seed")
    parser.add_argument("--allow-different-envs", action="store_true",
                        help="compare tables whose env ids or env specs differ (the report says so)")
    parser.add_argument("--min-episodes", type=int, default=10,
                        help="fewest episodes per side (pairs) for a verdict (default: 10)")
    parser.add_argument("--sequential", action="store_true",
                        help="group-sequential TOST over the tables in episode order (stops at the deciding look)")
    parser.add_argument("--looks", type=int, default=10, help="number of looks for --sequential (default: 10)")
    parser.add_argument("--spending", choices=("delayed-equivalence", "obrien-fleming", "pocock"),
                        default="delayed-equivalence",
                        help="alpha-spending shape for --sequential (default: delayed-equivalence: no equivalence "
                             "stop before a third of the budget, a non-binding futility stop near a margin point; "
                             "obrien-fleming, pocock: the classical shapes, no futility stop)")
    parser.add_argument("--out", metavar="DIR", help="write compare.json, compare.md and compare.png here")
    parser.add_argument("--json", action="store_true", help="print one JSON object as the last line of stdout")
    parser.set_defaults(func=run)


def _print_sequential(result: Any) -> None:
    for look in result.looks:
        print(f"  {look.summary()}")
    print(f"  {result.reason}")
    if result.interval_line():
        print(f"  {result.interval_line()}")
    print(result.verdict_line())


def _load(path: str, column: str, side: str) -> Any:
    """Read one table as a sample named ``A (gym)`` / ``B (gpu_env)`` (the simulator where the table records one)."""
    from evaltk.evaluation.samples import load_sample

    sample = load_sample(path, column=column)
    return sample.with_label(f"{side} ({sample.simulator})" if sample.simulator else side)


def run(args: argparse.Namespace) -> int:
    """Read both tables, compare them, print (and optionally write) the result; returns 0."""
    if args.seed is not None:
        raise EvaltkError("compare has no --seed: --seed is an evaluation's episode base seed; the resampling "
                          "generator's seed is --bootstrap-seed")
    rule = verdict_rule(args)
    from evaltk.evaluation.samples import describe
    from evaltk.verdict import compare
    from evaltk.verdict.sequential import FixedSource, compare_sequential

    a, b = _load(args.a, args.column, "A"), _load(args.b, args.column, "B")
    print(f"A (reference): {describe(a.with_label(args.a))}")
    print(f"B (candidate): {describe(b.with_label(args.b))}")
    payload: dict[str, Any]
    if rule.sequential:
        seq = compare_sequential(FixedSource(a), FixedSource(b), rule)
        if seq.env_check is not None:
            print(seq.env_check.summary())
        if seq.differences is not None:
            print("\n".join(seq.differences.lines()))
        _print_sequential(seq)
        payload = seq.to_dict()
        payload["inputs"] = {"a": str(args.a), "b": str(args.b)}
        if args.out:
            from evaltk.report.comparison_report import write_sequential_report

            paths = write_sequential_report(payload, args.out)
            payload["files"] = {k: str(v) for k, v in paths.items()}
            print("wrote " + ", ".join(str(p) for p in paths.values()))
        if args.json:
            emit_json(payload)
        return 0
    result = compare(a, b, rule)
    payload = result.to_dict()
    payload["inputs"] = {"a": str(args.a), "b": str(args.b)}
    print(result.env_check.summary())
    print("\n".join(result.differences.lines()))
    if result.pairing is not None:
        print(f"pairing: {result.pairing.n_shared} shared seeds; {result.pairing.note}")
    design = "paired: on the per-seed differences" if result.decision.design == "paired" else "unpaired"
    print(f"secondary tests ({design}):")
    for test in result.tests.values():
        print(f"  {test.summary()}")
    if result.decision.tost is not None:
        print(f"  {result.decision.tost.summary()}")
    print(f"  {result.decision.explanation}")
    if result.information is not None:
        print(f"  {result.information.reason}")
    elif result.recommendation is not None:
        print(f"  {result.recommendation.summary()}")
    if args.out:
        from evaltk.report.comparison_report import write_comparison_report  # matplotlib only when asked for

        paths = write_comparison_report(result, args.out, label_a=str(args.a), label_b=str(args.b))
        payload["files"] = {k: str(v) for k, v in paths.items()}
        print("wrote " + ", ".join(str(p) for p in paths.values()))
    print(result.verdict_line())
    if args.json:
        emit_json(payload)
    return 0
