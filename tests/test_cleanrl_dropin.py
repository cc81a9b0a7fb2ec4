"""``benchmarks/cleanrl_dropin.py``: its line-replacement port, and (``slow``) CleanRL's scripts on both sides.

The slow tests fetch CleanRL 1.2.0 from the package registry (cached under ``build/cleanrl/``) and skip,
with the reason, only when that is impossible or (for the EnvPool script) when EnvPool 1.2.5 is not
importable from ``$ENVPOOL_PATH`` or the environment.
"""

from __future__ import annotations

import os

import pytest

from tests.benchmark_modules import load_benchmark

bench = load_benchmark("cleanrl_dropin")
R = bench.Replacement


def test_replacements_apply_in_order_each_exactly_once() -> None:
    text = "import gym\nenv = gym.make(id)\n"
    out = bench.apply_replacements(text, (R("import gym\n", "import gymnasium as gym\n", "rename"),
                                          R("gymnasium as gym", "gymnasium as gym  # 1.x", "sees the first")),
                                   name="t.py")
    assert out == "import gymnasium as gym  # 1.x\nenv = gym.make(id)\n"


@pytest.mark.parametrize(("text", "found"), [("x = 1\n", 0), ("        env.seed(seed)\n" * 2, 2)])
def test_a_replacement_that_does_not_match_once_names_the_line(text: str, found: int) -> None:
    rule = R("        env.seed(seed)\n", "", "seeded by reset")
    with pytest.raises(bench.PortError) as err:
        bench.apply_replacements(text, (rule,), name="ppo_atari.py (port)")
    message = str(err.value)
    assert "ppo_atari.py (port): replacement 'seeded by reset'" in message
    assert f"the line 'env.seed(seed)', found {found}" in message
    assert "\n" not in message


def test_first_difference_names_the_first_differing_row() -> None:
    ref = [(1024, "2.0"), (2048, "1.0")]
    assert bench.first_difference(ref, list(ref)) is None
    assert bench.first_difference(ref, [(1024, "2.0"), (2056, "1.0")]) == (
        "episode 1: reference step=2048 return=1.0, drop-in step=2056 return=1.0")
    assert bench.first_difference(ref, ref[:1]) == "episode 1: only reference logs step=2048 return=1.0"
    assert bench.first_difference([], ref[:1]) == "episode 0: only drop-in logs step=1024 return=2.0"


def test_too_few_timesteps_is_refused_in_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        bench.main(["--total-timesteps", "1000"])
    err = capsys.readouterr().err
    assert "--total-timesteps must be >= 1024 (one PPO update of 8 envs x 128 steps), got 1000" in err


def _run_both_sides(script: str, capsys: pytest.CaptureFixture[str]) -> None:
    try:
        bench.fetch_scripts(bench.ROOT / "build" / "cleanrl")
    except bench.FetchError as err:
        pytest.skip(f"CleanRL's wheel cannot be fetched: {err}")
    rc = bench.main(["--script", script, "--total-timesteps", "2048", "--seed", "1"])
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if line.startswith(f"| {script} |")]
    assert len(rows) == 2, out
    logged = [int(row.split("|")[3]) for row in rows]
    assert logged[0] == logged[1] > 0, "both sides log the same number of episodes, and some"
    assert rows[1].endswith("| EQUAL |"), out
    assert rc == 0


@pytest.mark.slow
def test_ppo_atari_logs_the_same_episodes_on_the_cleanrl_preset(capsys: pytest.CaptureFixture[str]) -> None:
    _run_both_sides("ppo_atari", capsys)


@pytest.mark.slow
def test_ppo_atari_envpool_logs_the_same_episodes_on_gpu_env_envpool(capsys: pytest.CaptureFixture[str]) -> None:
    path = os.pathsep.join(p for p in (str(bench.ROOT), os.environ.get("ENVPOOL_PATH"),
                                       os.environ.get("PYTHONPATH")) if p)
    why = bench.envpool_importable(path)
    if why is not None:
        pytest.skip(f"EnvPool 1.2.5 is not importable ({why}): set ENVPOOL_PATH to a directory holding it")
    _run_both_sides("ppo_atari_envpool", capsys)
