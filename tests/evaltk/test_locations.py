"""evaltk.locations.anchor: a relative local path is taken from the given folder; other locations stay as written."""

from __future__ import annotations

from pathlib import Path

from evaltk.locations import anchor


def test_a_relative_path_is_taken_from_the_folder_not_the_working_folder(tmp_path: Path) -> None:
    assert anchor("agents/../agents/a", tmp_path) == str(tmp_path.resolve() / "agents" / "a")
    assert anchor(str(tmp_path / "b"), Path("/elsewhere")) == str(tmp_path / "b")


def test_builtins_and_hub_locations_are_not_paths(tmp_path: Path) -> None:
    for ref in ("random", "builtin:scripted", "hf://org/repo@main/sub"):
        assert anchor(ref, tmp_path) == ref
