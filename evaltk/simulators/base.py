"""What every simulator provides: the :class:`Simulator` protocol, the episode-slot protocol and the error.

A simulator turns a checkpoint's env spec (:mod:`evaltk.envs.atari` documents its layout) into
:class:`EpisodeSlots`: ``num_envs`` slots whose episodes start only when told, each with its own seed,
so episode ``i`` of an evaluation is seeded the same way on every simulator and rows pair by seed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from evaltk.envs import EnvInfo, EnvSpec
from evaltk.envs.vector import StepResult
from evaltk.errors import SpecError


class SimulatorError(SpecError):
    """A simulator cannot run as asked: unknown name, missing package, bad factory, env id it does not have."""


@dataclass(frozen=True)
class Transition:
    """One step of one env: ``obs`` (the checkpoint's shape), reward, flags, episode frames so far, lives."""

    obs: np.ndarray
    reward: float
    terminated: bool
    truncated: bool
    frames: int
    lives: int


class EpisodeRunner(Protocol):
    """One slot's env: episodes started with a seed, stepped one action at a time."""

    def start(self, seed: int) -> np.ndarray:
        """Start an episode seeded with ``seed``; return its first observation."""

    def step(self, action: int) -> Transition:
        """Apply ``action`` and return what it led to."""

    def close(self) -> None:
        """Release the env."""


class EpisodeSlots(Protocol):
    """``num_envs`` slots stepped together; ``obs`` holds every slot's latest observation ``[K, *obs_shape]``."""

    obs: np.ndarray

    def reset(self, slots: Sequence[int], seeds: Sequence[int]) -> None:
        """Start a new episode in each slot of ``slots`` with the matching seed."""

    def step(self, actions: np.ndarray, active: np.ndarray) -> StepResult:
        """Step every active slot (bool[K]) with ``actions`` (int64[K]); inactive slots' results are zero."""

    def close(self) -> None:
        """Release the envs."""

    def __enter__(self) -> EpisodeSlots: ...

    def __exit__(self, *exc: object) -> None: ...


class Simulator(Protocol):
    """One entry of the registry (:func:`evaltk.simulators.get`)."""

    name: str
    """How the simulator is named on the command line and recorded in score tables (``simulator`` column)."""

    def check(self, info: EnvInfo, *, seed: int) -> dict[str, Any]:
        """Raise :class:`SimulatorError` if this simulator cannot run ``info``'s env; else return its identity.

        The identity is what a resumed score table must match (:func:`evaltk.evaluation.scores.open_table`):
        ``{"simulator": name, "settings": effective settings (package and version included), ...}`` and
        whatever else decides its episodes (a factory's module source, EnvPool's options). Runs nothing else:
        the one call an evaluation plan makes before it opens the score table.
        """

    def settings(self, env: EnvSpec) -> dict[str, Any]:
        """Return the effective settings for a resolved env spec, in :data:`evaltk.envs.atari_settings.FIELDS`."""

    def deterministic(self) -> Simulator:
        """Return this simulator at deterministic settings for a lockstep (the env spec turns sticky actions off)."""

    def runner(self, info: EnvInfo) -> EpisodeRunner:
        """One env of ``info``'s env, stepped alone (a lockstep's side)."""

    def episodes(self, info: EnvInfo, num_envs: int, *, workers: int, fast_reset: bool) -> EpisodeSlots:
        """``num_envs`` episode slots of ``info``'s env (``workers``/``fast_reset``: where the simulator has them)."""
