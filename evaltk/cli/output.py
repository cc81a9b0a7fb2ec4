"""Helpers every subcommand uses for its output.

Convention: human-readable text goes to stdout as the command runs; with ``--json`` the
*last* line of stdout is exactly one JSON object (``emit_json``), so scripts can take
``tail -n 1``. The serialisation itself lives in :mod:`evaltk.report.jsonline`, below the CLI,
so that report writers and trainers use it without importing the CLI.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evaltk.envs.spec import EnvSpec
from evaltk.importers import ImportCaveats
from evaltk.report.jsonline import emit_json, to_json_line

if TYPE_CHECKING:
    from evaltk.tournament.formats import TournamentConfig
    from evaltk.tournament.run import RunOptions

__all__ = ["emit_json", "play_tournament", "print_agent_caveats", "print_import_caveats", "to_json_line"]


def print_import_caveats(label: str, found: ImportCaveats | None, *, env: EnvSpec | None = None,
                         capped: bool = False, where: str = "") -> bool:
    """Print to stderr, once before the first episode, what another library's checkpoint ``label`` needs.

    ``found`` is the checkpoint's recorded import (:class:`evaltk.importers.ImportCaveats`, from the plan or
    :func:`evaltk.importers.import_caveats`). ``env`` (the env spec the episodes run) without a frame cap
    (``capped``: ``--max-episode-frames`` given) adds how long an episode the policy never ends runs. ``where``
    ends the heading (a tournament's own setting). Prints nothing and returns False for an evaltk checkpoint
    or a built-in.
    """
    import sys

    if found is None:
        return False
    lines = [f"note: {label} was imported from {found.fmt}; what evaltk plays differently from its library{where}:"]
    lines += [f"  - {caveat}" for caveat in found.caveats]
    limit = None if env is None else env.kwargs.get("max_num_frames_per_episode")
    if not capped and env is not None and env.family == "atari":
        length = f"{limit:,} frames (the env's limit)" if isinstance(limit, int) else "no frame limit"
        lines.append(f"  an episode the policy never ends runs to {length}: --max-episode-frames N cuts it earlier")
    print("\n".join(lines), file=sys.stderr, flush=True)
    return True


def play_tournament(config: TournamentConfig, out: Path, options: RunOptions,
                    names: Mapping[str, str] | None = None, *, rules: str = "open") -> dict[str, Any]:
    """Run a tournament under ``rules``, printing a line per match as it ends (agents shown by ``names``).

    Returns its summary. After the matches' lines, a line says when ``config.matches`` extended the tournament
    ``out`` held, or that there was nothing to play.
    """
    from evaltk.tournament.match import MatchResult
    from evaltk.tournament.run import run_tournament

    shown = dict(names or {})

    def progress(result: MatchResult) -> None:
        if result.outcome == "played":
            frags = ", ".join(f"{shown.get(p['agent'], p['agent'])}={p['frags']}" for p in result.participants)
            print(f"{result.match_id}: {frags} ({result.duration_tics} tics, {result.wall_s:.1f} s)", flush=True)
        else:
            print(f"{result.match_id}: VOID attempt {result.attempt}: {result.error} (rescheduled)", flush=True)

    summary, sched = run_tournament(config, out, options, on_result=progress, rules=rules)
    if summary["schedule"]["extended_from"] is not None:
        print(f"extended: {out} held --matches {summary['schedule']['extended_from']}, now {config.matches} "
              f"({sched.already_done} matches already played)")
    if sched.played == 0 and sched.voided == 0:
        print(f"nothing to play: {sched.already_done} matches already in {summary['results']}")
    return summary


def print_agent_caveats(given: Sequence[str], paths: Sequence[str], hub: Mapping[str, str]) -> None:
    """Print each imported agent's caveats once, before the first match (built-ins and evaltk checkpoints: none).

    ``given``: the agents as typed; ``paths``: as :func:`evaltk.locations.local_checkpoint` resolved them; ``hub``:
    path to pinned label.
    """
    from evaltk.checkpoint import load
    from evaltk.importers import import_caveats
    from evaltk.policies import builtin_name

    for path, agent in dict(zip(paths, given, strict=True)).items():
        if builtin_name(path) is None:
            spec = load(path).spec
            print_import_caveats(hub.get(path, agent), import_caveats(spec.provenance),
                                 where=f" (a match plays it on cig.wad with the match's server options and time limit, "
                                       f"not on {spec.env_spec.env_id})")
