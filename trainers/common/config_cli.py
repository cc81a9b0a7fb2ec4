"""Trainer configs as frozen dataclasses: one CLI flag per field, ``config.json`` round trips, resume.

:class:`TrainerConfig` holds the options every trainer has (run folder, seed, limits, loss coefficients,
checkpoint and log cadence) and their checks, once; each trainer's config subclasses it.

A field's help text is ``field(metadata={"doc": ...})`` (:func:`doc_field`). :func:`add_arguments`
adds ``--field-name`` per field, or the flags a caller names for some fields (booleans as ``--x/--no-x``;
``choices`` for enumerated strings), all defaulting to ``None`` so that :func:`given_values` can tell given
flags from defaults. For a config, :func:`resolve_values` takes the dataclass defaults, then a resumed run's
``<out>/config.json`` (when ``--resume``), then the flags given.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Protocol, Self, TypeVar

from evaltk.errors import EvaltkError

T = TypeVar("T")


def doc_field(text: str, **kw: Any) -> Any:
    """Return a dataclass field whose help text is ``text``."""
    return dataclasses.field(metadata={"doc": text}, **kw)


class OptionAdder(Protocol):
    """What options are added to: an ``argparse.ArgumentParser`` or one of its argument groups."""

    def add_argument(self, *name_or_flags: str, **kwargs: Any) -> argparse.Action:
        """Add one option (``argparse``'s signature)."""
        ...


def add_arguments(parser: OptionAdder, cls: type[Any], *, choices: Mapping[str, Sequence[str]] | None = None,
                  skip: Sequence[str] = (), flags: Mapping[str, str] | None = None) -> None:
    """Add one ``--field-name`` option per field of the dataclass ``cls`` (help = the field's doc).

    ``flags`` (field name -> flag, :func:`field_flags` by default) picks the fields, their flags and their order;
    each option's type and the default its help states are the field's.
    """
    fields = {f.name: f for f in dataclasses.fields(cls)}
    for name, option in (field_flags(cls, skip) if flags is None else flags).items():
        default = fields[name].default
        text = f"{fields[name].metadata.get('doc', '')} (default {default})"
        if isinstance(default, bool):
            parser.add_argument(option, action=argparse.BooleanOptionalAction, default=None, help=text)
        elif choices is not None and name in choices:
            parser.add_argument(option, choices=list(choices[name]), default=None, help=text)
        else:
            parser.add_argument(option, type=type(default), default=None, help=text)


def field_flags(cls: type[Any], skip: Sequence[str] = ()) -> dict[str, str]:
    """Return ``--field-name`` for each field of the dataclass ``cls`` not in ``skip`` (field name -> flag)."""
    return {f.name: flag(f.name) for f in dataclasses.fields(cls) if f.name not in skip}


def given_values(args: argparse.Namespace, flags: Mapping[str, str]) -> dict[str, Any]:
    """Return the fields of ``flags`` whose flag was given (:func:`add_arguments` leaves the others ``None``)."""
    values = {name: getattr(args, option.removeprefix("--").replace("-", "_"), None) for name, option in flags.items()}
    return {name: value for name, value in values.items() if value is not None}


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
    flags = given_values(args, field_flags(cls))
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


@dataclass(frozen=True, kw_only=True)
class TrainerConfig:
    """The options every trainer has, each declared once: run folder, seed, limits, loss, cadence.

    A trainer's config subclasses this (``frozen=True, kw_only=True``), naming its exception and its name in
    messages as class arguments (``class A2cConfig(TrainerConfig, error=ConfigError, label="A2C")``), and
    gives the fields declared here without a default its own default with :func:`trainer_default`.
    """

    #: The trainer's exception, raised by :meth:`check` and :meth:`from_dict`.
    error: ClassVar[type[EvaltkError]]
    #: The trainer's name in messages ("A2C", "APPO").
    label: ClassVar[str]

    def __init_subclass__(cls, *, error: type[EvaltkError], label: str, **kw: Any) -> None:
        super().__init_subclass__(**kw)
        cls.error, cls.label = error, label

    out: str = doc_field("run folder (config.json, metrics.jsonl, tb/, checkpoints/)")
    seed: int = doc_field("seed of the weights, action sampling and env seeds", default=0)
    max_seconds: float = doc_field("stop after this many seconds of training wall time (0 = no limit)", default=0.0)
    resume: bool = doc_field("continue the run in --out from its latest checkpoint", default=False)

    gamma: float = doc_field("discount", default=0.99)
    vtrace_rho: float = doc_field("V-trace rho-bar (importance weight clip)", default=1.0)
    vtrace_c: float = doc_field("V-trace c-bar (trace cutting)", default=1.0)
    value_coef: float = doc_field("value loss coefficient", default=0.5)
    entropy_coef: float = doc_field("entropy bonus coefficient")
    learning_rate: float = doc_field("optimizer learning rate")
    max_grad_norm: float = doc_field("gradient norm clip")

    save_every_s: float = doc_field("seconds between checkpoints (0 = only the final one)")
    keep_checkpoints: int = doc_field("newest checkpoints kept", default=2)
    log_every_s: float = doc_field("seconds between console/metrics lines")
    stats_window: int = doc_field("episodes in the running mean episode return", default=100)

    def check(self) -> None:
        """Raise :attr:`error` naming the first bad shared value and how to fix it (subclasses add their own)."""
        self.check_at_least(1, "keep_checkpoints", "stats_window")
        if not 0.0 < self.gamma <= 1.0:
            raise self.error(f"--gamma must be in (0, 1], got {self.gamma}")
        self.check_finite("max_seconds", "value_coef", "entropy_coef", "save_every_s", positive=False)
        self.check_finite("learning_rate", "max_grad_norm", "vtrace_rho", "vtrace_c", "log_every_s", positive=True)

    def check_at_least(self, minimum: int, *names: str) -> None:
        """Raise :attr:`error` unless each whole-number field in ``names`` is ``>= minimum``."""
        for name in names:
            if getattr(self, name) < minimum:
                raise self.error(f"{flag(name)} must be >= {minimum}, got {getattr(self, name)}")

    def check_finite(self, *names: str, positive: bool) -> None:
        """Raise :attr:`error` unless each field in ``names`` is a finite number ``> 0`` (``positive``) or ``>= 0``."""
        for name in names:
            value = float(getattr(self, name))
            if not (math.isfinite(value) and (value > 0 if positive else value >= 0)):
                raise self.error(f"{flag(name)} must be a finite number {'>' if positive else '>='} 0, got {value}")

    def check_choice(self, name: str, choices: Sequence[str]) -> None:
        """Raise :attr:`error` unless the field ``name`` is one of ``choices``."""
        if getattr(self, name) not in choices:
            raise self.error(f"{flag(name)} must be one of {', '.join(choices)}, got {getattr(self, name)!r}")

    def to_dict(self) -> dict[str, Any]:
        """All fields as a JSON-ready dict (a run's ``config.json`` ``config`` section)."""
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Self:
        """Build from a dict (e.g. a run's ``config.json``); unknown keys raise :attr:`error`."""
        return from_dict(cls, data, cls.error, cls.label)

    @classmethod
    def from_args(cls, args: argparse.Namespace, overrides: Mapping[str, Any] | None = None) -> Self:
        """Return a checked config: defaults, then a resumed run's ``config.json``, then the given flags."""
        config = cls.from_dict(resolve_values(cls, args, cls.error, overrides))
        config.check()
        return config


def flag(name: str) -> str:
    """Return the command-line flag of the config field ``name`` (``max_seconds`` -> ``--max-seconds``)."""
    return "--" + name.replace("_", "-")


def trainer_default(name: str, default: Any) -> Any:
    """Return :class:`TrainerConfig`'s field ``name`` (its doc) with a trainer's own ``default``."""
    return doc_field(TrainerConfig.__dataclass_fields__[name].metadata["doc"], default=default)


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
