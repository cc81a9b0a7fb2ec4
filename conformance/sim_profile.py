"""A lockstep profile: per compared field, the first env step that differs and how many do, over every step.

:class:`conformance.sim_lockstep.SimPair` fills a :class:`Profile` when the lockstep runs with ``profile``
instead of stopping at the first difference (``evaltk conformance lockstep --sim S --profile``, the suite
kind ``sim_lockstep`` with ``profile = true``). Steps are counted as the lockstep engine counts them: step 0
is the first reset, step ``f`` (1-based) is the ``f``-th env step, and the reset that follows step ``f`` is
compared as part of step ``f``. So ``obs`` is compared at steps ``0..N`` (``N + 1`` steps), ``reward``,
``terminated``, ``truncated`` and ``lives`` at steps ``1..N`` (a reset has no reward, flags or lives to
compare). A step differs in a field when any comparison of that field in it differs. For ``obs`` the
profile also holds the mean absolute difference of every compared pixel (uint8 values, 0..255;
observations of different shapes count as differing and stay out of that mean).

It also counts episode ends: both sides ended on the same step, or only the reference or only the
simulator did (both then start the next episode with the next seed, so the profile goes on).
:data:`FIELDS` are the fields a lockstep compares; ``--compare FIELD[,FIELD...]`` (:func:`parse_compare`)
and a suite case's ``compare`` list (:func:`compare_problem`) choose among them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from conformance.lockstep import LockstepError

FIELDS = ("obs", "reward", "terminated", "truncated", "lives")
"""The fields a lockstep compares, in the order it compares them."""


def compare_problem(fields: Sequence[Any]) -> str | None:
    """Return why ``fields`` is not a set of fields to compare (empty, unknown or repeated names), or None."""
    choices = ", ".join(FIELDS)
    bad = [f for f in fields if f not in FIELDS]
    if bad:
        return f"names {bad[0]!r}, not a field: use one or more of {choices}"
    if not fields:
        return f"names no field: use one or more of {choices}"
    if len(set(fields)) != len(fields):
        return f"names a field twice ({', '.join(fields)}): name each once"
    return None


def parse_compare(text: str) -> tuple[str, ...]:
    """Return the fields of ``--compare FIELD[,FIELD...]``; :class:`LockstepError` naming the fix otherwise."""
    fields = [f.strip() for f in text.split(",") if f.strip()]
    problem = compare_problem(fields)
    if problem is not None:
        raise LockstepError(f"--compare {text!r} {problem}")
    return tuple(fields)


@dataclass
class FieldProfile:
    """One field over a run: steps compared, steps that differed, the first of them, and its files."""

    steps: int = 0
    steps_differing: int = 0
    first_step: int | None = None
    files: dict[str, str] = field(default_factory=dict)
    """The first difference's files (both observations, the diff image, the values); empty while none."""
    abs_diff_sum: float = 0.0
    """Sum of ``|reference - sim|`` over every compared pixel (``obs`` only)."""
    pixels: int = 0
    """Pixels compared (``obs`` only)."""
    last_step: int = -1
    last_differing: int = -1

    def record(self, step: int, differs: bool) -> bool:
        """Count one comparison at ``step``; return whether it is the field's first difference."""
        if step != self.last_step:
            self.steps, self.last_step = self.steps + 1, step
        if not differs or step == self.last_differing:
            return False
        self.steps_differing, self.last_differing = self.steps_differing + 1, step
        first = self.first_step is None
        if first:
            self.first_step = step
        return first

    def add_pixels(self, reference: np.ndarray, sim: np.ndarray) -> None:
        """Add two observations of one shape to the mean absolute difference."""
        self.abs_diff_sum += float(np.abs(reference.astype(np.int16) - sim.astype(np.int16)).sum())
        self.pixels += int(reference.size)

    @property
    def mean_abs_diff(self) -> float:
        """Mean ``|reference - sim|`` over every compared pixel (0.0 before any)."""
        return self.abs_diff_sum / self.pixels if self.pixels else 0.0

    def as_dict(self, name: str) -> dict[str, Any]:
        """JSON-ready: ``first_step``, ``steps_differing``, ``steps`` (``obs``: ``mean_abs_diff``), ``files``."""
        out: dict[str, Any] = {"first_step": self.first_step, "steps_differing": self.steps_differing,
                               "steps": self.steps}
        if name == "obs":
            out["mean_abs_diff"] = round(self.mean_abs_diff, 6)
        out["files"] = dict(self.files)
        return out

    def line(self, name: str) -> str:
        """One line for the terminal: the field, its counts, where it first differed (obs: mean difference)."""
        first = "never" if self.first_step is None else f"first at step {self.first_step}"
        text = f"{name:10s} {self.steps_differing:6d} of {self.steps} steps differ ({first})"
        if name == "obs":
            text += f", mean absolute pixel difference {self.mean_abs_diff:.4f}"
        return text


@dataclass
class EpisodeEnds:
    """Steps after which an episode ended: on both sides, on the reference only, on the simulator only."""

    both: int = 0
    reference_only: int = 0
    sim_only: int = 0

    def count(self, reference: bool, sim: bool) -> None:
        """Count one step after which an episode ended on ``reference``, ``sim`` or both (neither: nothing)."""
        self.both += int(reference and sim)
        self.reference_only += int(reference and not sim)
        self.sim_only += int(sim and not reference)

    def as_dict(self) -> dict[str, int]:
        """JSON-ready: ``both``, ``reference_only``, ``sim_only``."""
        return {"both": self.both, "reference_only": self.reference_only, "sim_only": self.sim_only}

    def summary(self) -> str:
        """E.g. ``episode ends: 3 both, 0 reference only, 1 sim only``."""
        return f"episode ends: {self.both} both, {self.reference_only} reference only, {self.sim_only} sim only"


@dataclass
class Profile:
    """Every compared field's :class:`FieldProfile`, in comparison order."""

    fields: dict[str, FieldProfile]

    @classmethod
    def of(cls, names: tuple[str, ...]) -> Profile:
        """Return an empty profile of the fields ``names``."""
        return cls({name: FieldProfile() for name in names})

    def as_dict(self) -> dict[str, dict[str, Any]]:
        """JSON-ready: ``{FIELD: FieldProfile.as_dict}`` in comparison order."""
        return {name: f.as_dict(name) for name, f in self.fields.items()}

    def summary(self) -> str:
        """One clause per field, e.g. ``obs 2001/2001 from step 0 (mean |diff| 0.41), reward 0/2000``."""
        parts = []
        for name, f in self.fields.items():
            part = f"{name} {f.steps_differing}/{f.steps}"
            if f.first_step is not None:
                part += f" from step {f.first_step}"
            if name == "obs":
                part += f" (mean |diff| {f.mean_abs_diff:.4f})"
            parts.append(part)
        return f"steps differing: {', '.join(parts)}"
