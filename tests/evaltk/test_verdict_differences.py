"""Samples, the env check and the one settings diff: what a comparison says about what each side ran."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from evaltk.envs.atari_settings import FIELDS, UNKNOWN
from evaltk.verdict import CompareError, Sample, VerdictRule, check_envs, compare, differences
from evaltk.verdict.differences import what_ran
from evaltk.verdict.sample import normalise_env, shortest

ATARI = {"family": "atari", "env_id": "ALE/Breakout-v5", "kwargs": {"repeat_action_probability": 0.25, "mode": None},
         "preprocessing": {"atari_preprocessing": None, "frame_stack": 1}}
GYM = {key: UNKNOWN for key in FIELDS} | {"package": "gymnasium 1 + ale-py 0.12.1", "env_id": "ALE/Breakout-v5",
                                          "frameskip": 4, "repeat_action_probability": 0.25, "max_pool": False}


def test_float32_settings_read_as_their_shortest_decimal() -> None:
    assert shortest(float(np.float32(0.1))) == 0.1  # EnvPool's 0.10000000149011612
    assert shortest(0.1) == 0.1
    assert shortest(0.30000000000000004) == 0.30000000000000004  # a float64 that is no float32 stays
    assert shortest({"p": [float(np.float32(0.25)), float(np.float32(0.7))], "n": 3}) == {"p": [0.25, 0.7], "n": 3}
    sample = Sample.of([1.0, 2.0], settings={"repeat_action_probability": float(np.float32(0.1))})
    assert sample.settings == {"repeat_action_probability": 0.1}


@given(st.floats(allow_nan=False, allow_infinity=False, width=32))
def test_shortest_keeps_every_float32_value(value: float) -> None:
    assert np.float32(shortest(value)) == np.float32(value)


def test_lists_and_tuples_are_one_env_spec() -> None:
    doom_plan = {"family": "doom", "env_id": "basic", "buttons": ("MOVE_LEFT", "ATTACK"), "obs_size": (120, 160)}
    doom_table = {"family": "doom", "env_id": "basic", "buttons": ["MOVE_LEFT", "ATTACK"], "obs_size": [120, 160]}
    assert normalise_env(doom_plan) == normalise_env(doom_table)
    a, b = Sample.of([1.0, 2.0], env=doom_table, env_id="basic"), Sample.of([1.0, 2.0], env=doom_plan, env_id="basic")
    assert check_envs(a, b).same
    assert differences(a, b).differs == []


def test_another_env_is_refused_naming_both() -> None:
    pong = Sample.of([1.0, 2.0], env_id="ALE/Pong-v5", label="reference (baseline)")
    breakout = Sample.of([1.0, 2.0], env_id="ALE/Breakout-v5", env=ATARI, label="sim (gpu_env)")
    with pytest.raises(CompareError, match=r"reference \(baseline\) plays ALE/Pong-v5, sim \(gpu_env\) plays "
                                           r"ALE/Breakout-v5"):
        check_envs(pong, breakout)
    allowed = check_envs(pong, breakout, allow_different_envs=True)
    assert allowed.differences == ["env id 'ALE/Pong-v5' (A) vs 'ALE/Breakout-v5' (B)"]
    sticky = {**ATARI, "kwargs": {**ATARI["kwargs"], "repeat_action_probability": 0.0}}
    with pytest.raises(CompareError, match=r"env.kwargs.repeat_action_probability = 0.25 \(A\) vs 0.0 \(B\)"):
        check_envs(Sample.of([1.0], env_id="ALE/Breakout-v5", env=ATARI),
                   Sample.of([1.0], env_id="ALE/Breakout-v5", env=sticky))


def test_a_factory_s_declared_settings_win_over_the_spec_it_was_handed() -> None:
    """The env asked for says sticky 0.25; the factory declared (and ran) 0.0: the diff shows what ran."""
    declared = {key: UNKNOWN for key in FIELDS} | {"package": "my_sim:make", "env_id": "ALE/Breakout-v5",
                                                    "repeat_action_probability": 0.0}
    gym = Sample.of([1.0, 2.0], env=ATARI, env_id="ALE/Breakout-v5", simulator="gym", settings=GYM,
                    label="reference (gym)")
    factory = Sample.of([1.0, 2.0], env=ATARI, env_id="ALE/Breakout-v5", simulator="my_sim:make", settings=declared,
                        label="sim (my_sim:make)")
    ran = what_ran(factory)
    assert ran["repeat_action_probability"] == 0.0
    assert "env.kwargs.repeat_action_probability" not in ran  # the spec handed over is not what ran
    diff = differences(gym, factory)
    assert diff.differs == ["simulator", "package", "repeat_action_probability"]
    assert diff.not_reported["b"] == [k for k in FIELDS if declared[k] == UNKNOWN]
    assert diff.not_reported["a"] == [k for k in FIELDS if GYM[k] == UNKNOWN]
    assert diff.unreported_lines()[1].startswith("not reported by sim (my_sim:make): frameskip, max_pool")


def test_an_undecided_verdict_says_what_a_side_did_not_report() -> None:
    rng = np.random.default_rng(0)
    a = Sample.of(rng.normal(0, 1, 12), simulator="gym", settings=GYM)
    b = Sample.of(rng.normal(0, 1, 12), simulator="my_sim:make", settings={"package": "my_sim:make"})
    result = compare(a, b, VerdictRule(margin=0.01, resamples=199))
    assert result.verdict.value == "inconclusive"
    assert "not reported by B (my_sim:make): env_id, frameskip" in result.decision.explanation
    assert "not reported by A (gym): " in result.decision.explanation  # GYM leaves some unknown too
    decided = compare(a, a, VerdictRule(margin=5.0, resamples=199))
    assert "not reported" not in decided.decision.explanation  # only different / inconclusive verdicts say it


def test_a_paired_design_has_paired_diagnostics_only() -> None:
    rng = np.random.default_rng(1)
    z = rng.normal(10, 3, 30)
    seeds = list(range(30))
    paired = compare(Sample.of(z, seeds=seeds), Sample.of(z + rng.normal(0.1, 0.3, 30), seeds=seeds),
                     VerdictRule(margin=1.0, resamples=499))
    assert paired.decision.design == "paired"
    assert set(paired.tests) == {"paired_t", "wilcoxon_signed_rank", "sign_flip_permutation"}
    assert paired.bootstrap_ci.method.startswith("paired bootstrap")
    unpaired = compare(Sample.of(z, seeds=seeds), Sample.of(z + 0.1, seeds=seeds),
                       VerdictRule(margin=1.0, resamples=499, paired=False))
    assert unpaired.decision.design == "unpaired"
    assert "welch_t" in unpaired.tests
    assert "paired_t" not in unpaired.tests
    assert unpaired.bootstrap_ci.method.startswith("unpaired bootstrap")


def test_the_bootstrap_seed_is_a_named_stream() -> None:
    rng = np.random.default_rng(2)
    a, b = Sample.of(rng.normal(0, 1, 25)), Sample.of(rng.normal(0.2, 1, 25))
    first = compare(a, b, VerdictRule(margin=0.5, resamples=499, bootstrap_seed=3)).to_dict()
    again = compare(a, b, VerdictRule(margin=0.5, resamples=499, bootstrap_seed=3)).to_dict()
    other = compare(a, b, VerdictRule(margin=0.5, resamples=499, bootstrap_seed=4)).to_dict()
    assert first == again
    assert first["bootstrap_seed"] == 3
    assert first["bootstrap_ci_mean_difference"] != other["bootstrap_ci_mean_difference"]
    with pytest.raises(CompareError, match="--bootstrap-seed must be an integer >= 0"):
        VerdictRule(margin=1.0, bootstrap_seed=-1)
