"""Score tables, the one module that reads and writes them: one row per episode with a numeric ``return`` column.

Reading (:func:`read_scores`, used by compare, validate, until-verdict and the suites) accepts:

* a CSV/TSV file with a header row that has a ``return`` column (other columns are kept as
  labels: ``checkpoint``, ``env_id``, ``simulator``... as ``evaltk evaluate`` writes them; an older
  table's ``backend`` column is read as ``simulator``);
* a JSONL file (``.jsonl``/``.ndjson``): one JSON object per line, each with a ``return`` key;
* a directory (e.g. an ``evaltk evaluate --out DIR``) holding exactly one such table, or one of
  the conventional names in :data:`CONVENTIONAL_NAMES`.

Anything missing, empty or malformed raises :class:`~evaltk.errors.ScoreTableError` naming the
file, the line and the fix.

The table ``evaltk evaluate`` writes (schema :data:`COLUMNS`, file :data:`TABLE_FILE`) lives in a
directory with a manifest, :data:`SETTINGS_FILE` (``evaluation.json``; its fields are in ``docs/evaluation.md``):
``settings`` (what the rows depend on: checkpoint, policy digest, env spec, base seed, simulator; an
:class:`EvalSettings` in code, its :meth:`~EvalSettings.to_json` in the file; a manifest that calls the simulator
``backend`` still resumes), ``provenance`` (where the inputs came from, e.g. a Hub checkpoint's
repo and revision; ``{}`` for tables written before it existed) and ``simulator`` (the identity
:meth:`evaltk.simulators.base.Simulator.check` returns). :func:`open_table` refuses to add rows to a table whose
settings, provenance or simulator identity differ (resume, never mix), naming what changed; tables written before a
field existed resume unchecked on it.

Writing: :func:`open_table` creates or reopens the directory (a partial last line left by a killed
writer is cut off: repair), :class:`TableWriter` appends rows as episodes finish (flushed, fsynced,
each episode index once), :func:`read_table` reads the typed rows back.
"""

from __future__ import annotations

import csv
import io
import json
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from evaltk.atomic import write_json_files
from evaltk.envs.spec import EnvSpec
from evaltk.errors import ScoreTableError, SpecError
from evaltk.evaluation.records import OLD_COLUMN_NAMES, ScoreRow, check_csv_row, check_json_row

COLUMNS = ("checkpoint", "env_id", "simulator", "index", "seed", "return", "frames", "steps", "truncated", "digest",
           "obs_digest")
"""Columns of the table ``evaltk evaluate`` writes, in order. ``simulator`` is the simulator's name (``gym``,
``gpu_env``, ``envpool``, ``vizdoom``, ``MODULE:CALLABLE``), ``digest`` the episode's step digest (rewards,
actions, the step and flag that ended it) and ``obs_digest`` the digest of the observations the policy acted on
(:mod:`evaltk.evaluation.digests`)."""
BACKEND_COLUMNS = tuple("backend" if c == "simulator" else c for c in COLUMNS)
"""Columns of tables written when the simulator column was called ``backend``: still read, resumed in this layout."""
LEGACY_COLUMNS = BACKEND_COLUMNS[:-2]
"""Columns of tables written before per-episode digests were recorded: still read, resumed in this layout."""
LAYOUTS = (COLUMNS, BACKEND_COLUMNS, LEGACY_COLUMNS)
"""Every layout of ``episodes.csv`` that is read and resumed; rows read from any of them have the keys of
:data:`COLUMNS` (an old table's ``backend`` is its rows' ``simulator``)."""
DIGEST_KEYS = {"digest": "steps", "obs_digest": "obs"}
"""Digest columns and the key each one has in :attr:`ScoreTable.digests`."""
TABLE_FILE = "episodes.csv"
SETTINGS_FILE = "evaluation.json"
SIMULATOR_FILE = "simulator.json"
"""The simulator's effective settings (:mod:`evaltk.envs.atari_settings`), next to the score table."""
ENVIRONMENT_FILE = "environment.json"
"""A side of ``evaltk validate``: the env spec and the package versions of the run that wrote its first rows."""
"""The manifest next to :data:`TABLE_FILE` (format, settings, columns, provenance)."""
MANIFEST_FORMAT = "evaltk-evaluation/1"

