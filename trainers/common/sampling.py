"""Action sampling generators for trained policies under evaltk's evaluator.

evaltk hands a policy implementing :class:`~evaltk.policies.EpisodeSeeded` one numpy generator per
new episode (derived from the episode's recorded seed). :class:`EpisodeGenerators` turns each into a
``torch.Generator`` for that batch slot, so an episode's actions depend on its seed alone, not on
which other episodes share the batch; a policy that is never given per-episode generators (e.g. in
a tournament) samples the whole batch from one generator seeded by ``reset``.

:meth:`EpisodeGenerators.sample` draws every row's action in one pass over the batch: the categorical draw
``torch.multinomial(probs, 1)`` makes on the CPU (the exponential race: ``argmax(p / q)`` with ``q ~ Exp(1)``
drawn from the row's generator), so the actions equal one ``multinomial`` call per row with that row's
generator (``tests/trainers/test_sampling.py``), without a call per row.

One limit, documented where replay is claimed: a row of a batched forward pass can differ from the
same row computed alone in the last bits of a float (the CPU kernels pick algorithms per shape); an
action can then differ only when the uniform draw falls inside that difference.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch


class EpisodeGenerators:
    """A batch ``torch.Generator`` plus one per slot that :meth:`begin` gave an episode generator."""

    def __init__(self, device: torch.device | str = "cpu") -> None:
        self.device = torch.device(device)
        self.batch = torch.Generator(device=self.device)
        self.slots: dict[int, torch.Generator] = {}

    def reset(self, rng: np.random.Generator) -> None:
        """Seed the batch generator from ``rng`` and forget the per-slot generators."""
        self.batch.manual_seed(int(rng.integers(2**62)))
        self.slots.clear()

    def begin(self, slots: np.ndarray, rngs: Sequence[np.random.Generator]) -> None:
        """Give each slot in ``slots`` (int[k]) a generator seeded from its episode generator."""
        for slot, rng in zip(np.asarray(slots).tolist(), rngs, strict=True):
            gen = torch.Generator(device=self.device)
            gen.manual_seed(int(rng.integers(2**62)))
            self.slots[int(slot)] = gen

    @property
    def per_episode(self) -> bool:
        """True once :meth:`begin` was called: sample row by row with each slot's generator."""
        return bool(self.slots)

    def for_row(self, row: int) -> torch.Generator:
        """Return batch row ``row``'s generator (the batch generator for a slot without an episode one)."""
        return self.slots.get(row, self.batch)

    def sample(self, logits: torch.Tensor, slots: Sequence[int] | None = None) -> torch.Tensor:
        """Sample ``int64[B]`` actions from ``float[B, A]`` logits: row ``i`` with the generator of slot ``slots[i]``.

        ``slots`` (default: row ``i`` is slot ``i``) names the batch slot of each row when the rows are some
        slots only. The exponential race (module docstring): ``q`` is drawn row by row from each slot's generator
        (:meth:`for_row`; from the batch generator as one ``[B, A]`` draw when no slot has an episode
        generator), then ``argmax(p / q)`` over the whole batch. Logits whose softmax is not a distribution (a
        NaN or +Inf logit, a row of -Inf) raise ``ValueError``, as ``multinomial`` refuses those probabilities;
        a -Inf logit among finite ones is an action of probability 0, never drawn.
        """
        probs = torch.softmax(logits, dim=-1)
        if bool(torch.isnan(probs).any()):
            raise ValueError("the action logits contain NaN or +Inf, or a row of -Inf: no distribution to draw from")
        race = torch.empty_like(probs)
        if self.per_episode:
            rows = range(race.shape[0]) if slots is None else slots
            for row, slot in enumerate(rows):
                race[row:row + 1].exponential_(generator=self.for_row(int(slot)))
        else:
            race.exponential_(generator=self.batch)
        return torch.argmax(probs.div_(race), dim=-1)
