"""VerdictRule: every verdict option checked once, on construction, and built alike by every command."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import pytest

from evaltk.cli.args import verdict_rule
from evaltk.cli.main import main
from evaltk.margin import MarginKind
from evaltk.stats.boundaries import Spending
from evaltk.verdict import CompareError, VerdictRule
from tests.evaltk.cli_helpers import error_line


def test_names_become_enums_and_defaults_are_the_commands_defaults() -> None:
    rule = VerdictRule(margin=0.5, kind="sd", spending="pocock")  # type: ignore[arg-type]
    assert rule.kind is MarginKind.SD
    assert rule.spending is Spending.POCOCK
    assert (rule.alpha, rule.min_episodes, rule.resamples, rule.looks) == (0.05, 10, 9999, 10)
    assert rule.paired
    assert rule.pairing == "auto"
    assert VerdictRule(margin=1.0, paired=False).pairing == "no"


@pytest.mark.parametrize(("changes", "message"), [
    ({"margin": 0.0}, "--margin must be a positive number, got 0.0"),
    ({"margin": 0.5, "kind": "prob"}, r"a prob margin must be below 0\.5, got 0\.5"),
    ({"kind": "percent"}, "margin kind must be one of"),
    ({"alpha": 0.5}, r"--alpha must be in \(0, 0\.5\), got 0\.5; 0\.05 is usual"),
    ({"min_episodes": 1}, "--min-episodes must be at least 2, got 1; the default is 10"),
    ({"resamples": 99}, "--resamples must be at least 100, got 99; the default is 9999"),
    ({"sequential": True, "looks": 0}, r"--looks must be in \[1, 50\], got 0; 10 is the default"),
    ({"sequential": True, "kind": "prob", "margin": 0.1}, "--sequential supports margin kinds"),
    ({"sequential": True, "kind": "prob", "margin": 1.0}, "--sequential supports margin kinds"),  # the kind first
    ({"spending": "cubic"}, "--spending must be one of"),
])
def test_every_bad_option_is_refused_on_construction(changes: dict[str, Any], message: str) -> None:
    with pytest.raises(CompareError, match=message):
        VerdictRule(**{"margin": 1.0, **changes})


def test_looks_and_kind_are_checked_only_for_a_sequential_rule() -> None:
    assert VerdictRule(margin=0.1, kind=MarginKind.PROB, looks=0).looks == 0  # fixed N: looks unused


def test_the_cli_maps_each_option_to_one_field() -> None:
    args = argparse.Namespace(margin=2.0, margin_kind="relative", alpha=0.01, min_episodes=20, unpaired=True,
                              allow_different_envs=True, resamples=500, sequential=False, looks=4,
                              spending="linear", column="return")
    assert verdict_rule(args) == VerdictRule(margin=2.0, kind=MarginKind.RELATIVE, alpha=0.01, min_episodes=20,
                                             paired=False, allow_different_envs=True, resamples=500, looks=4,
                                             spending=Spending.LINEAR)
    few = argparse.Namespace(margin=1.0, margin_kind="sd", looks=3, alpha=0.05, allow_different_envs=False)
    assert verdict_rule(few, sequential=True) == VerdictRule(margin=1.0, kind=MarginKind.SD, looks=3,
                                                             sequential=True)


def test_compare_and_validate_refuse_a_bad_option_with_the_same_line(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    table = tmp_path / "a.csv"
    table.write_text("return\n" + "\n".join(str(float(i)) for i in range(12)) + "\n")
    line = "error: --alpha must be in (0, 0.5), got 0.6; 0.05 is usual"
    assert error_line(capsys, ["compare", str(table), str(table), "--margin", "1", "--alpha", "0.6"]) == line
    assert error_line(capsys, ["validate", "builtin:random", "--env-id", "ALE/Breakout-v5", "--margin", "1",
                               "--alpha", "0.6", "--out", str(tmp_path / "v")]) == line
    assert not (tmp_path / "v").exists()  # refused before anything ran
    assert main(["compare", str(table), str(table), "--margin", "1"]) == 0
