"""``hf://`` locations: their form, the safe YAML reader, the env id from a repo's metadata, bad input as one line."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from evaltk.hub import HubError, HubLocation, metadata_env_id, parse, safe_yaml
from evaltk.locations import table_provenance
from tests.evaltk.cli_helpers import error_line

SHA = "0123456789abcdef0123456789abcdef01234567"
_name = st.from_regex(r"[A-Za-z0-9]([A-Za-z0-9_-]{0,20}[A-Za-z0-9])?", fullmatch=True)
_part = st.from_regex(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,12}", fullmatch=True).filter(lambda p: p not in (".", ".."))


@pytest.mark.parametrize(("ref", "want"), [
    ("hf://sb3/ppo-BreakoutNoFrameskip-v4", HubLocation("sb3/ppo-BreakoutNoFrameskip-v4")),
    ("hf://org/repo@v1.2", HubLocation("org/repo", "v1.2")),
    (f"hf://org/repo@{SHA}/checkpoint_p0/c_1.pth", HubLocation("org/repo", SHA, "checkpoint_p0/c_1.pth")),
    ("hf://org/repo/sub/", HubLocation("org/repo", None, "sub")),
])
def test_parse(ref: str, want: HubLocation) -> None:
    assert parse(ref) == want


@given(_name, _name, st.none() | _name, st.lists(_part, max_size=3))
def test_parse_reads_back_what_it_prints(org: str, repo: str, rev: str | None, path: list[str]) -> None:
    location = HubLocation(f"{org}/{repo}", rev, "/".join(path) or None)
    assert parse(str(location)) == location


@pytest.mark.parametrize(("ref", "says"), [
    ("hf://", "has no ORG/REPO"),
    ("hf://org", "has no ORG/REPO"),
    ("hf://org/", "has no ORG/REPO"),
    ("hf://org/repo@", "empty or blank revision"),
    ("hf://-org/repo", "ORG '-org' is not a Hub name"),
    ("hf://org/re po", "REPO 're po' is not a Hub name"),
    ("hf://org/a--b", "REPO 'a--b' is not a Hub name"),
    ("hf://org/repo/../x", "PATH '../x' has an empty, '.' or '..' part"),
    ("hf://org/repo//x", "PATH '/x' has an empty"),
])
def test_malformed_locations_are_refused(ref: str, says: str) -> None:
    with pytest.raises(HubError, match=f"^{ref!r}".replace("\\", "\\\\").replace("(", r"\(")) as info:
        parse(ref)
    assert says in str(info.value)


@pytest.mark.parametrize("command", [["evaluate", "hf://org/re po", "--out", "OUT"],
                                     ["import", "hf://org/repo@", "--out", "OUT"],
                                     ["tournament", "gauntlet", "--agent", "hf://org", "--bots", "1", "--out", "OUT"]])
def test_malformed_location_is_one_error_line_on_every_command(command: list[str], tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    argv = [str(tmp_path / "o") if a == "OUT" else a for a in command]
    location = next(a for a in argv if a.startswith("hf://"))
    line = error_line(capsys, argv)
    assert line.startswith(f"error: {location!r}")
    assert "use hf://ORG/REPO[@REVISION][/PATH]" in line


def test_safe_yaml_reads_rl_zoo_ordered_dicts_and_refuses_other_python_tags(tmp_path: Path) -> None:
    zoo = "!!python/object/apply:collections.OrderedDict\n- - - env\n    - PongNoFrameskip-v4\n  - - n_envs\n    - 8\n"
    assert safe_yaml(zoo, "args.yml") == {"env": "PongNoFrameskip-v4", "n_envs": 8}
    marker = tmp_path / "PWNED_yaml"
    hostile = f"!!python/object/apply:os.system\n- touch {marker}\n"
    with pytest.raises(HubError, match=r"^args.yml is not YAML evaltk reads \(could not determine a constructor for "
                                       r"the tag 'tag:yaml.org,2002:python/object/apply:os.system'\)"):
        safe_yaml(hostile, "args.yml")
    assert not marker.exists()


def _card(env: str) -> str:
    return ("---\nlibrary_name: x\nmodel-index:\n- name: PPO\n  results:\n  - task:\n"
            f"      type: reinforcement-learning\n    dataset:\n      name: {env}\n      type: {env}\n---\n# card\n")


def test_env_id_comes_from_the_first_metadata_file_that_names_one(tmp_path: Path) -> None:
    snap = tmp_path / SHA
    snap.mkdir()
    assert metadata_env_id(snap) == (None, None)
    (snap / "README.md").write_text(_card("SpaceInvadersNoFrameskip-v4"))
    assert metadata_env_id(snap) == ("SpaceInvadersNoFrameskip-v4", "README.md")
    (snap / "config.json").write_text('{"env": "doom_basic"}')
    assert metadata_env_id(snap) == ("doom_basic", "config.json")
    (snap / "args.yml").write_text("!!python/object/apply:collections.OrderedDict\n- - - env\n    - Pong-v5\n")
    assert metadata_env_id(snap) == ("Pong-v5", "args.yml")


def test_a_card_without_front_matter_names_nothing(tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text("# PPO\nmodel-index: not front matter\n")
    assert metadata_env_id(tmp_path) == (None, None)


def test_table_provenance_is_read_from_the_pinned_label() -> None:
    assert table_provenance("runs/a2c/final") == {}
    assert table_provenance("builtin:random") == {}
    assert table_provenance(f"hf://org/repo@{SHA}/m.zip") == {
        "checkpoint": {"source": "hf", "repo": "org/repo", "revision": SHA, "path": "m.zip"}}
