"""``evaltk validate`` end to end on real runs: gpu_env vs Gym, a baseline table, resume, and bad input."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from evaltk.cli.main import main
from evaltk.envs.atari_settings import UNKNOWN
from evaltk.evaluation.scores import ENVIRONMENT_FILE, SETTINGS_FILE, SIMULATOR_FILE, TABLE_FILE, read_table
from evaltk.evaluation.validate import pair_rows
from evaltk.verdict import Sample
from tests.evaltk.cli_helpers import error_line

ENV_ID = "ALE/Breakout-v5"
ROW_KEYS = ("index", "seed", "return", "frames", "steps", "truncated")


def _argv(out: Path, *extra: str, episodes: int = 4) -> list[str]:
    return ["validate", "builtin:scripted", "--env-id", ENV_ID, "--episodes", str(episodes), "--num-envs", "2",
            "--seed", "3", "--resamples", "999", "--out", str(out), *extra]


def _run(capsys: pytest.CaptureFixture[str], argv: list[str]) -> tuple[dict[str, Any], list[str]]:
    assert main([*argv, "--json"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    return json.loads(lines[-1]), lines[:-1]


def test_gpu_env_vs_gym_rows_are_reported_identical_and_resume(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "val"
    report, text = _run(capsys, _argv(out, "--margin", "5", episodes=10))
    gym_rows = [tuple(r.to_json()[k] for k in ROW_KEYS) for r in sorted(read_table(out / "gym" / TABLE_FILE),
                                                                key=lambda r: r.index)]
    sim_rows = [tuple(r.to_json()[k] for k in ROW_KEYS) for r in sorted(read_table(out / "gpu_env" / TABLE_FILE),
                                                                key=lambda r: r.index)]
    assert len(gym_rows) == 10
    assert sim_rows == gym_rows  # frame-exact simulators on the same seeds
    assert report["verdict"] == "identical"
    message = ("identical on 10/10 seeds: fewer than 30% of episodes differ (95%); compared step for step: rewards, "
               "actions and episode ends, and observations")
    assert report["identical"] == {"n_shared": 10, "only_a": 0, "only_b": 0, "upper_bound": pytest.approx(0.3),
                                   "compared": "rewards, actions and episode ends, and observations",
                                   "message": message}
    assert text[-1] == f"verdict: {message} (sim (gpu_env) vs reference (gym))"
    assert report["environments"]["differs"] == ["simulator", "package"]  # same env spec, same versions
    for role, folder in (("sim", "gpu_env"), ("reference", "gym")):  # the package each simulator reported
        reported = json.loads((out / folder / SIMULATOR_FILE).read_text())["package"]
        assert report["environments"][role]["package"] == reported
        assert json.loads((out / folder / ENVIRONMENT_FILE).read_text())["package"] == reported
    assert report["environments"]["sim"]["package"].endswith("(CPU backend)")
    assert report["pairs"]["same"] == {"return": 10, "frames": 10, "steps": 10, "episode": 10}
    for name in ("report.json", "report.md", "report.png", "pairs.png", "report.html"):
        assert (out / name).stat().st_size > 0, name
    assert json.loads((out / "report.json").read_text())["verdict"] == "identical"
    md = (out / "report.md").read_text()
    assert "identical on 10/10 seeds: fewer than 30% of episodes differ (95%)" in md
    assert "## What each side ran" in md
    assert "identical on 10/10 seeds" in (out / "report.html").read_text()
    assert report["sides"]["sim"]["summary"]["new_episodes"] == 10

    # Re-running with another margin reuses both score tables and only re-compares.
    again, _ = _run(capsys, _argv(out, "--margin", "0.5", "--margin-kind", "sd", episodes=10))
    assert again["sides"]["sim"]["summary"]["new_episodes"] == 0
    assert again["sides"]["reference"]["summary"]["resumed_episodes"] == 10
    assert again["margin_kind"] == "sd"
    assert again["verdict"] == "identical"

    # Rows resumed from a run under other package versions are flagged, not silently mixed.
    env_file = out / "gym" / ENVIRONMENT_FILE
    stored = json.loads(env_file.read_text())
    stored["versions"]["ale-py"] = "0.0.1"
    stored["engine"] = stored.pop("package")  # as an older evaltk wrote the row: it still resumes
    env_file.write_text(json.dumps(stored))
    flagged, _ = _run(capsys, _argv(out, "--margin", "5", episodes=10))
    assert any("ale-py" in note for note in flagged["sides"]["reference"]["notes"])
    assert "versions.ale-py" in flagged["environments"]["differs"]
    assert {r["setting"] for r in flagged["environments"]["rows"]} >= {"simulator", "package"}
    assert "engine" not in {r["setting"] for r in flagged["environments"]["rows"]}

    # A corrupt environment.json is refused before any episode runs: the sim side gains no row.
    env_file.write_text("{not json")
    assert "environment.json is corrupt" in error_line(capsys, _argv(out, "--margin", "5", episodes=12))
    assert len(read_table(out / "gpu_env" / TABLE_FILE)) == 10
    env_file.write_text(json.dumps(stored))

    # The Gym side's evaluate directory also serves as a baseline table: rows still pair by seed.
    baseline, text = _run(capsys, _argv(out, "--margin", "5", "--baseline", str(out / "gym"), episodes=10))
    assert baseline["verdict"] == "identical"
    assert baseline["sides"]["reference"]["source"] == "baseline"
    assert baseline["sides"]["sim"]["summary"]["new_episodes"] == 0

    # A baseline recorded on another env spec is refused unless asked for, and then listed as a difference.
    sticky = tmp_path / "sticky"
    sticky.mkdir()
    (sticky / TABLE_FILE).write_bytes((out / "gym" / TABLE_FILE).read_bytes())
    settings = json.loads((out / "gym" / SETTINGS_FILE).read_text())
    settings["settings"]["env"]["kwargs"]["repeat_action_probability"] = 0.2
    (sticky / SETTINGS_FILE).write_text(json.dumps(settings))
    line = error_line(capsys, _argv(out, "--margin", "5", "--baseline", str(sticky), episodes=10))
    assert "repeat_action_probability" in line
    assert "--allow-different-envs" in line
    allowed, _ = _run(capsys, _argv(out, "--margin", "5", "--baseline", str(sticky), "--allow-different-envs",
                                    episodes=10))
    assert any("env.kwargs.repeat_action_probability" in d for d in allowed["environments"]["check"]["differences"])
    assert allowed["environments"]["check"]["allowed"] is True
    # what the baseline ran is not recorded (no simulator.json): said, never counted as a difference
    assert "repeat_action_probability" in allowed["environments"]["not_reported"]["reference"]


def test_sequential_validation_stops_at_the_first_deciding_look(tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """Frame-exact backends: the first look (10 of a budget of 20 per side) already decides, so only 10 run."""
    out = tmp_path / "seq"
    report, text = _run(capsys, _argv(out, "--margin", "5", "--sequential", "--looks", "2", episodes=20))
    assert report["verdict"] == "identical"
    assert report["sequential"]["verdict"] == "identical"
    assert report["sequential"]["budget"] == {"a": 20, "b": 20}
    assert len(read_table(out / "gpu_env" / TABLE_FILE)) == 10
    assert len(read_table(out / "gym" / TABLE_FILE)) == 10
    assert report["identical"]["n_shared"] == 10
    assert text[-1].startswith("verdict: identical")


def test_baseline_score_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    table = tmp_path / "published.csv"  # a table of baseline scores: no seeds, no settings recorded
    table.write_text("env_id,return\n" + "".join(f"{ENV_ID},{v}\n" for v in (400, 410, 395, 405, 398, 402)))
    out = tmp_path / "val"
    report, text = _run(capsys, _argv(out, "--margin", "5", "--baseline", str(table), "--min-episodes", "4"))
    assert not (out / "gym").exists()  # no reference run
    assert report["verdict"] == "different"  # the scripted policy scores ~40, far below 400
    assert report["identical"] is None
    assert report["pairs"] is None
    assert report["sides"]["reference"]["source"] == "baseline"
    assert report["sides"]["reference"]["summary"]["n_episodes"] == 6
    assert report["comparison"]["n_a"] == 6
    assert report["comparison"]["n_b"] == 4
    ci = report["comparison"]["ci"]
    assert ci[1] < -5  # the whole CI of mean(sim) - mean(baseline) lies below the margin region
    rows = {r["setting"]: r for r in report["environments"]["rows"]}
    assert rows["env_id"]["reference"] == ENV_ID
    assert rows["frameskip"]["reference"] == UNKNOWN
    assert not rows["frameskip"]["differs"]  # unknown is not counted as a difference: it is said instead
    assert "frameskip" in report["environments"]["not_reported"]["reference"]
    assert report["environments"]["not_reported"]["sim"] == []
    assert report["environments"]["reference"]["package"] == UNKNOWN  # a bare CSV records no package
    assert "not reported by A: simulator, package, frameskip" in report["explanation"]
    assert text[-1].startswith("verdict: different")
    assert not (out / "pairs.png").exists()
    assert (out / "report.html").exists()

    # With compare's default minimum of 10 episodes per side, 4 episodes give no verdict, and say what would.
    default, text = _run(capsys, _argv(out, "--margin", "5", "--baseline", str(table)))
    assert default["sides"]["sim"]["summary"]["new_episodes"] == 0
    assert default["verdict"] == "inconclusive"
    assert default["information"]["episodes_to_decide"] >= 10
    assert "would decide" in text[-1]


@pytest.mark.parametrize(("extra", "needle"), [
    (["--margin", "-1"], "--margin must be a positive number"),
    (["--margin", "0.6", "--margin-kind", "prob"], "prob margin must be below 0.5"),
    (["--margin", "5", "--episodes", "1"], "--episodes must be at least 2"),
    (["--margin", "5", "--sim", "gym"], "--sim and --reference are both gym"),
    (["--margin", "5", "--reference", "gym", "--baseline", "x.csv"], "--baseline TABLE replaces the reference run"),
    (["--margin", "5", "--alpha", "0.7"], "--alpha must be in (0, 0.5)"),
    (["--margin", "0.1", "--margin-kind", "prob", "--sequential"], "--sequential supports margin kinds"),
    (["--margin", "5", "--sequential", "--baseline", "x.csv"], "cannot use a --baseline table"),
    (["--margin", "5", "--sequential", "--looks", "0"], "--looks must be in [1, 50]"),
    (["--margin", "5", "--sequential"], "--episodes 4 is below the 10 episodes a verdict needs"),
])
def test_bad_input_is_one_error_line(tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str],
                                     needle: str) -> None:
    line = error_line(capsys, _argv(tmp_path / "val", *extra))  # a repeated option: argparse keeps the last
    assert needle in line
    assert not (tmp_path / "val" / "report.json").exists()


def test_missing_checkpoint_and_mismatched_baseline(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "runs" / "nope"
    line = error_line(capsys, ["validate", str(missing), "--margin", "5", "--out", str(tmp_path / "a")])
    assert line.startswith(f"error: checkpoint {str(missing)!r} is not a built-in policy, a file or folder here, or "
                           "an hf:// location: pass a built-in (random, scripted")
    pong = tmp_path / "pong.csv"
    pong.write_text("env_id,return\nALE/Pong-v5,-21\nALE/Pong-v5,-20\n")
    line = error_line(capsys, _argv(tmp_path / "b", "--margin", "5", "--baseline", str(pong)))
    assert f"reference (baseline) plays ALE/Pong-v5, sim (gpu_env) plays {ENV_ID}" in line
    line = error_line(capsys, _argv(tmp_path / "c", "--margin", "5", "--baseline", str(tmp_path / "none.csv")))
    assert "does not exist" in line
    line = error_line(capsys, ["validate", "builtin:scripted", "--margin", "5", "--out", str(tmp_path / "d")])
    assert "--env-id" in line


@pytest.mark.vizdoom
def test_doom_on_gpu_env_is_refused_with_advice_for_what_was_typed(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """The fix is validate's one way for Doom; the simulator is named as the user gave it (or as the default)."""
    base = ["validate", "builtin:random", "--env-id", "basic", "--margin", "5", "--out", str(tmp_path / "doom")]
    fix = ("validate a Doom policy with --sim gym --baseline TABLE (gym runs ViZDoom, and no other simulator runs "
           "Doom envs to compare it with)")
    assert error_line(capsys, base) == ("error: validate's default --sim gpu_env runs Atari envs only, and basic is a "
                                        f"ViZDoom scenario: {fix}")
    assert error_line(capsys, [*base, "--sim", "gpu_env"]) == (
        f"error: --sim gpu_env runs Atari envs only, and basic is a ViZDoom scenario: {fix}")
    assert error_line(capsys, [*base, "--sim", "gym", "--reference", "gpu_env"]) == (
        f"error: --reference gpu_env runs Atari envs only, and basic is a ViZDoom scenario: {fix}")
    assert "drop --sim" not in error_line(capsys, [*base, "--sim", "envpool"])
    assert not (tmp_path / "doom").exists()


