"""Sample Factory Doom runs played by ``evaltk[doom]`` alone: the vendored scenario files and a Python without SF.

The commands run in a Python whose site-packages are this one's less Sample Factory's packages
(:func:`tests.evaltk.importers.without_sf.python_without_sf`): ``doom_battle`` (a vendored map) and
``doom_basic`` (ViZDoom's map, equal to Sample Factory's) play through ``evaluate``, ``validate`` and a
tournament; ``doom_duel_bots`` (``ssl2.wad``, not vendored) is refused in one line naming a command that
changes no environment, and still plays tournaments (matches are on cig.wad).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from evaltk.envs import doom_files
from evaltk.importers import sf_doom
from tests.data_paths import data_path
from tests.evaltk.importers.without_sf import python_without_sf, run_evaltk

pytestmark = pytest.mark.vizdoom
pytest.importorskip("vizdoom", reason="needs vizdoom (pip install 'evaltk[doom]')")

NOT_VENDORED = {"ssl2.wad", "dwango5.wad", "freedm.wad"}
"""Sample Factory's maps evaltk neither ships nor finds in ViZDoom (docs/importers.md)."""


@pytest.fixture(scope="module")
def no_sf(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[str], dict[str, str]]:
    """Return a Python without Sample Factory, its cache (``XDG_CACHE_HOME``) empty."""
    tmp = tmp_path_factory.mktemp("no_sf")
    return python_without_sf(tmp / "site", cache=tmp / "cache")


def test_every_env_cfg_is_vendored_and_its_map_found_or_named() -> None:
    """Each env's cfg is in evaltk; its map is evaltk's or ViZDoom's copy of Sample Factory's file, by sha256."""
    import vizdoom

    for env, row in sf_doom.SF_DOOM_ENVS.items():
        cfg = doom_files.SF_FOLDER / row.cfg
        assert cfg.is_file(), env
        wad = doom_files.cfg_wad(cfg)
        assert wad in doom_files.SF_WADS, env
        if wad in NOT_VENDORED:
            assert not (doom_files.SF_FOLDER / wad).exists()
            continue
        found = doom_files.sf_wad(wad, env)
        assert found.parent in (doom_files.SF_FOLDER, Path(vizdoom.scenarios_path)), env
    vendored = {p.name for p in doom_files.SF_FOLDER.glob("*.wad")}
    assert vendored == {"battle.wad", "battle2.wad", "two_colors_easy.wad", "two_colors_hard.wad",
                        "health_gathering_supreme.wad"}
    assert (doom_files.SF_FOLDER / "LICENSE").read_text().startswith("MIT License")


def test_vendored_files_are_sample_factorys_own() -> None:
    """Byte for byte the files of the installed Sample Factory 2.1.1 (skipped where it is not installed)."""
    found = pytest.importorskip("sf_examples", reason="needs sample-factory to compare with")
    theirs = Path(next(iter(found.__path__))) / "vizdoom" / "doom" / "scenarios"
    ours = sorted(p for p in doom_files.SF_FOLDER.iterdir() if p.suffix in (".cfg", ".wad"))
    assert len(ours) == 22
    for path in ours:
        assert path.read_bytes() == (theirs / path.name).read_bytes(), path.name
    assert {p.name for p in theirs.glob("*.cfg")} == {p.name for p in ours if p.suffix == ".cfg"}


def test_fixtures_hold_no_machine_paths() -> None:
    """No string of a fixture's config.json is an absolute path (the machine that trained it is not recorded)."""
    for name in ("basic", "battle", "defend_the_center", "duel_bots"):
        text = (data_path(f"sf_doom/{name}") / "config.json").read_text()
        assert not re.search(r'(^|[\s"=])/(work|tmp|home|root|Users)/', text), name
        assert json.loads(text)["train_dir"] == "train_dir"


def test_evaluate_and_validate_without_sample_factory(no_sf: tuple[list[str], dict[str, str]],
                                                      tmp_path: Path) -> None:
    """The caveats are printed once, before the first episode; rows are written; validate compares the tables."""
    prefix, env = no_sf
    run = run_evaltk(prefix, env, ["evaluate", str(data_path("sf_doom/battle")), "--episodes", "2", "--out",
                                   str(tmp_path / "a")])
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stderr.count("imported from sample-factory") == 1
    assert run.stderr.index("true_objective") < run.stderr.index("episodes")
    rows = (tmp_path / "a" / "episodes.csv").read_text().splitlines()
    assert len(rows) == 3
    assert "sf_doom_battle" in rows[1]
    base = run_evaltk(prefix, env, ["evaluate", str(data_path("sf_doom/basic")), "--episodes", "3", "--out",
                                    str(tmp_path / "b")])
    assert base.returncode == 0, base.stderr[-2000:]
    check = run_evaltk(prefix, env, ["validate", str(data_path("sf_doom/basic")), "--sim", "gym", "--baseline",
                                     str(tmp_path / "b" / "episodes.csv"), "--episodes", "3", "--seed", "1",
                                     "--margin", "1", "--out", str(tmp_path / "v")])
    assert check.returncode == 0, check.stderr[-2000:]
    assert check.stderr.count("imported from sample-factory") == 1
    assert "verdict:" in check.stdout


def test_a_map_evaltk_lacks_is_one_line_naming_a_command_that_changes_no_environment(
        no_sf: tuple[list[str], dict[str, str]], tmp_path: Path) -> None:
    prefix, env = no_sf
    run = run_evaltk(prefix, env, ["evaluate", str(data_path("sf_doom/duel_bots")), "--episodes", "1", "--out",
                                   str(tmp_path / "e")])
    lines = run.stderr.strip().splitlines()
    assert run.returncode == 2, run.stderr
    target = Path(env["XDG_CACHE_HOME"]) / "evaltk" / "sample-factory"
    assert lines[-1] == (f"error: scenario 'sf_doom_duel_bots' plays Sample Factory's map ssl2.wad, which evaltk does "
                         f"not ship: pip install --no-deps --target {target} sample-factory==2.1.1 (Sample Factory's "
                         "files go to that folder only; this environment is not changed)")
    assert not (tmp_path / "e").exists()  # refused before any table is opened


def test_a_tournament_plays_the_duel_bots_run_without_sample_factory(no_sf: tuple[list[str], dict[str, str]],
                                                                     tmp_path: Path) -> None:
    """Matches are on cig.wad: the run's own map (ssl2.wad, not vendored) is not needed; --deterministic applies."""
    prefix, env = no_sf
    run = run_evaltk(prefix, env, ["tournament", "round-robin", "--agents", str(data_path("sf_doom/duel_bots")),
                                   "builtin:random", "--deterministic", "--bots", "1", "--matches", "1", "--timelimit",
                                   "0.1", "--concurrency", "1", "--out", str(tmp_path / "t"), "--json"])
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stderr.count("imported from sample-factory") == 1
    assert "not on sf_doom_duel_bots" in run.stderr
    summary = json.loads(run.stdout.strip().splitlines()[-1])
    assert summary["matches_played"] == 1
    imported = [a for a in summary["agents"] if "sample-factory" in a]
    assert len(imported) == 1  # Sample Factory's default is sampled actions; --deterministic made it greedy
    assert json.loads((Path(imported[0]) / "policy.json").read_text())["model_kwargs"]["actions"] == "greedy"
