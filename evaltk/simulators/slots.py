"""Episode slots over simulators that run one episode object per slot, in this process.

:class:`SerialSlots` gives :class:`~evaltk.simulators.base.EpisodeSlots` on top of any
:class:`EpisodeRunner` (an EnvPool pool of one env, a user factory's env): slot ``k``'s runner starts
each of its episodes with the episode's own seed and is stepped alone.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from evaltk.envs.vector import StepResult
from evaltk.simulators.base import EpisodeRunner, SimulatorError


class SerialSlots:
    """``num_envs`` runners made by ``make_runner``, stepped one after another in this process."""

    def __init__(self, make_runner: Callable[[], EpisodeRunner], num_envs: int, *, obs_shape: Sequence[int],
                 obs_dtype: str, label: str) -> None:
        self.num_envs = num_envs
        self.obs = np.zeros((num_envs, *obs_shape), dtype=np.dtype(obs_dtype))
        self._runners = [make_runner() for _ in range(num_envs)]
        self._label = label

    def _store(self, slot: int, obs: np.ndarray) -> None:
        array = np.asarray(obs)
        if array.shape != self.obs.shape[1:]:
            raise SimulatorError(f"{self._label} returned an observation of shape {list(array.shape)}, the checkpoint "
                                 f"expects {list(self.obs.shape[1:])}: make the simulator produce the checkpoint's "
                                 "observations")
        self.obs[slot] = array

    def reset(self, slots: Sequence[int], seeds: Sequence[int]) -> None:
        """Start an episode in each slot of ``slots`` with the matching seed."""
        for slot, seed in zip(slots, seeds, strict=True):
            self._store(slot, self._runners[slot].start(int(seed)))

    def step(self, actions: np.ndarray, active: np.ndarray) -> StepResult:
        """Step every active slot with its action (int64[K]); inactive slots' results are zero."""
        k = self.num_envs
        reward, frames = np.zeros(k, np.float64), np.zeros(k, np.int64)
        terminated, truncated = np.zeros(k, np.bool_), np.zeros(k, np.bool_)
        for slot in np.flatnonzero(active).tolist():
            t = self._runners[slot].step(int(actions[slot]))
            reward[slot], terminated[slot], truncated[slot] = t.reward, t.terminated, t.truncated
            frames[slot] = t.frames
            self._store(slot, t.obs)
        return StepResult(reward=reward, terminated=terminated, truncated=truncated, frames=frames)

    def close(self) -> None:
        """Close every runner."""
        for runner in self._runners:
            runner.close()
        self._runners = []

    def __enter__(self) -> SerialSlots:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
