"""Minimum-information rule, identical rows, pairing by seed, env checks, the sequential compare."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from statsmodels.stats.weightstats import ttost_paired

from evaltk.cli.main import main
from evaltk.evaluation.samples import load_sample
from evaltk.margin import MarginKind
from evaltk.stats.boundaries import Spending
from evaltk.verdict import CompareError, Verdict, VerdictRule, compare
from evaltk.verdict.sample import Sample
from evaltk.verdict.sequential import FixedSource, compare_sequential
from tests.evaltk.cli_helpers import error_line
from tests.evaltk.samples import compare_arrays, sequential_arrays

HEADER = "checkpoint,env_id,backend,index,seed,return,frames,steps,truncated"


def _table(path: Path, returns: list[float], *, env_id: str = "ALE/Breakout-v5", seeds: list[int] | None = None,
           order: list[int] | None = None) -> Path:
    seeds = seeds if seeds is not None else [1000 + i for i in range(len(returns))]
    rows = [f"builtin:random,{env_id},gym,{i},{seeds[i]},{float(returns[i])!r},400,100,false"
            for i in (order if order is not None else range(len(returns)))]
    path.write_text(HEADER + "\n" + "\n".join(rows) + "\n")
    return path


@pytest.mark.parametrize(("a", "b"), [([0, 0, 0], [3, 3, 3]), ([0, 0], [0, 0]), ([0, 0, 0.01], [3, 3, 3]),
                                      ([0, 0.001, 0], [3, 3, 3.002])])
def test_degenerate_samples_all_get_the_same_kind_of_answer(a: list[float], b: list[float]) -> None:
    for kind, margin in (("absolute", 1.0), ("sd", 0.5), ("prob", 0.1)):
        result = compare_arrays(a, b, margin, kind, resamples=199)
        assert result.verdict is Verdict.INCONCLUSIVE, (a, b, kind)
        assert result.information is not None
        assert result.information.episodes_to_decide == 10
        assert "too little information" in result.summary()
        assert result.to_dict()["information"]["min_episodes"] == 10


def test_min_episodes_is_adjustable_and_checked() -> None:
    result = compare_arrays([0.0] * 3, [3.0] * 3, 1.0, "absolute", resamples=199, min_episodes=3)
    assert result.verdict is Verdict.DIFFERENT
    with pytest.raises(CompareError, match="min-episodes must be at least 2"):
        compare_arrays([0.0] * 3, [3.0] * 3, 1.0, "absolute", min_episodes=1)


def test_identical_rows_are_a_distinct_finding() -> None:
    returns = [float(v) for v in np.random.default_rng(0).integers(0, 30, 20)]
    seeds = list(range(500, 520))
    digests = [{"steps": f"s{s}", "obs": f"o{s}"} for s in seeds]
    result = compare_arrays(returns, returns[::-1], 1.0, "absolute", resamples=199, seeds_a=seeds, seeds_b=seeds[::-1],
                     digests_a=digests, digests_b=digests[::-1])
    assert result.verdict is Verdict.IDENTICAL
    assert result.identical is not None
    assert result.identical.summary() == ("identical on 20/20 seeds: fewer than 15% of episodes differ (95%); compared "
                                          "step for step: rewards, actions and episode ends, and observations")
    assert result.to_dict()["identical"]["n_shared"] == 20
    # Two (or three) equal episodes are not enough for "identical": the ordinary statistics, with a note.
    tiny = compare_arrays([0.0, 0.0], [0.0, 0.0], 1.0, "absolute", resamples=199, seeds_a=[1, 2], seeds_b=[1, 2],
                   digests_a=digests[:2], digests_b=digests[:2])
    assert tiny.verdict is Verdict.INCONCLUSIVE
    assert "'identical' needs at least 10" in tiny.decision.explanation
    # Same values on different seeds are not identical rows.
    other = compare_arrays(returns, returns, 1.0, "absolute", resamples=199, seeds_a=seeds,
                           seeds_b=[s + 100 for s in seeds])
    assert other.verdict is not Verdict.IDENTICAL


def test_a_sequential_comparison_says_identical_only_on_equal_digests() -> None:
    """Equal returns alone are tested at the looks; equal digests on >= 10 seeds are the finding ``identical``."""
    returns = [float(v) for v in np.random.default_rng(1).integers(0, 30, 40)]
    seeds = list(range(40))
    digests = [{"steps": f"s{s}", "obs": f"o{s}"} for s in seeds]
    run = {"looks": 4, "seeds_a": seeds, "seeds_b": seeds}
    same = sequential_arrays(returns, returns, 2.0, "absolute", digests_a=digests, digests_b=digests, **run)
    assert same.verdict is Verdict.IDENTICAL
    assert same.identical is not None
    assert same.identical.upper_bound == pytest.approx(3 / 10)  # decided at the first look, 10 of 40 pairs
    assert "(at look 1)" in same.reason
    returns_only = sequential_arrays(returns, returns, 2.0, "absolute", **run)
    assert returns_only.verdict is not Verdict.IDENTICAL
    assert returns_only.looks  # decided by the tests at a look, not by the equal returns
    one_differs = [*digests[:3], {"steps": "other", "obs": digests[3]["obs"]}, *digests[4:]]
    differ = sequential_arrays(returns, returns, 2.0, "absolute", digests_a=digests, digests_b=one_differs, **run)
    assert differ.verdict is not Verdict.IDENTICAL  # an episode of the first look differs step for step
    late = [*digests[:-1], {"steps": "other", "obs": digests[-1]["obs"]}]
    # the looks read the tables as if they arrived in batches: a look that decides never sees later episodes
    assert sequential_arrays(returns, returns, 2.0, "absolute", digests_a=digests, digests_b=late,
                             **run).verdict is Verdict.IDENTICAL


def test_paired_verdict_uses_statsmodels_ttost_paired() -> None:
    rng = np.random.default_rng(3)
    z = rng.normal(10, 3, 40)
    b = z + rng.normal(0.1, 0.5, 40)
    seeds = list(range(40))
    result = compare_arrays(z, b, 1.0, "absolute", resamples=199, seeds_a=seeds, seeds_b=seeds)
    assert result.decision.design == "paired"
    assert result.pairing is not None
    assert result.pairing.used
    assert result.pairing.correlation is not None
    assert result.pairing.correlation > 0.9
    p, _, _ = ttost_paired(b, z, -1.0, 1.0)
    assert result.decision.tost is not None
    assert result.decision.tost.pvalue == pytest.approx(float(p), rel=1e-12)
    assert result.verdict is Verdict.EQUIVALENT
    unpaired = compare_arrays(z, b, 1.0, "absolute", resamples=199)
    assert unpaired.verdict is Verdict.INCONCLUSIVE  # the per-seed variability hides it without pairing


def test_per_test_sizes_name_a_and_b() -> None:
    rng = np.random.default_rng(4)
    result = compare_arrays(rng.normal(size=12), rng.normal(size=30), 0.5, "sd", resamples=199)
    for test in result.tests.values():
        assert (test.n_a, test.n_b) == (12, 30)
    assert result.decision.tost is not None
    assert (result.decision.tost.n_a, result.decision.tost.n_b) == (12, 30)


def test_tables_of_different_envs_are_refused_unless_allowed(tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    returns = [float(v) for v in np.random.default_rng(5).normal(10, 2, 20)]
    a = _table(tmp_path / "a.csv", returns, env_id="ALE/Pong-v5")
    b = _table(tmp_path / "b.csv", returns[::-1], seeds=[2000 + i for i in range(20)])
    with pytest.raises(CompareError, match="different environments"):
        compare(load_sample(a), load_sample(b), VerdictRule(margin=1.0, resamples=199))
    assert main(["compare", str(a), str(b), "--margin", "1", "--resamples", "199"]) == 2
    assert "--allow-different-envs" in capsys.readouterr().err
    out = tmp_path / "rep"
    assert main(["compare", str(a), str(b), "--margin", "1", "--resamples", "199", "--allow-different-envs",
                 "--out", str(out), "--json"]) == 0
    payload = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert payload["environments"]["same"] is False
    assert "Pong" in payload["environments"]["differences"][0]
    assert "Different environments" in (out / "compare.md").read_text()


def test_cli_compares_tables_without_digests_on_returns_and_sorts_by_index(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    returns = [float(v) for v in np.random.default_rng(6).integers(0, 50, 20)]
    a = _table(tmp_path / "gym.csv", returns)
    b = _table(tmp_path / "gpu.csv", returns, order=list(range(19, -1, -1)))  # finish order differs
    assert main(["compare", str(a), str(b), "--margin", "1", "--resamples", "199", "--json"]) == 0
    out = capsys.readouterr().out
    payload = json.loads(out.strip().splitlines()[-1])
    assert payload["verdict"] == "equivalent"  # tables without digests: equal returns, compared on returns only
    assert "compared on returns only" in payload["explanation"]
    assert payload["design"] == "paired"  # the seeds pair once both tables are in episode order
    assert "paired_t" in out
    assert "n_a=20, n_b=20" in out


def test_sequential_cli_writes_the_looks(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rng = np.random.default_rng(7)
    a = _table(tmp_path / "a.csv", rng.normal(0, 1, 100).tolist())
    b = _table(tmp_path / "b.csv", rng.normal(0, 1, 100).tolist(), seeds=[5000 + i for i in range(100)])
    out = tmp_path / "seq"
    assert main(["compare", str(a), str(b), "--margin", "0.5", "--margin-kind", "sd", "--sequential",
                 "--looks", "5", "--out", str(out), "--json"]) == 0
    payload = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert payload["sequential"] is True
    assert payload["design"] == "unpaired"
    assert 1 <= len(payload["looks"]) <= 5
    assert payload["verdict"] in ("equivalent", "inconclusive")
    assert "| look |" in (out / "sequential.md").read_text()
    assert json.loads((out / "sequential.json").read_text())["looks"] == payload["looks"]


def test_sequential_rejects_kinds_it_does_not_support() -> None:
    with pytest.raises(CompareError, match="sequential supports"):
        sequential_arrays(np.arange(20.0), np.arange(20.0), 0.1, "prob")


def test_sequential_clear_difference_is_different_before_the_budget() -> None:
    rng = np.random.default_rng(8)
    result = sequential_arrays(rng.normal(0, 1, 100), rng.normal(1.0, 1, 100), 0.5, "sd")
    assert result.verdict is Verdict.DIFFERENT
    assert result.episodes_used[1] < 100  # stopped before the budget
    assert "beyond the margin" in result.reason


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_sequential_cli_300_vs_300_one_sd_apart_is_different_early(tmp_path: Path, seed: int,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """Means 1 SD apart, margin 0.5 SD: "different" before the last look; equal means: "equivalent" early."""
    rng = np.random.default_rng(seed)
    a = _table(tmp_path / "a.csv", rng.normal(10.0, 2.0, 300).tolist())
    far = _table(tmp_path / "far.csv", rng.normal(12.0, 2.0, 300).tolist(), seeds=[5000 + i for i in range(300)])
    same = _table(tmp_path / "same.csv", rng.normal(10.0, 2.0, 300).tolist(), seeds=[5000 + i for i in range(300)])
    common = ["--margin", "0.5", "--margin-kind", "sd", "--sequential", "--json"]
    assert main(["compare", str(a), str(far), *common]) == 0
    payload = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert payload["verdict"] == "different"
    assert len(payload["looks"]) < 10
    assert payload["episodes_used"]["b"] < 300
    assert main(["compare", str(a), str(far), "--margin", "0.5", "--margin-kind", "sd", "--json"]) == 0
    assert json.loads(capsys.readouterr().out.strip().splitlines()[-1])["verdict"] == "different"  # fixed N agrees
    assert main(["compare", str(a), str(same), *common]) == 0
    payload = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert payload["verdict"] == "equivalent"
    assert len(payload["looks"]) < 10


def test_evaluate_until_verdict_end_to_end(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Real ale-py episodes: a rerun of the baseline's seeds is identical at the first look; other seeds are tested."""
    base = tmp_path / "base"
    common = ["builtin:random", "--env-id", "ALE/Breakout-v5", "--num-envs", "2", "--workers", "0"]
    assert main(["evaluate", *common, "--episodes", "10", "--seed", "0", "--out", str(base)]) == 0
    same = tmp_path / "same"
    assert main(["evaluate", *common, "--seed", "0", "--out", str(same), "--until-verdict", "--baseline",
                 str(base / "episodes.csv"), "--margin", "1", "--max-episodes", "10", "--looks", "2", "--json"]) == 0
    payload = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert payload["verdict"] == "identical"
    assert payload["identical"]["n_shared"] == 10
    other = tmp_path / "other"
    assert main(["evaluate", *common, "--seed", "1", "--out", str(other), "--until-verdict", "--baseline",
                 str(base / "episodes.csv"), "--margin", "1", "--max-episodes", "10", "--looks", "1", "--json"]) == 0
    payload = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert payload["design"] == "unpaired"
    assert len(payload["looks"]) == 1
    assert payload["looks"][0]["n_b"] == 10
    assert (other / "sequential.md").is_file()
    assert json.loads((other / "sequential.json").read_text())["verdict"] == payload["verdict"]


