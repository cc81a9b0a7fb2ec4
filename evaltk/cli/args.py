"""Argument types shared by the subcommands, so every option of the same kind is checked the same way."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from evaltk.verdict.rule import VerdictRule

__all__ = [
    "add_actions_option",
    "add_checkpoint_argument",
    "add_command",
    "add_format_option",
    "add_request_options",
    "add_rules_argument",
    "request_args",
    "seed_type",
    "verdict_rule",
]


# The verdict options (argparse dest -> VerdictRule field) of the commands that decide a verdict.
_RULE_OPTIONS = {"margin": "margin", "margin_kind": "kind", "alpha": "alpha", "min_episodes": "min_episodes",
                 "allow_different_envs": "allow_different_envs", "resamples": "resamples",
                 "sequential": "sequential", "looks": "looks", "spending": "spending",
                 "bootstrap_seed": "bootstrap_seed"}

_MAX_SEED = 2**63 - 1  # numpy.random.default_rng and the episode-seed derivation take non-negative 64-bit ints


def seed_type(text: str) -> int:
    """Parse a ``--seed`` value: an integer in ``[0, 2**63 - 1]``; argparse turns the error into one line."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer; pass a seed such as 0") from None
    if not 0 <= value <= _MAX_SEED:
        raise argparse.ArgumentTypeError(f"{value} is out of range; a seed is an integer in [0, 2**63 - 1]")
    return value


def add_request_options(parser: argparse.ArgumentParser, *, env_id_help: str, episodes_help: str, seed_help: str,
                        workers_help: str) -> None:
    """Add the options of the episodes of a request (``--env-id``, ``--episodes``, ``--seed``, ``--num-envs`` ...).

    The others: ``--workers``, ``--torch-threads``, ``--deterministic`` / ``--stochastic`` and
    ``--max-episode-frames``.

    With ``CKPT`` (:func:`add_checkpoint_argument`) and ``--out`` they are the fields of an
    :class:`evaltk.evaluation.plan.EvalRequest`, which :func:`request_args` reads back.
    """
    parser.add_argument("--env-id", default=None, help=env_id_help)
    parser.add_argument("--episodes", type=int, default=20, help=episodes_help)
    parser.add_argument("--seed", type=seed_type, default=0, help=seed_help)
    parser.add_argument("--num-envs", type=int, default=4, help="envs stepped as one batch (default 4)")
    parser.add_argument("--workers", type=int, default=None, help=workers_help)
    parser.add_argument("--torch-threads", type=int, default=None,
                        help="torch threads for a checkpoint's batched inference (default 1: the env worker processes "
                             "keep the other cores; the same default as suite cases)")
    add_actions_option(parser)
    parser.add_argument("--max-episode-frames", type=int, default=None, metavar="N",
                        help="cut every episode after N frames (truncated), replacing the env's own limit (108,000 "
                             "for ALE v5 ids; a Doom scenario's episode_timeout in tics); recorded with the table")


def add_actions_option(parser: argparse.ArgumentParser) -> None:
    """Add ``--deterministic`` / ``--stochastic`` (``dest="actions"``: ``greedy``, ``sample`` or None).

    They choose how another library's checkpoint acts (:func:`evaltk.importers.import_checkpoint`'s ``actions``).
    """
    actions = parser.add_mutually_exclusive_group()
    actions.add_argument("--deterministic", dest="actions", action="store_const", const="greedy", default=None,
                         help="another library's checkpoint acts greedily (argmax), as SB3's "
                              "predict(deterministic=True) (default: greedy, except Sample Factory: sampled as its "
                              "enjoy unless its config sets eval_deterministic)")
    actions.add_argument("--stochastic", dest="actions", action="store_const", const="sample",
                         help="another library's checkpoint samples its actions from its softmax (not for DQN)")


def request_args(args: argparse.Namespace) -> dict[str, Any]:
    """Return the :class:`evaltk.evaluation.plan.EvalRequest` fields parsed by a command that runs episodes, by name."""
    import dataclasses

    from evaltk.evaluation.plan import (
        EvalRequest,  # here, not at the top: parsing arguments does not import the plan's imports
    )

    given = {f.name: getattr(args, f.name) for f in dataclasses.fields(EvalRequest)}
    return {name: value for name, value in given.items() if value is not None}  # an option not given: the default


def add_format_option(parser: argparse.ArgumentParser, *, dest: str, help: str) -> None:
    """Add ``--format``: which other library's checkpoint format a file is in (default: detected).

    The choices are :data:`evaltk.importers.FORMATS` (that package imports torch only when a file is read).
    """
    from evaltk.importers import FORMATS

    parser.add_argument("--format", dest=dest, choices=FORMATS, default=None, help=help)


def add_rules_argument(parser: argparse.ArgumentParser) -> None:
    """Add a tournament's ``--rules`` (:mod:`evaltk.tournament.rules`): what an entrant may see."""
    from evaltk.tournament.rules import DEFAULT_RULES, RULES

    parser.add_argument("--rules", choices=tuple(RULES), default=DEFAULT_RULES,
                        help="what an agent may see: open (anything, the default) or screen-only (the screen plus "
                             "the game variables a player's HUD shows); an agent the rules forbid is refused with "
                             "one error line before any match")


def add_command(subparsers: argparse._SubParsersAction[argparse.ArgumentParser], name: str, *, help: str,
                description: str | None, epilog: str | None = None) -> argparse.ArgumentParser:
    """Add subcommand ``name`` whose description and examples ``epilog`` print as written (line breaks kept)."""
    return subparsers.add_parser(name, help=help, description=description, epilog=epilog,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)


def add_checkpoint_argument(parser: argparse.ArgumentParser, *, builtins: str) -> None:
    """Add the positional ``CKPT``: a checkpoint location (:mod:`evaltk.locations`) or a builtin policy.

    ``builtins`` ends the help: which builtins the command takes and what they need.
    """
    parser.add_argument("checkpoint", metavar="CKPT",
                        help="checkpoint directory, another library's checkpoint, hf://ORG/REPO[@REVISION][/PATH] "
                             f"(Hugging Face Hub) or a builtin: {builtins}")


def verdict_rule(args: argparse.Namespace, **fixed: Any) -> VerdictRule:
    """Build a command's one :class:`~evaltk.verdict.VerdictRule` from the verdict options it declares.

    ``--margin``, ``--margin-kind``, ``--alpha``, ``--min-episodes``, ``--unpaired``, ``--allow-different-envs``,
    ``--resamples``, ``--sequential``, ``--looks`` and ``--spending`` map to the rule's fields; an option the command
    does not declare keeps the rule's default, and ``fixed`` sets what the command decides itself (``sequential=True``
    for ``evaltk evaluate --until-verdict``). A bad value raises the rule's one-line error.
    """
    from evaltk.verdict.rule import VerdictRule

    given = vars(args)
    fields = {field: given[dest] for dest, field in _RULE_OPTIONS.items() if dest in given}
    if "unpaired" in given:
        fields["paired"] = not given["unpaired"]
    return VerdictRule(**{**fields, **fixed})


def command_entry_points(group: str) -> dict[str, Any]:
    """Return the entry points of ``group`` by name: the commands other packages of evaltk's distribution add."""
    from importlib.metadata import entry_points

    return {ep.name: ep for ep in entry_points(group=group)}
