"""The Doom benchmarks' own logic: Sample Factory log parsing, time to reward, snapshot picking, the table."""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import pytest

from tests.benchmark_modules import load_benchmark

throughput = load_benchmark("doom_throughput")
learning = load_benchmark("doom_learning")
duels = load_benchmark("duel_gauntlets")


def _gauntlet(folder: Path, agent: str, frags: list[int], bot_frags: list[int], seed: int = 0) -> Path:
    """Write a gauntlet's results.jsonl as the tournament writes it (4-minute duels, one bot)."""
    folder.mkdir()
    rows = [{"match_id": f"g{i:05d}", "outcome": "played", "spec": {"seed": seed + i}, "duration_tics": 8400,
             "participants": [{"kind": "agent", "agent": agent, "frags": f, "deaths": 0},
                              {"kind": "bot", "agent": "bot:Rambo", "frags": b, "deaths": None}]}
            for i, (f, b) in enumerate(zip(frags, bot_frags, strict=True))]
    rows.append({"match_id": "g99999", "outcome": "void", "spec": {"seed": 99}, "participants": []})
    (folder / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return folder


def test_duel_table_counts_outcomes_and_tests_frags_per_minute_against_scipy(tmp_path: Path) -> None:
    from scipy import stats

    ref = _gauntlet(tmp_path / "ref", "builtin:scripted", [1, 0, 2, 1, 0, 3], [0, 0, 1, 1, 1, 0])
    new = _gauntlet(tmp_path / "new", "ckpt", [2, 3, 1, 4, 2, 2], [0, 1, 1, 0, 0, 2])
    other = _gauntlet(tmp_path / "other", "ckpt2", [0, 0, 0, 0, 0, 1], [0, 0, 0, 0, 0, 0], seed=7)
    rows = [duels.row(duels.load(p), None if i == 0 else duels.load(ref)) for i, p in enumerate((ref, new, other))]
    assert rows[0].wdl == (3, 2, 1)
    assert rows[1].wdl == (4, 2, 0)
    assert rows[2].wdl == (1, 5, 0)
    assert rows[0].frags_per_min == pytest.approx(7 / 6 / 4)
    assert rows[0].diff is None
    a, b = [f / 4 for f in (2, 3, 1, 4, 2, 2)], [f / 4 for f in (1, 0, 2, 1, 0, 3)]
    res = stats.ttest_ind(a, b, equal_var=False, alternative="greater")
    assert rows[1].p_more_frags == pytest.approx(res.pvalue)
    ci = stats.ttest_ind(a, b, equal_var=False).confidence_interval(0.95)
    assert rows[1].diff_welch95 == pytest.approx((ci.low, ci.high))
    assert rows[1].same_seeds
    assert not rows[2].same_seeds
    table = duels.markdown(rows)
    assert "| ckpt2 (other seeds!) | 1–5–0 |" in table
    assert "| builtin:scripted | 3–2–1 | 0.50 [" in table
    with pytest.raises(SystemExit, match=r"no results\.jsonl"):
        duels.load(tmp_path / "missing")


def test_sample_factory_reward_lines_are_read_with_their_time() -> None:
    # The line as Sample Factory 2.1.1's runner logs it (log.debug("Avg episode reward: %r", ...)).
    text = ("[2026-12-01 16:20:01,250][01234] Fps is (10 sec: 2048.0, 60 sec: nan, 300 sec: nan). Total num frames: "
            "40960.\n[2026-12-01 16:20:01,251][01234] Avg episode reward: [(0, '0.703')]\n"
            "[2026-12-01 16:20:06,000][01234] Avg episode reward: [(0, '-1.250')]\n")
    found = [(m.group(1), float(m.group(2))) for m in learning._SF_REWARD.finditer(text)]
    assert found == [("2026-12-01 16:20:01,251", 0.703), ("2026-12-01 16:20:06,000", -1.25)]


def test_first_crossing_is_the_first_point_at_or_above_the_target() -> None:
    curve = [(1.0, 0.2), (2.0, 0.75), (3.0, 0.6), (4.0, 0.8)]
    assert learning.first_crossing(curve, 0.7) == 2.0
    assert learning.first_crossing(curve, 0.75) == 2.0
    assert learning.first_crossing(curve, 0.8) == 4.0
    assert learning.first_crossing(curve, 0.9) is None


def test_snapshots_take_every_kth_the_first_and_the_latest_checkpoint(tmp_path: Path) -> None:
    snaps = [{"key": f"m0-s{i}", "path": f"/r/m0/snapshots/s{i}", "train_step": i, "env_frames": 1000 * i,
              "generation": 0} for i in (0, 3, 1, 2)]
    population = {"members": [{"id": 0, "env_frames": 5000, "train_step": 5, "snapshots": snaps}]}
    (tmp_path / "population.json").write_text(json.dumps(population))
    ckpts = tmp_path / "members" / "m0" / "checkpoints"
    ckpts.mkdir(parents=True)
    (ckpts / "latest.json").write_text(json.dumps({"policy": "ckpt_5", "train": "ckpt_5.train"}))
    picked = learning._snapshots(tmp_path, every=2)
    assert [p["env_frames"] for p in picked] == [0, 2000, 5000]
    assert all(p["first"] == "/r/m0/snapshots/s0" for p in picked)
    assert picked[-1]["agent"] == str(ckpts / "ckpt_5")
    assert picked[-1]["latest"] is True


def test_the_competitor_runs_only_inside_its_block() -> None:
    # Only children running the busy loop count: others (reapers, trackers, a previous test's engines on their
    # way out) may come and go during the test.
    def busy_children() -> set[int]:
        found = set()
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit():
                try:
                    if (f"PPid:\t{os.getpid()}\n" in (entry / "status").read_text()
                            and "while True" in (entry / "cmdline").read_text()):
                        found.add(int(entry.name))
                except OSError:
                    continue
        return found

    assert busy_children() == set()
    with throughput.competitor(False):
        assert busy_children() == set()
    with throughput.competitor(True):
        # Just after Popen returns, the child's /proc command line can still read empty (1 read in 300 here),
        # so look again for a moment.
        deadline = time.monotonic() + 10
        while not (found := busy_children()) and time.monotonic() < deadline:
            time.sleep(0.01)
        (pid,) = found
    assert busy_children() == set()
    assert not Path(f"/proc/{pid}").exists()  # killed and reaped, not left a zombie


def test_the_table_prints_each_round_the_medians_and_the_ratio(capsys: pytest.CaptureFixture[str]) -> None:
    def row(fps: float, per_cpu: float) -> dict[str, float]:
        return {"fps": fps, "frames_per_cpu_s": per_cpu, "startup_s": 5.0, "load": 1.0}

    rounds = {"quiet": [{"train": row(3000, 1600), "sf": row(1000, 800)},
                        {"train": row(2000, 1500), "sf": row(1000, 1000)}]}
    args = argparse.Namespace(scenario="basic", num_workers=2, envs_per_worker=4, batch_size=1024, rollout=32,
                              advantage="gae", gae_lambda=0.95, sf_envs_per_worker=4,
                              ours_args="--no-packed-inference")
    throughput.print_table({}, rounds, 2, [0.5, 1.5], args)
    out = capsys.readouterr().out
    assert "gae (lambda 0.95) --no-packed-inference; Sample Factory" in out  # our extra options are printed
    assert "quiet 1: ours APPO" in out
    assert "quiet 2: Sample Factory 2.1.1" in out
    assert "2.50x SF (wall), 1.72x SF per CPU-s" in out  # medians 2500/1000 and 1550/900
    assert "load average 0.5 -> 1.5" in out
    assert "quiet, each round: ours / SF" in out
    assert "3.00x, 2.00x" in out  # each round's own ratio, beside the ratio of the medians
    assert f"still differs: {throughput.STILL_DIFFERS}" in out


def test_reward_at_takes_the_last_point_logged_by_then() -> None:
    curve = [(10.0, -1.0), (44.9, 0.76), (45.1, 0.5)]
    assert learning.reward_at(curve, 45.0) == 0.76
    assert learning.reward_at(curve, 5.0) is None


def test_the_small_recipe_is_options_the_trainer_takes() -> None:
    from trainers.appo.config import add_arguments, config_from_args

    parser = argparse.ArgumentParser()
    add_arguments(parser)
    config = config_from_args(parser.parse_args(list(learning.RECIPES["small"])))
    assert (config.obs_height, config.obs_width, config.hidden_size, config.rnn_size) == (36, 64, 128, 128)
    assert (config.batch_size, config.learning_rate) == (256, 1e-3)
    assert learning.RECIPES["defaults"] == ()


def test_the_table_names_the_encoder_precision_ours_runs_at() -> None:
    assert throughput.encoder_precision("--encoder-precision fp32") == "fp32 (--encoder-precision fp32)"
    assert throughput.encoder_precision("--rollout 32 --encoder-precision bf16") == "bf16 (--encoder-precision bf16)"
    assert throughput.encoder_precision("").endswith("(--encoder-precision auto)")


def test_learning_removes_its_previous_runs_so_nothing_resumes(tmp_path: Path) -> None:
    for name in ("ours", "sf"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "metrics.jsonl").write_text('{"charts/mean_episode_reward": 0.9}\n')
    args = argparse.Namespace(out=tmp_path, skip=["ours", "sf"], seconds=1.0, recipe="small")
    result = learning.basic(args)
    assert not (tmp_path / "ours").exists()
    assert not (tmp_path / "sf").exists()
    assert result["curves"] == {}


def test_the_guard_fails_a_median_below_the_baseline_by_more_than_its_tolerance() -> None:
    base = {"frames": 180_000, "median": 0.775, "tolerance": 0.05, "commit": "abc1234", "recorded": "today"}
    status, line = learning.verdict(0.71, 180_000, base)  # issue 44's drop: 0.775 -> 0.71
    assert status == 1
    assert "REGRESSION" in line
    assert "floor 0.725" in line
    assert learning.verdict(0.73, 180_000, base)[0] == 0
    status, line = learning.verdict(0.1, 90_000, base)
    assert status == 0
    assert "not compared" in line


@pytest.mark.slow
def test_the_guard_records_a_baseline_then_compares_real_runs_with_it(tmp_path: Path,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    options = ["guard", "--frames", "2048", "--runs", "1", "--out", str(tmp_path / "runs"), "--baseline",
               str(tmp_path / "baseline.json")]
    train = ["--train-args", "--serial", "--num-workers", "1", "--envs-per-worker", "2", "--obs-height", "36",
             "--obs-width", "64", "--hidden-size", "32", "--rnn-size", "32", "--batch-size", "64",
             "--save-every-s", "0"]
    assert learning.main([*options, "--record", *train]) == 0
    base = json.loads((tmp_path / "baseline.json").read_text())
    (run,) = base["runs"]
    assert base["frames"] == 2048
    assert run["env_frames"] >= 2048
    assert base["median"] == run["reward"]
    assert run["command"].startswith("python -m evaltk.cli.main train doom --scenario basic --seed 0 --env-frames 2048")
    # The same seed in serial mode replays the same run: at the baseline, so not below it...
    assert learning.main([*options, *train]) == 0
    # ...and against a baseline far above it, the guard exits 1.
    (tmp_path / "baseline.json").write_text(json.dumps({**base, "median": run["reward"] + 1.0}))
    assert learning.main([*options, *train]) == 1
    assert "REGRESSION" in capsys.readouterr().out