def test_until_verdict_needs_its_options(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["evaluate", "builtin:random", "--env-id", "ALE/Breakout-v5", "--out", str(tmp_path / "x"),
                 "--until-verdict"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error:")
    assert "--baseline" in err


def test_repeat_action_probability_is_recorded_and_checked(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "sticky"
    assert main(["evaluate", "builtin:random", "--env-id", "ALE/Breakout-v5", "--episodes", "1", "--workers", "0",
                 "--num-envs", "1", "--repeat-action-probability", "0.2", "--out", str(out)]) == 0
    settings = json.loads((out / "evaluation.json").read_text())["settings"]
    assert settings["env"]["kwargs"]["repeat_action_probability"] == 0.2
    capsys.readouterr()
    assert main(["evaluate", "builtin:random", "--env-id", "ALE/Breakout-v5", "--episodes", "1",
                 "--repeat-action-probability", "1.5", "--out", str(tmp_path / "bad")]) == 2
    assert "--repeat-action-probability must be in [0, 1]" in capsys.readouterr().err


def test_every_sequential_entry_point_checks_looks_and_budget_alike(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(CompareError, match=r"--looks must be in \[1, 50\], got 0; 10 is the default"):
        sequential_arrays(np.zeros(20), np.ones(20), 1.0, "absolute", looks=0)
    base = _table(tmp_path / "a.csv", [1.0] * 20)
    argv = ["evaluate", "builtin:random", "--env-id", "ALE/Breakout-v5", "--out", str(tmp_path / "b"),
            "--until-verdict", "--baseline", str(base), "--margin", "1"]
    assert error_line(capsys, [*argv, "--max-episodes", "20", "--looks", "0"]) == (
        "error: --looks must be in [1, 50], got 0; 10 is the default")
    assert error_line(capsys, [*argv, "--max-episodes", "5"]) == (
        "error: --max-episodes 5 is below the 10 episodes a verdict needs; raise it (e.g. --max-episodes 100)")
    assert not (tmp_path / "b").exists()


def test_sequential_reports_its_repeated_ci_and_stopping_look(tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    """Compare --sequential: the verdict's interval is the repeated CI at the stopping look, no fixed-N CI."""
    rng = np.random.default_rng(8)
    a = _table(tmp_path / "a.csv", rng.normal(0, 1, 100).tolist())
    b = _table(tmp_path / "b.csv", rng.normal(1.0, 1, 100).tolist(), seeds=[5000 + i for i in range(100)])
    out = tmp_path / "seq"
    assert main(["compare", str(a), str(b), "--margin", "0.5", "--margin-kind", "sd", "--sequential",
                 "--out", str(out), "--json"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    payload = json.loads(lines[-1])
    iv = payload["interval"]
    assert payload["verdict"] == "different"
    assert iv["look"] == payload["stopped_at_look"] == payload["looks"][-1]["k"] < 10
    assert iv["ci"] == payload["looks"][-1]["ci_difference"]
    assert iv["ci"][0] > 0.5  # "different": the repeated CI lies beyond the margin
    assert iv["level"] == pytest.approx(0.95)
    assert f"stopped at look {iv['look']} of 10 after" in payload["interval_line"]
    assert any(line.strip() == payload["interval_line"] for line in lines)
    md = (out / "sequential.md").read_text()
    assert payload["interval_line"] in md
    assert "repeated CI" in md
    assert "episodes needed" not in md.lower()


FACTORY = '''
import ale_py
import gymnasium as gym

gym.register_envs(ale_py)


def make(*, env_id, num_envs, seed, spec):
    """gymnasium + ale-py with every reward doubled: the same episodes, other returns."""
    return gym.wrappers.TransformReward(gym.make(env_id, **spec["kwargs"]), lambda r: 2.0 * r)
'''


def test_validate_sequential_reports_one_analysis(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """Validate --sequential on real ale-py episodes: repeated CIs, the stopping look, fixed-N parts labelled."""
    folder = tmp_path / "user_code"
    folder.mkdir()
    (folder / "double_sim.py").write_text(FACTORY, encoding="utf-8")
    monkeypatch.syspath_prepend(str(folder))
    out = tmp_path / "val"
    assert main(["validate", "builtin:random", "--env-id", "ALE/Breakout-v5", "--episodes", "20", "--num-envs", "2",
                 "--seed", "3", "--resamples", "999", "--margin", "3", "--sim", "double_sim:make", "--reference",
                 "gym", "--workers", "0", "--sequential", "--looks", "2", "--out", str(out), "--json"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    report = json.loads(lines[-1])
    assert report["verdict"] != "identical"
    seq = report["sequential"]
    assert report["ci"] == seq["interval"]["ci"]
    assert report["ci_tost"] == seq["interval"]["ci_equivalence"]
    assert report["ci_method"].startswith(f"repeated confidence interval at look {seq['stopped_at_look']} of 2")
    assert report["episodes_needed"] is None
    assert report["episodes_needed_line"].startswith("none from a fixed-N formula")
    assert "ignores the stopping rule" in report["fixed_n_note"]
    assert f"sequential: {seq['interval_line']}" in lines
    assert any("fixed-N analysis of the episodes the looks used" in line for line in lines)
    md = (out / "report.md").read_text()
    assert "## Sequential looks" in md
    assert "## Fixed-N analysis of the episodes the looks used" in md
    assert "## Comparison (A = reference, B = sim)" not in md
    html = (out / "report.html").read_text()
    assert "95% repeated CI (the verdict&#x27;s)" in html or "95% repeated CI (the verdict's)" in html
    assert "fixed-N (ignores the stopping rule) 95% CI" in html


def test_an_early_inconclusive_is_a_non_binding_futility_stop_and_says_so() -> None:
    """B one margin above A: the default design stops at half the budget and explains the non-binding stop."""
    rng = np.random.default_rng(3)
    a, b = rng.normal(10.0, 2.0, 300), rng.normal(11.0, 2.0, 300)
    result = sequential_arrays(a, b, 0.5, "sd", paired=False)
    assert result.verdict is Verdict.INCONCLUSIVE
    assert result.looks[-1].outcome.value == "futility"
    assert result.looks[-1].k == 5  # the first look at half the budget
    assert result.episodes_used == (150, 150)
    assert "stopped early for futility (non-binding)" in result.reason
    assert "error rates are computed as if the design had gone on" in result.reason
    assert "stopped early for futility (non-binding)" in result.verdict_line()
    assert result.to_dict()["outcome"] == "futility"
    assert result.report_fields()["episodes_needed_line"].endswith("the estimate sat on a margin point")
    # the classical design has no futility stop: the same data run to the budget
    classic = compare_sequential(FixedSource(Sample.of(a)), FixedSource(Sample.of(b)),
                                 VerdictRule(margin=0.5, kind=MarginKind.SD, sequential=True,
                                             spending=Spending.OBRIEN_FLEMING))
    assert classic.verdict is Verdict.INCONCLUSIVE
    assert classic.looks[-1].k == 10
    assert "the budget is spent" in classic.reason