def test_pair_rows_counts_equal_fields_by_seed() -> None:
    ref = Sample.from_rows([{"seed": s, "return": float(s), "frames": 10, "steps": 3} for s in (1, 2, 3)])
    sim = Sample.from_rows([{"seed": s, "return": float(s) + (s == 2), "frames": 10, "steps": 3} for s in (3, 1, 2, 4)])
    pairs = pair_rows(ref, sim)
    assert pairs is not None
    assert (pairs["n_shared"], pairs["only_reference"], pairs["only_sim"]) == (3, 0, 1)
    assert pairs["same"] == {"return": 2, "frames": 3, "steps": 3, "episode": 0}  # no digests recorded
    assert pair_rows(ref, Sample.from_rows([{"return": 1.0}, {"return": 2.0}])) is None  # no seeds: unpaired


def test_each_side_runs_the_validation_request(tmp_path: Path) -> None:
    """Both planned sides take every request field (checkpoint, episodes, seed, envs, workers) from the config."""
    import dataclasses

    from evaltk.evaluation.plan import EvalRequest
    from evaltk.evaluation.validate import ValidateConfig, prepare_validation
    from evaltk.verdict import VerdictRule

    config = ValidateConfig(checkpoint="builtin:scripted", out=tmp_path / "val", rule=VerdictRule(margin=2.0),
                            episodes=3, seed=11, num_envs=1, env_id=ENV_ID, workers=0)
    prep = prepare_validation(config)
    for role, side in prep.evaluations.items():
        for f in dataclasses.fields(EvalRequest):
            expected = tmp_path / "val" / side.simulator.name if f.name == "out" else getattr(config, f.name)
            if f.name == "checkpoint":
                expected = f"builtin:{config.checkpoint.removeprefix('builtin:')}"
            assert getattr(side.config, f.name) == expected, (role, f.name)
    assert set(prep.evaluations) == {"sim", "reference"}


