"""``evaltk conformance``: conformance checks of gpu_env against ale-py.

``evaltk conformance lockstep --game G[,G2,...|all] --frames N --seed S --start {ale-state,boot} [--json]``
steps gpu_env and ale-py side by side from the same state and stops at the first frame where
reward, RAM, screen, lives, game over, truncation or the frame counters differ (the engine in
``conformance/lockstep.py``); ``--game all`` runs every playable ROM, one line each. Exit status 0
when every frame matched, 1 on a divergence, 2 on bad input.

``evaltk conformance lockstep --sim SIM --reference gym --env-id ID --steps N --seed S [--out DIR] [--json]``
steps two simulators of the registry (:mod:`evaltk.simulators`) env step by env step at deterministic
settings (``conformance/sim_lockstep.py``) and stops at the first difference in obs, reward, terminated,
truncated or lives (``--compare FIELD[,FIELD...]``: those only), writing both observations, a diff image
and the values to ``--out``. ``--profile`` runs every step instead and reports, per field, the first
differing step and the steps that differ (``conformance/sim_profile.py``), each field's first difference
in ``--out/FIELD/``.

``evaltk conformance run SUITE [--junit FILE]`` runs a suite; ``evaltk conformance record (--rom R | --checkpoint
CKPT) --frames N --seed S --out FILE`` records an ale-py trace (random play or a checkpoint's own play);
``evaltk conformance record-doom --scenario NAME --seed S --tics N [--checkpoint ...] --out FILE`` a ViZDoom trace.
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
    lock.add_argument("--game", default=None,
                      help="ale-py ROM id, a comma-separated list, or 'all' (104 ROMs): gpu_env against ale-py "
                           "frame by frame (or use --sim to compare two simulators env step by env step)")
    lock.add_argument("--sim", default=None, metavar="SIM",
                      help="compare simulator SIM (gpu_env, envpool, gym or MODULE:CALLABLE) with --reference at "
                           "deterministic settings, every env step (needs --env-id)")
    lock.add_argument("--reference", default="gym", metavar="SIM", help="the other side of --sim (default gym)")
    lock.add_argument("--env-id", default=None, help="with --sim: the gymnasium id both sides run, e.g. ALE/Pong-v5")
    lock.add_argument("--steps", type=int, default=2000, help="with --sim: env steps to compare (default 2000)")
    lock.add_argument("--skip-terminal-obs", action="store_true",
                      help="with --sim: do not compare the observation of a step that ends an episode (count the ones "
                           "that differ instead); gymnasium drops the last frame's screen there, EnvPool keeps it")
    lock.add_argument("--compare", default=None, metavar="FIELD[,FIELD...]",
                      help="with --sim: the fields compared, of obs, reward, terminated, truncated, lives "
                           "(default: all)")
    lock.add_argument("--profile", action="store_true",
                      help="with --sim: run every step instead of stopping at the first difference; report per "
                           "field the first differing step and how many steps differ (obs: the mean absolute "
                           "pixel difference), each field's first difference in --out/FIELD/")
    lock.add_argument("--out", default=None,
                      help="with --sim: where the first difference's observations, diff image and values go "
                           "(default: a temp folder)")
    lock.add_argument("--frames", type=int, default=5000, help="frames to compare (default 5000)")
    lock.add_argument("--seed", type=int, default=0, help="base seed of ALE random_seed and actions (evaltk.seeding)")
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
        description="Check SUITE, run every case (trace replays, transfer verdicts, ...), print one line per "
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

    register_recorders(actions)

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
    return 0 if counts["passed"] == len(results) else 1


def run_sim(args: argparse.Namespace) -> int:
    """Run ``conformance lockstep --sim``: exit 0 when identical, 1 on a difference."""
    from conformance.lockstep import LockstepError, default_png_dir
    from conformance.sim_lockstep import SimLockstepConfig, run_sim_lockstep
    from conformance.sim_profile import FIELDS, parse_compare

    if args.game is not None:
        raise LockstepInputError("--game (gpu_env against ale-py, frame by frame) and --sim (two simulators, env step "
                                 "by env step) are two modes: drop one")
    if args.env_id is None:
        raise LockstepInputError("--sim needs --env-id, the gymnasium id both sides run (e.g. ALE/Pong-v5)")
    if args.steps < 1:
        raise LockstepInputError(f"--steps must be >= 1, got {args.steps}")
    try:
        compare = FIELDS if args.compare is None else parse_compare(args.compare)
    except LockstepError as exc:
        raise LockstepInputError(str(exc)) from None
    out = Path(args.out) if args.out else default_png_dir()
    config = SimLockstepConfig(args.sim, args.env_id, args.steps, reference=args.reference, seed=args.seed,
                               terminal_obs=not args.skip_terminal_obs, compare=compare, profile=args.profile)
    result = run_sim_lockstep(config, out=out)
    print(result.summary(), flush=True)
    if result.profile is not None:
        for name, field in result.profile.fields.items():
            print(f"  {field.line(name)}")
            if field.files:
                print(f"    first difference: {Path(field.files['diff']).parent}/ (reference.png, sim.png, "
                      "diff.png, observations.npz, values.json)")
    elif result.first_difference is not None:
        for kind, path in result.first_difference.files.items():
            print(f"  {kind}: {path}")
    if args.json:
        emit_json(result.as_dict())
    return 0 if result.identical else 1


def run(args: argparse.Namespace) -> int:
    """Run ``conformance lockstep``."""
    from conformance.lockstep import LockstepConfig, LockstepError, default_png_dir, run_lockstep
    from conformance.report import playable_roms
    from gpu_env.errors import GpuEnvError

    if args.sim is not None:
        return run_sim(args)
    if args.compare is not None or args.profile:
        raise LockstepInputError("--compare and --profile go with --sim (two simulators, env step by env step): "
                                 "drop them, or compare with --sim SIM --env-id ID")
    if args.game is None:
        raise LockstepInputError("name a ROM with --game (gpu_env against ale-py) or two simulators with --sim SIM "
                                 "--env-id ID")
    games = playable_roms() if args.game == "all" else [g for g in args.game.split(",") if g]
    if not games:
        raise LockstepInputError(f"--game {args.game!r}: name a ROM id, a comma-separated list or 'all'")
    png_dir = Path(args.png_dir) if args.png_dir else default_png_dir()
    configs = []
    for game in games:  # every game's settings are checked before the first one runs
        try:
            configs.append(LockstepConfig(game, args.frames, seed=args.seed, start=args.start, num_envs=args.num_envs,
                                          actions=args.actions, repeat_action_probability=args.sticky,
                                          frameskip=args.frameskip, mode=args.mode, difficulty=args.difficulty,
                                          warmup_frames=args.warmup))
        except LockstepError as exc:
            raise LockstepInputError(f"{game}: {exc}") from exc
    results = []
    for config in configs:
        try:
            result = run_lockstep(config, png_dir=png_dir)
        except (LockstepError, GpuEnvError, ValueError) as exc:
            raise LockstepInputError(f"{config.game}: {exc}") from exc
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


def register_recorders(actions: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``record-doom`` (a ViZDoom trace for ``doom_trace`` cases) and ``record`` (an ale-py trace)."""
    doom = actions.add_parser(
        "record-doom", help="record a ViZDoom episode tic by tic into a trace file (kind = \"doom_trace\")",
        description="Play SCENARIO for --tics tics with the actions of --checkpoint and write per tic the buttons, "
        "reward, game variables, done flag and buffer hashes, with a versioned header and a digest.")
    doom.add_argument("--scenario", required=True, help="a scenario of evaltk.envs.doom.SCENARIOS, e.g. basic")
    doom.add_argument("--seed", type=int, default=0, help="ViZDoom seed and the agent's seed (default 0)")
    doom.add_argument("--tics", type=int, required=True, help="tics to record (new episodes start after each end)")
    doom.add_argument("--checkpoint", default="builtin:random",
                      help="builtin:random (default), builtin:scripted or a Doom checkpoint directory")
    doom.add_argument("--frameskip", type=int, default=None, help="tics per decision (default: the scenario's)")
    doom.add_argument("--buffers", default=None,
                      help="extra buffers to hash, comma-separated: depth,labels (default: those the agent reads)")
    doom.add_argument("--out", required=True, help="trace file to write (.npz)")
    doom.add_argument("--json", action="store_true", help="print one JSON object as the last line")
    doom.set_defaults(func=run_record_doom)

    atari = actions.add_parser(
        "record", help="record an ale-py trace of random play (--rom) or of a checkpoint's own play (--checkpoint)",
        description="Record --frames frames on ale-py, every frame's action, reward, RAM, screen hash, lives and "
        "game over, for a trace case (replayed on gpu_env with full state equality).")
    source = atari.add_mutually_exclusive_group(required=True)
    source.add_argument("--checkpoint", help="an Atari checkpoint: its own play through its own preprocessing")
    source.add_argument("--rom", help="an ale-py ROM id: uniformly random full-set actions, sticky actions 0.25")
    atari.add_argument("--frames", type=int, required=True, help="emulator frames to record")
    atari.add_argument("--seed", type=int, default=0, help="gymnasium reset seed and policy seed (or ALE seed)")
    atari.add_argument("--out", required=True, help="trace file to write (.npz)")
    atari.add_argument("--json", action="store_true", help="print one JSON object as the last line")
    atari.set_defaults(func=run_record)


