"""population.json round trip, match experience cut into learner chunks (padding masked), and config checks."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from evaltk import checkpoint as evaltk_checkpoint
from evaltk.errors import CheckpointError, SpecError
from trainers.appo import bc, demos
from trainers.appo.config import AppoConfig
from trainers.appo.learner import compute_losses
from trainers.appo.network import ActorCritic
from trainers.appo.runner import build_model
from trainers.appo.scenario import resolve_scenario
from trainers.appo.selfplay import pbt, trajectory
from trainers.appo.selfplay import population as pop
from trainers.appo.selfplay.config import SelfPlayConfig, SelfPlayConfigError
from trainers.appo.selfplay.population import MatchTally, Member, PopulationError, PopulationState
from trainers.appo.selfplay.runner import PopulationRun
from trainers.appo.selfplay.setup import shaping_of


def _state() -> PopulationState:
    members = [Member(id=0, hyperparams={"learning_rate": 3e-4}), Member(id=1, hyperparams={"learning_rate": 1e-4})]
    members[0].record(3, 1, {"m1": 1.0}, window=2)
    members[0].record(0, 0, {"m1-s0000000_0": 0.5}, window=2)
    members[0].record(-1, 2, {"m1": 0.0}, window=2)
    members[1].lineage.append({"event": 0, "donor": 0, "member_frames": 100, "hyperparams": {"learning_rate": 2e-4}})
    return PopulationState(scenario="duel", appo={"batch_size": 64}, selfplay=SelfPlayConfig().to_dict(),
                           members=members, events=[{"event": 0, "member": 1, "donor": 0}],
                           objective_history=[{"member": 1, "objectives": {"0": 0.75, "1": 0.0}}],
                           total_frames=1234, rng_state=dict(np.random.default_rng(3).bit_generator.state))


def test_member_counts_and_window() -> None:
    m = _state().members[0]
    assert m.tally == MatchTally(matches=3, wins=1, draws=1, losses=1, frags=2, deaths=3)
    assert m.recent == [[0.5, 0.0], [0.0, -1.0]]  # the window keeps the last 2
    assert m.scores() == {"m1": 0.5, "m1-s0000000_0": 0.5}


def test_population_json_round_trip(tmp_path: Path) -> None:
    state = _state()
    pop.write(tmp_path, state)
    assert not list(tmp_path.glob(".population.json.*"))  # the atomic writer left no temporary file
    again = pop.read(tmp_path)
    assert again == state
    assert json.loads((tmp_path / "population.json").read_text())["format"] == pop.FORMAT
    rng = np.random.default_rng()
    rng.bit_generator.state = again.rng_state
    assert rng.random() == np.random.default_rng(3).random()  # the generator resumes where it was


def test_population_json_keeps_the_tally_among_the_member_keys(tmp_path: Path) -> None:
    pop.write(tmp_path, _state())
    data = json.loads((tmp_path / "population.json").read_text())
    member = data["members"][0]
    assert list(member) == ["id", "hyperparams", "init_from", "train_step", "env_frames", "generation", "parent",
                            "lineage", "snapshots", "recent", "vs", "matches", "wins", "draws", "losses", "frags",
                            "deaths", "last_pbt_frames", "last_snapshot_frames"]
    assert [member[k] for k in ("matches", "wins", "draws", "losses", "frags", "deaths")] == [3, 1, 1, 1, 2, 3]
    member["tally"] = {"matches": 3}  # the counters have one place in the file
    (tmp_path / "population.json").write_text(json.dumps(data))
    with pytest.raises(PopulationError, match="lacks or mangles"):
        pop.read(tmp_path)


def test_population_json_errors_name_the_problem(tmp_path: Path) -> None:
    with pytest.raises(PopulationError, match="does not exist"):
        pop.read(tmp_path)
    (tmp_path / "population.json").write_text(json.dumps({"format": "other/1"}))
    with pytest.raises(PopulationError, match="format 'other/1'"):
        pop.read(tmp_path)
    (tmp_path / "population.json").write_text(json.dumps({"format": pop.FORMAT, "members": []}))
    with pytest.raises(PopulationError, match="lacks or mangles"):
        pop.read(tmp_path)


def _traj(steps: int, rnn: int = 8, rng: np.random.Generator | None = None, obs: tuple[int, int, int] = (3, 36, 64),
          heads: int = 2) -> dict[str, np.ndarray]:
    rng = rng or np.random.default_rng(0)
    chunks = -(-steps // 4)
    return {"obs": rng.integers(0, 255, (steps + 1, *obs), dtype=np.uint8),
            "actions": rng.integers(0, 2, (steps, heads)).astype(np.int64),
            "logp": rng.normal(size=steps).astype(np.float32) - 1.0,
            "rewards": rng.normal(size=steps).astype(np.float32),
            "rnn0": rng.normal(size=(chunks, rnn)).astype(np.float32)}


def test_chunks_cover_the_match_and_pad_the_end() -> None:
    traj = _traj(10)
    chunks = trajectory.to_chunks(traj, rollout=4, version=7)
    assert len(chunks) == 3
    flat_rewards = np.concatenate([c.rewards for c in chunks])
    np.testing.assert_array_equal(flat_rewards[:10], traj["rewards"])
    np.testing.assert_array_equal(chunks[1].obs, traj["obs"][4:9])  # each chunk carries its bootstrap obs
    assert [c.dones.tolist() for c in chunks] == [[False] * 4, [False] * 4, [False, True, True, True]]
    assert chunks[2].version.tolist() == [7, 7, trajectory.PAD_VERSION, trajectory.PAD_VERSION]
    np.testing.assert_array_equal(chunks[2].rnn0, traj["rnn0"][2])
    batch = trajectory.to_batch(chunks)
    assert tuple(batch.obs.shape) == (5, 3, 3, 36, 64)
    assert tuple(batch.actions.shape) == (4, 3, 2)
    assert tuple(batch.rnn0.shape) == (3, 8)


def test_padding_changes_no_loss() -> None:
    """Steps past the end of a match are masked by the policy-lag rule: junk there changes nothing."""
    cfg = AppoConfig(rollout=4, batch_size=12, obs_height=36, obs_width=64, hidden_size=16, rnn_size=8)
    torch.manual_seed(0)
    model = ActorCritic((3, 36, 64), [2, 2], 16, 8)
    chunks = trajectory.to_chunks(_traj(10), rollout=4, version=3)
    batch = trajectory.to_batch(chunks)
    valid = (3 - batch.version) <= cfg.max_policy_lag
    assert int(valid.sum()) == 10
    junk = trajectory.to_batch(chunks)
    pad = ~valid
    junk.rewards[pad] = 1e6
    junk.behaviour_logp[pad] = -50.0
    junk.actions[pad] = 1
    junk.obs[1:][pad] = 255
    a = compute_losses(model, batch, valid, cfg)
    b = compute_losses(model, junk, valid, cfg)
    for key in ("loss", "policy_loss", "value_loss", "entropy"):
        assert float(a[key].detach()) == pytest.approx(float(b[key].detach()), rel=1e-6, abs=1e-7), key


def test_config_refuses_bad_values() -> None:
    SelfPlayConfig().check()
    for bad, match in (({"population": 0}, "--population"), ({"max_snapshots": 0}, "--max-snapshots must be >= 1"),
                       ({"opponent_sampling": "best"}, "opponent-sampling"),
                       ({"pbt_replace_fraction": 0.9}, "replace-fraction"), ({"map": "map03"}, "--map"),
                       ({"pbt_perturb_min": 2.0, "pbt_perturb_max": 1.5}, "perturb")):
        with pytest.raises(SelfPlayConfigError, match=match):
            SelfPlayConfig(**bad).check()


def _cfg(tmp_path: Path, **changes: Any) -> AppoConfig:
    values: dict[str, Any] = {"scenario": "duel", "out": str(tmp_path / "run"), "obs_height": 36, "obs_width": 64,
                              "hidden_size": 16, "rnn_size": 8, "rollout": 4, "batch_size": 8}
    return AppoConfig(**(values | changes))


def _run(tmp_path: Path, **changes: Any) -> PopulationRun:
    sp = SelfPlayConfig(self_play=True, population=2, pbt_min_matches=1, pbt_replace_gap=-1.0, pbt_mutation_rate=1.0)
    return PopulationRun(_cfg(tmp_path, **changes), sp, log=lambda _line: None)


def _saved_policy(tmp_path: Path, cfg: AppoConfig, seed: int) -> Path:
    """Save an evaltk checkpoint of ``cfg``'s model (``seed``'s weights, a non-default normaliser count)."""
    torch.manual_seed(seed)
    scenario = resolve_scenario(cfg, self_play=True)
    model = build_model(cfg, scenario)
    model.obs_count.fill_(7.0)
    return bc.save_policy(tmp_path / f"init{seed}", cfg, scenario, model, 1, 1)


def _close(run: PopulationRun) -> None:
    for live in run.live:
        live.metrics.close()


def test_exploit_copies_weights_and_hyperparameters_then_resumes(tmp_path: Path) -> None:
    run = _run(tmp_path)
    try:
        m0, m1 = run.live
        assert m0.member.hyperparams != m1.member.hyperparams  # m1 starts mutated from the defaults
        assert not torch.equal(m0.model.fc.weight, m1.model.fc.weight)
        m0.member.record(2, 0, {"m1": 1.0}, window=5)
        m1.member.record(-2, 2, {"m0": 0.0}, window=5)
        m1.member.env_frames = 1000
        run.pbt_step(m1.member, [x.member for x in run.live])
        assert torch.equal(m0.model.fc.weight, m1.model.fc.weight)  # exploit: the donor's weights
        event = run.state.events[0]
        assert (event["member"], event["donor"]) == (1, 0)
        assert event["donor_hyperparams"] == m0.member.hyperparams
        assert m1.member.hyperparams == event["hyperparams_after"] != m0.member.hyperparams  # explore: mutated
        for h in run.space:
            assert h.low <= m1.member.hyperparams[h.name] <= h.high
        # every shaping weight was perturbed (mutation rate 1), kept within x/÷ 4 of the scenario's, sign kept;
        # the match player gets these weights (PopulationRun.play passes shaping_of(hyperparams))
        base = dict(run.scenario.reward_shaping)
        shaping = shaping_of(m1.member.hyperparams, base)
        assert {k for k in event["hyperparams_after"] if k.startswith("reward.")} == {f"reward.{k}" for k in base if
                                                                                      base[k]}
        for key, weight in base.items():
            assert shaping[key] != weight
            assert abs(weight) / 4 <= abs(shaping[key]) <= abs(weight) * 4
            assert np.sign(shaping[key]) == np.sign(weight)
        assert m1.learner.optimizer.param_groups[0]["lr"] == m1.member.hyperparams["learning_rate"]
        assert m1.learner.cfg.entropy_coef == m1.member.hyperparams["entropy_coef"]
        assert (m1.member.generation, m1.member.parent, m1.member.recent) == (1, 0, [])
        assert m1.member.lineage == [{"event": 0, "donor": 0, "donor_generation": 0, "member_frames": 1000,
                                      "hyperparams": m1.member.hyperparams}]
        run.pbt_step(m0.member, [x.member for x in run.live])  # the top member keeps its weights
        assert len(run.state.events) == 1
        assert len(run.state.objective_history) == 2
        run.save()
        saved = pop.read(Path(run.cfg.out))
    finally:
        _close(run)
    again = _run(tmp_path)
    try:
        assert again.state.resumes == 1
        assert again.state.events == saved.events
        assert [x.member.hyperparams for x in again.live] == [x.member.hyperparams for x in run.live]
        for a, b in zip(again.live, run.live, strict=True):
            for key, tensor in b.model.state_dict().items():
                assert torch.equal(a.model.state_dict()[key], tensor), key
        assert again.live[1].learner.optimizer.param_groups[0]["lr"] == run.live[1].member.hyperparams[
            "learning_rate"]
    finally:
        _close(again)
    with pytest.raises(PopulationError, match="--population 2"):
        PopulationRun(dataclasses.replace(run.cfg), dataclasses.replace(run.sp, population=3), log=print)


def test_pbt_waits_for_its_period_and_a_declined_donor_draws_nothing(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    run = _run(tmp_path)
    try:
        m0, m1 = run.live
        members = [m0.member, m1.member]
        m0.member.record(2, 0, {"m1": 1.0}, window=5)
        m1.member.record(-2, 2, {"m0": 0.0}, window=5)
        m1.member.env_frames = run.sp.pbt_period - 1
        run.pbt_if_due(m1.member, members)
        assert run.state.objective_history == []  # not due yet
        declined: list[tuple[int, int]] = []

        def decline(m: Member, donor: Member) -> bool:
            declined.append((m.id, donor.id))
            return False

        monkeypatch.setattr(run, "donor_ready", decline)
        m1.member.env_frames = run.sp.pbt_period
        weights = m1.model.fc.weight.clone()
        alone = np.random.default_rng()
        alone.bit_generator.state = run.rng.bit_generator.state
        run.pbt_if_due(m1.member, members)
        assert declined == [(1, 0)]
        assert (run.state.events, len(run.state.objective_history)) == ([], 1)
        assert torch.equal(m1.model.fc.weight, weights)
        pbt.check(1, {m.id: m.recent for m in members}, alone, kind=run.sp.pbt_objective,
                  min_matches=run.sp.pbt_min_matches, fraction=run.sp.pbt_replace_fraction,
                  gap=run.sp.pbt_replace_gap, total_frames=0, seconds=0.0)
        assert run.rng.bit_generator.state == alone.bit_generator.state  # the check's draws only, no mutation
        run.pbt_if_due(m1.member, members)  # checked at these frames already
        assert len(run.state.objective_history) == 1
        monkeypatch.undo()
        m1.member.env_frames += run.sp.pbt_period
        run.pbt_if_due(m1.member, members)
        assert [(e["member"], e["donor"]) for e in run.state.events] == [(1, 0)]
        assert torch.equal(m1.model.fc.weight, m0.model.fc.weight)
    finally:
        _close(run)


def test_every_member_starts_from_the_init_from_checkpoint(tmp_path: Path) -> None:
    """--init-from: new members get the checkpoint's weights and normaliser and record its path; a resume does not."""
    path = _saved_policy(tmp_path, _cfg(tmp_path), seed=11)
    tensors = evaltk_checkpoint.load(path).tensors
    run = _run(tmp_path, init_from=str(path))
    try:
        assert run.live[0].member.hyperparams != run.live[1].member.hyperparams
        for live in run.live:
            state = live.model.state_dict()
            assert state.keys() == tensors.keys()
            for key, tensor in tensors.items():
                assert torch.equal(state[key], tensor), (live.member.name, key)
            assert live.member.init_from == str(path.resolve())
            first = evaltk_checkpoint.load(live.member.snapshots[0]["path"]).tensors  # the first frozen snapshot
            assert all(torch.equal(first[k], t) for k, t in tensors.items())
        run.live[0].model.fc.weight.data.add_(1.0)  # training, as far as the checkpoint is concerned
        run.save()
    finally:
        _close(run)
    assert [m["init_from"] for m in json.loads((tmp_path / "run" / "population.json").read_text())["members"]] == \
        [str(path.resolve())] * 2
    again = _run(tmp_path, init_from=str(path))  # a resumed run takes its members' checkpoints, not --init-from
    try:
        assert again.initial is None
        assert torch.equal(again.live[0].model.fc.weight, tensors["fc.weight"] + 1.0)
    finally:
        _close(again)


