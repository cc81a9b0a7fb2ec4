"""``evaltk evaluate``: run a checkpoint (or a builtin policy) for N episodes on a reference env."""

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
    add_format_option,
    add_request_options,
    request_args,
    verdict_rule,
)
from evaltk.cli.output import emit_json, print_import_caveats
from evaltk.errors import EvaltkError
from evaltk.executor.options import add_executor_arguments

EPILOG = """examples:
  evaltk evaluate builtin:scripted --env-id ALE/Breakout-v5 --episodes 10 --seed 0 --num-envs 4 --out runs/quickstart
  evaltk evaluate runs/a2c/checkpoints/final --episodes 100 --out runs/a2c_eval --json
  evaltk evaluate runs/appo/checkpoints/ckpt_000000196_401408 --episodes 50 --seed 0 --num-envs 4 --out runs/doom_eval
  evaltk evaluate builtin:random --env-id basic --episodes 20 --out runs/doom_random
  evaltk evaluate ppo_breakout.zip --env-id BreakoutNoFrameskip-v4 --stochastic --max-episode-frames 27000 --out runs/x
  evaltk evaluate train_dir/doom_basic_run --episodes 50 --out runs/sf_basic    # a Sample Factory experiment folder

Another library's checkpoint is imported on the fly (docs/importers.md); what its library did that
the reference env does not (FIRE on reset, wrappers, ...) is printed before the first episode.

Rows go to OUT/episodes.csv as episodes finish; re-running the same command resumes.
"""


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``evaluate`` subcommand."""
    p = add_command(subparsers, "evaluate",
                    help="run a policy for N episodes on a reference env and write a score table",
                    description="Run CKPT for N seeded episodes on the reference environment (gymnasium + ale-py for "
                                "Atari, ViZDoom for Doom) and write one row per episode to OUT/episodes.csv, "
                                "resumably.", epilog=EPILOG)
    add_checkpoint_argument(p, builtins="random, scripted (also builtin:random, ...)")
    add_format_option(p, dest="checkpoint_format",
                      help="CKPT is another library's checkpoint file in this format (default: detected; see "
                           "evaltk import --help)")
    add_request_options(p, env_id_help="gymnasium env id, e.g. ALE/Breakout-v5, or a ViZDoom scenario, e.g. basic "
                                       "(required for builtins; default: the checkpoint's)",
                        episodes_help="number of episodes (default 20)",
                        seed_help="base seed; episode i gets a recorded seed derived from it",
                        workers_help="worker processes stepping the envs (default: min(num-envs, CPUs); 0 = "
                                     "in-process)")
    p.add_argument("--sim", "--against", dest="sim", default="gym", metavar="SIM",
                   help="simulator: gym (default: gymnasium + ale-py, or ViZDoom for Doom envs), gpu_env, envpool "
                        "(pip install 'evaltk[envpool]') or MODULE:CALLABLE, your own factory (docs/simulators.md); "
                        "--against is an alias of --sim")
    p.add_argument("--fast-reset", action="store_true",
                   help="opt-in, Atari only: seeded resets restore a cached post-load ALE state instead of reloading "
                        "the ROM (checked byte-identical at start; same rows, less CPU per episode)")
    p.add_argument("--repeat-action-probability", type=float, default=None, metavar="P",
                   help="Atari only: sticky-action probability (default: the env's own, 0.25 for v5 ids)")
    add_executor_arguments(p)
    seq = p.add_argument_group("until a verdict (group-sequential TOST against a baseline table)")
    seq.add_argument("--until-verdict", action="store_true",
                     help="evaluate in --looks batches up to --max-episodes, stopping once the verdict against "
                          "--baseline is decided; the looks go to OUT/sequential.json and OUT/sequential.md")
    seq.add_argument("--baseline", type=Path, help="reference score table (A) for --until-verdict")
    seq.add_argument("--margin", type=float, help="equivalence margin for --until-verdict")
    seq.add_argument("--margin-kind", choices=("absolute", "sd"), default="absolute",
                     help="units of --margin (default absolute)")
    seq.add_argument("--max-episodes", type=int, help="episode budget for --until-verdict")
    seq.add_argument("--looks", type=int, default=10, help="number of looks (default 10)")
    seq.add_argument("--alpha", type=float, default=0.05, help="level of each TOST side (default 0.05)")
    seq.add_argument("--allow-different-envs", action="store_true",
                     help="accept a baseline from another env id / spec (the report says so)")
    p.add_argument("--out", type=Path, required=True, help="output directory (created; resumed if it exists)")
    p.add_argument("--json", action="store_true", help="print one JSON object as the last stdout line")
    p.set_defaults(func=run)


def _table(summary: dict[str, Any]) -> Table:
    def fmt(v: Any, digits: int = 2) -> str:
        return "-" if v is None else f"{v:,.{digits}f}" if isinstance(v, float) else str(v)

    t = Table(title=f"evaltk evaluate: {summary['checkpoint']} on {summary['env_id']} ({summary['simulator']})",
              show_header=True, header_style="bold")
    t.add_column("metric")
    t.add_column("value", justify="right")
    ci = summary["ci"]
    t.add_row("episodes", f"{summary['n_episodes']} ({summary['new_episodes']} new, "
              f"{summary['resumed_episodes']} resumed)")
    t.add_row("mean return", fmt(summary["mean_return"]))
    t.add_row(f"{summary['ci_level']:.0%} CI of the mean", "-" if ci is None else f"[{ci[0]:,.2f}, {ci[1]:,.2f}]")
    t.add_row("std / median", f"{fmt(summary['std_return'])} / {fmt(summary['median_return'])}")
    t.add_row("min / max", f"{fmt(summary['min_return'])} / {fmt(summary['max_return'])}")
    t.add_row("mean length (frames)", fmt(summary["mean_frames"], 0))
    t.add_row("truncated episodes", str(summary["n_truncated"]))
    rate = summary["env_steps_per_s"]
    t.add_row("this run", f"{summary['env_steps']:,} env steps in {summary['wall_s']:.1f} s"
              + ("" if rate is None else f" ({rate:,.0f} steps/s)"))
    t.add_row("base seed", str(summary["seed"]))
    t.add_row("score table", summary["out"])
    return t


def run(args: argparse.Namespace) -> int:
    """Run the evaluation with a progress bar, then print the summary table (and JSON with --json)."""
    from evaltk.evaluation.plan import EvalConfig, plan
    from evaltk.evaluation.records import ScoreRow
    from evaltk.evaluation.run import run_plan

    config = EvalConfig(**request_args(args), simulator=args.sim, fast_reset=args.fast_reset,
                        repeat_action_probability=args.repeat_action_probability,
                        checkpoint_format=args.checkpoint_format, executor=args.executor, ray_address=args.ray_address)
    if args.until_verdict:
        return _run_until_verdict(args, config)
    prep = plan(config)  # every bad-input error surfaces here, before the progress bar
    print_import_caveats(prep.settings.checkpoint, prep.caveats, env=prep.info.env,
                         capped=config.max_episode_frames is not None)
    err = Console(stderr=True)
    returns: list[float] = [r.episode_return for r in prep.old_rows if r.index < args.episodes]
    with Progress(TextColumn("[bold]episodes"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.fields[stats]}"),
                  TimeElapsedColumn(), console=err, transient=False) as bar:
        task = bar.add_task("eval", total=args.episodes, completed=len(returns), stats="")
        steps = [0]

        def progress(row: ScoreRow | None, new_steps: int) -> None:
            steps[0] += new_steps
            if row is not None:
                returns.append(row.episode_return)
                bar.advance(task)
            mean = f"mean return {sum(returns) / len(returns):.2f}" if returns else ""
            elapsed = bar.tasks[task].elapsed or 0.0
            rate = f" • {steps[0] / elapsed:,.0f} steps/s" if elapsed > 0 else ""
            bar.update(task, stats=mean + rate)

        result = run_plan(prep, progress)
        bar.update(task, completed=result.summary["n_episodes"])
    Console().print(_table(result.summary))
    if args.json:
        s = result.summary
        emit_json({"command": "evaluate", "n_episodes": s["n_episodes"], "mean_return": s["mean_return"],
                   "ci": s["ci"], "out": s["out"], "summary": s})
    return 0


def _run_until_verdict(args: argparse.Namespace, config: Any) -> int:
    """``--until-verdict``: batches of episodes, one look after each, until the verdict is decided."""
    missing = [flag for flag, value in (("--baseline", args.baseline), ("--margin", args.margin),
                                        ("--max-episodes", args.max_episodes)) if value is None]
    if missing:
        raise EvaltkError(f"--until-verdict needs {', '.join(missing)}; e.g. --baseline runs/ref/episodes.csv "
                          "--margin 0.5 --margin-kind sd --max-episodes 100")
    from evaltk.evaluation.until_verdict import UntilVerdictConfig, evaluate_until_verdict

    uv = UntilVerdictConfig(baseline=args.baseline, rule=verdict_rule(args, sequential=True),
                            max_episodes=args.max_episodes)

    def planned(prep: Any) -> None:
        """Print the policy's import caveats once it is planned, before the first episode."""
        print_import_caveats(prep.settings.checkpoint, prep.caveats, env=prep.info.env,
                             capped=config.max_episode_frames is not None)

    result = evaluate_until_verdict(config, uv, on_look=lambda look: print(look.summary(), flush=True),
                                    on_plan=planned)
    from evaltk.evaluation.scores import TABLE_FILE
    from evaltk.report.comparison_report import write_sequential_report

    payload = result.to_dict()
    payload["inputs"] = {"a": str(uv.baseline), "b": str(config.out / TABLE_FILE)}
    write_sequential_report(payload, config.out)
    print(f"  {result.reason}")
    if result.interval_line():
        print(f"  {result.interval_line()}")
    print(result.verdict_line())
    print(f"wrote {args.out / 'sequential.json'}, {args.out / 'sequential.md'}")
    if args.json:
        emit_json({"command": "evaluate", "until_verdict": True, **result.to_dict()})
    return 0
