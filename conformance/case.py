"""What a conformance case is: its checked fields, its result, and a case kind (fields, runner, checks).

:mod:`conformance.kinds` lists the built-in kinds; :mod:`conformance.suite` loads suite files against them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any


class Outcome(Enum):
    """How a case ended: its checks held, a check failed, or it could not run (bad input, a crash)."""

    PASSED = "passed"
    FAILED = "failed"
    ERROR = "error"


@dataclass(frozen=True)
class Case:
    """One checked case of a suite."""

    kind: str
    name: str
    params: Mapping[str, Any]
    built: Mapping[str, Any] = field(default_factory=dict)
    """What the kind's ``build`` made of ``params`` when the suite was loaded (a transfer case's ``rule``)."""


@dataclass(frozen=True)
class CaseResult:
    """What running one case found."""

    case: Case
    outcome: Outcome
    message: str
    seconds: float
    details: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class FieldSpec:
    """One field of a case kind: accepted types, whether it is required, and a check of its value.

    ``check`` returns what is wrong with a value of the right type (e.g. ``"must be >= 1"``), or None.
    """

    types: tuple[type, ...]
    required: bool = False
    check: Callable[[Any], str | None] | None = None


def at_least(low: float) -> Callable[[Any], str | None]:
    """Return a check that the value is >= ``low``."""
    return lambda v: None if v >= low else f"must be >= {low:g}"


def between(low: float, high: float, *, open_ends: bool = False) -> Callable[[Any], str | None]:
    """Return a check that the value lies in [low, high] (or (low, high) with ``open_ends``)."""
    def check(v: Any) -> str | None:
        ok = low < v < high if open_ends else low <= v <= high
        left, right = ("(", ")") if open_ends else ("[", "]")
        return None if ok and v == v else f"must be in {left}{low:g}, {high:g}{right}"
    return check


def one_of(choices: tuple[str, ...]) -> Callable[[Any], str | None]:
    """Return a check that the value is one of ``choices``."""
    return lambda v: None if v in choices else f"must be one of {', '.join(repr(c) for c in choices)}"


CaseCheck = Callable[[Mapping[str, Any]], str | None]
CaseBuild = Callable[[Mapping[str, Any]], Mapping[str, Any]]
"""Builds a case's values from its checked fields, once, at load; raises :class:`~evaltk.errors.EvaltkError`."""
CaseRunner = Callable[[Case, Path], CaseResult]
# Fields holding file paths: relative paths are taken relative to the suite file; the file must exist.
PATH_FIELDS = frozenset({"trace_file", "baseline"})
# Fields holding checkpoint locations (evaltk.locations): built-in names, ``hf://`` or paths from the suite file.
LOCATION_FIELDS = frozenset({"checkpoint"})


@dataclass(frozen=True)
class Kind:
    """A case kind: its fields, the function that runs a case, an optional check across its fields.

    ``build`` (optional) makes the values the runner needs from the checked fields once, when the suite is
    loaded (:attr:`Case.built`); a bad value raises :class:`~evaltk.errors.EvaltkError`, reported as the check's.

    ``old_names`` (older name -> current field): fields renamed since suites were written with them. Both
    names are declared in ``fields`` and checked as given; the loader then refuses a case that gives both and
    reads the older one as the current field, so runners see current names only.

    ``path_fields`` names the fields that hold file paths (checked to exist, made absolute from the suite file);
    ``location_fields`` the fields that hold checkpoint locations (:func:`evaltk.locations.anchor`: a relative
    path is taken from the suite file's folder, built-in names and ``hf://`` stay as written).
    """

    fields: Mapping[str, FieldSpec]
    run: CaseRunner
    check: CaseCheck | None = None
    path_fields: frozenset[str] = PATH_FIELDS
    location_fields: frozenset[str] = LOCATION_FIELDS
    build: CaseBuild | None = None
    old_names: Mapping[str, str] = field(default_factory=dict)
