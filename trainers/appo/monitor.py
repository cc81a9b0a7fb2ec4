"""Run bookkeeping of APPO: episode/FPS statistics and ``config.json``."""

from __future__ import annotations

import time
from collections import deque
from pathlib import Path
from typing import Any

import numpy as np

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


def record_metrics(stats: Stats, train_step: int, seconds: float, cpu_seconds: float, restarts: int,
                   last: dict[str, float]) -> dict[str, Any]:
    """Return one ``metrics.jsonl`` record: counters, rates, episode statistics and the learner's ``last`` metrics."""
    record: dict[str, Any] = {
        "env_frames": stats.env_frames, "seconds": round(seconds, 3), "train_step": train_step,
        "perf/fps": stats.fps(), "perf/cpu_seconds": round(cpu_seconds, 2),
        "charts/mean_episode_reward": stats.mean_reward(), "charts/episodes": stats.episodes,
        "perf/worker_restarts": restarts,
    }
    if stats.lengths:
        record["charts/mean_episode_length"] = float(np.mean(stats.lengths))
    if stats.objectives:
        record["charts/true_objective"] = float(np.mean(stats.objectives))
    record.update(last)
    return record


def console_line(r: dict[str, Any]) -> str:
    """Return the progress line of a :func:`record_metrics` record."""
    lag = (f"lag {r['train/lag_min']:.0f}/{r['train/lag_avg']:.1f}/{r['train/lag_max']:.0f}"
           if "train/lag_avg" in r else "lag -")
    line = (f"[{r['seconds']:7.1f}s] frames {r['env_frames']:>9d}  fps {r['perf/fps']:7.0f}  "
            f"reward {r['charts/mean_episode_reward']:7.3f} ({r['charts/episodes']} ep)  step {r['train_step']}  "
            f"{lag}  cpu {r['perf/cpu_seconds']:.0f}s  restarts {r['perf/worker_restarts']}")
    if "losses/distill_loss" in r:  # a DAgger run (trainers.appo.dagger)
        agree = "/".join(f"{r[k]:.2f}" for k in sorted(r) if k.startswith("losses/agree_"))
        line += (f"  distill {r['losses/distill_loss']:.3f} agree {agree} players {r['losses/players_loss']:.4f} "
                 f"found {r['losses/players_found']:.3f}")
        if "charts/true_objective" in r:
            line += f"  objective {r['charts/true_objective']:.2f}"
    return line
