"""APPO config: fields become CLI options (the demo and cloning settings' too), checks name the bad value, resume."""

from __future__ import annotations

import argparse
import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from evaltk.cli.main import build_parser
from trainers.appo import cli as appo_cli
from trainers.appo.config import (
    BC_FLAGS,
    DEMO_FLAGS,
    AppoConfig,
    BcSettings,
    ConfigError,
    DemoSettings,
    add_arguments,
    config_from_args,
)


def _parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    return parser.parse_args(argv)


def test_every_field_is_an_option_with_help() -> None:
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    helps = {a.dest: a.help for a in parser._actions}
    for f in dataclasses.fields(AppoConfig):
        assert helps.get(f.name), f.name


def test_flags_override_defaults() -> None:
    cfg = config_from_args(_parse(["--scenario", "defend_the_center", "--rollout", "16", "--batch-size", "256",
                                   "--serial", "--advantage", "gae"]))
    assert (cfg.scenario, cfg.rollout, cfg.batch_size, cfg.serial, cfg.advantage) == (
        "defend_the_center", 16, 256, True, "gae")
    assert cfg.batch_trajectories == 16
    assert cfg.slots_per_env >= 2


@pytest.mark.parametrize(("argv", "match"), [
    (["--envs-per-worker", "3"], "multiple of --worker-splits"),
    (["--batch-size", "100"], "multiple of --rollout"),
    (["--num-workers", "0"], "--num-workers must be >= 1"),
    (["--gamma", "1.5"], "--gamma"),
    (["--nonlinearity", "tanh"], "--nonlinearity"),
])
def test_bad_values_are_named(argv: list[str], match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        config_from_args(_parse(argv))


def test_resume_reloads_the_saved_config(tmp_path: Path) -> None:
    saved = dataclasses.replace(AppoConfig(), out=str(tmp_path), rollout=16, batch_size=256)
    (tmp_path / "config.json").write_text(json.dumps({"config": saved.to_dict()}))
    cfg = config_from_args(_parse(["--out", str(tmp_path), "--resume", "--max-seconds", "5"]))
    assert (cfg.rollout, cfg.batch_size, cfg.max_seconds, cfg.resume) == (16, 256, 5.0, True)


def test_evaltk_train_doom_is_registered() -> None:
    args = build_parser().parse_args(["train", "doom", "--scenario", "basic", "--max-seconds", "1", "--json"])
    assert args.family == "doom"
    assert args.json
    assert callable(args.func)


def test_a_hand_edited_encoder_precision_is_named() -> None:
    # argparse's choices catch a bad flag; a resumed run's config.json reaches check() instead.
    with pytest.raises(ConfigError, match="--encoder-precision must be one of auto, bf16, fp32, got 'fp16'"):
        AppoConfig(encoder_precision="fp16").check()  # type: ignore[arg-type]


def test_resolve_scenario_reads_the_one_registry_and_guards_self_play() -> None:
    from evaltk.envs.doom import SCENARIOS
    from trainers.appo.scenario import resolve_scenario

    assert resolve_scenario(AppoConfig(scenario="duel"), self_play=True) == SCENARIOS["duel"]
    assert resolve_scenario(AppoConfig(scenario="basic", frameskip=2)).frameskip == 2
    with pytest.raises(ConfigError, match="multiplayer"):
        resolve_scenario(AppoConfig(scenario="basic"), self_play=True)


def test_the_shared_options_are_declared_once_with_each_trainers_defaults() -> None:
    from trainers.a2c.config import A2cConfig
    from trainers.common.config_cli import TrainerConfig

    shared = {f.name: f.metadata["doc"] for f in dataclasses.fields(TrainerConfig)}
    for cls in (A2cConfig, AppoConfig):
        docs = {f.name: f.metadata["doc"] for f in dataclasses.fields(cls)}
        assert {name: docs[name] for name in shared} == shared
    a2c, appo = A2cConfig(), AppoConfig()
    assert (a2c.out, a2c.entropy_coef, a2c.learning_rate, a2c.save_every_s) == ("runs/a2c", 0.01, 7e-4, 120.0)
    assert (appo.out, appo.entropy_coef, appo.learning_rate, appo.save_every_s) == ("runs/appo_doom", 0.003, 3e-4, 60.0)


@pytest.mark.parametrize(("field", "value", "match"), [
    ("learning_rate", float("nan"), "--learning-rate must be a finite number > 0, got nan"),
    ("max_grad_norm", 0.0, "--max-grad-norm must be a finite number > 0"),
    ("entropy_coef", -0.1, "--entropy-coef must be a finite number >= 0"),
    ("stats_window", 0, "--stats-window must be >= 1, got 0"),
    ("max_seconds", -1.0, "--max-seconds must be a finite number >= 0"),
])
def test_both_trainers_check_a_shared_option_by_one_rule(field: str, value: Any, match: str) -> None:
    from trainers.a2c.config import A2cConfig
    from trainers.a2c.config import ConfigError as A2cConfigError

    with pytest.raises(ConfigError, match=match):
        dataclasses.replace(AppoConfig(), **{field: value}).check()
    with pytest.raises(A2cConfigError, match=match):
        dataclasses.replace(A2cConfig(), **{field: value}).check()


def test_save_every_s_zero_means_only_the_final_checkpoint_for_both_trainers() -> None:
    from trainers.a2c.config import A2cConfig

    A2cConfig(save_every_s=0.0).check()
    AppoConfig(save_every_s=0.0).check()


def test_a_trainer_config_names_its_error_and_label() -> None:
    from trainers.common.config_cli import TrainerConfig

    with pytest.raises(TypeError, match="error"):
        type("Unnamed", (TrainerConfig,), {})
    with pytest.raises(ConfigError, match="unknown APPO option"):
        AppoConfig.from_dict({"no_such_option": 1})


# -- --record-demos and --bc: their options are the DemoSettings/BcSettings fields ----------------------------------
#: Every demonstration and cloning flag, a value other than its default, and the field it sets.
CLONE_FLAGS = [("--demo-episodes", "7", "episodes", 7), ("--demo-timelimit", "0.5", "timelimit_min", 0.5),
               ("--demo-bots", "3", "bots", 3), ("--demo-map", "map02", "map", "map02"),
               ("--bc-steps", "30", "max_steps", 30), ("--bc-class-balance", "1", "class_balance", 1.0)]


def _clone_settings(argv: list[str]) -> tuple[AppoConfig, DemoSettings, BcSettings]:
    args = build_parser().parse_args(["train", "doom", "--record-demos", "DEMOS", "--bc", "CLONE", *argv])
    cfg = config_from_args(args)
    return cfg, appo_cli.demo_settings(cfg, args), appo_cli.bc_settings(cfg, args)


def test_the_demo_and_bc_flags_are_the_settings_fields() -> None:
    assert {flag for flag, *_ in CLONE_FLAGS} == {*DEMO_FLAGS.values(), *BC_FLAGS.values()}
    parser = argparse.ArgumentParser()
    appo_cli.add_arguments(parser)
    actions = {a.option_strings[0]: a for a in parser._actions if a.option_strings}
    for cls, flags in ((DemoSettings, DEMO_FLAGS), (BcSettings, BC_FLAGS)):
        fields = {f.name: f for f in dataclasses.fields(cls)}
        for name, flag in flags.items():
            assert actions[flag].default is None  # the field's default is the only one
            assert actions[flag].help == f"{fields[name].metadata['doc']} (default {fields[name].default})"


def test_an_empty_command_line_gives_the_settings_defaults() -> None:
    cfg, demo, bc = _clone_settings([])
    assert demo == DemoSettings(out="DEMOS", scenario=cfg.scenario, seed=cfg.seed, max_seconds=cfg.max_seconds)
    assert bc == BcSettings(demos="CLONE", seq_len=cfg.rollout, streams=cfg.bc_streams)
    defaults = {f.name: f.default for cls in (DemoSettings, BcSettings) for f in dataclasses.fields(cls)}
    for _, _, name, value in CLONE_FLAGS:
        got = getattr(demo if name in DEMO_FLAGS else bc, name)
        assert got == defaults[name] != value, name
        assert type(got) is type(value), name


@pytest.mark.parametrize(("flag", "text", "name", "value"), CLONE_FLAGS)
def test_each_demo_and_bc_flag_sets_its_field(flag: str, text: str, name: str, value: Any) -> None:
    _, demo0, bc0 = _clone_settings([])
    _, demo, bc = _clone_settings([flag, text])
    if name in DEMO_FLAGS:
        assert (demo, bc) == (dataclasses.replace(demo0, **{name: value}), bc0)
    else:
        assert (demo, bc) == (demo0, dataclasses.replace(bc0, **{name: value}))
    assert type(getattr(demo if name in DEMO_FLAGS else bc, name)) is type(value)
