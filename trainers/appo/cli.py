"""The command line of APPO on ViZDoom: its options, a run with progress lines, and ``--json``.

``python -m trainers.appo`` calls :func:`main`; ``evaltk train doom`` adds the same options with
:func:`add_arguments` and dispatches to :func:`run_from_args`. Importing this module is cheap:
torch and ViZDoom are imported when a run starts.
"""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Sequence

from evaltk.report.jsonline import emit_json
from trainers.appo import config
from trainers.appo.selfplay import config as selfplay_config
from trainers.common import config_cli
from trainers.common.config_cli import command_main
from trainers.common.run import ProcessSettings


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the APPO options (one per :class:`trainers.appo.config.AppoConfig` field) and ``--json``."""
    config.add_arguments(parser)
    selfplay_config.add_arguments(parser)
    parser.add_argument("--malloc-tuning", action=argparse.BooleanOptionalAction, default=True,
                        help="process-wide: raise glibc's mmap/trim thresholds so the learner's freed activation "
                             "memory is reused instead of returned to the kernel (default on; recorded in "
                             "config.json under process)")
    parser.add_argument("--gc-freeze", action=argparse.BooleanOptionalAction, default=True,
                        help="process-wide: gc.freeze() the objects alive after start-up so full collections do "
                             "not rescan them (default on; recorded in config.json under process)")
    parser.add_argument("--json", action="store_true", help="last stdout line: the run summary as JSON")
    demos = parser.add_argument_group("demonstrations and behaviour cloning (trainers/appo/demos.py, bc.py)")
    demos.add_argument("--record-demos", metavar="DIR", default=None,
                       help="record the scripted agent playing --scenario's observation and heads against bots into "
                            "DIR instead of training (resumes: the episodes in DIR are kept)")
    config_cli.add_arguments(demos, config.DemoSettings, flags=config.DEMO_FLAGS)
    demos.add_argument("--bc", metavar="DEMOS", default=None,
                       help="behaviour-clone the demonstrations in DEMOS into a fresh APPO model (the model options "
                            "above; --bc-streams episode streams of --rollout steps per SGD step) and write the "
                            "evaltk checkpoint OUT/policy instead of training by RL")
    config_cli.add_arguments(demos, config.BcSettings, flags=config.BC_FLAGS)


def process_settings(args: argparse.Namespace) -> ProcessSettings:
    """Return the process-wide settings chosen on the command line (both on unless ``--no-...``)."""
    return ProcessSettings(malloc_tuning=getattr(args, "malloc_tuning", True),
                           gc_freeze=getattr(args, "gc_freeze", True))


def run_from_args(args: argparse.Namespace) -> int:
    """Run APPO with the parsed options; with ``--json`` the last stdout line is the run summary."""
    from trainers.appo.runner import run

    cfg = config.config_from_args(args)
    if getattr(args, "record_demos", None):
        return _record_demos(cfg, args)
    if getattr(args, "bc", None):
        return _clone(cfg, args)
    if getattr(args, "self_play", None) or (getattr(args, "population", None) or 1) > 1:
        from trainers.appo.selfplay.cli import run_population

        return run_population(cfg, selfplay_config.config_from_args(args), as_json=getattr(args, "json", False),
                              process=process_settings(args))
    print(f"appo: scenario {cfg.scenario}, {cfg.num_workers} workers x {cfg.envs_per_worker} envs"
          f"{' (serial)' if cfg.serial else ''}, batch {cfg.batch_size}"
          f"{f', DAgger from {cfg.dagger_teacher}' if cfg.dagger_teacher else ''}, out {cfg.out}", flush=True)
    result = run(cfg, log=lambda line: print(line, flush=True), process=process_settings(args))
    print(f"done: {result.env_frames} frames in {result.seconds:.1f} s ({result.fps:.0f} fps), mean episode reward "
          f"{result.mean_episode_reward:.3f}, checkpoint {result.checkpoint}", flush=True)
    if getattr(args, "json", False):
        emit_json(dataclasses.asdict(result))
    return 0


def demo_settings(cfg: config.AppoConfig, args: argparse.Namespace) -> config.DemoSettings:
    """Return ``--record-demos``' settings: the ``--demo-*`` flags given, the APPO scenario, seed and time limit."""
    return config.DemoSettings(out=args.record_demos, scenario=cfg.scenario, seed=cfg.seed,
                               max_seconds=cfg.max_seconds, **config_cli.given_values(args, config.DEMO_FLAGS))


def bc_settings(cfg: config.AppoConfig, args: argparse.Namespace) -> config.BcSettings:
    """Return ``--bc``'s settings: the ``--bc-*`` flags given, ``--rollout`` steps by ``--bc-streams`` streams."""
    return config.BcSettings(demos=args.bc, seq_len=cfg.rollout, streams=cfg.bc_streams,
                             **config_cli.given_values(args, config.BC_FLAGS))


def _record_demos(cfg: config.AppoConfig, args: argparse.Namespace) -> int:
    from trainers.appo import demos

    settings = demo_settings(cfg, args)
    done = demos.record(settings, log=lambda line: print(line, flush=True))
    print(f"done: {len(done)} episodes recorded now, {sum(d['steps'] for d in done)} steps, in {args.record_demos}",
          flush=True)
    if getattr(args, "json", False):
        emit_json({"episodes": done, "out": args.record_demos})
    return 0


def _clone(cfg: config.AppoConfig, args: argparse.Namespace) -> int:
    from trainers.appo import bc

    settings = bc_settings(cfg, args)
    print(f"bc: demonstrations {args.bc}, scenario {cfg.scenario}, {settings.streams} streams x {settings.seq_len} "
          f"steps, out {cfg.out}", flush=True)
    result = bc.train(cfg, settings, log=lambda line: print(line, flush=True))
    print(f"done: {result['steps']} steps, {result['samples']} samples ({result['epochs']} passes over the episodes) "
          f"in {result['seconds']:.1f} s, checkpoint {result['checkpoint']}", flush=True)
    if getattr(args, "json", False):
        emit_json(result)
    return 0


def main(argv: Sequence[str] | None = None, *, prog: str = "python -m trainers.appo",
         description: str | None = None) -> int:
    """Parse the options, run, print the summary; returns the exit status (2 for bad input)."""
    return command_main(argv, prog=prog, description=description, add=add_arguments, run=run_from_args)
