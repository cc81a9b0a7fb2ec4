"""``evaltk conformance``: conformance checks of gpu_env against ale-py.

``evaltk conformance lockstep --game G[,G2,...|all] --frames N --seed S --start {ale-state,boot} [--json]``
steps gpu_env and ale-py side by side from the same state and stops at the first frame where
reward, RAM, screen, lives, game over, truncation or the frame counters differ (the engine in
``conformance/lockstep.py``); ``--game all`` runs every playable ROM, one line each. Exit status 0
when every frame matched, 1 on a divergence, 2 on bad input.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from evaltk.cli.output import emit_json
from evaltk.errors import EvaltkError
from evaltk.executor.options import add_executor_arguments


class LockstepInputError(EvaltkError):
    """A lockstep run that cannot start (unknown game, bad numbers, a start mode not built yet)."""


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``conformance`` subcommand and its ``lockstep`` action."""
    parser = subparsers.add_parser("conformance", help="check gpu_env against ale-py")
    actions = parser.add_subparsers(dest="conformance_command", metavar="ACTION")
    lock = actions.add_parser(
        "lockstep",
        help="step gpu_env and ale-py side by side and report the first divergence",
        description="Step gpu_env and ale-py from the same start (an imported ale-py state, or both sides' own "
        "loadROM) with the same random actions and compare every field every frame.",
    )
    lock.add_argument("--game", required=True, help="ale-py ROM id, a comma-separated list, or 'all' (104 ROMs)")
    lock.add_argument("--frames", type=int, default=5000, help="frames to compare (default 5000)")
    lock.add_argument("--seed", type=int, default=0, help="ALE random_seed (env i: seed + i) and action/warm-up seed")
    lock.add_argument("--start", choices=("ale-state", "boot"), default="ale-state",
                      help="ale-state: import ale-py's state; boot: both start from their own loadROM")
    lock.add_argument("--actions", choices=("minimal", "full"), default="minimal",
                      help="draw random actions from the minimal (default) or the full 18-action set")
    lock.add_argument("--sticky", type=float, default=0.0,
                      help="repeat_action_probability (boot only; default 0)")
    lock.add_argument("--num-envs", type=int, default=1, help="environments per batch (default 1)")
    lock.add_argument("--frameskip", type=int, default=1, help="ALE frame_skip (default 1)")
    lock.add_argument("--mode", type=int, default=None, help="ALE setMode (default: the ROM's)")
    lock.add_argument("--difficulty", type=int, default=None, help="ALE setDifficulty (default: the ROM's)")
    lock.add_argument("--warmup", type=int, default=None, help="warm-up frames before the import (default: random)")
    lock.add_argument("--png-dir", default=None, help="where to write the difference PNG (default: a temp folder)")
    lock.add_argument("--json", action="store_true", help="print one JSON object as the last line")
    lock.set_defaults(func=run)

    suite = actions.add_parser(
        "run",
        help="run a declarative suite (suites/*.toml) and write JUnit XML",
        description="Validate SUITE, run every case (trace replays, transfer verdicts, ...), print one line per "
        "case and exit 0 only if all passed.",
    )
    suite.add_argument("suite", nargs="?", default=None, help="suite file, e.g. suites/reference_drift.toml")
    suite.add_argument("--builtin", metavar="NAME", default=None,
                       help="a suite shipped with evaltk instead of a file, e.g. gpu_env_traces (see `evaltk shipped`)")
    suite.add_argument("--junit", default=None, help="write a JUnit XML report here")
    suite.add_argument("--workdir", default="runs/conformance", help="scratch folder: recorded traces, evaluations")
    suite.add_argument("--json", action="store_true", help="print one JSON object as the last line")
    add_executor_arguments(suite, default=None)
    suite.set_defaults(func=run_suite_command)

    def usage(_: argparse.Namespace) -> int:
        parser.print_help()
        return 2

    parser.set_defaults(func=usage)


def _suite_file(args: argparse.Namespace) -> str | Path:
    """Return the suite file ``run`` names: SUITE, or the shipped suite of ``--builtin``; exactly one of the two."""
    from evaltk.shipped import suite_path

    if (args.suite is None) == (args.builtin is None):
        raise EvaltkError("conformance run: name a suite file (SUITE) or a shipped suite (--builtin NAME), "
                          "not both and not neither; `evaltk shipped` lists the shipped ones")
    return suite_path(args.builtin) if args.builtin is not None else str(args.suite)


def run_suite_command(args: argparse.Namespace) -> int:
    """Run ``conformance run SUITE``."""
    from conformance.suite import Outcome, load_suite, stream_suite, suite_executor, write_junit

    suite = load_suite(_suite_file(args))
    workdir = Path(args.workdir)
    with suite_executor(suite, args.executor, args.ray_address) as executor:
        print(f"suite {suite.name}: {len(suite.cases)} cases ({suite.path}; executor {executor.name})")
        by_name = {}
        for result in stream_suite(suite, workdir, executor):  # as they finish; the JUnit file keeps suite order
            by_name[result.case.name] = result
            outcome = result.outcome.value.upper()
            print(f"  {outcome:8s} {result.case.kind:9s} {result.case.name}: {result.message} "
                  f"({result.seconds:.1f} s)", flush=True)
    results = [by_name[case.name] for case in suite.cases]
    counts = {o.value: sum(r.outcome is o for r in results) for o in Outcome}
    print(", ".join(f"{n} {k}" for k, n in counts.items()))
    junit = write_junit(suite, results, args.junit) if args.junit else None
    if args.json:
        emit_json({"suite": suite.name, **counts, "junit": str(junit) if junit else None,
                   "cases": [{"name": r.case.name, "kind": r.case.kind, "outcome": r.outcome.value,
                              "message": r.message, "seconds": round(r.seconds, 3), **dict(r.details)}
                             for r in results]})
    return 0 if counts["passed"] + counts["skipped"] == len(results) else 1


def run(args: argparse.Namespace) -> int:
    """Run ``conformance lockstep``."""
    from conformance.lockstep import LockstepConfig, LockstepError, default_png_dir, run_lockstep
    from conformance.report import playable_roms
    from gpu_env.errors import GpuEnvError

    games = playable_roms() if args.game == "all" else [g for g in args.game.split(",") if g]
    if not games:
        raise LockstepInputError(f"--game {args.game!r}: name a ROM id, a comma-separated list or 'all'")
    png_dir = Path(args.png_dir) if args.png_dir else default_png_dir()
    results = []
    for game in games:
        try:
            config = LockstepConfig(game, args.frames, seed=args.seed, start=args.start, num_envs=args.num_envs,
                                    actions=args.actions, repeat_action_probability=args.sticky,
                                    frameskip=args.frameskip, mode=args.mode, difficulty=args.difficulty,
                                    warmup_frames=args.warmup)
            result = run_lockstep(config, png_dir=png_dir)
        except (LockstepError, GpuEnvError, ValueError) as exc:
            raise LockstepInputError(f"{game}: {exc}") from exc
        results.append(result)
        print(result.summary(), flush=True)
        if result.divergence is not None and result.divergence.png:
            print(f"  image (reference | ours | difference): {result.divergence.png}")
    failed = sum(r.diverged for r in results)
    if len(results) > 1:
        print(f"{len(results) - failed}/{len(results)} ROMs identical over {args.frames} frames "
              f"({args.start}, seed {args.seed})")
    if args.json:
        emit_json(results[0].as_dict() if len(results) == 1 else
                  {"games": len(results), "diverged": failed, "results": [r.as_dict() for r in results]})
    return 1 if failed else 0