def run_record(args: argparse.Namespace) -> int:
    """Run ``conformance record``."""
    from conformance.policy_trace import record_policy
    from conformance.trace import record_ale

    if args.seed < 0:
        raise LockstepInputError(f"--seed {args.seed} must be >= 0")
    if args.checkpoint is not None:
        trace = record_policy(args.checkpoint, frames=args.frames, seed=args.seed)
    else:
        trace = record_ale(args.rom, frames=args.frames, seed=args.seed)
    path = trace.save(args.out)
    who = args.checkpoint if args.checkpoint is not None else "uniformly random actions"
    print(f"recorded {trace.frames} frames of {trace.header['rom']} (seed {args.seed}, {int(trace.reset.sum())} game "
          f"overs, score {int(trace.reward.sum())}) with {who} into {path} ({path.stat().st_size} bytes)")
    if args.json:
        emit_json({"out": str(path), "frames": trace.frames, "rom": trace.header["rom"], "seed": args.seed,
                   "score": int(trace.reward.sum()), "game_overs": int(trace.reset.sum()),
                   "bytes": path.stat().st_size})
    return 0


def run_record_doom(args: argparse.Namespace) -> int:
    """Run ``conformance record-doom``."""
    from conformance.doom_agents import buffers_for, decider
    from conformance.doom_trace import record_doom
    from evaltk.envs.doom import get_scenario

    get_scenario(args.scenario)
    if args.seed < 0:
        raise LockstepInputError(f"--seed {args.seed} must be >= 0")
    if args.frameskip is not None and args.frameskip < 1:
        raise LockstepInputError(f"--frameskip {args.frameskip} must be >= 1")
    buffers = buffers_for(args.checkpoint) if args.buffers is None else tuple(b for b in args.buffers.split(",") if b)
    trace = record_doom(args.scenario, seed=args.seed, tics=args.tics, agent=args.checkpoint, buffers=buffers,
                        decide=decider(args.checkpoint, args.scenario, seed=args.seed), frameskip=args.frameskip)
    path = trace.save(args.out)
    a = trace.arrays
    print(f"recorded {trace.tics} tics of {args.scenario} (seed {args.seed}, frameskip {trace.header['frameskip']}, "
          f"{int(a['done'].sum())} episode ends, reward {float(a['reward'].sum()):g}) with {args.checkpoint} "
          f"on ViZDoom {trace.header['vizdoom_version']} into {path} ({path.stat().st_size} bytes)")
    if args.json:
        emit_json({"out": str(path), "tics": trace.tics, "scenario": args.scenario, "seed": args.seed,
                   "frameskip": trace.header["frameskip"], "bytes": path.stat().st_size,
                   "vizdoom_version": trace.header["vizdoom_version"]})
    return 0
