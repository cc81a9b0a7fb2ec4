"""The drop-in tables of ``benchmarks/atari_cpu.py``: each gpu_env drop-in against the library it replaces.

Loaded by ``atari_cpu.py`` (not run on its own); each ``*_section(games, args, bench)`` builds one table
with ``bench``'s (``atari_cpu``'s) ``Section``, ``_compare`` and ``_row``, so every row is measured as
the other tables are: built once, warmed up, timed in turns, medians, the same random actions.

- ``envpool``: ``gpu_env.envpool.make(task, num_envs=N)`` against ``envpool.make`` with the same
  arguments (EnvPool's defaults: 84x84 gray, frame skip 4, stack 4, noop 30, fire reset), sync.
- ``envpool_async``: the same with ``batch_size=N/2``: ``async_reset``, then ``recv`` / ``send``.
- ``ale_vector``: ``gpu_env.ale_vector.AtariVectorEnv`` against ale-py's, the DQN setting of ``dqn``.
- ``dqn_envpool``: ``gpu_env.make_vec``'s DQN pipeline (numpy output, ``atari_cpu.MAKE_VEC_OUTPUT``) against
  EnvPool at the same settings.
- ``sb3``: ``gpu_env.sb3_vec.make_sb3_atari_env`` against SB3's ``make_atari_env`` (``DummyVecEnv``).
- ``cleanrl``: ``gpu_env.presets.make(..., "cleanrl")`` against ``SyncVectorEnv`` over CleanRL's
  ``make_env`` of ``ppo_atari.py`` (its wrappers, in its order).
"""

from __future__ import annotations

import argparse
import functools
import sys
import time
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # this checkout first (not an installed copy): a run measures the code beside it
    sys.path.insert(0, str(ROOT))

SETTINGS = ("envpool", "envpool_async", "ale_vector", "dqn_envpool", "sb3", "cleanrl")
SKIP = 4  # frames per step of every drop-in table


def _task(game: str) -> str:
    return "".join(part.capitalize() for part in game.split("_"))


class Stepper:
    """A contender that calls ``step(actions)`` on an env along a plan (``atari_cpu.Contender``'s interface)."""

    def __init__(self, env: Any, plan: np.ndarray, frames_per_step: int) -> None:
        self.env, self.plan, self.frames, self._t = env, plan, frames_per_step, 0

    def run(self, steps: int) -> int:
        """Step ``steps`` times; return the frames emulated."""
        env, plan = self.env, self.plan
        for _ in range(steps):
            env.step(plan[self._t % len(plan)])
            self._t += 1
        return int(steps * plan.shape[1] * self.frames)

    def close(self) -> None:
        """Close the env."""
        self.env.close()

    def timed(self, steps: int) -> tuple[int, float, float]:
        """``run(steps)``: frames, wall seconds, process CPU seconds."""
        w0, c0 = time.perf_counter(), time.process_time()
        frames = self.run(steps)
        return frames, time.perf_counter() - w0, time.process_time() - c0


class AsyncStepper(Stepper):
    """EnvPool's async loop: ``recv`` a batch, ``send`` its envs their next actions."""

    def __init__(self, env: Any, plan: np.ndarray) -> None:
        super().__init__(env, plan, SKIP)
        env.async_reset()

    def run(self, steps: int) -> int:
        """See :meth:`Stepper.run`."""
        env, plan = self.env, self.plan
        for _ in range(steps):
            info = env.recv()[-1]
            env.send(plan[self._t % len(plan)][: len(info["env_id"])], info["env_id"])
            self._t += 1
        return int(steps * env.config["batch_size"] * self.frames)


def _measure(bench: ModuleType, sec: Any, game: str, ours: Stepper, ref: Stepper, steps: int,
             args: argparse.Namespace) -> None:
    try:
        mine, theirs = (
            [bench.Timing(*t) for t in side] for side in bench._compare(ours, ref, steps, args.rounds, args.warmup))
    finally:
        ours.close()
        ref.close()
    sec.rows.append(bench._row(game, mine, theirs))
    bench._progress(sec, game)


