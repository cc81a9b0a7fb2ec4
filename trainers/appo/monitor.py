"""Run bookkeeping of APPO: episode/FPS statistics and ``config.json``."""

from __future__ import annotations

import time
from collections import deque
from pathlib import Path

from evaltk.envs.doom import DoomScenario
from trainers.appo.config import AppoConfig
from trainers.common.run import ProcessSettings
from trainers.common.state_io import write_run_config


class Stats:
    """Running episode statistics and frame-rate windows."""

    def __init__(self, window: int, env_frames: int = 0) -> None:
        self.rewards: deque[float] = deque(maxlen=window)
        self.lengths: deque[float] = deque(maxlen=window)
        self.objectives: deque[float] = deque(maxlen=window)
        self.episodes = 0
        self.env_frames = env_frames
        self._marks: deque[tuple[float, int]] = deque(maxlen=512)
        self._marks.append((time.monotonic(), env_frames))

    def add_frames(self, frames: int) -> None:
        """Count ``frames`` more env frames."""
        self.env_frames += frames
        self._marks.append((time.monotonic(), self.env_frames))

    def add_episode(self, reward: float, length: float, objective: float) -> None:
        """Record one finished episode."""
        self.rewards.append(reward)
        self.lengths.append(length)
        if objective == objective:  # not NaN
            self.objectives.append(objective)
        self.episodes += 1

    def mean_reward(self) -> float:
        """Mean reward of the last ``window`` episodes (NaN before the first)."""
        return sum(self.rewards) / len(self.rewards) if self.rewards else float("nan")

    def fps(self, seconds: float = 10.0) -> float:
        """Env frames per second over (about) the last ``seconds``."""
        now = time.monotonic()
        old = [m for m in self._marks if now - m[0] <= seconds] or [self._marks[-1]]
        t0, f0 = old[0]
        return (self.env_frames - f0) / max(now - t0, 1e-9)


def write_config(run_dir: Path, cfg: AppoConfig, scenario: DoomScenario, *, resumed_from: int | None,
                 process: ProcessSettings) -> None:
    """Write ``config.json``: the resolved config, the scenario, the process settings, versions, command line."""
    import vizdoom

    write_run_config(run_dir, {"config": cfg.to_dict(), "scenario": scenario.to_dict(), "process": process.to_dict()},
                     resumed_from_key="resumed_from_env_frames", resumed_from=resumed_from,
                     vizdoom=vizdoom.__version__)