CONVENTIONAL_NAMES = ("episodes.csv", "scores.csv", "episodes.jsonl", "scores.jsonl")
TABLE_SUFFIXES = (".csv", ".tsv", ".jsonl", ".ndjson")
LABEL_COLUMNS = ("checkpoint", "env_id", "simulator")
FIX = "give a CSV/JSONL with one row per episode and a numeric 'return' column (as `evaltk evaluate` writes)"


POLICY_SEEDINGS = ("per-episode", "per-batch")
"""How a policy's randomness is seeded: from each episode's seed, or once per batch of ``num_envs`` episodes."""


@dataclass(frozen=True)
class EvalSettings:
    """The settings of one score table (``evaluation.json``'s ``settings``): what its rows depend on.

    A resumed table must have been written with equal settings (:func:`evaltk.evaluation.scores.open_table`).
    """

    checkpoint: str
    """The checkpoint's label: a folder, ``builtin:NAME``, or a Hub location pinned to its commit."""
    policy_digest: str
    """The digest of the policy's weights and spec (:func:`evaltk.evaluation.plan.resolve_policy`)."""
    env: EnvSpec
    """The env spec (the resolved env of :class:`evaltk.envs.EnvInfo`) with JSON's values (lists, not tuples)."""
    seed: int
    """The base seed: episode ``i`` has the recorded seed :func:`evaltk.seeding.episode_seed` ``(seed, i)``."""
    simulator: str
    """The simulator as the rows record it (``gym``, ``gpu_env``, ``envpool``, ``vizdoom``, ``MODULE:CALLABLE``)."""
    policy_seeding: str
    """One of :data:`POLICY_SEEDINGS`."""
    num_envs: int | None = None
    """Episodes per batch: recorded for a per-batch-seeded policy only, whose actions depend on it."""

    def to_json(self) -> dict[str, Any]:
        """Return the JSON object ``evaluation.json`` holds as ``settings`` (``num_envs`` only when recorded)."""
        found: dict[str, Any] = {"checkpoint": self.checkpoint, "policy_digest": self.policy_digest,
                                 "env": self.env.to_json(),
                                 "seed": self.seed, "simulator": self.simulator,
                                 "policy_seeding": self.policy_seeding}
        if self.num_envs is not None:
            found["num_envs"] = self.num_envs
        return found

    @classmethod
    def from_json(cls, found: Mapping[str, Any], where: str) -> EvalSettings:
        """Read a manifest's ``settings`` (``where`` names it in errors); an older one's ``backend`` is its simulator.

        Raises:
            ScoreTableError: a field missing or of the wrong JSON type, a key no evaltk version wrote, or an env
                that is no env spec (:meth:`evaltk.envs.EnvSpec.from_json`).

        """
        fields = {("simulator" if key == "backend" else key): value for key, value in found.items()}
        unknown = sorted(set(fields) - set(_TYPES))
        if unknown:
            raise ScoreTableError(f"{where}: settings has unknown field(s) {unknown}; it was not written by evaltk "
                                  "evaluate: use another --out directory")
        for key, kinds in _TYPES.items():
            value = fields.get(key)
            if value is None and key == "num_envs":
                continue
            if isinstance(value, bool) or not isinstance(value, kinds):
                raise ScoreTableError(f"{where}: settings field {key!r} is {value!r}, expected "
                                      f"{' or '.join(k.__name__ for k in kinds)}; delete that directory and re-run")
        if fields["policy_seeding"] not in POLICY_SEEDINGS:
            raise ScoreTableError(f"{where}: settings field 'policy_seeding' is {fields['policy_seeding']!r}, "
                                  f"expected one of {POLICY_SEEDINGS}; delete that directory and re-run")
        if (fields.get("num_envs") is None) != (fields["policy_seeding"] == "per-episode"):
            raise ScoreTableError(f"{where}: settings field 'num_envs' is recorded for a per-batch-seeded policy, and "
                                  "only for one; delete that directory and re-run")
        try:
            env = EnvSpec.from_json(fields.pop("env"), "settings field 'env'")
        except SpecError as exc:
            raise ScoreTableError(f"{where}: {exc}; delete that directory and re-run") from None
        return cls(**fields, env=env)