_WEIGHT_READS: list[list[str]] = []
"""While a test records, each ``open`` of a ``policy.safetensors`` (Python's ``open`` or ``os.open``) is listed."""


def _count_weight_reads(event: str, args: tuple[object, ...]) -> None:
    if event == "open" and _WEIGHT_READS and str(args[0]).endswith("policy.safetensors"):
        _WEIGHT_READS[-1].append(str(args[0]))


def test_sequential_looks_run_on_one_plan_per_side(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Three looks on the shipped checkpoint: its weights are read twice in all (load, digest), not per look."""
    import sys

    sys.addaudithook(_count_weight_reads)  # a hook cannot be removed; it records only while a list is open
    a2c = Path(__file__).resolve().parents[3] / "suites" / "checkpoints" / "a2c_breakout"
    _WEIGHT_READS.append([])
    try:
        report, _ = _run(capsys, ["validate", str(a2c), "--episodes", "12", "--num-envs", "4", "--seed", "0",
                                  "--sequential", "--looks", "3", "--min-episodes", "4", "--unpaired",
                                  "--margin", "0.001", "--out", str(tmp_path / "seq")])
    finally:
        reads = _WEIGHT_READS.pop()
    assert len(report["sequential"]["looks"]) == 3  # an undecidable margin: every look is made
    assert report["sides"]["sim"]["summary"]["new_episodes"] == 12
    assert 1 <= len(reads) <= 2, reads
