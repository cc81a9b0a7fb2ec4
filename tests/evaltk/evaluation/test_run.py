"""evaltk.evaluation.run: rows replay exactly through plain gymnasium, resume, refusal to mix, summaries."""

from __future__ import annotations

import json
import struct
import zlib
from hashlib import blake2b
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from evaltk.envs import env_for_id
from evaltk.envs.atari import atari_env, make_env
from evaltk.errors import ScoreTableError, SpecError
from evaltk.evaluation.run import EvalConfig, EvalResult, episode_seed, evaluate, mean_ci
from evaltk.evaluation.scores import (
    BACKEND_COLUMNS,
    COLUMNS,
    LEGACY_COLUMNS,
    SETTINGS_FILE,
    TABLE_FILE,
    read_scores,
    read_table,
)
from evaltk.policies import episode_policy_rng, load_policy, save_builtin


def _replay_random(env: gym.Env[np.ndarray, int], seed: int,
                   n_actions: int) -> tuple[float, int, int, str, str]:
    """Play one episode in ``env`` with the random policy's documented action stream for ``seed``.

    Also returns the documented digests (``evaltk.evaluation.digests``), computed here from their definition.
    """
    obs, _ = env.reset(seed=seed)
    rng = episode_policy_rng(seed)
    total, steps = 0.0, 0
    step_hash, obs_hash = blake2b(b"steps", digest_size=16), blake2b(b"obs", digest_size=16)
    while True:
        obs_hash.update(struct.pack("<I", zlib.crc32(np.ascontiguousarray(obs).tobytes())))
        action = int(rng.integers(n_actions))
        obs, r, term, trunc, _ = env.step(action)
        step_hash.update(struct.pack("<qd", action, float(r)))
        total += float(r)
        steps += 1
        if term or trunc:
            ale: Any = env.unwrapped
            step_hash.update(struct.pack("<q??", steps, term, trunc))
            return (total, steps, int(ale.ale.getEpisodeFrameNumber()), step_hash.hexdigest(),
                    obs_hash.hexdigest())


@pytest.mark.parametrize(("episodes", "fast_reset"), [
    pytest.param(6, False, id="6-episodes"),
    pytest.param(20, False, id="20-episodes", marks=pytest.mark.slow),
    pytest.param(20, True, id="20-episodes-fast-reset", marks=pytest.mark.slow)])
def test_random_breakout_rows_replay_in_plain_gymnasium(tmp_path: Path, episodes: int, fast_reset: bool) -> None:
    result = evaluate(EvalConfig("builtin:random", tmp_path, episodes=episodes, seed=0, num_envs=4,
                                 env_id="ALE/Breakout-v5", fast_reset=fast_reset))
    rows = read_table(tmp_path / TABLE_FILE)
    assert sorted(r.index for r in rows) == list(range(episodes))
    assert result.rows == sorted(rows, key=lambda r: r.index)
    plain = gym.make("ALE/Breakout-v5")
    for row in result.rows:
        assert row.seed == episode_seed(0, row.index)
        replay = _replay_random(plain, row.seed, 4)
        assert (row.episode_return, row.steps, row.frames, row.digest, row.obs_digest) == replay
        assert row.checkpoint == "builtin:random"
        assert row.simulator == "gym"
        assert row.truncated is False
    assert result.summary["n_episodes"] == episodes
    assert result.summary["mean_return"] == pytest.approx(np.mean([r.episode_return for r in rows]))


def test_results_do_not_depend_on_num_envs_or_workers(tmp_path: Path) -> None:
    a = evaluate(EvalConfig("random", tmp_path / "a", episodes=4, seed=3, num_envs=1, env_id="ALE/Breakout-v5"))
    b = evaluate(EvalConfig("random", tmp_path / "b", episodes=4, seed=3, num_envs=3, workers=0,
                            env_id="ALE/Breakout-v5"))
    assert [r.episode_return for r in a.rows] == [r.episode_return for r in b.rows]
    assert [r.frames for r in a.rows] == [r.frames for r in b.rows]


def test_scripted_rows_replay_with_the_policy_in_plain_gymnasium(tmp_path: Path) -> None:
    result = evaluate(EvalConfig("scripted", tmp_path, episodes=1, seed=1, num_envs=1, env_id="ALE/Breakout-v5"))
    policy = load_policy("scripted", env=env_for_id("ALE/Breakout-v5"))
    plain = gym.make("ALE/Breakout-v5")
    for row in result.rows:
        obs, _ = plain.reset(seed=row.seed)
        total, first = 0.0, np.ones(1, bool)
        while True:
            obs, r, term, trunc, _ = plain.step(int(policy.act(obs[None], first)[0]))
            first[:] = False
            total += float(r)
            if term or trunc:
                break
        assert total == row.episode_return


