"""evaltk.evaluation.scores: column types enforced on read, errors naming file, row and column; fuzzed real tables."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evaltk.envs import EnvSpec
from evaltk.errors import ScoreTableError
from evaltk.evaluation.records import ScoreRow
from evaltk.evaluation.scores import (
    COLUMNS,
    MANIFEST_FORMAT,
    SETTINGS_FILE,
    TABLE_FILE,
    EvalSettings,
    TableWriter,
    open_table,
    open_tables,
    read_manifest,
    read_scores,
    read_table,
)

_CSV = ("checkpoint,env_id,backend,index,seed,return,frames,steps,truncated\n"
        "builtin:random,ALE/Pong-v5,gym,0,11,-21.0,3000,750,false\n"
        "builtin:random,ALE/Pong-v5,gym,1,12,-20.0,3100,775,false\n")


def _jsonl(rows: list[dict[str, object]]) -> str:
    return "".join(json.dumps(r) + "\n" for r in rows)


_ROW = {"checkpoint": "c", "env_id": "ALE/Pong-v5", "index": 0, "seed": 1, "return": 5.0, "frames": 10,
        "truncated": False}


@pytest.mark.parametrize(("column", "value"), [("return", "5"), ("return", True), ("return", None),
                                                ("seed", 1.5), ("seed", "1"), ("frames", "10"),
                                                ("truncated", "false"), ("env_id", 3)])
def test_jsonl_types_are_enforced(tmp_path: Path, column: str, value: object) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(_jsonl([_ROW, {**_ROW, column: value}]))
    with pytest.raises(ScoreTableError, match=rf"t\.jsonl:2, column '{column}'"):
        read_scores(path)


def test_quoted_return_names_file_row_and_column(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(_jsonl([{"return": "5"}]))
    with pytest.raises(ScoreTableError, match=r"t\.jsonl:1, column 'return': expected a JSON number, got '5' "
                                              r"\(a quoted string"):
        read_scores(path)


@pytest.mark.parametrize(("old", "new", "column"), [("-21.0", "abc", "return"), ("11", "11.5", "seed"),
                                                     ("3000", "3e3", "frames"), ("false", "maybe", "truncated")])
def test_csv_types_are_enforced(tmp_path: Path, old: str, new: str, column: str) -> None:
    path = tmp_path / "t.csv"
    path.write_text(_CSV.replace(old, new, 1))
    with pytest.raises(ScoreTableError, match=rf"t\.csv:2 \(row 1\), column '{column}'"):
        read_scores(path)


def test_valid_tables_read(tmp_path: Path) -> None:
    (tmp_path / "t.csv").write_text(_CSV)
    (tmp_path / "t.jsonl").write_text(_jsonl([_ROW, {**_ROW, "return": 7}]))
    assert read_scores(tmp_path / "t.csv").returns.tolist() == [-21.0, -20.0]
    assert read_scores(tmp_path / "t.jsonl").returns.tolist() == [5.0, 7.0]


def _fuzz_table(tmp: Path, data: st.DataObject) -> None:
    name = data.draw(st.sampled_from(["t.csv", "t.jsonl", "t.tsv", "t.txt"]))
    text = _CSV if name != "t.jsonl" else _jsonl([_ROW, {**_ROW, "return": 7}])
    raw = bytearray(text.encode())
    for _ in range(data.draw(st.integers(1, 6))):
        op = data.draw(st.sampled_from(["set", "delete", "insert"]))
        pos = data.draw(st.integers(0, max(0, len(raw) - 1)))
        byte = data.draw(st.sampled_from([*b'",{}[]\n\r\t0-9.eE', 0, 0xFF, 0xC3]))
        if op == "set" and raw:
            raw[pos] = byte
        elif op == "delete" and raw:
            del raw[pos]
        else:
            raw.insert(pos, byte)
    (tmp / name).write_bytes(bytes(raw))
    message = None
    try:
        table = read_scores(tmp / name)
    except ScoreTableError as exc:
        message = str(exc)
    if message is not None:
        assert "\n" not in message.strip(), message
    else:
        assert table.n >= 1


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_mutated_tables_read_or_fail_cleanly(tmp_path: Path, data: st.DataObject) -> None:
    _fuzz_table(tmp_path, data)


@pytest.mark.slow
@settings(max_examples=5000, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_mutated_tables_long(tmp_path: Path, data: st.DataObject) -> None:
    _fuzz_table(tmp_path, data)


def _row(index: int, ret: float) -> ScoreRow:
    return ScoreRow(checkpoint="hf://org/repo", env_id="ALE/Pong-v5", simulator="gym", index=index, seed=100 + index,
                    episode_return=ret, frames=40, steps=10, truncated=index == 1)


def _settings(checkpoint: str, seed: int) -> EvalSettings:
    return EvalSettings(checkpoint=checkpoint, policy_digest="ab" * 16, env=EnvSpec("atari", "ALE/Pong-v5"), seed=seed,
                        simulator="gym", policy_seeding="per-episode")


def test_written_table_reads_back_with_its_provenance_and_resumes(tmp_path: Path) -> None:
    settings = _settings("hf://org/repo", 100)
    provenance = {"checkpoint": {"source": "hf", "repo": "org/repo", "revision": "0123abcd", "path": ""}}
    assert open_table(tmp_path, settings, provenance=provenance) == []
    writer = TableWriter(tmp_path / TABLE_FILE, set())
    assert writer.write(_row(0, -21.0))
    assert writer.write(_row(1, -20.5))
    assert not writer.write(_row(1, 99.0))  # each episode index once
    table = read_scores(tmp_path)
    assert table.returns.tolist() == [-21.0, -20.5]
    assert table.seeds is not None
    assert table.seeds.tolist() == [100, 101]
    assert table.provenance == provenance
    assert table.settings == settings
    assert read_manifest(tmp_path / TABLE_FILE) == {"format": MANIFEST_FORMAT, "settings": settings.to_json(),
                                                    "columns": list(COLUMNS), "provenance": provenance}
    assert read_table(tmp_path / TABLE_FILE) == [_row(0, -21.0), _row(1, -20.5)]
    with (tmp_path / TABLE_FILE).open("a") as fh:
        fh.write("hf://org/repo,ALE/Pong-v5,gym,2,10")  # a killed writer's partial line
    with pytest.raises(ScoreTableError, match="partial row"):
        read_table(tmp_path / TABLE_FILE)
    resumed = open_table(tmp_path, settings, provenance=provenance)  # repairs, returns the finished rows
    assert [r.index for r in resumed] == [0, 1]
    other = {"checkpoint": {**provenance["checkpoint"], "revision": "fedc9876"}}
    with pytest.raises(ScoreTableError, match="different provenance"):
        open_table(tmp_path, settings, provenance=other)
    with pytest.raises(ScoreTableError, match="different settings"):
        open_table(tmp_path, replace(settings, seed=1), provenance=provenance)



def test_open_tables_checks_every_table_before_writing_any_file(tmp_path: Path) -> None:
    settings = _settings("builtin:random", 0)
    first, second = tmp_path / "a", tmp_path / "b"
    second.mkdir()
    (second / SETTINGS_FILE).write_text("{not json")
    asked: list[object] = []

    def files(rows: list[list[ScoreRow]]) -> dict[Path, object]:
        asked.append(rows)
        return {first / "side.json": {"rows": len(rows[0])}}

    with pytest.raises(ScoreTableError, match="is corrupt"):
        open_tables([(first, settings, {}, None), (second, settings, {}, None)], files=files)
    assert not first.exists()  # the refused second table left the first unwritten
    assert asked == []
    (second / SETTINGS_FILE).unlink()
    opened = open_tables([(first, settings, {}, None), (second, settings, {}, None)], files=files)
    assert asked == [[[], []]]
    assert [rows for rows, _ in opened] == [[], []]
    assert json.loads((first / "side.json").read_text()) == {"rows": 0}
    for out in (first, second):
        assert read_manifest(out / TABLE_FILE) == {"format": MANIFEST_FORMAT, "settings": settings.to_json(),
                                                   "columns": list(COLUMNS), "provenance": {}}
        assert (out / TABLE_FILE).read_text() == ",".join(COLUMNS) + "\n"

def test_a_table_without_manifest_has_empty_provenance(tmp_path: Path) -> None:
    (tmp_path / "t.csv").write_text(_CSV)
    table = read_scores(tmp_path / "t.csv")
    assert table.provenance == {}
    assert table.settings is None
    assert table.index is not None
    assert table.index.tolist() == [0, 1]


@pytest.mark.parametrize("column", ["simulator", "backend"])
def test_the_simulator_column_reads_under_its_name_and_its_old_name(tmp_path: Path, column: str) -> None:
    path = tmp_path / "scores.csv"
    path.write_text(_CSV.replace("backend", column, 1))
    table = read_scores(path)
    assert table.labels == {"checkpoint": ["builtin:random"], "env_id": ["ALE/Pong-v5"], "simulator": ["gym"]}
    assert "simulator=gym" in table.describe()
