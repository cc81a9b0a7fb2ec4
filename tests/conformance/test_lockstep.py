"""The lockstep engine and ``evaltk conformance lockstep``."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from conformance.frames import write_diff_png
from conformance.lockstep import LockstepConfig, LockstepError, lockstep, run_lockstep
from conformance.trace import TraceReference, record_ale
from evaltk.cli.main import main
from gpu_env import AtariBatch

GAMES = ("pong", "space_invaders", "seaquest", "freeway", "video_pinball")
EVERY_FIELD = ("reward", "ram", "screen", "lives", "game_over", "truncated", "frame_number",
               "episode_frame_number", "screen_rgb", "screen_grayscale")


@pytest.mark.parametrize("game", GAMES)
def test_short_lockstep_is_identical(game: str) -> None:
    result = run_lockstep(LockstepConfig(game, 300, seed=11))
    assert not result.diverged, result.summary()
    assert result.frames_compared == 300
    assert result.compared == EVERY_FIELD


def test_game_over_is_followed_by_reimport() -> None:
    # road_runner with base seed 2 loses its last life between frames 400 and 500 of random play.
    result = run_lockstep(LockstepConfig("road_runner", 600, seed=2, warmup_frames=50))
    assert not result.diverged, result.summary()
    assert result.resets >= 1


def test_boot_start_compares_from_load_rom() -> None:
    result = run_lockstep(LockstepConfig("breakout", 200, seed=0, start="boot"))
    assert not result.diverged, result.summary()
    assert result.config.start == "boot"
    assert result.warmup_frames == ()


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"start": "reset"}, "start='reset'"),
    ({"frames": 0}, "frames=0"),
    ({"frames": -5}, "frames=-5"),
    ({"repeat_action_probability": 0.25}, "sticky-action RNG"),
    ({"actions": "some"}, "actions='some'"),
    ({"start": "boot", "warmup_frames": 3}, "warmup_frames=3"),
    ({"num_envs": 0}, "num_envs=0"),
])
def test_bad_settings_are_named(kwargs: dict[str, object], match: str) -> None:
    with pytest.raises(LockstepError, match=match):
        LockstepConfig(**{"game": "pong", "frames": 10, **kwargs})  # type: ignore[arg-type]


def test_a_divergence_is_found_at_its_frame_with_an_image(tmp_path: Path) -> None:
    """Ours runs another seed's sticky actions: the engine must stop at the first differing frame."""
    trace = record_ale("pong", frames=300, seed=3, repeat_action_probability=0.25)
    ours = AtariBatch("pong", 1, seeds=[4], repeat_action_probability=0.25)
    out = lockstep(TraceReference(trace), ours, 300, png_path=tmp_path / "d.png")
    assert out.divergence is not None
    assert out.frames_compared == out.divergence.frame - 1
    assert out.divergence.png is None  # a trace has no picture to diff against
    result = run_lockstep(LockstepConfig("pong", 300, seed=3, start="boot", repeat_action_probability=0.25))
    assert result.divergence is None


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
    assert main(["conformance", "lockstep", "--game", "pong,pongg", "--frames", "5"]) == 2  # checked before pong runs
    captured = capsys.readouterr()
    assert captured.err.strip().splitlines() == [
        "error: pongg: unknown ROM id 'pongg': did you mean pong? use one of the 104 ale-py ROM ids gpu_env plays "
        "(e.g. pong, space_invaders)"]
    assert captured.out == ""
    assert main(["conformance", "lockstep", "--game", "pong,breakout", "--frames", "5", "--start", "boot",
                 "--actions", "full", "--sticky", "0.25", "--json"]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    assert "2/2 ROMs identical over 5 frames (boot, seed 0)" in out
    assert json.loads(out[-1])["diverged"] == 0
    assert main(["conformance", "lockstep", "--game", "pong", "--frames", "0"]) == 2
    assert "frames=0" in capsys.readouterr().err
    assert main(["conformance", "lockstep", "--game", "pong", "--frames", "5", "--sticky", "0.25"]) == 2


def test_a_lockstep_case_runs_the_engine_and_refuses_settings_it_cannot_run(tmp_path: Path) -> None:
    from conformance.suite import Outcome, load_suite, run_case
    from evaltk.errors import SuiteError

    path = tmp_path / "s.toml"
    path.write_text("[suite]\nname='l'\n[[case]]\nkind='lockstep'\nname='pong-boot'\ngame='pong'\nframes=120\n"
                    "seed=3\nstart='boot'\nactions='full'\nrepeat_action_probability=0.25\n")
    case = load_suite(path).cases[0]
    result = run_case(case, tmp_path / "w")
    assert result.outcome is Outcome.PASSED, result.message
    assert result.message.startswith("pong (boot, seed 3, 1 env, sticky 0.25, full actions): 120 frames identical")
    assert result.details["frames_compared"] == 120
    path.write_text("[suite]\nname='l'\n[[case]]\nkind='lockstep'\nname='x'\ngame='pong'\nframes=10\n"
                    "repeat_action_probability=0.25\n")
    with pytest.raises(SuiteError, match=r"case #1 \(x\): start='ale-state' needs repeat_action_probability=0"):
        load_suite(path)
