"""``evaltk tournament {gauntlet,round-robin,match}``: Doom matches, ratings with intervals, SPRT.

Examples::

    evaltk tournament gauntlet --agent random --bots 1 --matches 20 --json
    evaltk tournament round-robin --agents scripted random ckpt/ --matches 10 --bots 1
    evaltk tournament match scripted random --sprt --elo0 0 --elo1 100 --matches 200 --json
    evaltk tournament verify-demos evaltk-tournaments/match-<hash> --json
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import TYPE_CHECKING

from evaltk.cli.args import add_actions_option, add_command, add_rules_argument, command_entry_points, seed_type
from evaltk.cli.output import emit_json, play_tournament, print_agent_caveats
from evaltk.errors import TournamentError
from evaltk.executor.options import add_executor_arguments
from evaltk.policies import builtin_name
from evaltk.tournament.match import SUPPORTED_MAPS

if TYPE_CHECKING:  # formats, report and run import scipy: only when a tournament runs, not at CLI start-up
    from evaltk.tournament.formats import TournamentConfig


FORMAT_GROUP = "evaltk_tournament_formats"
"""Entry points ``NAME = "module:register"`` adding a format to ``evaltk tournament`` (``population``: trainers')."""


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--bots", type=int, default=0, help="ViZDoom bots added to every match (gauntlet: at least 1)")
    p.add_argument("--bot-names", nargs="+", default=[], metavar="NAME",
                   help="bots to add, by name from ViZDoom's bots.cfg (default: drawn per match from the seed)")
    p.add_argument("--map", dest="maps", nargs="+", default=["map01"], choices=SUPPORTED_MAPS,
                   help="cig.wad map(s), cycled over matches (default map01)")
    p.add_argument("--timelimit", type=float, default=4.0, help="game minutes per match (0 = none; default 4)")
    p.add_argument("--fraglimit", type=int, default=0, help="frags that end a match (0 = none)")
    p.add_argument("--frameskip", type=int, default=4, help="tics per agent decision (default 4)")
    p.add_argument("--seed", type=seed_type, default=0, help="tournament seed: engine seeds, bot draws, policy RNGs")
    p.add_argument("--record", action="store_true", help="record a demo (.lmp) of every match on the host")
    p.add_argument("--concurrency", type=int, default=os.cpu_count() or 1,
                   help="matches at once (default: CPU cores)")
    p.add_argument("--match-timeout", type=float, default=300.0,
                   help="wall seconds before a match is voided, its processes killed and replayed (default 300)")
    p.add_argument("--max-attempts", type=int, default=3, help="tries per match before the tournament stops")
    p.add_argument("--out", type=Path, default=None,
                   help="output directory (results.jsonl, logs, reports); re-running with it resumes, a larger "
                        "--matches extends it (default: ./evaltk-tournaments/<format>-<hash of the settings but "
                        "--matches>)")
    p.add_argument("--json", action="store_true", help="print the summary as one JSON object on the last line")
    add_rules_argument(p)
    add_actions_option(p)
    add_executor_arguments(p)


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``tournament`` subcommand and its formats."""
    parser = add_command(subparsers, "tournament", help="Doom tournaments: agents vs bots and each other",
                         description=__doc__)
    formats = parser.add_subparsers(dest="format", metavar="FORMAT", required=True)
    g = formats.add_parser("gauntlet", help="one agent against bots, N matches")
    g.add_argument("--agent", required=True,
                   help="random, scripted, a checkpoint directory or hf://ORG/REPO[@REVISION][/PATH]")
    g.add_argument("--matches", type=int, default=100, help="matches to play (default 100)")
    _common(g)
    rr = formats.add_parser("round-robin", help="every pair of agents plays --matches games (slots swapped in pairs)")
    rr.add_argument("--agents", nargs="+", required=True, help="two or more agents")
    rr.add_argument("--matches", type=int, default=10, help="games per pair of agents (default 10)")
    _common(rr)
    m = formats.add_parser("match", help="A against B head to head, optionally stopped by an SPRT")
    m.add_argument("a", help="first agent (the SPRT tests whether it is stronger)")
    m.add_argument("b", help="second agent")
    m.add_argument("--matches", type=int, default=200, help="games, or the maximum with --sprt (default 200)")
    m.add_argument("--sprt", action="store_true", help="stop as soon as the SPRT accepts H0 or H1")
    m.add_argument("--elo0", type=float, default=0.0, help="SPRT H0 Elo (logistic; default 0)")
    m.add_argument("--elo1", type=float, default=50.0, help="SPRT H1 Elo (logistic; default 50)")
    m.add_argument("--alpha", type=float, default=0.05, help="SPRT false-positive rate (default 0.05)")
    m.add_argument("--beta", type=float, default=0.05, help="SPRT false-negative rate (default 0.05)")
    m.add_argument("--pairs", action="store_true",
                   help="SPRT on game pairs (same seed, slots swapped; pentanomial) instead of single games")
    _common(m)
    for sub in (g, rr, m):
        sub.set_defaults(func=run)
    v = formats.add_parser("verify-demos", help="replay the recorded demos of a tournament and compare frags")
    v.add_argument("out", type=Path, help="a tournament output directory (played with --record)")
    v.add_argument("--timeout", type=float, default=120.0, help="wall seconds per replay (default 120)")
    v.add_argument("--json", action="store_true", help="print the result as one JSON object on the last line")
    v.set_defaults(func=run_verify_demos)
    for entry in command_entry_points(FORMAT_GROUP).values():  # `population`, from trainers
        entry.load()(formats)


def _agents(args: argparse.Namespace) -> tuple[str, ...]:
    """Return the agents as given on the command line."""
    if args.format == "gauntlet":
        return (args.agent,)
    if args.format == "round-robin":
        return tuple(args.agents)
    return (args.a, args.b)


def agent_path(agent: str, actions: str | None = None) -> str:
    """Return ``agent`` as the players load it: a built-in name or an absolute evaltk checkpoint directory.

    A location (:mod:`evaltk.locations`) is resolved: ``hf://`` fetched, another library's file imported
    (acting as ``actions`` says: ``greedy``, ``sample``, or None for its library's default).
    """
    from evaltk.locations import local_checkpoint

    return local_checkpoint(agent, actions=actions).ref


def config_from_args(args: argparse.Namespace) -> TournamentConfig:
    """Build the tournament config from parsed arguments.

    Every setting, and every agent as typed (:func:`evaltk.locations.check`), is checked before any agent is
    fetched from the Hub or imported from another library.
    """
    import dataclasses

    from evaltk.locations import check
    from evaltk.tournament.formats import SprtConfig, TournamentConfig

    typed = _agents(args)
    sprt = None
    if getattr(args, "sprt", False):
        sprt = SprtConfig(elo0=args.elo0, elo1=args.elo1, alpha=args.alpha, beta=args.beta, pairs=args.pairs)
    config = TournamentConfig(format=args.format, agents=typed, matches=args.matches, bots=args.bots,
                              bot_names=tuple(args.bot_names), maps=tuple(args.maps), timelimit_min=args.timelimit,
                              fraglimit=args.fraglimit, frameskip=args.frameskip, seed=args.seed, record=args.record,
                              sprt=sprt)
    config.check()
    for agent in typed:
        check(agent, what="agent")
    config = dataclasses.replace(config, agents=tuple(agent_path(a, args.actions) for a in typed))
    config.check()  # two names of one checkpoint repeat once resolved
    for agent, path in zip(typed, config.agents, strict=True):
        if builtin_name(path) is None:
            _check_checkpoint(agent, path)
    return config


def _check_checkpoint(agent: str, path: str) -> None:
    """Fail fast, before any match starts, on an agent (typed as ``agent``) that is no checkpoint or not for Doom."""
    from evaltk.locations import not_a_checkpoint

    if not (Path(path) / "policy.json").is_file():
        raise not_a_checkpoint(agent, what="agent")
    from evaltk.checkpoint import load

    family = load(path).spec.env_spec.family
    if family != "doom":
        raise TournamentError(f"checkpoint {agent} was made for env family {family!r}; tournaments play Doom: "
                              "pass a Doom checkpoint (e.g. from trainers.appo)")


def run(args: argparse.Namespace) -> int:
    """Run the tournament described by ``args``; print progress, the Markdown report and (``--json``) the summary."""
    from evaltk.hub import is_hub
    from evaltk.locations import pin, table_provenance
    from evaltk.tournament.report import markdown
    from evaltk.tournament.run import RunOptions, default_out

    options = RunOptions(concurrency=args.concurrency, timeout_s=args.match_timeout, max_attempts=args.max_attempts,
                         executor=args.executor, ray_address=args.ray_address)  # checked before any agent resolves
    config = config_from_args(args)
    out = args.out if args.out is not None else default_out(config)

    hub = {agent_path(a, args.actions): pin(a) for a in _agents(args) if is_hub(a)}  # shown as hf://ORG/REPO@SHA
    print_agent_caveats(_agents(args), config.agents, hub)
    summary = play_tournament(config, out, options, hub, rules=args.rules)
    if hub:
        summary["sources"] = {label: table_provenance(label)["checkpoint"] for label in hub.values()}
    print(markdown(summary))
    if args.json:
        emit_json(summary)
    return 0


def run_verify_demos(args: argparse.Namespace) -> int:
    """Replay every recorded demo under ``args.out`` and report which reproduce the recorded frags."""
    from evaltk.tournament.demos import verify_demo
    from evaltk.tournament.run import RESULTS_NAME
    from evaltk.tournament.scheduler import ResultsFile

    results = ResultsFile(args.out.resolve() / RESULTS_NAME)
    rows = [r for _, r in sorted(results.played().items()) if r.get("demo")]
    if not rows:
        raise TournamentError(f"no recorded demos in {results.path}: play the tournament with --record")
    checks = []
    for row in rows:
        check = verify_demo(row, timeout_s=args.timeout)
        print(f"{row['match_id']}: recorded {check.recorded} replayed {check.replayed} "
              f"{'reproduced' if check.reproduced else 'DESYNC'}{' (bots)' if check.has_bots else ''}", flush=True)
        checks.append({"match_id": row["match_id"], "demo": check.demo, "has_bots": check.has_bots,
                       "recorded": check.recorded, "replayed": check.replayed, "reproduced": check.reproduced})
    summary = {"demos": len(checks), "reproduced": sum(c["reproduced"] for c in checks),
               "with_bots": sum(c["has_bots"] for c in checks),
               "reproduced_without_bots": sum(c["reproduced"] for c in checks if not c["has_bots"]),
               "without_bots": sum(not c["has_bots"] for c in checks), "checks": checks}
    print(f"{summary['reproduced']} of {summary['demos']} demos reproduced their recorded frags "
          f"({summary['reproduced_without_bots']} of {summary['without_bots']} without bots; games with bots "
          "desynchronise on replay)")
    if args.json:
        emit_json(summary)
    return 0