_TYPES: dict[str, tuple[type, ...]] = {"checkpoint": (str,), "policy_digest": (str,), "env": (dict,),
                                       "seed": (int,), "simulator": (str,), "policy_seeding": (str,),
                                       "num_envs": (int,)}
"""Each settings field's JSON type."""


@dataclass(frozen=True)
class ScoreTable:
    """The returns read from one score table.

    Attributes:
        path: the file read.
        column: the column the scores came from.
        returns: ``float64[n_episodes]`` in file order.
        labels: distinct values of identifying columns present in the file (e.g. ``checkpoint``).
        seeds: ``int64[n_episodes]`` episode seeds in file order (``None`` unless every row has one).
        index: ``int64[n_episodes]`` episode indices in file order (``None`` unless every row has one).
        settings: the manifest's ``settings`` when the table has an evaltk evaluation's (``None`` otherwise).
        provenance: the manifest's ``provenance`` (``{}`` when none was recorded; module docstring).
        digests: per row, ``{"steps": hex, "obs": hex}`` from the digest columns (:data:`DIGEST_KEYS`), in file
            order; ``None`` unless every row has a ``digest`` (tables of older evaltk versions have none).
        frames: ``int64[n_episodes]`` episode lengths in frames, in file order (``None`` unless every row has one).
        steps: ``int64[n_episodes]`` episode lengths in env steps, in file order (``None`` unless every row has one).

    """

    path: Path
    column: str
    returns: npt.NDArray[np.float64] = field(repr=False)
    labels: dict[str, list[str]]
    seeds: npt.NDArray[np.int64] | None = field(default=None, repr=False)
    index: npt.NDArray[np.int64] | None = field(default=None, repr=False)
    settings: EvalSettings | None = None
    provenance: dict[str, Any] = field(default_factory=dict)
    digests: list[dict[str, str]] | None = field(default=None, repr=False)
    frames: npt.NDArray[np.int64] | None = field(default=None, repr=False)
    steps: npt.NDArray[np.int64] | None = field(default=None, repr=False)

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


def _names(names: Any) -> str:
    """Column names for a message: quoted (so odd characters stay on one line), at most 200 characters."""
    text = ", ".join(repr(str(n)) for n in names)
    return text if len(text) <= 200 else text[:197] + "..."


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
                values.append(check_csv_row(row, where, column))
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
            values.append(check_json_row(row, where, column))
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
        names = [key, *(old for old, new in OLD_COLUMN_NAMES.items() if new == key)]
        seen = sorted({str(r[name]) for r in rows for name in names if name in r and r[name] not in (None, "")})
        if seen:
            labels[key] = seen
    manifest = read_manifest(table)
    return ScoreTable(table, column, np.asarray(values, dtype=np.float64), labels, _int_column(rows, "seed"),
                      _int_column(rows, "index"), _settings_of(manifest, table),
                      {} if manifest is None else dict(manifest.get("provenance") or {}), row_digests(rows),
                      _int_column(rows, "frames"), _int_column(rows, "steps"))


def _settings_of(manifest: dict[str, Any] | None, table: Path) -> EvalSettings | None:
    """Return the manifest's settings; ``None`` when there are none or they are not an evaltk evaluation's."""
    try:
        return None if manifest is None else EvalSettings.from_json(manifest["settings"], str(table.parent))
    except ScoreTableError:
        return None


def row_digests(rows: list[dict[str, Any]]) -> list[dict[str, str]] | None:
    """Per row ``{"steps": ..., "obs": ...}`` from the digest columns; ``None`` unless every row has a ``digest``."""
    if not rows or not all(r.get("digest") for r in rows):
        return None
    return [{key: str(r[column]) for column, key in DIGEST_KEYS.items() if r.get(column)} for r in rows]


def _int_column(rows: list[dict[str, Any]], column: str) -> npt.NDArray[np.int64] | None:
    """``column`` as integers when every row has it (types were checked while reading), else ``None``."""
    if not all(r.get(column) not in (None, "") for r in rows):
        return None
    return np.asarray([int(r[column]) for r in rows], dtype=np.int64)


