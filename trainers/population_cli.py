"""``evaltk tournament population RUN_DIR``: rate a self-play/PBT population in one command (trainers' command).

Reads ``RUN_DIR/population.json`` (written by ``evaltk train doom --scenario duel --self-play``), takes
each member's latest checkpoint (optionally also its first frozen snapshot) and plays a round-robin among
them and the baselines (built-in agents, ``random`` and ``scripted`` by default), with ``--bots`` ViZDoom
bots added to every match. Ratings are the tournament's Bradley–Terry Elo with bootstrap 95% intervals
(bots included) and per-pair W/D/L with Wilson intervals and Elo CIs. Results go to ``RUN_DIR/tournament``
(resumable: re-running plays only what is missing).

Example::

    evaltk tournament population runs/duel --matches 2 --timelimit 1 --json
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from evaltk.cli.args import add_command, add_rules_argument, seed_type
from evaltk.cli.output import emit_json, play_tournament
from evaltk.errors import TournamentError
from evaltk.tournament.match import SUPPORTED_MAPS


def register(formats: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``population`` format to ``evaltk tournament``."""
    p = add_command(formats, "population", help="round-robin of a self-play population's members and baselines",
                    description=__doc__)
    p.add_argument("run_dir", type=Path, metavar="RUN_DIR", help="a population run folder (with population.json)")
    p.add_argument("--matches", type=int, default=2, help="games per pair of agents (default 2)")
    p.add_argument("--baselines", nargs="*", default=["random", "scripted"], metavar="AGENT",
                   help="built-in agents or checkpoints added to the round-robin (default: random scripted)")
    p.add_argument("--first-snapshots", action="store_true",
                   help="also enter each member's first frozen snapshot (its weights before any training)")
    p.add_argument("--bots", type=int, default=0, help="ViZDoom bots added to every match (default 0)")
    p.add_argument("--map", dest="maps", nargs="+", default=["map01"], choices=SUPPORTED_MAPS,
                   help="cig.wad map(s), cycled over matches (default map01)")
    p.add_argument("--timelimit", type=float, default=1.0, help="game minutes per match (default 1)")
    p.add_argument("--seed", type=seed_type, default=0, help="tournament seed")
    p.add_argument("--concurrency", type=int, default=os.cpu_count() or 1, help="matches at once (default: cores)")
    p.add_argument("--match-timeout", type=float, default=300.0, help="wall seconds before a match is voided")
    p.add_argument("--max-attempts", type=int, default=3, help="tries per match before the tournament stops")
    p.add_argument("--out", type=Path, default=None, help="output directory (default RUN_DIR/tournament)")
    p.add_argument("--json", action="store_true", help="print the summary as one JSON object on the last line")
    add_rules_argument(p)
    p.set_defaults(func=run)


def population_agents(run_dir: Path, *, first_snapshots: bool) -> dict[str, str]:
    """Map display name (``m0``, ``m0-first``) -> checkpoint directory for every member of the population."""
    from trainers.appo.selfplay import population
    from trainers.common.state_io import latest_policy_path

    try:
        state = population.read(run_dir)
    except population.PopulationError as exc:
        raise TournamentError(str(exc)) from None
    agents: dict[str, str] = {}
    for member in state.members:
        latest = latest_policy_path(population.member_dir(run_dir, member))
        if latest is None or not (latest / "policy.json").is_file():
            raise TournamentError(f"member {member.name} of {run_dir} has no checkpoint yet: let the run write one "
                                  "(it does at start and every --save-every-s)")
        agents[member.name] = str(latest.resolve())
        if first_snapshots and member.snapshots:
            agents[f"{member.name}-first"] = str(Path(member.snapshots[0]["path"]).resolve())
    return agents


def run(args: argparse.Namespace) -> int:
    """Play the population round-robin; print progress, the report with a legend, and (``--json``) the summary."""
    from evaltk.cli.output import print_agent_caveats
    from evaltk.hub import is_hub
    from evaltk.locations import local_checkpoint, pin
    from evaltk.tournament.formats import TournamentConfig
    from evaltk.tournament.report import markdown
    from evaltk.tournament.run import RunOptions

    run_dir = args.run_dir.resolve()
    members = population_agents(run_dir, first_snapshots=args.first_snapshots)  # read before any agent is fetched
    baselines = [local_checkpoint(b).ref for b in args.baselines]  # hf:// baselines are named by hf://ORG/REPO@SHA
    given = {path: pin(b) if is_hub(b) else path for path, b in zip(baselines, args.baselines, strict=True)}
    names = {path: name for name, path in members.items()} | given
    print_agent_caveats(args.baselines, baselines, given)
    config = TournamentConfig(format="round-robin", agents=(*members.values(), *baselines), matches=args.matches,
                              bots=args.bots, maps=tuple(args.maps), timelimit_min=args.timelimit, seed=args.seed)
    config.check()
    out = args.out if args.out is not None else run_dir / "tournament"
    options = RunOptions(concurrency=args.concurrency, timeout_s=args.match_timeout, max_attempts=args.max_attempts)

    summary = play_tournament(config, out, options, names, rules=args.rules)
    summary["population"] = {"run_dir": str(run_dir), "members": members}
    summary["ratings"] = [{"name": names.get(r["agent"], r["agent"]), **r} for r in summary.get("bradley_terry", [])]
    print(markdown(summary))
    print("Elo ratings (Bradley–Terry, bootstrap 95% CI):")
    for r in summary["ratings"]:
        print(f"  {r['name']:>12}  {r['rating']:+7.0f}  [{r['ci'][0]:+.0f}, {r['ci'][1]:+.0f}]  {r['inputs']}")
    if args.json:
        emit_json(summary)
    return 0