def test_a_mismatched_init_from_checkpoint_is_one_error_and_writes_nothing(tmp_path: Path) -> None:
    other = _saved_policy(tmp_path, _cfg(tmp_path, hidden_size=32), seed=3)
    with pytest.raises(CheckpointError, match=r"--init-from .*do not fit this model.*--hidden-size") as err:
        _run(tmp_path, init_from=str(other))
    assert "\n" not in str(err.value)
    assert not (tmp_path / "run").exists()


def test_bc_demos_of_another_observation_are_refused(tmp_path: Path) -> None:
    folder = tmp_path / "demos"
    folder.mkdir()
    with pytest.raises(SpecError, match="not a demonstrations folder"):
        _run(tmp_path, bc_demos=str(folder), bc_coef=0.1)
    assert not (tmp_path / "run").exists()


@pytest.mark.vizdoom
def test_bc_auxiliary_loss_trains_every_member_and_decays(tmp_path: Path) -> None:
    """--bc-demos/--bc-coef/--bc-decay-steps: each member's learner adds the decaying cloning term to its steps."""
    folder = tmp_path / "demos"
    demos.record(demos.DemoSettings(out=str(folder), episodes=1, timelimit_min=0.05, chunk_steps=16, seed=3),
                 log=lambda _: None)
    run = _run(tmp_path, obs_height=0, obs_width=0, bc_demos=str(folder), bc_coef=0.5, bc_decay_steps=3,
               bc_streams=2)
    try:
        heads = len(run.scenario.action_heads)
        rng = np.random.default_rng(1)
        for live in run.live:
            assert live.learner.aux is not None
            coefs = []
            for _ in range(4):
                traj = _traj(8, rnn=8, rng=rng, obs=(3, *run.scenario.obs_size), heads=heads)
                chunks = trajectory.to_chunks(traj, rollout=4, version=live.learner.version)
                losses = trajectory.train_chunks(live.learner, chunks, 2, 1, live.member)
                assert losses["losses/bc_coef"] == 0.0 or losses["losses/bc_loss"] > 0.0
                coefs.append(losses["losses/bc_coef"])
            assert coefs == pytest.approx([0.5, 0.5 * 2 / 3, 0.5 / 3, 0.0])  # linear in the member's SGD steps
            assert live.member.train_step == 4
    finally:
        _close(run)
    with pytest.raises(SpecError, match="recorded for scenario"):  # demonstrations of another observation size
        _run(tmp_path / "small", bc_demos=str(folder), bc_coef=0.5)