def read_manifest(table: str | Path) -> dict[str, Any] | None:
    """Return the manifest next to ``table``, or ``None`` (none, or unreadable: a table to compare stays usable)."""
    path = Path(table).parent / SETTINGS_FILE
    if not path.is_file():
        return None
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, OSError, UnicodeDecodeError):
        return None
    if not isinstance(manifest, dict) or not isinstance(manifest.get("settings"), dict):
        return None
    return manifest


def table_columns(path: Path) -> tuple[str, ...]:
    """Return the columns of the ``episodes.csv`` at ``path`` (one of :data:`LAYOUTS`).

    A missing or empty file has :data:`COLUMNS` (it is about to be written in the current layout).
    """
    if not path.exists() or path.stat().st_size == 0:
        return COLUMNS
    with open(path, encoding="utf-8", errors="replace") as fh:
        header = tuple(next(csv.reader([fh.readline()]), []))
    if header not in LAYOUTS:
        raise ScoreTableError(f"{path} has columns {list(header)}, expected {list(COLUMNS)}: it was not written "
                              "by evaltk evaluate; use another --out directory")
    return header


def read_table(path: Path, *, repair: bool = False) -> list[ScoreRow]:
    """Read the rows of an ``episodes.csv``; ``repair`` cuts off a partial last line (a killed writer's)."""
    data = path.read_bytes()
    if data and not data.endswith(b"\n"):
        if not repair:
            raise ScoreTableError(f"{path} ends with a partial row: re-run the evaluation to repair it")
        keep = data.rfind(b"\n") + 1
        with open(path, "r+b") as fh:
            fh.truncate(keep)
            os.fsync(fh.fileno())
        data = data[:keep]
    text = data.decode("utf-8", errors="replace")
    if not text.strip():
        return []
    reader = csv.DictReader(io.StringIO(text))
    if tuple(reader.fieldnames or ()) not in LAYOUTS:
        raise ScoreTableError(f"{path} has columns {reader.fieldnames}, expected {list(COLUMNS)}: it was not written "
                              "by evaltk evaluate; use another --out directory")
    return [ScoreRow.from_csv(raw, f"{path} line {n}") for n, raw in enumerate(reader, start=2)]


def _refuse_change(out: Path, what: str, old: dict[str, Any], new: dict[str, Any]) -> None:
    if old != new:
        diff = sorted(k for k in set(old) | set(new) if old.get(k) != new.get(k))
        raise ScoreTableError(f"{out} holds an evaluation with different {what} ({', '.join(diff)}: "
                              f"{[old.get(k) for k in diff]} there vs {[new.get(k) for k in diff]} now): refusing to "
                              "mix; use another --out or delete that directory")


def _refuse_simulator(out: Path, old: Any, new: dict[str, Any]) -> None:
    """Refuse rows of a simulator whose identity differs from the one that wrote the table (module docstring)."""
    if not isinstance(old, dict) or old == new:
        return
    from evaltk.envs.atari_settings import UNKNOWN
    from evaltk.verdict.differences import flatten

    was, now = flatten(old), flatten(new)
    changed = sorted(k for k in set(was) | set(now) if was.get(k) != now.get(k))
    shown = "; ".join(f"{k}: {was.get(k, UNKNOWN)!r} there, {now.get(k, UNKNOWN)!r} now" for k in changed[:4])
    more = f" (and {len(changed) - 4} more)" if len(changed) > 4 else ""
    raise ScoreTableError(f"{out} holds episodes of another simulator ({shown}{more}): refusing to mix them with "
                          "this one's; use a new --out (or delete that directory)")


def open_table(out: Path, settings: EvalSettings, *, provenance: dict[str, Any] | None = None,
               simulator: dict[str, Any] | None = None) -> list[ScoreRow]:
    """Create or reopen the table directory ``out`` (:func:`open_tables` of one); return the rows already there."""
    return open_tables([(out, settings, provenance or {}, simulator)])[0][0]


TableRequest = tuple[Path, EvalSettings, dict[str, Any], dict[str, Any] | None]  # out, settings, provenance, identity
FilesFor = Callable[[list[list[ScoreRow]]], Mapping[Path, Any]]  # each table's rows -> {path: JSON object}


