"""ALE's name fallback: a ROM whose md5 ALE does not know runs with the rules of the game it is named after.

The 25 TIA/RIOT test programs (``tests/data/atari/roms``, md5s unknown to ALE) are copied under a
game's name and run in :class:`gpu_env.AtariBatch` from power-on (loadROM): as ``earthworld.bin``
(one mode, no start-up actions: the rules do not touch the picture) every frame's screen and RAM
must equal ale-py 0.12.1's recording (``ale_reference_noop300.json.gz``: after loadROM, then 300
NOOP frames); under other names (paddle, multi-mode and always-terminal rules) every frame's
screen, RAM, reward, lives and game over must equal a live ``ALEInterface`` loading the same file,
with random actions.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import gpu_env
from gpu_env import game_lookup, games
from gpu_env.errors import RomError
from gpu_env.roms import load_rom
from tests.data_paths import data_exists, data_path

REFERENCE = "atari/ale_reference_noop300.json.gz"
MISSING = "<missing test data>"
RECORDED_AS = "earthworld"  # the name the reference was recorded under (its settings: see the data README)
LIVE_NAMES = ("pong", "breakout", "boxing")  # 2 modes / 4 modes and a setMode program / terminal from RAM
LIVE_ROMS = ("blnktest_ext.bin", "playfield_3.bin", "rdy.bin", "starfield.bin", "pos_player_switching.bin")
LIVE_FRAMES = 200


def _reference() -> dict[str, Any]:
    with gzip.open(data_path(REFERENCE)) as fh:
        data: dict[str, Any] = json.load(fh)
    return data


def _test_programs() -> list[str]:
    """Return the 25 test programs of the reference (tetris.bin is a known ROM), or one failing placeholder."""
    if not data_exists(REFERENCE):
        return [MISSING]
    return sorted(name for name, entry in _reference()["roms"].items() if name != "tetris.bin")


@pytest.fixture(scope="module")
def reference() -> dict[str, Any]:
    return _reference()


def _renamed(name: str, game: str, tmp_path: Path) -> Path:
    target = tmp_path / f"{game}.bin"
    shutil.copy(data_path(f"atari/roms/{name}"), target)
    return target


def _md5(screen: np.ndarray) -> str:
    return hashlib.md5(screen.tobytes()).hexdigest()


def test_there_are_25_unknown_test_programs(reference: dict[str, Any]) -> None:
    names = _test_programs()
    assert len(names) == 25
    known = {info.md5 for info in games.games().values()}
    assert not {reference["roms"][n]["rom_md5"] for n in names} & known


@pytest.mark.parametrize("name", _test_programs())
def test_renamed_test_rom_matches_ale_from_power_on(name: str, reference: dict[str, Any], tmp_path: Path) -> None:
    expected = reference["roms"][name]
    assert reference["settings"]["rom_renamed_to"] == f"{RECORDED_AS}.bin"
    batch = gpu_env.AtariBatch(_renamed(name, RECORDED_AS, tmp_path), 1, seeds=[0], repeat_action_probability=0.0,
                               num_threads=1)
    assert list(batch.get_screen().shape[1:]) == expected["screen_shape"]
    assert _md5(batch.get_screen()[0]) == expected["after_load"]["screen_md5"], f"{name}: screen after loadROM"
    assert batch.get_ram()[0].tobytes().hex() == expected["after_load"]["ram"], f"{name}: RAM after loadROM"
    noop = np.zeros(1, dtype=np.int64)
    for step in expected["steps"]:
        batch.act(noop)
        frame = step["frame"]
        assert batch.get_ram()[0].tobytes().hex() == step["ram"], f"{name}: RAM differs at frame {frame}"
        assert _md5(batch.get_screen()[0]) == step["screen_md5"], f"{name}: screen differs at frame {frame}"


@pytest.mark.parametrize("game", LIVE_NAMES)
def test_renamed_test_roms_match_live_ale_py_with_actions(game: str, tmp_path: Path) -> None:
    import ale_py

    for name in LIVE_ROMS:
        path = _renamed(name, game, tmp_path)
        ale = ale_py.ALEInterface()
        ale.setLoggerMode(ale_py.LoggerMode.Error)
        ale.setInt("random_seed", 0)
        ale.setFloat("repeat_action_probability", 0.0)
        ale.loadROM(str(path))
        batch = gpu_env.AtariBatch(path, 1, seeds=[0], repeat_action_probability=0.0, num_threads=1)
        actions = list(ale.getMinimalActionSet())
        assert batch.minimal_action_set().tolist() == [a.value for a in actions]
        assert batch.get_screen()[0].shape == ale.getScreen().shape
        rng = np.random.default_rng(0)
        for frame in range(1, LIVE_FRAMES + 1):
            action = actions[int(rng.integers(len(actions)))]
            reward = ale.act(action)
            ours = batch.act(np.array([action.value], dtype=np.int64))
            where = f"{name} as {game}.bin, frame {frame}"
            assert np.array_equal(batch.get_ram()[0], ale.getRAM()), f"{where}: RAM"
            assert np.array_equal(batch.get_screen()[0], ale.getScreen()), f"{where}: screen"
            assert (int(ours[0]), bool(batch.game_over()[0]), int(batch.lives()[0])) == (
                int(reward), bool(ale.game_over()), int(ale.lives())), f"{where}: reward / game over / lives"


def test_name_fallback_takes_the_games_rules_and_stellas_default_properties(tmp_path: Path) -> None:
    rom = load_rom(_renamed("starfield.bin", "Pong", tmp_path))  # ALE lower-cases the stem
    info = game_lookup.game_for_rom(rom)
    pong = games.game_info("pong")
    assert game_lookup.is_named_unknown_rom(info)
    assert (info.rom_id, info.minimal_actions, info.modes, info.paddle_max) == (
        "pong", pong.minimal_actions, pong.modes, pong.paddle_max)
    assert pong.paddles
    assert not info.paddles  # paddles are a property of Pong's cartridge (by md5), not of its rules
    assert (info.md5, info.controllers, info.ystart, info.height_prop) == (rom.md5, ("JOYSTICK", "JOYSTICK"), 34, 210)
    assert game_lookup.with_probed_display(info, pal=True).screen_height == 250
    assert game_lookup.with_probed_display(info, pal=False).screen_height == 210
    assert game_lookup.with_probed_display(pong, pal=True) is pong  # known ROMs keep their measured facts


def test_known_rom_keeps_its_own_rules_under_another_name(tmp_path: Path) -> None:
    """A known md5 wins over the name (as in ALE when the md5's game comes first in its table, as here)."""
    import ale_py

    target = tmp_path / "zaxxon.bin"
    shutil.copy(load_rom("breakout").path, target)
    assert game_lookup.game_for_rom(load_rom(target)) is games.game_info("breakout")
    ale = ale_py.ALEInterface()
    ale.setLoggerMode(ale_py.LoggerMode.Error)
    ale.loadROM(str(target))
    assert [a.value for a in ale.getMinimalActionSet()] == list(games.game_info("breakout").minimal_actions)


@pytest.mark.parametrize(("stem", "needle"), [("not_a_game", "rename the file"), ("combat", "single-player")])
def test_unknown_rom_under_another_name_is_refused(stem: str, needle: str, tmp_path: Path) -> None:
    path = _renamed("starfield.bin", stem, tmp_path)
    with pytest.raises(RomError, match=needle):
        gpu_env.AtariBatch(path, 1, num_threads=1)
