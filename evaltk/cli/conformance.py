"""``evaltk conformance``: conformance checks of gpu_env against ale-py.

``evaltk conformance lockstep --game G --frames N --seed S --start {ale-state,boot} [--json]`` steps
gpu_env and ale-py side by side from the same state and stops at the first frame where RAM,
screen, reward, lives or game over differ (see ``conformance/lockstep.py``). Exit status 0 when
every frame matched, 1 on a divergence, 2 on bad input.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from evaltk.cli.output import emit_json
from evaltk.errors import EvaltkError


class LockstepInputError(EvaltkError):
    """A lockstep run that cannot start (unknown game, bad numbers, a start mode not built yet)."""


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``conformance`` subcommand and its ``lockstep`` action."""
    parser = subparsers.add_parser("conformance", help="check gpu_env against ale-py")
    actions = parser.add_subparsers(dest="conformance_command", metavar="ACTION")
    lock = actions.add_parser(
        "lockstep",
        help="step gpu_env and ale-py side by side and report the first divergence",
        description="Start ale-py (sticky actions off), play a random number of random frames, import the state "
        "into gpu_env, then play FRAMES random actions on both and compare every frame.",
    )
    lock.add_argument("--game", required=True, help="ale-py ROM id, e.g. pong")
    lock.add_argument("--frames", type=int, default=5000, help="frames to compare (default 5000)")
    lock.add_argument("--seed", type=int, default=0, help="seed of the warm-up length and the random actions")
    lock.add_argument("--start", choices=("ale-state", "boot"), default="ale-state",
                      help="ale-state: import ale-py's state; boot: both start from their own loadROM")
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
    suite.add_argument("suite", help="suite file, e.g. suites/reference_drift.toml")
    suite.add_argument("--junit", default=None, help="write a JUnit XML report here")
    suite.add_argument("--workdir", default="runs/conformance", help="scratch folder: recorded traces, evaluations")
    suite.add_argument("--json", action="store_true", help="print one JSON object as the last line")
    suite.set_defaults(func=run_suite_command)

    def usage(_: argparse.Namespace) -> int:
        parser.print_help()
        return 2

    parser.set_defaults(func=usage)


def run_suite_command(args: argparse.Namespace) -> int:
    """Run ``conformance run SUITE``."""
    from conformance.suite import Outcome, load_suite, run_case, write_junit

    suite = load_suite(args.suite)
    workdir = Path(args.workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    print(f"suite {suite.name}: {len(suite.cases)} cases ({suite.path})")
    results = []
    for case in suite.cases:
        result = run_case(case, workdir)
        results.append(result)
        outcome = result.outcome.value.upper()
        print(f"  {outcome:8s} {case.kind:9s} {case.name}: {result.message} ({result.seconds:.1f} s)", flush=True)
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
    from conformance.lockstep import default_png_dir, run_lockstep
    from gpu_env.errors import GpuEnvError

    if args.frames < 1:
        raise LockstepInputError(f"--frames {args.frames}: give a positive number of frames")
    if args.warmup is not None and args.warmup < 0:
        raise LockstepInputError(f"--warmup {args.warmup}: give 0 or more frames")
    png_dir = Path(args.png_dir) if args.png_dir else default_png_dir()
    try:
        result = run_lockstep(args.game, args.frames, args.seed, start=args.start, warmup_frames=args.warmup,
                              png_dir=png_dir)
    except GpuEnvError as exc:
        raise LockstepInputError(str(exc)) from exc
    except (ValueError, KeyError) as exc:
        raise LockstepInputError(str(exc)) from exc
    if result.diverged:
        print(f"{args.game}: DIVERGED at frame {result.divergence_frame} of {args.frames} "
              f"(after {result.warmup_frames} warm-up frames, seed {args.seed}): {', '.join(result.fields)}")
        if result.ram_diffs:
            shown = ", ".join(f"RAM[0x{i:02X}] ale-py {a} gpu_env {b}" for i, a, b in result.ram_diffs[:16])
            print(f"  RAM bytes that differ ({len(result.ram_diffs)}): {shown}")
        print(f"  differing pixels: {result.pixel_diffs}")
        if result.png:
            print(f"  image (reference | ours | difference): {result.png}")
    else:
        print(f"{args.game}: {result.frames_compared} frames identical ({', '.join(result.compared)}; "
              f"{result.warmup_frames} warm-up frames, {result.reimports} re-imports after game over, "
              f"seed {args.seed})")
    if args.json:
        emit_json(result.as_dict())
    return 1 if result.diverged else 0
