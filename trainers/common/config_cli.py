"""Trainer configs as frozen dataclasses: one CLI flag per field, ``config.json`` round trips, resume.

A field's help text is ``field(metadata={"doc": ...})`` (:func:`doc_field`). :func:`add_arguments`
adds ``--field-name`` per field (booleans as ``--x/--no-x``; ``choices`` for enumerated strings), all
defaulting to ``None`` so that :func:`resolve_values` can tell given flags from defaults: the values
are the dataclass defaults, then a resumed run's ``<out>/config.json`` (when ``--resume``), then the
flags given.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from evaltk.errors import EvaltkError

T = TypeVar("T")


def doc_field(text: str, **kw: Any) -> Any:
    """Return a dataclass field whose help text is ``text``."""
    return dataclasses.field(metadata={"doc": text}, **kw)


def add_arguments(parser: argparse.ArgumentParser, cls: type[Any], *,
                  choices: Mapping[str, Sequence[str]] | None = None, skip: Sequence[str] = ()) -> None:
    """Add one ``--field-name`` option per field of the dataclass ``cls`` (help = the field's doc)."""
    for f in dataclasses.fields(cls):
        if f.name in skip:
            continue
        flag = "--" + f.name.replace("_", "-")
        default = f.default
        text = f"{f.metadata.get('doc', '')} (default {default})"
        if isinstance(default, bool):
            parser.add_argument(flag, action=argparse.BooleanOptionalAction, default=None, help=text)
        elif choices is not None and f.name in choices:
            parser.add_argument(flag, choices=list(choices[f.name]), default=None, help=text)
        else:
            parser.add_argument(flag, type=type(default), default=None, help=text)


def from_dict(cls: type[T], data: Mapping[str, Any], error: type[EvaltkError], label: str) -> T:
    """``cls(**data)``; unknown keys raise ``error`` naming them and the valid ones."""
    names = {f.name for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    unknown = sorted(set(data) - names)
    if unknown:
        raise error(f"unknown {label} option(s) {unknown}; valid options: {sorted(names)}")
    return cls(**data)


def resolve_values(cls: type[Any], args: argparse.Namespace, error: type[EvaltkError],
                   overrides: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Field values: defaults, then a resumed run's ``config.json`` (``--resume``), then the given flags."""
    values: dict[str, Any] = {}
    flags = {f.name: getattr(args, f.name) for f in dataclasses.fields(cls) if getattr(args, f.name, None) is not None}
    flags.update({k: v for k, v in (overrides or {}).items() if v is not None})
    if flags.get("resume"):
        saved = Path(flags.get("out", cls.out)) / "config.json"
        if saved.is_file():
            try:
                values.update(json.loads(saved.read_text(encoding="utf-8"))["config"])
            except (ValueError, KeyError, TypeError) as exc:
                raise error(f"--resume: {saved} is unreadable ({exc}): start a new run in another --out") from None
    values.update(flags)
    return values


def command_main(argv: Sequence[str] | None, *, prog: str, description: str | None,
                 add: Callable[[argparse.ArgumentParser], None], run: Callable[[argparse.Namespace], int]) -> int:
    """Run a trainer's command line: parse with ``add``'s options, ``run``, and turn an EvaltkError into exit 2."""
    import sys

    parser = argparse.ArgumentParser(prog=prog, description=description)
    add(parser)
    args = parser.parse_args(argv)
    try:
        return run(args)
    except EvaltkError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
