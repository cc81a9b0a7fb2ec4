"""DAgger from a privileged teacher (trainers/appo/dagger.py): its mechanics on real ViZDoom, not a learning run."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from evaltk import checkpoint as evaltk_checkpoint
from evaltk.envs import doom, doom_labels
from evaltk.errors import SpecError
from trainers.appo import dagger, runner
from trainers.appo.buffers import BufferLayout, SharedBuffers
from trainers.appo.config import AppoConfig, ConfigError, dagger_beta
from trainers.appo.learner import Batch, Learner, gather_batch
from trainers.appo.network import ActorCritic

ROOT = Path(__file__).resolve().parents[2]
TEACHER = ROOT / "suites" / "checkpoints" / "appo_duel"
STUDENT, MARKED = doom.SCENARIOS["duel_bots"], doom.SCENARIOS["duel_bots_marked"]
NVEC = [len(h.options) for h in STUDENT.action_heads]
MARK = np.array(doom_labels.MARK_RGB, dtype=np.uint8)[:, None, None]


def tiny_dagger(out: Path, **changes: Any) -> AppoConfig:
    """Return a serial DAgger run of the shipped marked teacher and a small student (32-unit layers, rollouts of 8)."""
    values: dict[str, Any] = {
        "scenario": "duel_bots", "dagger_teacher": str(TEACHER), "out": str(out), "serial": True, "num_workers": 1,
        "envs_per_worker": 2, "worker_splits": 2, "rollout": 8, "batch_size": 16, "hidden_size": 32, "rnn_size": 32,
        "encoder_precision": "fp32", "log_every_s": 1.0, "save_every_s": 0.0, "queue_timeout_s": 0.2}
    values.update(changes)
    return AppoConfig(**values)


@pytest.mark.vizdoom
def test_a_tiny_dagger_run_trains_the_screen_only_student_on_the_teachers_labels_of_its_frames(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    appo = runner.AppoRun(tiny_dagger(tmp_path / "run"), log=lambda _: None)
    teacher = appo.inference.teacher
    assert teacher is not None
    assert teacher.scenario.mark_players
    assert not appo.scenario.mark_players
    served: dict[tuple[int, int], dict[str, Any]] = {}  # what the teacher saw and said, by (slot, step)
    relabel = teacher.relabel

    def recorded_relabel(b: dict[str, np.ndarray], envs: np.ndarray, slots: np.ndarray, steps: np.ndarray,
                         version: int) -> int:
        seen = {"env": envs.copy(), "first": b["env_first"][envs].copy(), "obs": b["teacher_obs"][envs].copy(),
                "grid": b["players_now"][envs].copy()}
        taken = relabel(b, envs, slots, steps, version)
        for i, (slot, step) in enumerate(zip(slots, steps, strict=True)):
            served[(int(slot), int(step))] = {k: v[i] for k, v in seen.items()} | {
                "logits": b["teacher_logits"][slot, step].copy(), "order": len(served)}
        return taken

    batches: list[tuple[list[int], Batch]] = []

    def recorded_gather(buffers: SharedBuffers, slots: list[int]) -> Batch:
        batch = gather_batch(buffers, slots)
        batches.append((list(slots), batch))
        return batch

    monkeypatch.setattr(teacher, "relabel", recorded_relabel)
    monkeypatch.setattr(runner, "gather_batch", recorded_gather)
    try:
        appo.start()
        deadline = time.monotonic() + 240
        while appo.learner.version < 2:
            assert time.monotonic() < deadline, "two SGD steps not taken within 240 s"
            appo.step(time.monotonic())
        worker = appo.system.serial_workers[0]
        b = appo.system.buffers.np
        for e, env in worker.envs.items():  # the current frame of every env: the student's view and the teacher's
            assert env.game.is_labels_buffer_enabled()
            assert env.state is not None
            slot, t = int(b["env_slot"][e]), int(b["env_t"][e])
            np.testing.assert_array_equal(b["obs"][slot, t], doom.observation(env.state, STUDENT))
            np.testing.assert_array_equal(b["teacher_obs"][e], doom.observation(env.state, MARKED))
            mask = doom_labels.enemy_mask(env.state)
            assert mask is not None
            np.testing.assert_array_equal(b["players_now"][e], doom_labels.players_grid(mask))
        checkpoint = Path(appo.save())
    finally:
        appo.stop()
    slots, batch = batches[0]
    assert batch.teacher_logits is not None
    assert batch.players is not None
    for n, slot in enumerate(slots):
        for t in range(batch.rewards.shape[0]):
            step = served[(slot, t)]
            student_obs = batch.obs[t, n].numpy()
            assert not (student_obs == MARK).all(axis=0).any(), "the student saw a mark"
            painted = (step["obs"] == MARK).all(axis=0)  # the teacher's view: the same frame, players painted
            assert not ((student_obs != step["obs"]).any(axis=0) & ~painted).any()
            np.testing.assert_array_equal(batch.teacher_logits[t, n].numpy(), step["logits"])
            np.testing.assert_array_equal(batch.players[t, n].numpy(), step["grid"])
    # The targets are the teacher's outputs on its marked frames, replayed here with its GRU state per env.
    h: dict[int, torch.Tensor] = {}
    for step in sorted(served.values(), key=lambda s: s["order"]):
        e = int(step["env"])
        state = torch.zeros(1, teacher.model.rnn_size) if step["first"] or e not in h else h[e]
        with torch.inference_mode():
            logits, _, h[e] = teacher.model.step(torch.from_numpy(step["obs"][None]), state)
        np.testing.assert_allclose(step["logits"], logits[0].numpy(), rtol=1e-4, atol=1e-4)
    policy = evaltk_checkpoint.load(checkpoint)
    scenario = doom.scenario_from_env_spec(policy.spec.env_spec)
    assert scenario == STUDENT
    assert doom.inputs(scenario).buffers() == ()
    assert not any(k.startswith("players_head") for k in policy.tensors)
    assert policy.spec.provenance["config"]["dagger_teacher"] == str(TEACHER)
    train_state = next(checkpoint.parent.glob(f"{checkpoint.name}.train"))
    assert train_state.is_dir()
    resumed = runner.AppoRun(tiny_dagger(tmp_path / "run", resume=True), log=lambda _: None)
    try:
        assert resumed.learner.dagger is not None
        saved = appo.learner.state_tensors()
        assert saved
        assert all(torch.equal(v, resumed.learner.state_tensors()[k]) for k, v in saved.items())
    finally:
        resumed.stop()


def _relabel_buffers(num_envs: int) -> SharedBuffers:
    layout = BufferLayout(num_workers=1, envs_per_worker=num_envs, slots_per_env=2, rollout=4, obs_shape=(3, 72, 128),
                          num_heads=len(NVEC), rnn_size=4, teacher_logits=sum(NVEC), teacher_rnn_size=8,
                          players_cells=dagger.PLAYERS_CELLS)
    return SharedBuffers(layout)


def constant(value: float) -> Callable[[int], float]:
    """Return a β schedule that is ``value`` at every policy version."""
    return lambda _version: value


def test_relabel_stores_the_teachers_outputs_and_executes_its_actions_with_probability_beta() -> None:
    torch.manual_seed(0)
    model = ActorCritic((3, 72, 128), NVEC, hidden_size=16, rnn_size=8)
    with torch.no_grad():  # a teacher that always picks the last choice of every head
        model.actor.weight.zero_()
        model.actor.bias.copy_(torch.cat([torch.arange(n, dtype=torch.float32) * 50.0 for n in NVEC]))
    buffers = _relabel_buffers(4)
    b = buffers.np
    try:
        rng = np.random.default_rng(0)
        b["teacher_obs"][:] = rng.integers(0, 256, b["teacher_obs"].shape, dtype=np.uint8)
        b["players_now"][:] = rng.integers(0, 2, b["players_now"].shape, dtype=np.uint8)
        b["env_first"][:] = 1
        b["teacher_rnn"][:] = 5.0  # stale state of a finished episode: zeroed where an episode starts
        envs, slots, steps = np.arange(4), np.array([0, 2, 4, 6]), np.zeros(4, dtype=np.int64)
        for beta, executed in ((0.0, 0), (1.0, 4)):
            teacher = dagger.Teacher(model, MARKED, constant(beta), None, 4, seed=1)
            b["actions"][:] = 0
            assert teacher.relabel(b, envs, slots, steps, version=0) == executed
            with torch.inference_mode():
                logits, value, h = model.step(torch.from_numpy(b["teacher_obs"][envs]), torch.zeros(4, 8))
            np.testing.assert_allclose(b["teacher_logits"][slots, steps], logits.numpy(), rtol=1e-4, atol=1e-4)
            np.testing.assert_allclose(b["teacher_value"][slots, steps], value.numpy(), rtol=1e-4, atol=1e-4)
            np.testing.assert_allclose(b["teacher_rnn"][envs], h.numpy(), rtol=1e-4, atol=1e-4)
            np.testing.assert_array_equal(b["players"][slots, steps], b["players_now"][envs])
            expected = np.array([n - 1 for n in NVEC]) if executed else np.zeros(len(NVEC))
            np.testing.assert_array_equal(b["actions"][slots, steps], np.tile(expected, (4, 1)))
            b["teacher_rnn"][:] = 5.0
    finally:
        buffers.close()


def _batch(gen: torch.Generator, n: int, version: int = 0) -> Batch:
    steps = 4
    return Batch(obs=torch.randint(0, 256, (steps + 1, n, 3, 72, 128), dtype=torch.uint8, generator=gen),
                 actions=torch.zeros(steps, n, len(NVEC), dtype=torch.int64), behaviour_logp=torch.zeros(steps, n),
                 rewards=torch.zeros(steps, n), dones=torch.rand(steps, n, generator=gen) < 0.2,
                 version=torch.full((steps, n), version, dtype=torch.int64), rnn0=torch.randn(n, 8, generator=gen),
                 teacher_logits=torch.randn(steps, n, sum(NVEC), generator=gen) * 3,
                 teacher_value=torch.randn(steps, n, generator=gen),
                 players=(torch.rand(steps, n, dagger.PLAYERS_CELLS, generator=gen) < 0.1).to(torch.uint8))


def test_the_loss_is_the_cross_entropy_to_the_teachers_probabilities_the_value_and_the_players_grid() -> None:
    torch.manual_seed(0)
    cfg = AppoConfig(scenario="duel_bots", out="unused", dagger_teacher=str(TEACHER), hidden_size=16, rnn_size=8,
                     encoder_precision="fp32", dagger_value_coef=0.25, dagger_players_coef=2.0)
    learner = Learner(ActorCritic((3, 72, 128), NVEC, hidden_size=16, rnn_size=8), cfg)
    assert learner.dagger is not None
    batch = _batch(torch.Generator().manual_seed(1), 3)
    valid = torch.ones(4, 3, dtype=torch.bool)
    terms = learner.dagger.losses(learner.model, batch, valid)
    assert batch.teacher_logits is not None
    assert batch.teacher_value is not None
    assert batch.players is not None
    resets = torch.zeros(5, 3, dtype=torch.bool)
    resets[1:] = batch.dones
    logits, values = learner.model.unroll(batch.obs, batch.rnn0, resets)
    ce = torch.stack([-(torch.softmax(t, -1) * torch.log_softmax(s, -1)).sum(-1)
                      for s, t in zip(torch.split(logits[:4], NVEC, -1), torch.split(batch.teacher_logits, NVEC, -1),
                                      strict=True)]).sum(0)
    feats = learner.model.encode(batch.obs[:4].reshape(12, 3, 72, 128)).view(4, 3, -1)
    bce = torch.nn.functional.binary_cross_entropy_with_logits(learner.dagger.players_head(feats),
                                                               batch.players.float())
    torch.testing.assert_close(terms["distill_loss"], ce.mean())
    torch.testing.assert_close(terms["value_loss"], ((values[:4] - batch.teacher_value) ** 2).mean())
    torch.testing.assert_close(terms["players_loss"], bce)
    torch.testing.assert_close(terms["loss"], ce.mean() + 0.25 * terms["value_loss"] + 2.0 * bce)
    # Junk in samples past the policy lag changes nothing.
    junk = _batch(torch.Generator().manual_seed(2), 2, version=-100)
    fields: dict[str, Any] = {key: torch.cat([x, y], dim=0 if x is batch.rnn0 else 1)
                              for (key, x), y in zip(vars(batch).items(), vars(junk).values(), strict=True)}
    spliced = Batch(**fields)
    masked = learner.dagger.losses(learner.model, spliced, torch.cat([valid, torch.zeros(4, 2, dtype=torch.bool)], 1))
    for key in ("distill_loss", "value_loss", "players_loss"):
        torch.testing.assert_close(masked[key], terms[key])


def test_teacher_and_student_scenarios_are_checked() -> None:
    assert dagger.teacher_scenario(STUDENT, MARKED) is MARKED
    with pytest.raises(SpecError, match="screen alone"):
        dagger.teacher_scenario(MARKED, MARKED)
    with pytest.raises(SpecError, match="does not mark players"):
        dagger.teacher_scenario(STUDENT, STUDENT)
    with pytest.raises(SpecError, match="obs_size"):
        dagger.teacher_scenario(STUDENT, MARKED.replace(obs_size=(36, 64)))
    with pytest.raises(ConfigError, match="dagger-beta"):
        AppoConfig(scenario="duel_bots", out="x", dagger_teacher="t", dagger_beta=1.5).check()
    with pytest.raises(ConfigError, match="drop --bc-coef"):
        AppoConfig(scenario="duel_bots", out="x", dagger_teacher="t", bc_demos="d", bc_coef=0.1).check()
    cfg = AppoConfig(scenario="duel_bots", out="x", dagger_beta=0.5, dagger_beta_steps=100)
    assert [dagger_beta(cfg, s) for s in (0, 50, 100, 200)] == [0.5, 0.25, 0.0, 0.0]
