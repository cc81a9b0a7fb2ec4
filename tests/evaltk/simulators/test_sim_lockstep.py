"""``evaltk conformance lockstep --sim``: two simulators env step by env step, and the first difference found.

gpu_env and EnvPool against gymnasium + ale-py on real envs; a user's factory that changes one reward shows
the first-difference report (field, values, files). The slow checks pin the measured EnvPool finding: the only
difference in 2,500 steps of Pong is the observation of the step that ends the game, because gymnasium's
AtariPreprocessing does not capture the screen of the frame the game ends on and EnvPool does.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import cv2
import numpy as np
import pytest

from conformance.lockstep import action_rng
from conformance.sim_lockstep import SimLockstepConfig, deterministic_env, run_sim_lockstep
from evaltk.cli.main import main
from evaltk.envs import describe
from evaltk.evaluation.run import episode_seed
from evaltk.simulators import get
from tests.evaltk.cli_helpers import error_line

CHEAT = textwrap.dedent('''
    import ale_py
    import gymnasium as gym

    gym.register_envs(ale_py)


    class DoubleReward(gym.Wrapper):
        def step(self, action):
            obs, reward, terminated, truncated, info = self.env.step(action)
            return obs, 2 * reward, terminated, truncated, info


    def make(*, env_id, num_envs, seed, spec):
        ap = spec["preprocessing"]["atari_preprocessing"]
        return DoubleReward(gym.wrappers.AtariPreprocessing(gym.make(env_id, **spec["kwargs"]), **ap))
''')


def test_gpu_env_is_identical_to_gym(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    argv = ["conformance", "lockstep", "--sim", "gpu_env", "--reference", "gym", "--env-id", "ALE/Pong-v5",
            "--steps", "300", "--seed", "1", "--out", str(tmp_path / "out"), "--json"]
    assert main(argv) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    result = json.loads(lines[-1])
    assert result["identical"] is True
    assert result["first_difference"] is None
    assert result["steps"] == 300
    assert lines[0].startswith("gpu_env vs gym on ALE/Pong-v5 (seed 1): identical over 300 steps")
    assert not (tmp_path / "out").exists()


def test_a_changed_reward_is_the_first_difference(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "cheat_sim.py").write_text(CHEAT, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    out = tmp_path / "out"
    argv = ["conformance", "lockstep", "--sim", "cheat_sim:make", "--env-id", "ALE/Pong-v5", "--steps", "2000",
            "--out", str(out), "--json"]
    assert main(argv) == 1
    result = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert result["identical"] is False
    first = result["first_difference"]
    assert first["field"] == "reward"
    assert first["sim"] == 2 * first["reference"]
    assert first["reference"] in (-1.0, 1.0)
    values = json.loads((out / "values.json").read_text())
    assert values["step"] == first["step"]
    assert values["values"]["sim"]["reward"] == first["sim"]
    for name in ("reference.png", "sim.png", "diff.png", "observations.npz"):
        assert (out / name).stat().st_size > 0, name


def test_bad_lockstep_input(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    line = error_line(capsys, ["conformance", "lockstep", "--sim", "gpu_env", "--game", "pong"])
    assert "drop one" in line
    line = error_line(capsys, ["conformance", "lockstep", "--sim", "gpu_env"])
    assert "--sim needs --env-id" in line
    line = error_line(capsys, ["conformance", "lockstep", "--sim", "nope", "--env-id", "ALE/Pong-v5",
                               "--out", str(tmp_path / "o")])
    assert "--sim 'nope' is not a simulator" in line
    assert not (tmp_path / "o").exists()


@pytest.mark.slow
@pytest.mark.parametrize(("env_id", "differed"), [("ALE/Pong-v5", 1), ("ALE/Breakout-v5", 0), ("ALE/MsPacman-v5", 5)])
def test_envpool_differs_from_gym_only_in_terminal_observations(env_id: str, differed: int, tmp_path: Path) -> None:
    """Seed 0's actions end Breakout's 11 games on no step's third frame: nothing differs there (docs/simulators.md)."""
    pytest.importorskip("envpool")
    result = run_sim_lockstep(SimLockstepConfig("envpool", env_id, 2500, terminal_obs=False), out=tmp_path)
    assert result.identical, result.summary()
    assert result.terminal_obs_differed == differed


@pytest.mark.slow
def test_envpool_terminal_observation_keeps_the_last_frame_gym_drops_it(tmp_path: Path) -> None:
    """Pong, seed 0: the first difference is step 1756's observation, the step on which episode 1's game ends.

    Replaying the same actions (and episode seeds) shows why: gymnasium's observation there is the previous
    step's (the game ends on the step's third frame and AtariPreprocessing breaks before capturing it),
    EnvPool's is the resized grayscale screen of that last frame.
    """
    pytest.importorskip("envpool")
    result = run_sim_lockstep(SimLockstepConfig("envpool", "ALE/Pong-v5", 2500), out=tmp_path)
    first = result.first_difference
    assert first is not None
    assert (first.step, first.episode, first.phase, first.field) == (1756, 1, "step", "obs")

    info = describe(deterministic_env("ALE/Pong-v5"))
    gym_side, pool_side = get("gym").runner(info), get("envpool").deterministic().runner(info)
    rng = action_rng(0)  # the engine's actions, replayed
    episode, ended = -1, True
    for _ in range(first.step):
        if ended:  # the engine starts the next episode with its evaluation seed
            episode += 1
            previous = gym_side.start(episode_seed(0, episode)).copy()
            pool_side.start(episode_seed(0, episode))
        action = int(rng.integers(int(info.action_spec["n"])))
        ref, sim = gym_side.step(action), pool_side.step(action)
        ended = ref.terminated or ref.truncated
        if not ended:
            previous = ref.obs.copy()
    assert episode == first.episode
    assert ref.terminated
    assert sim.terminated
    assert ref.frames % 4 == 0  # 1 reset NOOP + 4 frames a full step + 3 frames of the last one
    ale = gym_side.env.unwrapped.ale  # type: ignore[attr-defined]
    last_screen = cv2.resize(ale.getScreenGrayscale(), (84, 84), interpolation=cv2.INTER_AREA)
    assert np.array_equal(ref.obs, previous)
    assert np.array_equal(sim.obs, last_screen)
    gym_side.close()
    pool_side.close()


def test_sim_lockstep_case_fields_are_checked_before_anything_runs(tmp_path: Path) -> None:
    from conformance.suite import load_suite
    from evaltk.errors import SuiteError

    path = tmp_path / "s.toml"
    path.write_text("[suite]\nname='s'\n[[case]]\nkind='sim_lockstep'\nname='a'\nsim='envpoool'\n"
                    "env_id='ALE/Pong-v5'\nsteps=10\n")
    with pytest.raises(SuiteError,
                       match="field 'sim' = 'envpoool' is not a simulator: did you mean envpool\\? use one of gym, "):
        load_suite(path)
    path.write_text("[suite]\nname='s'\n[[case]]\nkind='sim_lockstep'\nname='a'\nsim='gpu_env'\nsteps=10\n")
    with pytest.raises(SuiteError, match="missing required field 'env_id'"):
        load_suite(path)
