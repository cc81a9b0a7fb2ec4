"""One episode's row of a score table: the typed row the pipeline hands between its modules, and the column types.

:class:`ScoreRow` is one episode's row of ``episodes.csv``: the evaluator makes one as each episode ends
(:mod:`evaltk.evaluation.run`), the score-table module writes it (:meth:`ScoreRow.csv_line`) and reads it back
(:meth:`ScoreRow.from_csv`), and an evaluation's result holds them (``EvalResult.rows``); a comparison reads their
JSON form (:meth:`ScoreRow.to_json`, the keys of :data:`evaltk.evaluation.scores.COLUMNS`).
:data:`COLUMN_TYPES`, :func:`check_csv_row` and :func:`check_json_row` check the known columns of any score table's
row (one of another tool, too) as :func:`evaltk.evaluation.scores.read_scores` reads it.
"""

from __future__ import annotations

import csv
import io
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from evaltk.errors import ScoreTableError

OLD_COLUMN_NAMES = {"backend": "simulator"}
"""Column names of older layouts and the row key each one holds; also an older manifest's setting names."""


@dataclass(frozen=True)
class ScoreRow:
    """One episode's row of ``episodes.csv``; its JSON form has the column names as keys (``return``...)."""

    checkpoint: str
    """The checkpoint's label (the settings' ``checkpoint``)."""
    env_id: str
    simulator: str
    """The simulator that ran the episode (the settings' ``simulator``)."""
    index: int
    """The episode's index ``i`` in the evaluation."""
    seed: int
    """The episode's recorded seed, :func:`evaltk.seeding.episode_seed` ``(base seed, index)``."""
    episode_return: float
    """The episode's return: the ``return`` column."""
    frames: int
    """The episode's length in frames (env steps times frameskip; game tics for Doom)."""
    steps: int
    """The episode's length in env steps."""
    truncated: bool
    """Whether the episode was cut short (a time limit) rather than ended by the game."""
    digest: str = ""
    """The step stream's digest (:mod:`evaltk.evaluation.digests`), hex; empty in an older table."""
    obs_digest: str = ""
    """The observations' digest, hex; empty in an older table."""

    def to_json(self) -> dict[str, Any]:
        """Return the row as a JSON object, keyed by its column names."""
        return {("return" if f.name == "episode_return" else f.name): getattr(self, f.name) for f in fields(self)}

    @classmethod
    def from_json(cls, found: Mapping[str, Any]) -> ScoreRow:
        """Return the row of a JSON object keyed by column names (:meth:`to_json`'s form)."""
        return cls(**{("episode_return" if key == "return" else key): value for key, value in found.items()})

    def csv_line(self, columns: tuple[str, ...]) -> str:
        """Return the CSV line of ``columns`` (``truncated`` as ``true``/``false``); an older column takes its field."""
        found = self.to_json()
        buf = io.StringIO()
        csv.writer(buf, lineterminator="\n").writerow(
            [("true" if self.truncated else "false") if c == "truncated" else found[OLD_COLUMN_NAMES.get(c, c)]
             for c in columns])
        return buf.getvalue()

    @classmethod
    def from_csv(cls, raw: Mapping[str, str], where: str) -> ScoreRow:
        """Return the row of a CSV record (column: text) of any layout; ``where`` names the line in errors.

        Raises:
            ScoreTableError: a missing or malformed value.

        """
        try:
            parsed: dict[str, Any] = {
                "checkpoint": raw["checkpoint"], "env_id": raw["env_id"],
                "simulator": raw["simulator"] if "simulator" in raw else raw["backend"], "index": int(raw["index"]),
                "seed": int(raw["seed"]), "episode_return": float(raw["return"]), "frames": int(raw["frames"]),
                "steps": int(raw["steps"])}
        except (KeyError, TypeError, ValueError) as exc:
            raise ScoreTableError(f"{where} is malformed ({exc}): delete that line (or the file) and re-run") from None
        if raw.get("truncated") not in ("true", "false"):
            raise ScoreTableError(f"{where} has truncated={raw.get('truncated')!r}, expected true/false: "
                                  "delete that line (or the file) and re-run")
        return cls(**parsed, truncated=raw["truncated"] == "true", digest=raw.get("digest") or "",
                   obs_digest=raw.get("obs_digest") or "")


COLUMN_TYPES: dict[str, str] = {"return": "number", "index": "int", "seed": "int", "frames": "int", "steps": "int",
                                "truncated": "bool", "checkpoint": "str", "env_id": "str", "simulator": "str",
                                "backend": "str", "digest": "str", "obs_digest": "str"}
"""Types of the columns ``evaltk evaluate`` writes, enforced wherever such a column appears; the
score column itself (``--column``) is always a number."""


def _bad(where: str, column: str, kind: str, raw: Any, hint: str) -> ScoreTableError:
    return ScoreTableError(f"{where}, column {column!r}: expected {kind}, got {raw!r}{hint}; fix or delete that row")


def _to_float(raw: Any, where: str, column: str) -> float:
    if isinstance(raw, bool) or raw is None or (isinstance(raw, str) and not raw.strip()):
        raise ScoreTableError(f"{where}, column {column!r}: empty or not a number ({raw!r}); fix or delete that row")
    try:
        value = float(raw)
    except (TypeError, ValueError, OverflowError):
        raise _bad(where, column, "a number", raw, "") from None
    if not math.isfinite(value):
        raise ScoreTableError(f"{where}, column {column!r}: value {raw!r} is not finite; fix or delete that row")
    return value


def check_json_row(row: dict[str, Any], where: str, score_column: str) -> float:
    """Check a JSONL row's known columns have JSON types (``"5"`` is not a number); return the score."""
    for column, kind in {**COLUMN_TYPES, score_column: "number"}.items():
        if column not in row or (row[column] is None and kind == "str"):
            continue
        raw = row[column]
        ok = {"number": isinstance(raw, int | float) and not isinstance(raw, bool),
              "int": isinstance(raw, int) and not isinstance(raw, bool),
              "bool": isinstance(raw, bool), "str": isinstance(raw, str)}[kind]
        if not ok:
            quoted = " (a quoted string: write the bare JSON value)" if isinstance(raw, str) else ""
            raise _bad(where, column, f"a JSON {'number' if kind == 'number' else kind}", raw, quoted)
    return _to_float(row[score_column], where, score_column)


def check_csv_row(row: dict[str, Any], where: str, score_column: str) -> float:
    """Check a CSV row's known columns parse as their type (ints, true/false); return the score."""
    for column, kind in COLUMN_TYPES.items():
        if column == score_column or column not in row or kind == "str":
            continue
        raw = str(row[column]).strip()
        if kind == "int" and re.fullmatch(r"[+-]?\d{1,18}", raw) is None:
            raise _bad(where, column, "an integer", row[column], "")
        if kind == "bool" and raw.lower() not in ("true", "false", "0", "1"):
            raise _bad(where, column, "true or false", row[column], "")
        if kind == "number":
            _to_float(row[column], where, column)
    return _to_float(row[score_column], where, score_column)
