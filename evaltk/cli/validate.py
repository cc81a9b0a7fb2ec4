"""``evaltk validate``: a checkpoint on the simulator and on the reference, compared, in one report."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from evaltk.cli.args import (
    add_checkpoint_argument,
    add_command,
    add_request_options,
    request_args,
    seed_type,
    verdict_rule,
)
from evaltk.cli.output import emit_json, print_import_caveats
from evaltk.errors import EvaltkError
from evaltk.margin import MarginKind

EPILOG = """examples:
  evaltk validate builtin:scripted --env-id ALE/Breakout-v5 --episodes 20 --margin 5 --out runs/validate
  evaltk validate runs/a2c/checkpoints/final --episodes 50 --margin 0.5 --margin-kind sd --out runs/a2c_validate
  evaltk validate runs/a2c/checkpoints/final --baseline runs/a2c_gym/episodes.csv --margin 5 --out runs/a2c_vs_table

Each evaluated side's score table goes to OUT/<simulator>/ (as `evaltk evaluate --out` writes it); re-running the
same command resumes them, and a re-run with another margin only re-compares. The report is OUT/report.json,
report.md, report.png, pairs.png (rows paired by seed) and report.html (self-contained).
"""


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``validate`` subcommand."""
    p = add_command(
        subparsers, "validate",
        help="run a policy on the simulator and on the reference (or a baseline table), compare, report",
        description="Evaluate CKPT on the simulator (--sim) and on the reference (--reference, or a --baseline score "
                    "table) with the same seeds, compare the two score tables (evaltk compare's verdict) and write "
                    "one report with the verdict, the CIs, the episodes needed and the two env specs side by side.",
        epilog=EPILOG)
    add_checkpoint_argument(p, builtins="builtin:scripted, builtin:random (builtins need --env-id)")
    p.add_argument("--sim", default=None, metavar="SIM",
                   help="simulator the policy is validated on: gpu_env (default), envpool (pip install "
                        "'evaltk[envpool]'), gym, or MODULE:CALLABLE, your own factory (docs/simulators.md)")
    p.add_argument("--reference", default=None, metavar="SIM",
                   help="reference simulator (default gym: gymnasium + ale-py); any name --sim takes")
    p.add_argument("--align", action="store_true",
                   help="run the reference with the simulator's settings wherever gymnasium + ale-py can express "
                        "them (sticky actions, NOOP starts, frame cap, ...); the report lists what could not be "
                        "aligned. The aligned reference goes to OUT/<reference>-aligned/")
    p.add_argument("--baseline", type=Path, default=None, metavar="TABLE",
                   help="a table of baseline scores (CSV/JSONL with a 'return' column, or an `evaltk evaluate` "
                        "directory) used as the reference instead of running --reference")
    add_request_options(p, env_id_help="gymnasium env id (required for builtins; default: the checkpoint's)",
                        episodes_help="episodes per evaluated side (default 20)",
                        seed_help="base seed: episode i has the same recorded seed on both sides (default 0)",
                        workers_help="Gym worker processes (default: min(num-envs, CPUs); 0 = in-process)")
    p.add_argument("--margin", type=float, required=True, help="equivalence margin M, in --margin-kind units")
    p.add_argument("--margin-kind", choices=[k.value for k in MarginKind], default="absolute",
                   help="units of the margin, as in evaltk compare (default absolute: score units)")
    p.add_argument("--alpha", type=float, default=0.05, help="significance level of each test (default 0.05)")
    p.add_argument("--resamples", type=int, default=9999, help="permutation/bootstrap resamples (default 9999)")
    p.add_argument("--bootstrap-seed", type=seed_type, default=0,
                   help="base seed of the resampling generator (seed stream verdict.bootstrap; default 0); --seed "
                        "is the episodes' base seed")
    p.add_argument("--min-episodes", type=int, default=10,
                   help="fewest episodes (pairs) per side for a statistical verdict, as in compare (default 10)")
    p.add_argument("--unpaired", action="store_true", help="do not pair rows by seed (as in compare)")
    p.add_argument("--allow-different-envs", action="store_true",
                   help="accept a --baseline whose recorded env spec differs from the checkpoint's (listed in the "
                        "report)")
    p.add_argument("--sequential", action="store_true",
                   help="evaluate both sides in --looks batches and stop at the first look that decides (absolute "
                        "and sd margins; --episodes is the budget)")
    p.add_argument("--looks", type=int, default=10, help="number of looks for --sequential (default 10)")
    p.add_argument("--out", type=Path, required=True, help="report directory (created; resumed if it exists)")
    p.add_argument("--json", action="store_true", help="print one JSON object (report.json's) as the last line")
    p.set_defaults(func=run)