def test_preprocessed_checkpoint_replays_in_the_gymnasium_pipeline(tmp_path: Path) -> None:
    env = atari_env("ALE/Breakout-v5", kwargs={"frameskip": 1}, atari_preprocessing={"noop_max": 30}, frame_stack=4)
    ckpt = save_builtin(tmp_path / "ckpt", "random", env)
    result = evaluate(EvalConfig(str(ckpt), tmp_path / "out", episodes=2, seed=9, num_envs=2, workers=0))
    ref = gym.wrappers.FrameStackObservation(
        gym.wrappers.AtariPreprocessing(gym.make("ALE/Breakout-v5", frameskip=1), noop_max=30), 4)
    for row in result.rows:
        assert (row.episode_return, row.steps, row.frames, row.digest, row.obs_digest) == \
            _replay_random(ref, row.seed, 4)
    assert make_env(env).observation_space.shape == (4, 84, 84)


def test_resume_skips_finished_episodes_and_matches_a_fresh_run(tmp_path: Path) -> None:
    def run(out: str, episodes: int, num_envs: int) -> EvalResult:
        return evaluate(EvalConfig("random", tmp_path / out, episodes=episodes, seed=5, num_envs=num_envs, workers=0,
                                   env_id="ALE/Breakout-v5"))

    first = run("r", 2, 2)
    assert first.new_episodes == 2
    again = run("r", 2, 2)
    assert again.new_episodes == 0
    assert again.rows == first.rows
    alias = evaluate(EvalConfig("builtin:random", tmp_path / "r", episodes=2, seed=5, num_envs=1, workers=0,
                                env_id="ALE/Breakout-v5"))
    assert alias.new_episodes == 0
    assert {r.checkpoint for r in alias.rows} == {"builtin:random"}
    more = run("r", 4, 3)
    assert more.new_episodes == 2
    fresh = run("f", 4, 2)
    assert more.rows == fresh.rows
    assert len(read_table(tmp_path / "r" / TABLE_FILE)) == 4


def test_refuses_to_mix_settings(tmp_path: Path) -> None:
    evaluate(EvalConfig("random", tmp_path, episodes=1, seed=0, num_envs=1, env_id="ALE/Breakout-v5", workers=0))
    with pytest.raises(ScoreTableError, match=r"different settings \(seed: \[0\] there vs \[1\] now\)"):
        evaluate(EvalConfig("random", tmp_path, episodes=1, seed=1, num_envs=1, env_id="ALE/Breakout-v5", workers=0))
    with pytest.raises(ScoreTableError, match="policy_digest"):
        evaluate(EvalConfig("scripted", tmp_path, episodes=1, seed=0, num_envs=1, env_id="ALE/Breakout-v5", workers=0))


def test_partial_last_row_is_repaired_and_rerun(tmp_path: Path) -> None:
    cfg = EvalConfig("random", tmp_path, episodes=2, seed=0, num_envs=1, env_id="ALE/Breakout-v5")
    full = evaluate(cfg)
    table = tmp_path / TABLE_FILE
    lines = table.read_text().splitlines(keepends=True)
    table.write_text("".join(lines[:2]) + lines[2][:10])
    resumed = evaluate(cfg)
    assert resumed.new_episodes == 1
    assert resumed.rows == full.rows


def test_a_table_without_digests_resumes_in_its_own_layout(tmp_path: Path) -> None:
    """A table written before digests were recorded still resumes: new rows keep its columns (no digests)."""
    cfg = EvalConfig("random", tmp_path, episodes=2, seed=4, num_envs=2, env_id="ALE/Breakout-v5", workers=0)
    evaluate(cfg)
    table = tmp_path / TABLE_FILE
    old = [",".join(line.split(",")[:len(LEGACY_COLUMNS)]) for line in table.read_text().splitlines()]
    table.write_text("\n".join([",".join(LEGACY_COLUMNS), *old[1:]]) + "\n")
    resumed = evaluate(EvalConfig("random", tmp_path, episodes=4, seed=4, num_envs=2, env_id="ALE/Breakout-v5",
                                  workers=0))
    assert resumed.new_episodes == 2
    lines = table.read_text().splitlines()
    assert lines[0] == ",".join(LEGACY_COLUMNS)
    assert all(len(line.split(",")) == len(LEGACY_COLUMNS) for line in lines)
    rows = read_table(table)
    assert len(rows) == 4
    assert {r.digest for r in rows} == {""}
    assert {r.simulator for r in rows} == {"gym"}