def open_tables(tables: Sequence[TableRequest], *, files: FilesFor | None = None,
                ) -> list[tuple[list[ScoreRow], TableWriter]]:
    """Create or reopen each table directory; return each one's rows so far (resume) and its writer.

    A manifest of other settings, provenance or simulator identity (module docstring), a table without a manifest
    and an episode index twice are refused; a partial last line is cut off (:func:`read_table` with ``repair``).
    Every table is checked and read before anything is written; ``files`` then gets the rows and returns the
    caller's JSON files (``simulator.json``, validate's ``environment.json``), written with the new tables'
    manifests in one stage, before the new tables' headers (:class:`TableWriter`).
    """
    found = [_check_table(out, settings, provenance, simulator) for out, settings, provenance, simulator in tables]
    extra = files([rows for _, rows in found]) if files is not None else {}
    for out, *_ in tables:
        out.mkdir(parents=True, exist_ok=True)
    manifests = {out / SETTINGS_FILE: manifest for (out, *_), (manifest, _) in zip(tables, found, strict=True)
                 if manifest is not None}
    write_json_files({**manifests, **extra})
    return [(rows, TableWriter(out / TABLE_FILE, {r.index for r in rows}))
            for (out, *_), (_, rows) in zip(tables, found, strict=True)]


def _check_table(out: Path, settings: EvalSettings, provenance: dict[str, Any],
                 simulator: dict[str, Any] | None) -> tuple[dict[str, Any] | None, list[ScoreRow]]:
    """Check the table directory ``out`` (module docstring); return (a new table's manifest or None, its rows)."""
    manifest_path, table, recorded = out / SETTINGS_FILE, out / TABLE_FILE, dict(provenance)
    new: dict[str, Any] | None = None
    if manifest_path.exists():
        if (manifest := read_manifest(table)) is None:
            raise ScoreTableError(f"{manifest_path} is corrupt: delete {out} (or choose another --out) and re-run")
        old = {OLD_COLUMN_NAMES.get(k, k): v for k, v in manifest["settings"].items()}  # backend: simulator
        _refuse_change(out, "settings", old, settings.to_json())
        _refuse_change(out, "provenance", manifest.get("provenance", {}), recorded)
        if simulator is not None:
            _refuse_simulator(out, manifest.get("simulator"), json.loads(json.dumps(simulator)))
    elif table.exists() and table.stat().st_size > 0:
        raise ScoreTableError(f"{table} exists without {SETTINGS_FILE}: use another --out or delete it")
    else:
        new = {"format": MANIFEST_FORMAT, "settings": settings.to_json(), "columns": list(COLUMNS),
               "provenance": recorded, **({} if simulator is None else {"simulator": simulator})}
    if not table.exists() or table.stat().st_size == 0:
        return new, []
    rows = read_table(table, repair=True)
    seen: set[int] = set()
    for row in rows:
        if row.index in seen:
            raise ScoreTableError(f"{table} has episode {row.index} twice: delete the duplicate line and re-run")
        seen.add(row.index)
    return new, rows


class TableWriter:
    """Appends rows to ``episodes.csv`` as they arrive (flushed, fsynced), each episode index once.

    Rows are written in the file's own layout (:func:`table_columns`): a table of an older evaltk is resumed
    with its ``backend`` column and without digests if it had none, so every row of one table has the same columns.
    A missing or empty file gets the header of :data:`COLUMNS` first.
    """

    def __init__(self, path: Path, done: set[int]) -> None:
        self.path, self.done = path, set(done)
        self.columns = table_columns(path)
        self.rows: list[ScoreRow] = []
        if not path.exists() or path.stat().st_size == 0:
            self._append(",".join(COLUMNS) + "\n")

    def _append(self, text: str) -> None:
        with open(self.path, "a", encoding="utf-8") as table:
            table.write(text)
            table.flush()
            os.fsync(table.fileno())

    def write(self, row: ScoreRow) -> bool:
        """Write ``row`` unless its episode is already in the table; return whether it was written."""
        if row.index in self.done:
            return False
        self._append(row.csv_line(self.columns))
        self.done.add(row.index)
        self.rows.append(row if "digest" in self.columns else replace(row, digest="", obs_digest=""))
        return True
