"""Run an evaluation plan: a policy for N episodes on a simulator, rows written to a long-format score table.

:mod:`evaltk.evaluation.plan` resolves and checks a side of an evaluation into an
:class:`~evaltk.evaluation.plan.EvaluationPlan`; :func:`run_plan` runs it and :func:`evaluate` does both.
Semantics (documented for users in ``docs/evaluation.md``):

* Episode ``i`` of an evaluation with base seed ``S`` has the recorded seed
  :func:`episode_seed` ``(S, i)``; its env is ``make_env(env).reset(seed=episode_seed)`` (a fresh
  ``gymnasium.make`` + wrappers, reset with that seed: ALE reloads the ROM, so nothing carries over
  from an earlier episode). A policy implementing :class:`~evaltk.policies.EpisodeSeeded` draws the
  episode's randomness from ``episode_policy_rng(episode_seed)``, so an episode can be replayed from
  its row alone and results do not depend on ``num_envs``.
* Rows are appended to ``OUT/episodes.csv`` as episodes finish, each flushed and fsynced; the
  settings are in ``OUT/evaluation.json``. The table is opened, resumed, repaired and written by
  :mod:`evaltk.evaluation.scores` (the one score-table module). Re-running the same command skips finished episodes;
  different settings in the same ``OUT`` are refused.
* Doom (ViZDoom) env specs run through the same engine with
  :class:`~evaltk.envs.vector.DoomEpisodeEnv` slots: the episode is a fresh ``DoomEnv(scenario, seed=seed)``
  episode, ``frames`` counts game tics, ``truncated`` means ViZDoom's episode timeout, and the recorded
  simulator is ``vizdoom`` (``--sim gpu_env`` is Atari-only).
* ``simulator`` names the simulator (:mod:`evaltk.simulators`: ``gym``, ``gpu_env``, ``envpool`` or a user's
  ``MODULE:CALLABLE``); every simulator starts episode ``i`` with the same seed, so rows pair by seed.
* ``executor="ray"`` (``--executor ray``, ``docs/executor.md``) runs the missing episodes as Ray tasks of
  ``num_envs`` episodes each; this process still writes every row as it arrives, each index once, so the
  table equals the local one (for per-episode-seeded policies; a per-batch-seeded one is a single task).
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import os
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from evaltk import package_versions, seeding
from evaltk.atomic import write_json_atomic
from evaltk.envs import EnvInfo
from evaltk.errors import CheckpointError, SpecError
from evaltk.evaluation.digests import EpisodeDigests
from evaltk.evaluation.plan import EvalConfig as EvalConfig
from evaltk.evaluation.plan import EvaluationPlan, plan, resolve_policy
from evaltk.evaluation.records import ScoreRow
from evaltk.evaluation.scores import COLUMNS as COLUMNS
from evaltk.evaluation.scores import SETTINGS_FILE as SETTINGS_FILE
from evaltk.evaluation.scores import TABLE_FILE, TableWriter
from evaltk.evaluation.scores import read_table as read_table
from evaltk.executor import Resources, WorkUnit, run_units
from evaltk.policies import ActsOnSlots, EpisodeSeeded, Policy, episode_policy_rng
from evaltk.seeding import episode_seed as episode_seed
from evaltk.simulators import EpisodeSlots, Simulator, get
from evaltk.verdict.sample import Sample

SUMMARY_FILE = "summary.json"


@dataclass
class EvalResult:
    """Rows of episodes ``0..episodes-1`` (sorted by index), the summary and what this run did.

    ``sample`` is the rows as a :class:`~evaltk.verdict.Sample` (returns, seeds, digests, the env asked for, the
    simulator and the settings it reported, the package versions): what a comparison reads.
    """

    rows: list[ScoreRow]
    summary: dict[str, Any]
    out: Path
    new_episodes: int
    env_steps: int
    wall_s: float
    sample: Sample
    extra: dict[str, Any] = field(default_factory=dict)


def mean_ci(returns: np.ndarray, level: float = 0.95) -> tuple[float, float]:
    """Student-t confidence interval of the mean of ``returns`` (float[n]); (mean, mean) when n < 2."""
    from scipy import stats

    n = len(returns)
    mean = float(np.mean(returns)) if n else math.nan
    if n < 2:
        return mean, mean
    half = float(stats.t.ppf(0.5 + level / 2, n - 1)) * float(np.std(returns, ddof=1)) / math.sqrt(n)
    return mean - half, mean + half


def summarize(rows: Sequence[ScoreRow], level: float = 0.95) -> dict[str, Any]:
    """Summary of episode rows: n, mean/std/median/min/max return, t-CI of the mean, frames, truncations."""
    return summarize_episodes([r.episode_return for r in rows], [r.frames for r in rows],
                              sum(r.truncated for r in rows), level)


def summarize_episodes(episode_returns: Sequence[float], episode_frames: Sequence[float], n_truncated: int | None,
                       level: float = 0.95) -> dict[str, Any]:
    """:func:`summarize` of episodes given as their returns and lengths in frames (``n_truncated``: None if unknown)."""
    returns = np.array(episode_returns, dtype=np.float64)
    frames = np.array(episode_frames, dtype=np.float64)
    low, high = mean_ci(returns, level)
    n = len(returns)
    return {
        "n_episodes": n,
        "mean_return": float(returns.mean()) if n else None,
        "std_return": float(returns.std(ddof=1)) if n > 1 else None,
        "median_return": float(np.median(returns)) if n else None,
        "min_return": float(returns.min()) if n else None,
        "max_return": float(returns.max()) if n else None,
        "ci": [low, high] if n else None,
        "ci_level": level,
        "ci_method": "student-t on the mean",
        "mean_frames": float(frames.mean()) if n else None,
        "n_truncated": n_truncated,
    }


ProgressFn = Callable[[ScoreRow | None, int], None]
"""Called with (row, env steps since the last call) after each finished episode, and (None, steps) periodically."""


@contextlib.contextmanager
def torch_threads(n: int) -> Iterator[None]:
    """Run the block with torch on ``n`` threads where torch is loaded (a checkpoint's policy), then restore them."""
    torch = sys.modules.get("torch")
    if torch is None:
        yield
        return
    before = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def plan_sample(prep: EvaluationPlan, rows: list[ScoreRow], label: str = "") -> Sample:
    """Return ``rows`` of ``prep`` (sorted by index) as a sample, with the plan's env, simulator and settings."""
    return Sample.from_rows([r.to_json() for r in rows], env_id=prep.info.env.env_id, env=prep.info.env.to_json(),
                            simulator=prep.simulator_name, settings=prep.simulator_settings,
                            versions=package_versions(), provenance=prep.provenance, label=label)


def run_plan(prep: EvaluationPlan, progress: ProgressFn | None = None, *, episodes: int | None = None) -> EvalResult:
    """Run the missing episodes of ``0..episodes-1`` (default: the plan's count); returns those rows and the summary.

    A plan runs on: a later call with a larger ``episodes`` (up to the plan's) runs only the episodes not yet in
    its table, so a sequential look extends the same plan (one policy load, each simulator checked once).
    """
    config, info = prep.config, prep.info
    limit = config.episodes if episodes is None else min(int(episodes), config.episodes)
    todo = [i for i in prep.todo if i < limit and i not in prep.writer.done]
    steps_total, t0 = 0, time.perf_counter()
    before = len(prep.writer.rows)
    if todo:
        with torch_threads(config.torch_threads):
            steps_total = _run_units(prep, todo, progress)
    wall = time.perf_counter() - t0
    new_rows = prep.writer.rows[before:]
    rows = sorted((r for r in prep.old_rows + prep.writer.rows if r.index < limit), key=lambda r: r.index)
    summary = summarize(rows)
    summary.update({"checkpoint": prep.settings.checkpoint, "provenance": prep.provenance,
                    "env_id": info.env.env_id, "simulator": prep.simulator_name, "seed": config.seed,
                    "out": str(config.out / TABLE_FILE),
                    "new_episodes": len(new_rows), "resumed_episodes": len(rows) - len(new_rows),
                    "env_steps": steps_total, "fast_reset": config.fast_reset,
                    "wall_s": wall, "env_steps_per_s": steps_total / wall if wall > 0 and steps_total else None})
    write_json_atomic(config.out / SUMMARY_FILE, summary)
    return EvalResult(rows=rows, summary=summary, out=config.out, new_episodes=len(new_rows),
                      env_steps=steps_total, wall_s=wall, sample=plan_sample(prep, rows))


@dataclass
class PlanSource:
    """An evaluation plan as a side of a comparison (:class:`evaltk.verdict.sequential.Source`).

    Each call runs only the episodes it lacks on the one plan (:func:`run_plan` with ``episodes``), so a sequential
    look extends the same plan: one policy load, each simulator checked once. Episode ``i`` has the seed
    :func:`episode_seed` ``(seed, i)``, known before it runs. ``label``, ``versions``, ``asked`` (the env the
    policy was asked to play, when the plan runs another: ``--align``) and ``not_aligned`` go into its samples;
    ``new_episodes``, ``env_steps`` and ``wall_s`` count what every call ran.
    """

    plan: EvaluationPlan
    label: str = ""
    progress: ProgressFn | None = None
    versions: dict[str, str] | None = None
    asked: dict[str, Any] | None = None
    not_aligned: tuple[str, ...] = ()
    new_episodes: int = 0
    env_steps: int = 0
    wall_s: float = 0.0
    grows: bool = True

    @property
    def budget(self) -> int:
        """The plan's episode count."""
        return self.plan.config.episodes

    @property
    def planned_seeds(self) -> tuple[int, ...]:
        """The seeds of episodes ``0..budget-1``."""
        return tuple(episode_seed(self.plan.config.seed, i) for i in range(self.budget))

    def _dress(self, sample: Sample) -> Sample:
        extra: dict[str, Any] = {"label": self.label, "not_aligned": self.not_aligned}
        if self.versions is not None:
            extra["versions"] = self.versions
        if self.asked is not None:
            extra["env"] = self.asked
        return dataclasses.replace(sample, **extra)

    def header(self) -> Sample:
        """Return the plan's side with no episodes."""
        return self._dress(plan_sample(self.plan, []))

    def result(self, n: int) -> EvalResult:
        """Run the missing episodes of the first ``n``; the summary counts every episode this source ran."""
        result = run_plan(self.plan, self.progress, episodes=n)
        self.new_episodes += result.new_episodes
        self.env_steps += result.env_steps
        self.wall_s += result.wall_s
        summary = {**result.summary, "new_episodes": self.new_episodes, "env_steps": self.env_steps,
                   "resumed_episodes": len(result.rows) - min(self.new_episodes, len(result.rows)),
                   "wall_s": self.wall_s}
        return dataclasses.replace(result, summary=summary, new_episodes=self.new_episodes,
                                   env_steps=self.env_steps, wall_s=self.wall_s, sample=self._dress(result.sample))

    def sample(self, n: int) -> Sample:
        """Run the missing episodes of the first ``n`` and return them as a sample."""
        return self.result(n).sample


def evaluate(config: EvalConfig, progress: ProgressFn | None = None) -> EvalResult:
    """Run (or resume) an evaluation: :func:`evaltk.evaluation.plan.plan` then :func:`run_plan`."""
    return run_plan(plan(config), progress)


def _check_actions(actions: Any, info: EnvInfo, batch: int) -> np.ndarray:
    acts = np.asarray(actions)
    spec = info.action_spec
    want = (batch,) if spec["type"] == "discrete" else (batch, len(spec["nvec"]))
    if acts.shape != want or not np.issubdtype(acts.dtype, np.integer):
        raise SpecError(f"the policy returned actions {acts.dtype}{list(acts.shape)}, expected int64{list(want)} "
                        f"for action spec {spec}: fix the policy's act()")
    high = spec["n"] if spec["type"] == "discrete" else np.asarray(spec["nvec"])
    if (acts < 0).any() or (acts >= high).any():
        raise SpecError(f"the policy returned actions outside the action spec {spec} "
                        f"(min {int(acts.min())}, max {int(acts.max())}): fix the policy's act()")
    return acts.astype(np.int64, copy=False)


def _act(policy: Policy, on_slots: ActsOnSlots | None, obs: np.ndarray, first: np.ndarray, active: np.ndarray,
         info: EnvInfo) -> np.ndarray:
    """Every slot's action for this step (int64[K], or int64[K, n] multi-discrete), checked against the spec.

    With ``on_slots`` (the policy, when it is :class:`~evaltk.policies.ActsOnSlots`) and some slot idle, the
    policy acts for the active slots alone and each idle slot gets action 0, which nothing reads (its results
    are masked out and no digest folds it). Otherwise ``policy.act`` acts on the whole batch.
    """
    k = len(active)
    if on_slots is None or active.all():
        return _check_actions(policy.act(obs, first), info, k)
    slots = np.flatnonzero(active)
    acts = _check_actions(on_slots.act_slots(obs[slots], first[slots], slots), info, len(slots))
    out = np.zeros((k, *acts.shape[1:]), np.int64)
    out[slots] = acts
    return out


def episode_units(prep: EvaluationPlan, todo: list[int], *, in_process: bool, writer: TableWriter | None = None,
                  progress: ProgressFn | None = None) -> list[WorkUnit]:
    """Split the episodes ``todo`` of ``prep`` into work units keyed by their episode indices.

    In process (the local executor) one unit runs every missing episode in this process, writing rows
    through ``writer`` as episodes finish (today's single batch). Elsewhere (Ray) a unit is
    ``num_envs`` episodes stepped in the task's own process, returning ``(rows, env_steps)``; a
    per-batch-seeded policy (whose actions depend on how episodes share a batch) gets one unit.
    """
    config = prep.config
    labels = (prep.settings.checkpoint, prep.simulator_name)
    if in_process:
        if writer is None:
            raise ValueError("episode_units(in_process=True) needs the table writer")
        return [WorkUnit(f"episodes:{todo[0]}..{todo[-1]}", _run_episodes,
                         (config, prep.simulator, prep.policy, prep.info, todo, progress),
                         {"on_row": writer.write, "labels": labels})]
    size = config.num_envs if isinstance(prep.policy, EpisodeSeeded) else len(todo)
    remote = dataclasses.replace(config, workers=0, executor="local", ray_address=None)
    doom = prep.info.env.family == "doom"
    units = []
    for start in range(0, len(todo), size):
        chunk = todo[start:start + size]
        resources = Resources(num_cpus=1, custom={"vizdoom_engine": float(len(chunk))} if doom else {})
        units.append(WorkUnit(f"episodes:{chunk[0]}..{chunk[-1]}", run_episode_unit,
                              (remote, chunk, prep.settings.policy_digest, labels), resources=resources))
    return units


def run_episode_unit(config: EvalConfig, indices: list[int], digest: str,
                     labels: tuple[str, str]) -> tuple[list[ScoreRow], int]:
    """Run episodes ``indices`` of ``config`` in this process (a Ray task); return ``(rows, env_steps)``.

    ``digest`` is the policy digest the driver recorded: a node whose copy of the checkpoint differs refuses.
    ``labels`` are the checkpoint label and simulator name the rows record.
    """
    import socket
    import sys

    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(1)
    policy, info, here = resolve_policy(config)
    if here != digest:
        raise CheckpointError(f"{config.checkpoint} on node {socket.gethostname()} is not the checkpoint the driver "
                              "loaded (policy digests differ): give every node the same files (a shared filesystem)")
    rows: list[ScoreRow] = []
    _, steps = _run_episodes(config, get(config.simulator), policy, info, indices, None, on_row=rows.append,
                             labels=labels)
    return rows, steps


def _run_units(prep: EvaluationPlan, todo: list[int], progress: ProgressFn | None) -> int:
    """Run the episodes ``todo`` on ``prep.config.executor``; rows go to the table as they arrive. Returns env steps."""
    config = prep.config
    writer = prep.writer
    steps_total = 0

    def units(in_process: bool) -> list[WorkUnit]:
        return episode_units(prep, todo, in_process=in_process, writer=writer, progress=progress)

    with contextlib.closing(run_units(config.executor, units, ray_address=config.ray_address)) as results:
        for result in results:
            rows, steps = result.value
            steps_total += steps
            for row in rows:
                if writer.write(row) and progress is not None:
                    progress(row, steps)
                    steps = 0
    return steps_total


def _run_episodes(config: EvalConfig, sim: Simulator, policy: Policy, info: EnvInfo, todo: list[int],
                  progress: ProgressFn | None, *, on_row: Callable[[ScoreRow], Any],
                  labels: tuple[str, str]) -> tuple[list[ScoreRow], int]:
    """Step ``todo`` episodes through one batch of ``num_envs`` slots; ``on_row`` gets each finished row.

    ``labels``: the checkpoint label and simulator name each row records.

    Returns ``([], env_steps)``: the rows went to ``on_row`` (a list's append, or the table writer).
    """
    k = min(config.num_envs, len(todo))
    workers = config.workers if config.workers is not None else (min(k, os.cpu_count() or 1) if k > 1 else 0)
    queue = iter(todo)
    slot_index = np.full(k, -1, np.int64)
    slot_seed = np.zeros(k, np.int64)
    returns = np.zeros(k, np.float64)
    steps = np.zeros(k, np.int64)
    label, simulator = labels
    total_steps, pending_steps, last_tick = 0, 0, time.perf_counter()
    vec: EpisodeSlots = sim.episodes(info, k, workers=workers, fast_reset=config.fast_reset)
    digests = EpisodeDigests(k)
    with vec:

        def start(slots: list[int]) -> list[int]:
            started = []
            for slot in slots:
                index = next(queue, None)
                if index is None:
                    slot_index[slot] = -1
                    continue
                slot_index[slot], slot_seed[slot] = index, episode_seed(config.seed, index)
                returns[slot], steps[slot] = 0.0, 0
                digests.start(slot)
                started.append(slot)
            if started:
                seeds = [int(slot_seed[s]) for s in started]
                vec.reset(started, seeds)
                if isinstance(policy, EpisodeSeeded):
                    policy.begin_episodes(np.array(started, np.int64), [episode_policy_rng(s) for s in seeds])
            return started

        policy.reset(k, seeding.rng(config.seed, "evaluation.policy"))
        start(list(range(k)))
        first = np.ones(k, np.bool_)
        on_slots = policy if isinstance(policy, ActsOnSlots) else None
        while (active := slot_index >= 0).any():
            digests.observe(vec.obs, active)
            actions = _act(policy, on_slots, vec.obs, first, active, info)
            res = vec.step(actions, active)
            digests.step(actions, res.reward, active)
            returns[active] += res.reward[active]
            steps[active] += 1
            n_active = int(active.sum())
            total_steps += n_active
            pending_steps += n_active
            first[:] = False
            if res.restarted is not None:  # voided (its Doom engine died) and started again from its seed
                replayed = np.flatnonzero(res.restarted)
                returns[replayed], steps[replayed], first[replayed] = 0.0, 0, True
                for slot in replayed.tolist():
                    digests.start(slot)
                if isinstance(policy, EpisodeSeeded):
                    policy.begin_episodes(replayed, [episode_policy_rng(int(slot_seed[s])) for s in replayed])
            finished = np.flatnonzero(active & (res.terminated | res.truncated)).tolist()
            for slot in finished:
                digest, obs_digest = digests.finish(slot, int(steps[slot]), bool(res.terminated[slot]),
                                                    bool(res.truncated[slot]))
                row = ScoreRow(checkpoint=label, env_id=info.env.env_id, simulator=simulator,
                               index=int(slot_index[slot]), seed=int(slot_seed[slot]),
                               episode_return=float(returns[slot]), frames=int(res.frames[slot]),
                               steps=int(steps[slot]), truncated=bool(res.truncated[slot] and not res.terminated[slot]),
                               digest=digest, obs_digest=obs_digest)
                on_row(row)
                if progress is not None:
                    progress(row, pending_steps)
                    pending_steps = 0
            if finished:
                first[start(finished)] = True
            if progress is not None and time.perf_counter() - last_tick > 0.25:
                progress(None, pending_steps)
                pending_steps, last_tick = 0, time.perf_counter()
    return [], total_steps
