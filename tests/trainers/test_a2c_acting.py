"""A2cPolicy's acting forward pass: the model's logits to float rounding, the same actions, bad weights named."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from evaltk.checkpoint import load
from evaltk.errors import CheckpointError
from evaltk.evaluation.plan import EvalConfig, plan
from evaltk.evaluation.run import run_plan
from evaltk.policies import ActsOnSlots, guard_actions
from trainers.a2c.model import A2cPolicy, ActingForward, NatureActorCritic, sample
from trainers.common import onednn

SHIPPED = Path(__file__).resolve().parents[2] / "suites" / "checkpoints" / "a2c_breakout"


def _model(seed: int) -> NatureActorCritic:
    torch.manual_seed(seed)
    model = NatureActorCritic((4, 84, 84), 4).eval()
    with torch.no_grad():  # biases away from zero, so every term of each layer is exercised
        for parameter in model.parameters():
            if parameter.dim() == 1:
                parameter.uniform_(-0.1, 0.1)
    return model


def _obs(batch: int, seed: int) -> torch.Tensor:
    return torch.randint(0, 256, (batch, 4, 84, 84), dtype=torch.uint8, generator=torch.Generator().manual_seed(seed))


@pytest.mark.parametrize("batch", [1, 3, 8, 13])
def test_acting_logits_equal_the_model_forward(batch: int) -> None:
    model = _model(batch)
    obs = _obs(batch, batch)
    acting = ActingForward(model)
    with torch.inference_mode():
        want, _ = model(obs)
        got = acting(obs)
        convolved = model.conv(obs.to(torch.float32) * (1.0 / 255.0)).flatten(1)
        assert torch.equal(acting.encode(obs), convolved)  # the model's convolutions, bit for bit
    assert got.shape == want.shape
    assert got.dtype == torch.float32
    torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)


def test_without_onednn_the_acting_logits_still_equal_the_model_forward(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(onednn, "LINEAR_OPS", (*onednn.LINEAR_OPS, "_an_operator_this_torch_lacks"))
    onednn.linear_works.cache_clear()
    try:
        model, obs = _model(5), _obs(5, 5)
        acting = ActingForward(model)
        assert isinstance(acting.fc, onednn._TransposedLinear)
        with torch.inference_mode():
            want, _ = model(obs)
            torch.testing.assert_close(acting(obs), want, rtol=1e-5, atol=1e-5)
    finally:
        onednn.linear_works.cache_clear()


def test_the_shipped_checkpoint_acts_as_the_model_forward_with_multinomial_per_row() -> None:
    ckpt = load(SHIPPED)
    policy = A2cPolicy.from_checkpoint(ckpt)
    policy.reset(8, np.random.default_rng(0))
    seeds = list(range(8))
    policy.begin_episodes(np.arange(8), [np.random.default_rng(s) for s in seeds])
    gens = [torch.Generator() for _ in seeds]
    for gen, seed in zip(gens, seeds, strict=True):  # EpisodeGenerators.begin: one draw seeds each row's generator
        gen.manual_seed(int(np.random.default_rng(seed).integers(2**62)))
    for step in range(20):
        obs = _obs(8, 100 + step)
        got = policy.act(obs.numpy(), np.zeros(8, bool))
        with torch.inference_mode():
            logits, _ = policy.model(obs)
        want = torch.cat([sample(logits[i:i + 1], gens[i]) for i in range(8)]).numpy()
        assert got.dtype == np.int64
        np.testing.assert_array_equal(got, want)


def _shipped_policy(slots: int) -> A2cPolicy:
    policy = A2cPolicy.from_checkpoint(load(SHIPPED))
    policy.reset(slots, np.random.default_rng(0))
    policy.begin_episodes(np.arange(slots), [np.random.default_rng([9, s]) for s in range(slots)])
    return policy


def test_acting_for_some_slots_draws_what_the_whole_batch_draws_for_them() -> None:
    whole, some = _shipped_policy(6), _shipped_policy(6)
    assert isinstance(some, ActsOnSlots)
    slots = np.array([1, 4, 5])
    for step in range(20):
        obs = _obs(6, 200 + step).numpy()
        want = whole.act(obs, np.zeros(6, bool))[slots]
        np.testing.assert_array_equal(some.act_slots(obs[slots], np.zeros(3, bool), slots), want)
        if step == 9:  # slot 4's episode is over: the others draw on as before
            slots = np.array([1, 5])


def test_idle_slots_are_left_out_of_the_forward_pass_and_no_row_changes(tmp_path: Path) -> None:
    """4 episodes of at most 100 steps on 3 slots: once the 4th starts, the other slots idle as their episodes end."""
    asked: list[list[int]] = []

    def run(out: str, num_envs: int, simulator: str) -> list[tuple[object, ...]]:
        prep = plan(EvalConfig(str(SHIPPED), tmp_path / out, episodes=4, seed=0, num_envs=num_envs, workers=0,
                               simulator=simulator, max_episode_frames=400))
        act_slots = prep.policy.act_slots  # type: ignore[attr-defined]

        def spy(obs: np.ndarray, first: np.ndarray, slots: np.ndarray) -> np.ndarray:
            asked.append(slots.tolist())
            return act_slots(obs, first, slots)  # type: ignore[no-any-return]

        prep.policy.act_slots = spy  # type: ignore[attr-defined]
        rows = run_plan(prep).rows
        return [(r.index, r.seed, r.episode_return, r.steps, r.frames, r.digest, r.obs_digest)
                for r in rows]

    batched = run("three", 3, "gpu_env")
    # Episodes 0 and 1 end on step 98 (truncated: the frame cap and the NOOP starts), so episode 3 starts in
    # slot 0 and slot 1 idles; episode 2 ends on step 99, and episode 3 plays on alone to its 95th step.
    assert [row[3] for row in batched] == [98, 98, 99, 95]
    assert asked == [[0, 2]] + [[0]] * 94
    asked.clear()
    assert run("one", 1, "gym") == batched  # one slot is never idle: the whole-batch act, the same rows
    assert asked == []


def test_weights_that_overflow_the_logits_name_the_checkpoint() -> None:
    model = _model(0)
    with torch.no_grad():
        model.actor.weight.fill_(3e38)  # every feature is >= 0 after the ReLU: the logits overflow to inf or nan
        model.fc.bias.fill_(1.0)
    policy = A2cPolicy(load(SHIPPED).spec, model)
    guard_actions(policy, "an/overflowing/checkpoint")
    policy.reset(2, np.random.default_rng(0))
    with pytest.raises(CheckpointError, match="checkpoint an/overflowing/checkpoint failed while choosing actions"):
        policy.act(_obs(2, 0).numpy(), np.ones(2, bool))
    with pytest.raises(CheckpointError, match="checkpoint an/overflowing/checkpoint failed while choosing actions"):
        policy.act_slots(_obs(1, 0).numpy(), np.ones(1, bool), np.array([1]))