def _envpool_pair(game: str, n: int, threads: int, **options: Any) -> tuple[Any, Any]:
    import envpool

    from gpu_env import envpool as ours

    kwargs = {"num_envs": n, "num_threads": threads, "seed": 0, **options}
    task = _task(game) + "-v5"
    return ours.make(task, "gymnasium", **kwargs), envpool.make(task, "gymnasium", **kwargs)


def envpool_section(games: list[str], args: argparse.Namespace, bench: ModuleType, batch: bool = False) -> Any:
    """EnvPool sync (or, with ``batch``, async with ``batch_size = num_envs / 2``) against gpu_env.envpool."""
    import envpool

    n, threads = args.num_envs, args.threads
    size = max(1, n // 2) if batch else n
    mode = f"async, batch_size {size}" if batch else "sync"
    sec = bench.Section("envpool_async" if batch else "envpool", f"gpu_env.envpool ({n} envs, {threads} threads)",
                        f"EnvPool {envpool.__version__} ({n} envs, {threads} threads)", f"EnvPool's defaults, {mode}")
    for game in games:
        ours, ref = _envpool_pair(game, n, threads, **({"batch_size": size} if batch else {}))
        plan = bench._plan(np.random.default_rng([3, len(game)]), ours.action_space.n, args.dqn_steps * 4, n)
        pair = (AsyncStepper(ours, plan), AsyncStepper(ref, plan)) if batch else (
            Stepper(ours, plan, SKIP), Stepper(ref, plan, SKIP))
        if not batch:
            ours.reset()
            ref.reset()
        _measure(bench, sec, game, *pair, args.dqn_steps, args)
    sec.notes += ["both sides: EnvPool's rules, numpy outputs and infos (gpu_env's equal EnvPool's frame for frame)"]
    return sec


def dqn_envpool_section(games: list[str], args: argparse.Namespace, bench: ModuleType) -> Any:
    """``make_vec``'s DQN pipeline against EnvPool at the same settings."""
    import envpool

    n, threads = args.num_envs, args.threads
    sec = bench.Section("dqn_envpool", f"gpu_env make_vec ({n} envs, {threads} threads)",
                        f"EnvPool {envpool.__version__} ({n} envs, {threads} threads)",
                        "84x84 gray, frameskip 4 + max-pool, stack 4, noop 30, sticky 0.25, NEXT_STEP autoreset")
    for game in games:
        ours = bench.GpuEnvVec(game, n, threads)
        plan = bench._plan(np.random.default_rng([4, len(game)]), ours.n_actions, args.dqn_steps * 4, n)
        ref = envpool.make(_task(game) + "-v5", "gymnasium", num_envs=n, num_threads=threads, seed=0,
                           repeat_action_probability=bench.STICKY, use_fire_reset=False,
                           max_episode_steps=bench.MAX_FRAMES // SKIP)
        ref.reset()
        _measure(bench, sec, game, Stepper(ours.env, plan, SKIP), Stepper(ref, plan, SKIP), args.dqn_steps, args)
    sec.notes += ["no-op starts: gymnasium's AtariPreprocessing (gpu_env) draws 1..30 no-ops, EnvPool 1..30 "
                  "from its own generator", f"both return numpy arrays (gpu_env: obs_format="
                  f"{bench.MAKE_VEC_OUTPUT!r}, float64 rewards; EnvPool: float32 rewards)"]
    return sec


def ale_vector_section(games: list[str], args: argparse.Namespace, bench: ModuleType) -> Any:
    """``gpu_env.ale_vector.AtariVectorEnv`` against ale-py's, the DQN setting."""
    from ale_py.vector_env import AtariVectorEnv as Theirs

    from gpu_env.ale_vector import AtariVectorEnv as Ours

    n, threads = args.num_envs, args.threads
    sec = bench.Section("ale_vector", f"gpu_env.ale_vector ({n} envs, {threads} threads)",
                        f"ale_py.AtariVectorEnv ({n} envs, {threads} threads)",
                        "84x84 gray, frameskip 4 + max-pool, stack 4, noop 30, sticky 0.25, NextStep autoreset")
    settings = {"num_threads": threads, "repeat_action_probability": bench.STICKY, "use_fire_reset": False,
                "reward_clipping": False, "max_num_frames_per_episode": bench.MAX_FRAMES}
    for game in games:
        ours, ref = Ours(game, n, **settings), Theirs(game, n, **settings)
        ours.reset()
        ref.reset()
        plan = bench._plan(np.random.default_rng([5, len(game)]), len(ours.batch.minimal_action_set()),
                           args.dqn_steps * 4, n)
        _measure(bench, sec, game, Stepper(ours, plan, SKIP), Stepper(ref, plan, SKIP), args.dqn_steps, args)
    sec.notes += ["both sides: ale-py's rules and outputs (gpu_env's equal ale-py's frame for frame)"]
    return sec


def _cleanrl_env(env_id: str) -> Any:
    import gymnasium as gym
    from gymnasium import wrappers as gw
    from stable_baselines3.common import atari_wrappers as sb3

    env: Any = gw.RecordEpisodeStatistics(gym.make(env_id))
    env = sb3.EpisodicLifeEnv(sb3.MaxAndSkipEnv(sb3.NoopResetEnv(env, noop_max=30), skip=4))
    if "FIRE" in env.unwrapped.get_action_meanings():
        env = sb3.FireResetEnv(env)
    return gw.FrameStackObservation(gw.GrayscaleObservation(gw.ResizeObservation(sb3.ClipRewardEnv(env), (84, 84))), 4)


def client_section(games: list[str], args: argparse.Namespace, bench: ModuleType, client: str) -> Any:
    """SB3's ``make_atari_env`` or CleanRL's ``make_env`` (``client``) against gpu_env's preset of it."""
    import ale_py
    import gymnasium as gym

    gym.register_envs(ale_py)
    n, threads = args.num_envs, args.threads
    ref_name = "SB3 make_atari_env (DummyVecEnv)" if client == "sb3" else "CleanRL make_env (SyncVectorEnv)"
    sec = bench.Section(client, f"gpu_env {client} preset ({n} envs, {threads} threads)", f"{ref_name} ({n} envs)",
                        f"{client}'s Atari wrappers over <Game>NoFrameskip-v4 (sticky 0), their defaults")
    for game in games:
        env_id = _task(game) + "NoFrameskip-v4"
        if client == "sb3":
            from stable_baselines3.common.env_util import make_atari_env

            from gpu_env.sb3_vec import make_sb3_atari_env

            ours: Any = make_sb3_atari_env(env_id, n, seed=0, num_threads=threads)
            ref: Any = make_atari_env(env_id, n_envs=n, seed=0)
        else:
            from gpu_env import presets

            ours = presets.make(env_id, n, "cleanrl", seed=0, num_threads=threads)
            ref = gym.vector.SyncVectorEnv([functools.partial(_cleanrl_env, env_id) for _ in range(n)])
            ref.reset(seed=0)
        ours.reset()
        if client == "sb3":
            ref.reset()
        plan = bench._plan(np.random.default_rng([6, len(game)]), int(ours.action_space.nvec[0]) if client != "sb3"
                           else int(ours.action_space.n), args.dqn_steps * 4, n)
        _measure(bench, sec, game, Stepper(ours, plan, SKIP), Stepper(ref, plan, SKIP), args.dqn_steps, args)
    sec.notes += ["both sides: the client's wrappers' results (gpu_env's equal them frame for frame); "
                  "frames counted as 4 per step (fire-reset and no-op frames inside resets not counted)"]
    return sec


BUILDERS = {
    "envpool": lambda g, a, b: envpool_section(g, a, b),
    "envpool_async": lambda g, a, b: envpool_section(g, a, b, batch=True),
    "ale_vector": ale_vector_section,
    "dqn_envpool": dqn_envpool_section,
    "sb3": lambda g, a, b: client_section(g, a, b, "sb3"),
    "cleanrl": lambda g, a, b: client_section(g, a, b, "cleanrl"),
}
