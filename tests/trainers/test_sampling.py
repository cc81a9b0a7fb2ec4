"""EpisodeGenerators.sample: one pass over the batch draws what one ``multinomial`` call per row draws."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from trainers.common.sampling import EpisodeGenerators


def _generators(seed: int, slots: int | None) -> EpisodeGenerators:
    """Return generators seeded from ``seed``: per-episode ones for ``slots`` slots, or the batch one only."""
    gens = EpisodeGenerators()
    gens.reset(np.random.default_rng(seed))
    if slots is not None:
        gens.begin(np.arange(slots), [np.random.default_rng([seed, slot]) for slot in range(slots)])
    return gens


def _multinomial_per_row(logits: torch.Tensor, gens: EpisodeGenerators) -> torch.Tensor:
    probs = torch.softmax(logits, dim=-1)
    if not gens.per_episode:
        return torch.multinomial(probs, 1, generator=gens.batch).view(-1)
    return torch.cat([torch.multinomial(probs[i:i + 1], 1, generator=gens.for_row(i)) for i in range(len(probs))]
                     ).view(-1)


@pytest.mark.parametrize("per_episode", [True, False])
def test_sample_draws_what_multinomial_draws_row_by_row(per_episode: bool) -> None:
    rng = np.random.default_rng(7)
    for step in range(60):  # 60 steps of 8 rows: logits from flat to nearly one-hot
        logits = torch.from_numpy(rng.normal(0.0, 1 + step % 6, (8, 4)).astype(np.float32))
        ours, theirs = _generators(step, 8 if per_episode else None), _generators(step, 8 if per_episode else None)
        for _ in range(3):  # the generators advance the same way call after call
            actions = ours.sample(logits)
            assert actions.dtype == torch.int64
            assert actions.shape == (8,)
            assert torch.equal(actions, _multinomial_per_row(logits, theirs))


def test_a_slot_without_an_episode_generator_draws_from_the_batch_generator() -> None:
    gens = _generators(3, None)
    gens.begin(np.array([1]), [np.random.default_rng(11)])
    logits = torch.zeros(3, 5)
    want_batch, want_slot = torch.Generator(), torch.Generator()
    want_batch.set_state(gens.batch.get_state())
    want_slot.set_state(gens.for_row(1).get_state())
    probs = torch.softmax(logits, dim=-1)
    want = [torch.multinomial(probs[0:1], 1, generator=want_batch),
            torch.multinomial(probs[1:2], 1, generator=want_slot),
            torch.multinomial(probs[2:3], 1, generator=want_batch)]
    assert gens.sample(logits).tolist() == torch.cat(want).view(-1).tolist()


@pytest.mark.parametrize("bad", [[0.0, float("nan"), 0.0], [0.0, float("inf"), 0.0], [float("-inf")] * 3])
def test_logits_without_a_distribution_are_refused_as_multinomial_refuses_them(bad: list[float]) -> None:
    logits = torch.tensor([[0.0, 1.0, 2.0], bad])
    with pytest.raises(RuntimeError):
        torch.multinomial(torch.softmax(logits, dim=-1), 1)
    with pytest.raises(ValueError, match="NaN or \\+Inf, or a row of -Inf"):
        _generators(0, 2).sample(logits)


def test_an_action_of_logit_minus_inf_is_never_drawn() -> None:
    logits = torch.tensor([[0.0, float("-inf"), 0.0]] * 64)
    actions = _generators(5, 64).sample(logits)
    assert set(actions.tolist()) == {0, 2}
