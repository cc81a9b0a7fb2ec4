"""Action sampling generators for trained policies under evaltk's evaluator.

evaltk hands a policy implementing :class:`~evaltk.policies.EpisodeSeeded` one numpy generator per
new episode (derived from the episode's recorded seed). :class:`EpisodeGenerators` turns each into a
``torch.Generator`` for that batch slot, so an episode's actions depend on its seed alone, not on
which other episodes share the batch; a policy that is never given per-episode generators (e.g. in
a tournament) samples the whole batch from one generator seeded by ``reset``.

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