def test_a_table_with_a_backend_column_resumes_in_its_own_layout(tmp_path: Path) -> None:
    """New tables name the simulator ``simulator`` (column and setting); an older table's ``backend`` reads and resumes.

    The older table is this one rewritten as an older evaltk wrote it: the column and the manifest's setting
    called ``backend``.
    """
    cfg = EvalConfig("random", tmp_path, episodes=2, seed=4, num_envs=2, env_id="ALE/Breakout-v5", workers=0)
    first = evaluate(cfg)
    assert first.summary["simulator"] == "gym"
    table = tmp_path / TABLE_FILE
    lines = table.read_text().splitlines()
    assert lines[0] == ",".join(COLUMNS)
    assert "simulator" in COLUMNS
    assert "backend" not in COLUMNS
    table.write_text("\n".join([",".join(BACKEND_COLUMNS), *lines[1:]]) + "\n")
    manifest = json.loads((tmp_path / SETTINGS_FILE).read_text())
    assert manifest["settings"]["simulator"] == "gym"
    manifest["settings"] = {("backend" if k == "simulator" else k): v for k, v in manifest["settings"].items()}
    (tmp_path / SETTINGS_FILE).write_text(json.dumps(manifest))
    # the older key is read as the simulator: another simulator is refused, the same one resumes
    with pytest.raises(ScoreTableError, match=r"different settings \(simulator: \['gym'\] there"):
        evaluate(EvalConfig("random", tmp_path, episodes=4, seed=4, num_envs=2, env_id="ALE/Breakout-v5",
                            workers=0, simulator="gpu_env"))
    resumed = evaluate(EvalConfig("random", tmp_path, episodes=4, seed=4, num_envs=2, env_id="ALE/Breakout-v5",
                                  workers=0))
    assert resumed.new_episodes == 2
    lines = table.read_text().splitlines()
    assert lines[0] == ",".join(BACKEND_COLUMNS)
    assert all(line.split(",")[2] == "gym" for line in lines[1:])
    assert len(lines) == 5
    rows = read_table(table)
    assert [r.simulator for r in rows] == ["gym"] * 4
    assert all(r.digest for r in rows)
    assert read_scores(tmp_path).labels["simulator"] == ["gym"]


def test_malformed_tables_are_refused(tmp_path: Path) -> None:
    cfg = EvalConfig("random", tmp_path, episodes=1, seed=0, num_envs=1, env_id="ALE/Breakout-v5", workers=0)
    evaluate(cfg)
    table = tmp_path / TABLE_FILE
    table.write_text(",".join(COLUMNS) + "\nbuiltin:random,ALE/Breakout-v5,gym,zero,1,2.0,3,4,false,,\n")
    with pytest.raises(ScoreTableError, match="line 2 is malformed"):
        evaluate(cfg)
    table.write_text("a,b\n1,2\n")
    with pytest.raises(ScoreTableError, match="has columns"):
        evaluate(cfg)
    (tmp_path / SETTINGS_FILE).write_text("{not json")
    with pytest.raises(ScoreTableError, match="is corrupt"):
        evaluate(cfg)


def test_bad_configs(tmp_path: Path) -> None:
    with pytest.raises(SpecError, match="needs an environment"):
        evaluate(EvalConfig("random", tmp_path, episodes=1))
    with pytest.raises(SpecError, match="must be >= 1"):
        evaluate(EvalConfig("random", tmp_path, episodes=0, env_id="ALE/Breakout-v5"))
    ckpt = save_builtin(tmp_path / "c", "random", env_for_id("ALE/Breakout-v5"))
    with pytest.raises(SpecError, match="action spec"):
        evaluate(EvalConfig(str(ckpt), tmp_path / "o", episodes=1, env_id="ALE/Pong-v5"))


@given(seed=st.integers(0, 2**63 - 1), start=st.integers(0, 10**6))
def test_episode_seeds_are_31_bit_distinct_and_stable(seed: int, start: int) -> None:
    seeds = [episode_seed(seed, i) for i in range(start, start + 50)]
    assert all(0 <= s < 2**31 for s in seeds)
    assert len(set(seeds)) == 50
    assert seeds == [episode_seed(seed, i) for i in range(start, start + 50)]
    assert seeds != [episode_seed(seed + 1, i) for i in range(start, start + 50)]


def test_episode_seed_is_pinned() -> None:
    assert [episode_seed(0, i) for i in range(3)] == [1610069009, 673228719, 1093961225]


def test_mean_ci_matches_scipy() -> None:
    from scipy import stats

    x = np.array([1.0, 4.0, 2.0, 8.0, 5.0])
    low, high = mean_ci(x)
    ref = stats.ttest_1samp(x, 0.0).confidence_interval(0.95)
    assert (low, high) == pytest.approx((ref.low, ref.high))
    assert mean_ci(np.array([3.0])) == (3.0, 3.0)


def test_summary_file_written(tmp_path: Path) -> None:
    res = evaluate(EvalConfig("random", tmp_path, episodes=2, seed=0, num_envs=2, env_id="ALE/Breakout-v5", workers=0))
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["n_episodes"] == 2
    assert summary["ci"] == pytest.approx(res.summary["ci"])


@pytest.mark.parametrize("preprocessed", [False, True])
def test_fast_reset_rows_equal_reload_rows(tmp_path: Path, preprocessed: bool) -> None:
    kw: dict[str, Any] = {"episodes": 3, "seed": 2, "num_envs": 2, "workers": 0}
    if preprocessed:
        env = atari_env("ALE/Breakout-v5", kwargs={"frameskip": 1}, atari_preprocessing={"noop_max": 30},
                        frame_stack=4)
        ref = str(save_builtin(tmp_path / "ckpt", "random", env))
    else:
        ref, kw["env_id"] = "random", "ALE/Breakout-v5"
    slow = evaluate(EvalConfig(ref, tmp_path / "a", **kw))
    fast = evaluate(EvalConfig(ref, tmp_path / "b", fast_reset=True, **kw))
    assert fast.rows == slow.rows
    assert fast.summary["fast_reset"] is True
