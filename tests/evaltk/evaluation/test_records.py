"""A score row and a table's settings: each record's JSON form is the one the files hold, key for key, and reads back.

``ScoreRow`` is :mod:`evaltk.evaluation.records`'s, ``EvalSettings`` :mod:`evaltk.evaluation.scores`'.
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import replace

import pytest

from evaltk.errors import ScoreTableError
from evaltk.evaluation.records import ScoreRow
from evaltk.evaluation.scores import BACKEND_COLUMNS, COLUMNS, LEGACY_COLUMNS, EvalSettings

ROW = ScoreRow(checkpoint="suites/checkpoints/a2c_breakout", env_id="ALE/Breakout-v5", simulator="gpu_env", index=3,
               seed=8_364_573_462_198_741_337, episode_return=7.0, frames=1_236, steps=309, truncated=False,
               digest="0f" * 16, obs_digest="a1" * 16)
SETTINGS_JSON = ('{"checkpoint": "suites/checkpoints/a2c_breakout", "policy_digest": "5e1d", "env": {"family": '
                 '"atari", "env_id": "ALE/Breakout-v5", "kwargs": {"frameskip": 4}, "preprocessing": {"frame_stack": '
                 '1}}, "seed": 0, "simulator": "gym", "policy_seeding": "per-episode"}')
"""A manifest's settings as ``json.dumps`` writes them (key order included)."""


def test_a_row_is_keyed_by_its_column_names_in_column_order() -> None:
    assert tuple(ROW.to_json()) == COLUMNS
    assert ROW.to_json()["return"] == 7.0
    assert ScoreRow.from_json(ROW.to_json()) == ROW


@pytest.mark.parametrize("columns", [COLUMNS, BACKEND_COLUMNS, LEGACY_COLUMNS])
def test_a_row_reads_back_from_its_csv_line_in_every_layout(columns: tuple[str, ...]) -> None:
    line = ROW.csv_line(columns)
    assert line.endswith("\n")
    assert line.count("\n") == 1
    raw = next(csv.DictReader(io.StringIO(",".join(columns) + "\n" + line)))
    back = ScoreRow.from_csv(raw, "t.csv line 2")
    assert back == (ROW if "digest" in columns else replace(ROW, digest="", obs_digest=""))
    assert line.rstrip("\n").split(",")[columns.index("truncated")] == "false"


def test_a_csv_line_writes_values_as_the_csv_module_does() -> None:
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerow([
        value if key != "truncated" else str(value).lower() for key, value in ROW.to_json().items()])
    assert ROW.csv_line(COLUMNS) == buf.getvalue()


@pytest.mark.parametrize(("change", "message"), [({"truncated": "yes"}, "truncated='yes', expected true/false"),
                                                 ({"seed": "x"}, "is malformed"),
                                                 ({"return": ""}, "is malformed")])
def test_a_bad_csv_record_is_refused_naming_the_line(change: dict[str, str], message: str) -> None:
    raw = {key: str(value) for key, value in ROW.to_json().items()} | {"truncated": "false"} | change
    with pytest.raises(ScoreTableError, match=message) as caught:
        ScoreRow.from_csv(raw, "t.csv line 7")
    assert str(caught.value).startswith("t.csv line 7")


def test_settings_write_the_json_they_read_byte_for_byte() -> None:
    settings = EvalSettings.from_json(json.loads(SETTINGS_JSON), "out")
    assert settings.simulator == "gym"
    assert settings.num_envs is None
    assert json.dumps(settings.to_json()) == SETTINGS_JSON
    batched = replace(settings, policy_seeding="per-batch", num_envs=8)
    assert list(batched.to_json())[-1] == "num_envs"
    assert EvalSettings.from_json(batched.to_json(), "out") == batched


def test_an_older_manifests_backend_is_its_simulator() -> None:
    old = {("backend" if key == "simulator" else key): value for key, value in json.loads(SETTINGS_JSON).items()}
    assert EvalSettings.from_json(old, "out").simulator == "gym"


@pytest.mark.parametrize(("change", "message"), [({"seed": "0"}, "'seed' is '0', expected int"),
                                                 ({"seed": True}, "'seed' is True"),
                                                 ({"env": None}, "'env' is None, expected dict"),
                                                 ({"env": {"env_id": "ALE/Pong-v5"}},
                                                  r"runs/x: settings field 'env'\.family must be a string"),
                                                 ({"env": {"family": "atari", "env_id": "x", "notes": 1}},
                                                  r"'env' has unknown key\(s\) notes.*delete that directory"),
                                                 ({"colour": 1}, r"unknown field\(s\) \['colour'\]"),
                                                 ({"policy_seeding": "never"}, "'policy_seeding' is 'never'"),
                                                 ({"num_envs": 4}, "'num_envs' is recorded for a per-batch")])
def test_bad_settings_are_refused_naming_the_field(change: dict[str, object], message: str) -> None:
    with pytest.raises(ScoreTableError, match=message):
        EvalSettings.from_json({**json.loads(SETTINGS_JSON), **change}, "runs/x")
