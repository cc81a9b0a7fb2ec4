"""The env spec record (evaltk.envs.spec): JSON round trip, bad documents refused, the shipped checkpoints' env."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from evaltk.checkpoint import load_spec
from evaltk.envs import EnvSpec
from evaltk.envs.spec import ENV_KEYS
from evaltk.errors import SpecError

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = sorted((ROOT / "suites" / "checkpoints").glob("*/policy.json"))

_json_leaf = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8)
_json = st.recursive(_json_leaf, lambda inner: st.lists(inner, max_size=3)
                     | st.dictionaries(st.text(max_size=8), inner, max_size=3), max_leaves=8)
_objects = st.dictionaries(st.text(max_size=12), _json, max_size=4)


@given(family=st.text(max_size=10), env_id=st.text(max_size=20), kwargs=_objects, preprocessing=_objects)
def test_json_round_trip(family: str, env_id: str, kwargs: dict[str, Any], preprocessing: dict[str, Any]) -> None:
    document = {"family": family, "env_id": env_id, "kwargs": kwargs, "preprocessing": preprocessing}
    spec = EnvSpec.from_json(document)
    assert spec.to_json() == document
    assert list(spec.to_json()) == list(ENV_KEYS)
    assert json.dumps(spec.to_json()) == json.dumps(document)
    assert EnvSpec.from_json(json.loads(json.dumps(spec.to_json()))) == spec


def test_kwargs_and_preprocessing_may_be_left_out() -> None:
    spec = EnvSpec.from_json({"family": "doom", "env_id": "basic"})
    assert spec == EnvSpec("doom", "basic")
    assert spec.to_json() == {"family": "doom", "env_id": "basic", "kwargs": {}, "preprocessing": {}}


def test_to_json_hands_out_copies() -> None:
    spec = EnvSpec("atari", "ALE/Pong-v5", {"frameskip": 4}, {"frame_stack": 1})
    spec.to_json()["kwargs"]["frameskip"] = 1
    assert spec.kwargs == {"frameskip": 4}


@pytest.mark.parametrize(("document", "names"), [
    (["atari", "ALE/Pong-v5"], "must be a JSON object"),
    ({"family": "atari", "env_id": "ALE/Pong-v5", "not_equivalent": []}, "unknown key(s) not_equivalent"),
    ({"env_id": "ALE/Pong-v5"}, "env.family must be a string"),
    ({"family": "atari", "env_id": 5}, "env.env_id must be a string"),
    ({"family": "atari", "env_id": "ALE/Pong-v5", "kwargs": None}, "env.kwargs must be a JSON object"),
    ({"family": "atari", "env_id": "ALE/Pong-v5", "preprocessing": [1]}, "env.preprocessing must be a JSON object"),
])
def test_bad_documents_are_refused_in_one_line(document: Any, names: str) -> None:
    with pytest.raises(SpecError) as caught:
        EnvSpec.from_json(document)
    assert names in str(caught.value)
    assert "\n" not in str(caught.value)


def test_where_names_the_document() -> None:
    with pytest.raises(SpecError, match=r"^runs/x/demos\.json env\.env_id must be a string"):
        EnvSpec.from_json({"family": "doom", "env_id": None}, "runs/x/demos.json env")


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.parent.name)
def test_every_shipped_checkpoints_env_is_its_json(path: Path) -> None:
    """``to_json()`` of a shipped checkpoint's env is the file's ``env`` object: same keys, order and values."""
    found = json.loads(path.read_text(encoding="utf-8"))["env"]
    spec = load_spec(path.parent).env_spec
    assert spec.to_json() == found
    assert json.dumps(spec.to_json()) == json.dumps(found)


def test_three_checkpoints_are_shipped() -> None:
    assert [p.parent.name for p in SHIPPED] == ["a2c_breakout", "appo_duel", "appo_duel_pixels"]


def test_a_checkpoints_notes_are_not_its_env(tmp_path: Path) -> None:
    """An imported checkpoint's ``env.not_equivalent`` note stays in policy.json; its env spec is the four keys."""
    from evaltk.checkpoint import CheckpointSpec

    env = {**load_spec(SHIPPED[0].parent).env, "not_equivalent": ["FIRE on reset"]}
    spec = CheckpointSpec(model_class="builtin:random", model_kwargs={}, obs_spec={"shape": [4], "dtype": "uint8"},
                          action_spec={"type": "discrete", "n": 4}, env=env)
    assert spec.env_spec.to_json() == {k: v for k, v in env.items() if k != "not_equivalent"}
    assert spec.env["not_equivalent"] == ["FIRE on reset"]
