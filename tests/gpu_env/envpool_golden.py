"""Record (or replay) EnvPool Atari traces: ``tests/data/envpool/atari_traces.json``.

Recording needs EnvPool itself (``pip install envpool==1.2.5``, or ``envpool==1.2.7`` on CPython 3.12+)::

    python tests/gpu_env/envpool_golden.py --record tests/data/envpool/atari_traces.json

``envpool_versions`` lists the releases that recorded these very traces: recording with another
release whose traces are equal adds it to the list; traces that differ replace the file (and the list).

Each case is an ``envpool.make`` call (task and options) stepped with seeded random actions; every
step stores, per env, a SHA-256 prefix of the observation and of the RAM, the reward, terminated,
truncated, ``info["lives"]``, ``info["reward"]``, ``info["terminated"]`` and ``info["elapsed_step"]``.
:func:`trace` computes the same record from any ``make`` with EnvPool's signature, so the test
replays the cases on ``gpu_env.envpool`` and compares.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

CASES: list[dict[str, Any]] = [
    {"task": "Breakout-v5", "steps": 300, "options": {"num_envs": 3, "seed": 3}},
    {"task": "Breakout-v5", "steps": 300,
     "options": {"num_envs": 3, "seed": 1, "episodic_life": True, "reward_clip": True}},
    {"task": "MsPacman-v5", "steps": 300,
     "options": {"num_envs": 2, "seed": 5, "episodic_life": True, "reward_clip": True,
                 "repeat_action_probability": 0.25}},
    {"task": "Pong-v5", "steps": 150, "options": {"num_envs": 2, "seed": 0, "noop_max": 7, "frame_skip": 3,
                                                   "stack_num": 2, "max_episode_steps": 100}},
    {"task": "Breakout-v5", "steps": 200, "options": {"num_envs": 2, "seed": [7, 123456], "mode": 4, "difficulty": 1}},
    {"task": "SpaceInvaders-v5", "steps": 200,
     "options": {"num_envs": 2, "seed": 1, "frame_skip": 2, "use_fire_reset": False, "episodic_life": True,
                 "zero_discount_on_life_loss": True}},
]


def _digest(array: np.ndarray) -> str:
    return hashlib.sha256(np.ascontiguousarray(array).tobytes()).hexdigest()[:16]


def trace(make: Callable[..., Any], case: dict[str, Any]) -> list[list[list[Any]]]:
    """Run ``case`` on ``make`` (EnvPool's signature, gymnasium API); one row per env per step, step 0 = reset."""
    env = make(case["task"], env_type="gymnasium", **case["options"])
    rng = np.random.default_rng(0)
    obs, info = env.reset()
    zeros = np.zeros(len(obs))
    rows = [_rows(obs, zeros, zeros.astype(bool), zeros.astype(bool), info)]
    for _ in range(case["steps"]):
        actions = rng.integers(0, env.action_space.n, len(obs)).astype(np.int32)
        obs, reward, terminated, truncated, info = env.step(actions)
        rows.append(_rows(obs, reward, terminated, truncated, info))
    return rows


def _rows(obs: np.ndarray, reward: np.ndarray, terminated: np.ndarray, truncated: np.ndarray,
          info: dict[str, Any]) -> list[list[Any]]:
    return [[_digest(obs[i]), _digest(info["ram"][i]), float(reward[i]), bool(terminated[i]), bool(truncated[i]),
             int(info["lives"][i]), float(info["reward"][i]), int(info["terminated"][i]), int(info["elapsed_step"][i])]
            for i in range(len(obs))]


def main() -> None:
    """Record every case with the installed EnvPool (adding its version where the file's traces are equal)."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--record", type=Path, required=True, help="JSON file to write")
    args = parser.parse_args()
    envpool = importlib.import_module("envpool")
    cases = [{**case, "trace": trace(envpool.make, case)} for case in CASES]
    versions = [envpool.__version__]
    if args.record.is_file():
        before = json.loads(args.record.read_text())
        if json.loads(json.dumps(cases)) == before["cases"]:
            versions = sorted(set(before["envpool_versions"]) | set(versions))
        else:
            print(f"envpool {envpool.__version__}'s traces differ from those of {before['envpool_versions']}")
    args.record.parent.mkdir(parents=True, exist_ok=True)
    args.record.write_text(json.dumps({"envpool_versions": versions, "cases": cases}, separators=(",", ":")) + "\n")
    print(f"wrote {len(CASES)} cases recorded by envpool {', '.join(versions)} to {args.record}")


if __name__ == "__main__":
    main()
