"""``identical`` means the same episodes step for step: per-episode digests, at least MIN_EPISODES seeds, a bound."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from evaltk.cli.main import main
from evaltk.evaluation.scores import COLUMNS, LEGACY_COLUMNS, read_scores
from evaltk.verdict import MIN_EPISODES, Comparison, Verdict
from tests.evaltk.samples import compare_arrays

SEEDS = list(range(700, 730))
RETURNS = [float(v) for v in np.random.default_rng(11).integers(0, 40, len(SEEDS))]
DIGESTS = [{"steps": f"{s:032x}", "obs": f"{s * 7:032x}"} for s in SEEDS]


def _compare(n: int, digests_b: list[dict[str, str]] | None = None, min_episodes: int = 10) -> Comparison:
    return compare_arrays(RETURNS[:n], RETURNS[:n], 2.0, "absolute", resamples=199, seeds_a=SEEDS[:n],
                          seeds_b=SEEDS[:n], digests_a=DIGESTS[:n],
                          digests_b=DIGESTS[:n] if digests_b is None else digests_b, min_episodes=min_episodes)


def test_equal_digests_on_enough_seeds_are_identical_with_the_rule_of_three_bound() -> None:
    result = _compare(30)
    assert result.verdict is Verdict.IDENTICAL
    assert result.headline().startswith(
        "identical on 30/30 seeds: fewer than 10% of episodes differ (95%)")
    assert result.identical is not None
    assert result.identical.upper_bound == pytest.approx(0.1)
    assert MIN_EPISODES == 10
    ten = _compare(10)
    assert ten.verdict is Verdict.IDENTICAL
    assert "fewer than 30% of episodes differ (95%)" in ten.headline()


@pytest.mark.parametrize("n", [2, 3, 9])
def test_fewer_equal_episodes_than_min_episodes_are_not_identical(n: int) -> None:
    result = _compare(n)
    assert result.verdict is Verdict.INCONCLUSIVE
    why = f"all {n} shared episodes are the same step for step, but 'identical' needs at least 10"
    assert why in result.headline()
    assert "the ordinary statistics apply" in result.decision.explanation
    # a lower --min-episodes does not lower the bar for "identical"
    low = _compare(n, min_episodes=2)
    assert low.verdict is not Verdict.IDENTICAL


def test_equal_returns_with_one_different_episode_are_not_identical() -> None:
    other = [dict(d) for d in DIGESTS[:12]]
    other[4]["steps"] = "f" * 32  # same return, another reward stream
    result = _compare(12, other)
    assert result.verdict is Verdict.EQUIVALENT
    assert result.identical is None
    assert result.episodes is not None
    assert result.episodes.n_same == 11
    assert "1 of 12 shared episodes differ step for step" in result.headline()
    assert f"seeds {SEEDS[4]}" in result.decision.explanation
    obs = [dict(d) for d in DIGESTS[:12]]
    obs[0]["obs"] = "0" * 32  # same steps, another observation
    assert _compare(12, obs).verdict is not Verdict.IDENTICAL


def test_observations_are_compared_only_where_both_sides_recorded_them() -> None:
    steps_only = [{"steps": d["steps"]} for d in DIGESTS[:10]]
    result = _compare(10, steps_only)
    assert result.verdict is Verdict.IDENTICAL
    assert result.identical is not None
    assert result.identical.compared == "rewards, actions and episode ends"


def test_without_digests_equal_returns_are_compared_on_returns_and_say_so() -> None:
    result = compare_arrays(RETURNS[:20], RETURNS[:20], 2.0, "absolute", resamples=199, seeds_a=SEEDS[:20],
                     seeds_b=SEEDS[:20])
    assert result.verdict is Verdict.EQUIVALENT
    assert "compared on returns only" in result.headline()
    assert "compared on returns only" in result.decision.explanation


def _write(path: Path, digests: bool, order: list[int]) -> Path:
    columns = COLUMNS if digests else LEGACY_COLUMNS
    lines = [",".join(columns)]
    for i in order:
        row = ["builtin:random", "ALE/Breakout-v5", "gym", str(i), str(SEEDS[i]), repr(RETURNS[i]), "400", "100",
               "false"]
        lines.append(",".join(row + ([DIGESTS[i]["steps"], DIGESTS[i]["obs"]] if digests else [])))
    path.write_text("\n".join(lines) + "\n")
    return path


def test_cli_compare_reads_digests_from_tables(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = _write(tmp_path / "a.csv", True, list(range(20)))
    b = _write(tmp_path / "b.csv", True, list(range(19, -1, -1)))  # finish order differs
    assert read_scores(a).digests is not None
    assert main(["compare", str(a), str(b), "--margin", "1", "--resamples", "199", "--json"]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    payload = json.loads(out[-1])
    assert payload["verdict"] == "identical"
    assert any(line.startswith("verdict: identical on 20/20 seeds: fewer than 15% of episodes differ (95%)")
               for line in out)
    old = _write(tmp_path / "old.csv", False, list(range(20)))
    assert read_scores(old).digests is None
    assert main(["compare", str(old), str(b), "--margin", "1", "--resamples", "199", "--json"]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    assert json.loads(out[-1])["verdict"] == "equivalent"
    assert any(line.startswith("verdict: equivalent (margin 1, absolute, paired; 90% CI of mean(B) - mean(A)")
               and "; not identical: compared on returns only" in line for line in out)


def test_tables_on_disjoint_seeds_are_compared_without_an_episode_match() -> None:
    result = compare_arrays(RETURNS[:12], RETURNS[12:24], 2.0, "absolute", resamples=199, seeds_a=SEEDS[:12],
                     seeds_b=SEEDS[12:24], digests_a=DIGESTS[:12], digests_b=DIGESTS[12:24])
    assert result.verdict is not Verdict.IDENTICAL
    assert result.episodes is None