def _side_table(report: dict[str, Any], labels: tuple[str, str]) -> Table:
    from evaltk.report.validate_report import side_table

    t = Table(title=f"evaltk validate: {report['checkpoint']} on {report['env_id']}", show_header=True,
              header_style="bold")
    t.add_column("metric")
    t.add_column(labels[0], justify="right")
    t.add_column(labels[1], justify="right")
    for row in side_table(report):
        t.add_row(*row)
    return t


def _comparison_table(report: dict[str, Any]) -> Table:
    c = report["comparison"]
    title = ("fixed-N analysis of the episodes the looks used (ignores the stopping rule; not the verdict's)"
             if report.get("fixed_n_note") else "comparison (A = reference, B = sim)")
    t = Table(title=title, show_header=True, header_style="bold")
    t.add_column("quantity")
    t.add_column("value", justify="right")
    t.add_row(c["quantity"], f"{c['estimate']:,.4g}")
    t.add_row(f"{c['ci_level']:.0%} CI", f"[{c['ci'][0]:,.4g}, {c['ci'][1]:,.4g}]")
    t.add_row(f"{c['ci_tost_level']:.0%} TOST CI", f"[{c['ci_tost'][0]:,.4g}, {c['ci_tost'][1]:,.4g}]")
    t.add_row("margin region", f"({c['margin_region'][0]:,.4g}, {c['margin_region'][1]:,.4g}) "
              f"[{report['margin_kind']}]")
    t.add_row("design", report["design"])
    pairs = report["pairs"]
    t.add_row("rows paired by seed", "no (no seeds in the reference)" if pairs is None else
              f"{pairs['n_shared']} shared, {pairs['same']['return']} with the same return, "
              f"{pairs['same']['episode']} the same step for step")
    check = report["environments"]["check"]
    t.add_row("environment asked for", "the same on both sides" if check["same"] else
              "DIFFERENT: " + "; ".join(check["differences"]))
    return t


def _print_settings(console: Console, envs: dict[str, Any], section: dict[str, Any]) -> None:
    """Print what each side ran where it differs (the one settings diff), what a side did not report, --align."""
    from evaltk.report.validate_report import alignment_lines

    differing = [r for r in envs["rows"] if r["differs"]]
    if differing:
        t = Table(title="settings that differ (what each side ran)", show_header=True, header_style="bold")
        for name in ("setting", "sim", "reference"):
            t.add_column(name)
        for row in differing:
            t.add_row(row["setting"], str(row["sim"]), str(row["reference"]))
        console.print(t)
    else:
        print("settings that differ: none among those both sides report")
    for role, keys in envs["not_reported"].items():
        if keys:
            print(f"not reported by {role}: {', '.join(keys)}")
    for line in alignment_lines(section):
        print(line)
    if envs["note"]:
        print(f"note: {envs['note']}")


def run(args: argparse.Namespace) -> int:
    """Run both sides with a progress bar, compare, write the report, print the summary ending with the verdict."""
    from evaltk.evaluation.records import ScoreRow
    from evaltk.evaluation.validate import PreparedValidation, ValidateConfig, validate
    from evaltk.report.validate_report import write_report

    if args.baseline is not None and args.reference is not None:
        raise EvaltkError("--baseline TABLE replaces the reference run: drop --reference (or drop --baseline)")
    config = ValidateConfig(**request_args(args), rule=verdict_rule(args), sim=args.sim,
                            reference=args.reference or "gym", baseline=args.baseline, align=args.align)
    with Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=Console(stderr=True), transient=False) as bar:

        def start(prep: PreparedValidation) -> dict[str, Any]:
            """Print the policy's import caveats and add one bar per evaluated side, once every input is checked."""
            for side in list(prep.evaluations.values())[:1]:  # the sides share one policy: its caveats once
                print_import_caveats(side.settings.checkpoint, side.caveats, env=side.info.env,
                                     capped=args.max_episode_frames is not None)
            return {role: progress_for(bar.add_task(f"{role} ({p.simulator_name})", total=args.episodes,
                                                    completed=args.episodes - len(p.todo)))
                    for role, p in prep.evaluations.items()}

        def progress_for(task: Any) -> Any:
            def progress(row: ScoreRow | None, new_steps: int) -> None:
                if row is not None:
                    bar.advance(task)
            return progress

        validation = validate(config, start)
    write_report(validation)
    report = validation.to_dict()
    console = Console()
    console.print(_side_table(report, (validation.label("sim"), validation.label("reference"))))
    console.print(_comparison_table(report))
    _print_settings(console, report["environments"], report["simulator_settings"])
    print(f"explanation: {report['explanation']}")
    if report.get("fixed_n_note"):
        print(f"sequential: {report['sequential']['interval_line']}")
    print(f"episodes needed: {report['episodes_needed_line']}")
    for side in ("sim", "reference"):
        for note in report["sides"][side]["notes"]:
            print(f"note ({side}): {note}")
    print("wrote " + ", ".join(str(p) for p in validation.files.values()))
    print(report["verdict_line"])
    if args.json:
        emit_json(report)
    return 0
