"""The lockstep harness and ``evaltk conformance lockstep``."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from conformance.lockstep import run_lockstep, write_diff_png
from evaltk.cli.main import main

GAMES = ("pong", "space_invaders", "seaquest", "freeway", "video_pinball")


@pytest.mark.parametrize("game", GAMES)
def test_short_lockstep_is_identical(game: str) -> None:
    result = run_lockstep(game, 300, seed=11)
    assert not result.diverged, result.as_dict()
    assert result.frames_compared == 300
    assert result.compared == ("ram", "screen", "reward", "lives", "game_over")


def test_game_over_is_followed_by_reimport() -> None:
    # road_runner with seed 0 loses its last life within ~240 frames of random play.
    result = run_lockstep("road_runner", 400, seed=0, warmup_frames=50)
    assert not result.diverged, result.as_dict()
    assert result.reimports >= 1


def test_boot_start_compares_from_load_rom() -> None:
    result = run_lockstep("breakout", 200, seed=0, start="boot")
    assert not result.diverged, result.as_dict()
    assert result.start == "boot"
    with pytest.raises(ValueError, match="start"):
        run_lockstep("pong", 10, seed=0, start="reset")


def test_difference_png(tmp_path: Path) -> None:
    import cv2

    ref = np.zeros((210, 160, 3), dtype=np.uint8)
    ours = ref.copy()
    ours[5, 7] = (255, 0, 0)
    out = write_diff_png(tmp_path / "d.png", ref, ours)
    image = cv2.imread(str(out))[..., ::-1]
    assert image.shape == (420, 2 * (3 * 160 + 8), 3)
    diff = image[:, 2 * (2 * 160 + 8) :]
    assert (diff[10:12, 14:16] == 255).all()
    assert diff.sum() == 4 * 3 * 255


def test_cli_json_and_errors(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["conformance", "lockstep", "--game", "pong", "--frames", "40", "--seed", "2", "--json"]) == 0
    record = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert record["game"] == "pong"
    assert record["frames_compared"] == 40
    assert record["diverged"] is False
    assert main(["conformance", "lockstep", "--game", "no_such_game", "--frames", "5"]) == 2
    assert "unknown ROM id 'no_such_game'" in capsys.readouterr().err
    assert main(["conformance", "lockstep", "--game", "pong", "--frames", "5", "--start", "boot"]) == 0
    assert main(["conformance", "lockstep", "--game", "pong", "--frames", "0"]) == 2
