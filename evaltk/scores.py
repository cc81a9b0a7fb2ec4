"""Reading score tables: one row per episode with a numeric ``return`` column.

Accepted inputs:

* a CSV/TSV file with a header row that has a ``return`` column (other columns are kept as
  labels: ``checkpoint``, ``env_id``, ``backend``... as ``evaltk evaluate`` writes them);
* a JSONL file (``.jsonl``/``.ndjson``): one JSON object per line, each with a ``return`` key;
* a directory (e.g. an ``evaltk evaluate --out DIR``) holding exactly one such table, or one of
  the conventional names in :data:`CONVENTIONAL_NAMES`.

Anything missing, empty or malformed raises :class:`~evaltk.errors.ScoreTableError` naming the
file, the line and the fix.
"""

from __future__ import annotations

import csv
import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from evaltk.errors import ScoreTableError

CONVENTIONAL_NAMES = ("episodes.csv", "scores.csv", "episodes.jsonl", "scores.jsonl")
TABLE_SUFFIXES = (".csv", ".tsv", ".jsonl", ".ndjson")
LABEL_COLUMNS = ("checkpoint", "env_id", "backend")
FIX = "give a CSV/JSONL with one row per episode and a numeric 'return' column (as `evaltk evaluate` writes)"


@dataclass(frozen=True)
class ScoreTable:
    """The returns read from one score table.

    Attributes:
        path: the file read.
        column: the column the scores came from.
        returns: ``float64[n_episodes]`` in file order.
        labels: distinct values of identifying columns present in the file (e.g. ``checkpoint``).

    """

    path: Path
    column: str
    returns: npt.NDArray[np.float64] = field(repr=False)
    labels: dict[str, list[str]]

    @property
    def n(self) -> int:
        """Number of episodes."""
        return int(self.returns.size)

    def describe(self) -> str:
        """One line: file, count and labels."""
        parts = [f"{k}={','.join(v)}" for k, v in self.labels.items() if v]
        extra = f" ({'; '.join(parts)})" if parts else ""
        return f"{self.path}: {self.n} episodes{extra}"


def _resolve(path: Path) -> Path:
    if not path.exists():
        raise ScoreTableError(f"score table {str(path)!r} does not exist; {FIX}")
    if path.is_file():
        return path
    for name in CONVENTIONAL_NAMES:
        if (path / name).is_file():
            return path / name
    tables = sorted(p for p in path.iterdir() if p.is_file() and p.suffix.lower() in TABLE_SUFFIXES)
    if len(tables) == 1:
        return tables[0]
    if not tables:
        raise ScoreTableError(f"directory {str(path)!r} holds no score table (*.csv or *.jsonl); {FIX}")
    names = ", ".join(p.name for p in tables)
    raise ScoreTableError(f"directory {str(path)!r} holds several score tables ({names}); pass one file instead")


COLUMN_TYPES: dict[str, str] = {"return": "number", "index": "int", "seed": "int", "frames": "int", "steps": "int",
                                "truncated": "bool", "checkpoint": "str", "env_id": "str", "backend": "str"}
"""Types of the columns ``evaltk evaluate`` writes, enforced wherever such a column appears; the
score column itself (``--column``) is always a number."""


def _names(names: Any) -> str:
    """Column names for a message: quoted (so odd characters stay on one line), at most 200 characters."""
    text = ", ".join(repr(str(n)) for n in names)
    return text if len(text) <= 200 else text[:197] + "..."


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


def _check_json_types(row: dict[str, Any], where: str, score_column: str) -> float:
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


def _check_csv_types(row: dict[str, Any], where: str, score_column: str) -> float:
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


def _read_csv(path: Path, column: str) -> tuple[list[float], list[dict[str, Any]]]:
    delimiter = "\t" if path.suffix.lower() == ".tsv" else ","
    with path.open(newline="", encoding="utf-8-sig") as fh:
        reader = csv.DictReader(fh, delimiter=delimiter)
        try:
            header = reader.fieldnames
        except csv.Error as exc:
            raise ScoreTableError(f"score table {str(path)!r} is not valid CSV ({exc}); {FIX}") from None
        if not header:
            raise ScoreTableError(f"score table {str(path)!r} is empty (no header row); {FIX}")
        if column not in header:
            raise ScoreTableError(f"score table {str(path)!r} has no {column!r} column (columns: {_names(header)}); "
                                  f"{FIX}, or pass --column NAME")
        values, rows = [], []
        try:
            for number, row in enumerate(reader, start=1):
                where = f"{path}:{reader.line_num} (row {number})"
                if None in row or any(v is None for v in row.values()):
                    raise ScoreTableError(f"{where}: the row has {'more' if None in row else 'fewer'} fields than the "
                                          f"header ({len(header)}); delete that row, or re-run the `evaltk evaluate` "
                                          "command that wrote it to repair a cut-off last line")
                values.append(_check_csv_types(row, where, column))
                rows.append(row)
        except csv.Error as exc:
            raise ScoreTableError(f"{path}: line {reader.line_num} is not valid CSV ({exc}); "
                                  "fix or delete it") from None
    return values, rows


def _read_jsonl(path: Path, column: str) -> tuple[list[float], list[dict[str, Any]]]:
    values, rows = [], []
    with path.open(encoding="utf-8-sig") as fh:
        for number, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            where = f"{path}:{number}"
            try:
                row = json.loads(line)
            except (ValueError, RecursionError) as exc:
                reason = exc.msg if isinstance(exc, json.JSONDecodeError) else type(exc).__name__
                raise ScoreTableError(f"{where}: not valid JSON ({reason}); fix or delete that line") from None
            if not isinstance(row, dict):
                raise ScoreTableError(f"{where}: expected a JSON object per line, got {type(row).__name__}")
            if column not in row:
                raise ScoreTableError(f"{where}: no {column!r} key (keys: {_names(row)}); {FIX}")
            values.append(_check_json_types(row, where, column))
            rows.append(row)
    return values, rows


def _looks_like_jsonl(path: Path) -> bool:
    if path.suffix.lower() in (".jsonl", ".ndjson"):
        return True
    if path.suffix.lower() in (".csv", ".tsv"):
        return False
    with path.open(encoding="utf-8-sig", errors="replace") as fh:
        for line in fh:
            if line.strip():
                return line.lstrip().startswith("{")
    return False


def read_scores(path: str | Path, *, column: str = "return") -> ScoreTable:
    """Read a score table (file or directory, see module docstring) and return its ``column`` values.

    Raises:
        ScoreTableError: missing path, no table in a directory, missing column, empty table,
            a non-numeric / non-finite value, or a malformed line (the message names file and line).

    """
    table = _resolve(Path(path))
    try:
        values, rows = (_read_jsonl if _looks_like_jsonl(table) else _read_csv)(table, column)
    except UnicodeDecodeError:
        raise ScoreTableError(f"score table {str(table)!r} is not UTF-8 text; {FIX}") from None
    except OSError as exc:
        raise ScoreTableError(f"cannot read score table {str(table)!r}: {exc.strerror}") from None
    if not values:
        raise ScoreTableError(f"score table {str(table)!r} has no episodes (header only or blank); "
                              "run `evaltk evaluate` first or pick another file")
    labels: dict[str, list[str]] = {}
    for key in LABEL_COLUMNS:
        seen = sorted({str(r[key]) for r in rows if key in r and r[key] not in (None, "")})
        if seen:
            labels[key] = seen
    return ScoreTable(table, column, np.asarray(values, dtype=np.float64), labels)
