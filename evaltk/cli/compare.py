"""``evaltk compare A B``: the transfer verdict between two score tables.

A is the reference (e.g. the reference environment's scores), B the candidate. Prints the verdict
and why; writes ``compare.json``, ``compare.md`` and ``compare.png`` when ``--out`` is given; with
``--json`` the last stdout line is the JSON object (``verdict``, ``margin``, ``n_a``, ``n_b``, ``ci``,
``tests``, ...).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from evaltk.cli.args import add_command, seed_type, verdict_rule
from evaltk.cli.output import emit_json
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
difference is shown beyond the margin, at alpha/2 as the fixed-N rule); inconclusive only when the last look
is reached undecided. Margin kinds absolute and sd.

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
    parser.add_argument("--seed", type=seed_type, default=0,
                        help="seed of the generator for permutation and bootstrap steps (default: 0)")
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
    parser.add_argument("--spending", choices=("obrien-fleming", "pocock"), default="obrien-fleming",
                        help="alpha-spending shape for --sequential (default: obrien-fleming)")
    parser.add_argument("--out", metavar="DIR", help="write compare.json, compare.md and compare.png here")
    parser.add_argument("--json", action="store_true", help="print one JSON object as the last line of stdout")
    parser.set_defaults(func=run)


def _print_sequential(result: Any) -> None:
    for look in result.looks:
        print(f"  {look.summary()}")
    print(f"verdict: {result.verdict.value}")
    print(f"  {result.reason}")
    if result.interval_line():
        print(f"  {result.interval_line()}")


def _print_settings(a: Path, b: Path, payload: dict[str, Any]) -> None:
    """Print the simulator settings that differ between the two tables (where evaltk evaluate recorded them)."""
    from evaltk.simulators.settings_diff import difference_lines, difference_rows, table_settings

    sa, sb = table_settings(a), table_settings(b)
    for line in difference_lines(sa, sb):
        print(line)
    if sa is not None and sb is not None:
        payload["simulator_settings"] = {"a": sa, "b": sb, "rows": difference_rows(sb, sa)}


def run(args: argparse.Namespace) -> int:
    """Read both tables, compare them, print (and optionally write) the result; returns 0."""
    rule = verdict_rule(args)
    from evaltk.table_comparison import check_envs, compare_tables, load_table
    from evaltk.verdict.sequential import compare_sequential

    if rule.sequential:
        table_a, table_b = load_table(args.a, column=args.column), load_table(args.b, column=args.column)
        env_check = check_envs(table_a, table_b, allow_different_envs=rule.allow_different_envs)
        print(f"A (reference): {table_a.table.describe()}")
        print(f"B (candidate): {table_b.table.describe()}")
        print(env_check.summary())
        seq = compare_sequential(table_a.returns, table_b.returns, rule.margin, rule.kind, looks=rule.looks,
                                 alpha=rule.alpha, spending=rule.spending, seeds_a=table_a.seeds,
                                 seeds_b=table_b.seeds, paired=rule.pairing, min_episodes=rule.min_episodes,
                                 digests_a=table_a.digests, digests_b=table_b.digests)
        _print_sequential(seq)
        payload: dict[str, Any] = seq.to_dict()
        payload["environments"] = env_check.to_dict()
        payload["inputs"] = {"a": str(table_a.table.path), "b": str(table_b.table.path)}
        if args.out:
            from evaltk.report.comparison_report import write_sequential_report

            paths = write_sequential_report(payload, args.out)
            payload["files"] = {k: str(v) for k, v in paths.items()}
            print("wrote " + ", ".join(str(p) for p in paths.values()))
        if args.json:
            emit_json(payload)
        return 0
    tables = compare_tables(args.a, args.b, rule.margin, rule.kind, column=args.column,
                            allow_different_envs=rule.allow_different_envs, paired=rule.pairing, alpha=rule.alpha,
                            seed=args.seed, n_resamples=rule.resamples, min_episodes=rule.min_episodes)
    result = tables.comparison
    payload = tables.to_dict()
    print(f"A (reference): {tables.table_a.table.describe()}")
    print(f"B (candidate): {tables.table_b.table.describe()}")
    print(tables.env_check.summary())
    _print_settings(tables.table_a.table.path, tables.table_b.table.path, payload)
    if result.pairing is not None:
        print(f"pairing: {result.pairing.n_shared} shared seeds; {result.pairing.note}")
    for test in result.tests.values():
        print(f"  {test.summary()}")
    if result.decision.tost is not None:
        print(f"  {result.decision.tost.summary()}")
    print(f"verdict: {result.headline()}")
    print(f"  {result.decision.explanation}")
    if result.information is not None:
        print(f"  {result.information.reason}")
    elif result.recommendation is not None:
        print(f"  {result.recommendation.summary()}")
    if args.out:
        from evaltk.report.comparison_report import write_comparison_report  # matplotlib only when asked for

        paths = write_comparison_report(result, args.out, label_a=str(tables.table_a.table.path),
                                     label_b=str(tables.table_b.table.path), environments=tables.env_check.to_dict())
        payload["files"] = {k: str(v) for k, v in paths.items()}
        print("wrote " + ", ".join(str(p) for p in paths.values()))
    if args.json:
        emit_json(payload)
    return 0
