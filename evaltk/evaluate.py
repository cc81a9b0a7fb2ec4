"""Run a policy for N episodes on a reference environment and write a long-format score table.

Semantics (documented for users in ``docs/evaluation.md``):

* Episode ``i`` of an evaluation with base seed ``S`` has the recorded seed
  :func:`episode_seed` ``(S, i)``; its env is ``make_env(env).reset(seed=episode_seed)`` (a fresh
  ``gymnasium.make`` + wrappers, reset with that seed: ALE reloads the ROM, so nothing carries over
  from an earlier episode). A policy implementing :class:`~evaltk.policies.EpisodeSeeded` draws the
  episode's randomness from ``episode_policy_rng(episode_seed)``, so an episode can be replayed from
  its row alone and results do not depend on ``num_envs``.
* Rows are appended to ``OUT/episodes.csv`` as episodes finish, each flushed and fsynced; the
  settings are in ``OUT/evaluation.json``. The table is opened, resumed, repaired and written by
  :mod:`evaltk.scores` (the one score-table module). Re-running the same command skips finished episodes;
  different settings in the same ``OUT`` are refused.
* Doom (ViZDoom) env dicts run through the same engine with
  :class:`~evaltk.envs.vector.DoomEpisodeEnv` slots: the episode is a fresh ``DoomEnv(scenario, seed=seed)``
  episode, ``frames`` counts game tics, ``truncated`` means ViZDoom's episode timeout, and the recorded
  backend is ``vizdoom`` (``--sim gpu_env`` is Atari-only).
* ``backend`` names the simulator (:mod:`evaltk.simulators`: ``gym``, ``gpu_env``, ``envpool`` or a user's
  ``MODULE:CALLABLE``); every simulator starts episode ``i`` with the same seed, so rows pair by seed.
* ``executor="ray"`` (``--executor ray``, ``docs/executor.md``) runs the missing episodes as Ray tasks of
  ``num_envs`` episodes each; this process still writes every row as it arrives, each index once, so the
  table equals the local one (for per-episode-seeded policies; a per-batch-seeded one is a single task).
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib.util
import json
import math
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from evaltk.atomic import write_json_atomic
from evaltk.checkpoint import WEIGHTS_FILE, CheckpointSpec
from evaltk.envs import EnvInfo, check_compatible, describe, env_for_id
from evaltk.episode_digest import EpisodeDigests
from evaltk.errors import CheckpointError, EvaltkError, ScoreTableError, SpecError
from evaltk.executor import EXECUTORS, Resources, WorkUnit, make_executor, stream
from evaltk.locations import pin, resolve, table_provenance
from evaltk.policies import EpisodeSeeded, Policy, builtin_names, episode_policy_rng, load_policy
from evaltk.scores import COLUMNS as COLUMNS
from evaltk.scores import SETTINGS_FILE as SETTINGS_FILE
from evaltk.scores import TABLE_FILE, TableWriter, open_table
from evaltk.scores import read_table as read_table
from evaltk.seeding import episode_seed as episode_seed
from evaltk.simulators import NAMES as SIMULATORS
from evaltk.simulators import EpisodeSlots, check_name, get, recorded_name

SUMMARY_FILE = "summary.json"
SIMULATOR_FILE = "simulator.json"
"""The simulator's effective settings (:mod:`evaltk.simulators.settings`), next to the score table."""
BACKENDS = SIMULATORS
"""The built-in simulators (:data:`evaltk.simulators.NAMES`); ``MODULE:CALLABLE`` names a user's factory."""
DOOM_BACKEND = "vizdoom"
"""Backend recorded for Doom evaluations (``--sim gym``, the default, runs ViZDoom for Doom envs)."""


@dataclass(frozen=True)
class EvalConfig:
    """What ``evaltk evaluate`` was asked to do (see :func:`evaluate`)."""

    checkpoint: str
    """A checkpoint location (:mod:`evaltk.locations`): a path, a builtin (``builtin:scripted``) or ``hf://ORG/REPO``."""
    out: Path
    """Output directory: ``episodes.csv``, ``evaluation.json``, ``summary.json``."""
    episodes: int = 20
    seed: int = 0
    num_envs: int = 4
    env_id: str | None = None
    """Env id; required for builtins, defaults to the checkpoint's own for checkpoints."""
    backend: str = "gym"
    """The simulator (:func:`evaltk.simulators.get`): ``gym``, ``gpu_env``, ``envpool`` or ``MODULE:CALLABLE``."""
    workers: int | None = None
    """Worker processes stepping the envs; None = min(num_envs, CPU count), 0 = in-process."""
    fast_reset: bool = False
    """Opt-in: seeded resets restore a cached post-load ALE state instead of reloading the ROM (same states)."""
    repeat_action_probability: float | None = None
    """Atari only: override the env's sticky-action probability (None keeps the checkpoint's / env's own)."""
    checkpoint_format: str | None = None
    """Another library's checkpoint format (``sb3``, ``cleanrl``, ``sample-factory``); None detects it."""
    executor: str = "local"
    """Where episodes run: ``local`` (this process and its env workers) or ``ray`` (units of episodes as Ray tasks)."""
    ray_address: str | None = None
    """The Ray cluster for ``executor="ray"`` (None: ``RAY_ADDRESS``, or a local cluster)."""
    env: dict[str, Any] | None = None
    """An env dict run instead of the checkpoint's own (``evaltk validate --align``); checked against the policy."""


@dataclass
class EvalResult:
    """Rows of episodes ``0..episodes-1`` (sorted by index), the summary and what this run did."""

    rows: list[dict[str, Any]]
    summary: dict[str, Any]
    out: Path
    new_episodes: int
    env_steps: int
    wall_s: float
    extra: dict[str, Any] = field(default_factory=dict)


def _digest(spec: CheckpointSpec, path: Path | None) -> str:
    h = hashlib.sha256()
    ident = {k: v for k, v in spec.to_dict().items() if k != "provenance"}
    h.update(json.dumps(ident, sort_keys=True).encode())
    if path is not None and not spec.is_builtin:
        with open(path / WEIGHTS_FILE, "rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                h.update(chunk)
    return h.hexdigest()


def check_simulator(config: EvalConfig) -> None:
    """Check that simulator ``config.backend`` can run the checkpoint's env, before anything is written."""
    check_name(config.backend, option="--sim")
    _, info, _ = resolve_policy(config)
    get(config.backend, option="--sim").check(info, seed=episode_seed(config.seed, 0))


def checkpoint_label(ref: str) -> str:
    """How a checkpoint reference is recorded: builtins as ``builtin:<name>``, directories as given."""
    is_builtin = ref.startswith("builtin:") or (ref in builtin_names() and not Path(ref).exists())
    return ref if not is_builtin or ref.startswith("builtin:") else f"builtin:{ref}"


def env_for_cli_id(env_id: str) -> dict[str, Any]:
    """Env dict for ``--env-id``: a ViZDoom scenario name (``basic``, ``deathmatch_bots``, ...) or a gymnasium id."""
    if "/" not in env_id and importlib.util.find_spec("vizdoom") is not None:
        from evaltk.envs import doom

        if env_id in doom.SCENARIOS:
            return doom.env_spec(doom.SCENARIOS[env_id])
        try:
            return env_for_id(env_id)
        except SpecError as exc:
            raise SpecError(f"{env_id!r} is neither a ViZDoom scenario ({', '.join(sorted(doom.SCENARIOS))}) nor "
                            f"a gymnasium id ({exc})") from None
    return env_for_id(env_id)


def resolve_policy(config: EvalConfig) -> tuple[Policy, EnvInfo, str]:
    """Load the policy, build the env dict and check they fit; returns (policy, env info, digest)."""
    # a Hub location is fetched into the Hub cache; another library's checkpoint is imported once into a cache
    ref = resolve(config.checkpoint, fmt=config.checkpoint_format, env_id=config.env_id).ref
    is_builtin = ref.startswith("builtin:") or (ref in builtin_names() and not Path(ref).exists())
    if is_builtin:
        if config.env_id is None:
            raise SpecError(f"builtin policy {ref!r} needs an environment: pass --env-id (e.g. ALE/Breakout-v5, "
                            "or a ViZDoom scenario such as basic)")
        policy = load_policy(ref, env=env_for_cli_id(config.env_id))
        path = None
    else:
        policy = load_policy(ref)
        path = Path(ref)
    env = dict(policy.spec.env if config.env is None else config.env)
    if env.get("family") == "doom":  # a Doom env is its scenario: --env-id picks another built-in scenario
        if config.env_id is not None and config.env_id != env.get("env_id"):
            env = env_for_cli_id(config.env_id)
    elif config.env_id is not None:
        env["env_id"] = config.env_id
    if config.repeat_action_probability is not None:
        p = config.repeat_action_probability
        if env.get("family") != "atari":
            raise SpecError(f"--repeat-action-probability applies to Atari envs only, not {env.get('env_id')!r}")
        if not (isinstance(p, int | float) and 0.0 <= p <= 1.0):
            raise SpecError(f"--repeat-action-probability must be in [0, 1], got {p!r}; ALE v5 uses 0.25")
        env["kwargs"] = {**env["kwargs"], "repeat_action_probability": float(p)}
    info = describe(env)
    check_compatible(policy.spec, info)
    return policy, info, _digest(policy.spec, path)


def _open_out(out: Path, settings: dict[str, Any], provenance: dict[str, Any],
              simulator: dict[str, Any]) -> list[dict[str, Any]]:
    """Create or reopen ``out`` (:func:`evaltk.scores.open_table`); refuse rows of another evaluation or simulator."""
    rows = open_table(out, settings, provenance=provenance, simulator=simulator)
    for row in rows:
        if row["seed"] != episode_seed(settings["seed"], row["index"]) or row["env_id"] != settings["env"]["env_id"]:
            raise ScoreTableError(f"{out / TABLE_FILE} row for episode {row['index']} does not belong to this "
                                  "evaluation (seed/env differ): use another --out or delete that directory")
    return rows


def mean_ci(returns: np.ndarray, level: float = 0.95) -> tuple[float, float]:
    """Student-t confidence interval of the mean of ``returns`` (float[n]); (mean, mean) when n < 2."""
    from scipy import stats

    n = len(returns)
    mean = float(np.mean(returns)) if n else math.nan
    if n < 2:
        return mean, mean
    half = float(stats.t.ppf(0.5 + level / 2, n - 1)) * float(np.std(returns, ddof=1)) / math.sqrt(n)
    return mean - half, mean + half


def summarize(rows: list[dict[str, Any]], level: float = 0.95) -> dict[str, Any]:
    """Summary of episode rows: n, mean/std/median/min/max return, t-CI of the mean, frames, truncations."""
    returns = np.array([r["return"] for r in rows], dtype=np.float64)
    frames = np.array([r["frames"] for r in rows], dtype=np.float64)
    low, high = mean_ci(returns, level)
    n = len(rows)
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
        "n_truncated": int(sum(r["truncated"] for r in rows)),
    }


ProgressFn = Callable[[dict[str, Any] | None, int], None]
"""Called with (row, env steps since the last call) after each finished episode, and (None, steps) periodically."""


@dataclass
class Prepared:
    """A validated evaluation, ready to run: policy, env, settings, rows already on disk, episodes to run."""

    config: EvalConfig
    policy: Policy
    info: EnvInfo
    settings: dict[str, Any]
    old_rows: list[dict[str, Any]]
    todo: list[int]


def recorded_backend(config: EvalConfig, info: EnvInfo) -> str:
    """Backend written to rows, settings and summary: ``vizdoom`` for Doom envs, else the simulator's name.

    EnvPool's options (``envpool:KEY=VALUE``) are recorded in the manifest's simulator identity, not here.
    """
    return DOOM_BACKEND if info.env["family"] == "doom" else recorded_name(config.backend)


def prepare(config: EvalConfig) -> Prepared:
    """Validate ``config``, load the policy, check it fits the env and open (or resume) the output directory.

    Every bad-input error (:class:`~evaltk.errors.EvaltkError`) is raised here, before anything runs.
    """
    check_name(config.backend, option="--sim")
    if config.executor not in EXECUTORS:
        raise SpecError(f"unknown executor {config.executor!r}: use one of {', '.join(EXECUTORS)}")
    if config.executor == "ray":  # a missing Ray is bad input too: say so before anything runs
        from evaltk.executor.ray_executor import import_ray

        import_ray()
    elif config.ray_address is not None:
        raise SpecError(f"--ray-address {config.ray_address} needs --executor ray")
    if config.episodes < 1 or config.num_envs < 1:
        raise SpecError(f"--episodes and --num-envs must be >= 1, got {config.episodes} and {config.num_envs}")
    config = dataclasses.replace(config, checkpoint=pin(config.checkpoint))  # hf://: the commit sha is recorded
    policy, info, digest = resolve_policy(config)
    if info.env["family"] == "doom":
        if config.backend != "gym":
            raise SpecError(f"--sim {config.backend} runs Atari envs only, and {info.env['env_id']} is a ViZDoom "
                            "scenario: drop --sim (the default, gym, runs ViZDoom for Doom envs)")
        if config.fast_reset:
            raise SpecError(f"--fast-reset restores ALE states and does not apply to the ViZDoom scenario "
                            f"{info.env['env_id']}: drop --fast-reset")
    elif info.env["family"] != "atari":
        raise EvaltkError(f"evaltk evaluate does not run {info.env['family']} envs (not implemented yet): "
                          "use an Atari or Doom checkpoint")
    get(config.backend, option="--sim").check(info, seed=episode_seed(config.seed, 0))
    seeded = isinstance(policy, EpisodeSeeded)
    settings: dict[str, Any] = {
        "checkpoint": checkpoint_label(config.checkpoint), "policy_digest": digest,
        "env": json.loads(json.dumps(info.env)),  # as stored in evaluation.json (Doom scenarios hold tuples)
        "seed": config.seed, "backend": recorded_backend(config, info),
        "policy_seeding": "per-episode" if seeded else "per-batch",
    }
    if not seeded:  # a batch-seeded stochastic policy's actions depend on how episodes share the batch
        settings["num_envs"] = config.num_envs
    simulator = get(config.backend).identity(info.env)
    old_rows = _open_out(config.out, settings, table_provenance(config.checkpoint), simulator)
    write_json_atomic(config.out / SIMULATOR_FILE, simulator["settings"])
    done = {r["index"] for r in old_rows}
    todo = [i for i in range(config.episodes) if i not in done]
    return Prepared(config=config, policy=policy, info=info, settings=settings, old_rows=old_rows, todo=todo)


def run_prepared(prep: Prepared, progress: ProgressFn | None = None) -> EvalResult:
    """Run the episodes :func:`prepare` found missing; returns rows ``0..episodes-1`` and the summary."""
    config, info = prep.config, prep.info
    new_rows: list[dict[str, Any]] = []
    steps_total, t0 = 0, time.perf_counter()
    if prep.todo:
        new_rows, steps_total = _run_units(prep, progress)
    wall = time.perf_counter() - t0
    rows = sorted((r for r in prep.old_rows + new_rows if r["index"] < config.episodes), key=lambda r: r["index"])
    summary = summarize(rows)
    summary.update({"checkpoint": checkpoint_label(config.checkpoint),
                    "provenance": table_provenance(config.checkpoint), "env_id": info.env["env_id"],
                    "backend": recorded_backend(config, info), "seed": config.seed,
                    "out": str(config.out / TABLE_FILE),
                    "new_episodes": len(new_rows), "resumed_episodes": len(rows) - len(new_rows),
                    "env_steps": steps_total, "fast_reset": config.fast_reset,
                    "wall_s": wall, "env_steps_per_s": steps_total / wall if wall > 0 and steps_total else None})
    write_json_atomic(config.out / SUMMARY_FILE, summary)
    return EvalResult(rows=rows, summary=summary, out=config.out, new_episodes=len(new_rows),
                      env_steps=steps_total, wall_s=wall)


def evaluate(config: EvalConfig, progress: ProgressFn | None = None) -> EvalResult:
    """Run (or resume) an evaluation: :func:`prepare` then :func:`run_prepared`."""
    return run_prepared(prepare(config), progress)


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


def episode_units(prep: Prepared, *, in_process: bool, writer: TableWriter | None = None,
                  progress: ProgressFn | None = None) -> list[WorkUnit]:
    """Split the missing episodes of ``prep`` into work units keyed by their episode indices.

    In process (the local executor) one unit runs every missing episode in this process, writing rows
    through ``writer`` as episodes finish (today's single batch). Elsewhere (Ray) a unit is
    ``num_envs`` episodes stepped in the task's own process, returning ``(rows, env_steps)``; a
    per-batch-seeded policy (whose actions depend on how episodes share a batch) gets one unit.
    """
    config = prep.config
    if in_process:
        if writer is None:
            raise ValueError("episode_units(in_process=True) needs the table writer")
        return [WorkUnit(f"episodes:{prep.todo[0]}..{prep.todo[-1]}", _run_episodes,
                         (config, prep.policy, prep.info, prep.todo, progress), {"on_row": writer.write})]
    size = config.num_envs if isinstance(prep.policy, EpisodeSeeded) else len(prep.todo)
    remote = dataclasses.replace(config, workers=0, executor="local", ray_address=None)
    doom = prep.info.env["family"] == "doom"
    units = []
    for start in range(0, len(prep.todo), size):
        chunk = prep.todo[start:start + size]
        resources = Resources(num_cpus=1, custom={"vizdoom_engine": float(len(chunk))} if doom else {})
        units.append(WorkUnit(f"episodes:{chunk[0]}..{chunk[-1]}", run_episode_unit,
                              (remote, chunk, prep.settings["policy_digest"]), resources=resources))
    return units


def run_episode_unit(config: EvalConfig, indices: list[int], digest: str) -> tuple[list[dict[str, Any]], int]:
    """Run episodes ``indices`` of ``config`` in this process (a Ray task); return ``(rows, env_steps)``.

    ``digest`` is the policy digest the driver recorded: a node whose copy of the checkpoint differs refuses.
    """
    import socket
    import sys

    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(1)
    policy, info, here = resolve_policy(config)
    if here != digest:
        raise CheckpointError(f"{config.checkpoint} on node {socket.gethostname()} is not the checkpoint the driver "
                              "loaded (policy digests differ): give every node the same files (a shared filesystem)")
    rows: list[dict[str, Any]] = []
    _, steps = _run_episodes(config, policy, info, indices, None, on_row=rows.append)
    return rows, steps


def _run_units(prep: Prepared, progress: ProgressFn | None) -> tuple[list[dict[str, Any]], int]:
    """Run the missing episodes on ``prep.config.executor``; rows go to the table as they arrive."""
    config = prep.config
    writer = TableWriter(config.out / TABLE_FILE, {r["index"] for r in prep.old_rows})
    steps_total = 0
    with make_executor(config.executor, ray_address=config.ray_address) as executor:
        units = episode_units(prep, in_process=executor.in_process, writer=writer, progress=progress)
        for result in stream(executor, units):
            rows, steps = result.value
            steps_total += steps
            for row in rows:
                if writer.write(row) and progress is not None:
                    progress(row, steps)
                    steps = 0
    return writer.rows, steps_total


def _run_episodes(config: EvalConfig, policy: Policy, info: EnvInfo, todo: list[int],
                  progress: ProgressFn | None, *,
                  on_row: Callable[[dict[str, Any]], Any]) -> tuple[list[dict[str, Any]], int]:
    """Step ``todo`` episodes through one batch of ``num_envs`` slots; ``on_row`` gets each finished row.

    Returns ``([], env_steps)``: the rows went to ``on_row`` (a list's append, or the table writer).
    """
    k = min(config.num_envs, len(todo))
    workers = config.workers if config.workers is not None else (min(k, os.cpu_count() or 1) if k > 1 else 0)
    queue = iter(todo)
    slot_index = np.full(k, -1, np.int64)
    slot_seed = np.zeros(k, np.int64)
    returns = np.zeros(k, np.float64)
    steps = np.zeros(k, np.int64)
    label, backend = checkpoint_label(config.checkpoint), recorded_backend(config, info)
    total_steps, pending_steps, last_tick = 0, 0, time.perf_counter()
    vec: EpisodeSlots = get(config.backend).episodes(info, k, workers=workers, fast_reset=config.fast_reset)
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

        policy.reset(k, np.random.default_rng([config.seed, 2]))
        start(list(range(k)))
        first = np.ones(k, np.bool_)
        while (active := slot_index >= 0).any():
            digests.observe(vec.obs, active)
            actions = _check_actions(policy.act(vec.obs, first), info, k)
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
                row = {"checkpoint": label, "env_id": info.env["env_id"], "simulator": backend,
                       "index": int(slot_index[slot]), "seed": int(slot_seed[slot]), "return": float(returns[slot]),
                       "frames": int(res.frames[slot]), "steps": int(steps[slot]),
                       "truncated": bool(res.truncated[slot] and not res.terminated[slot]),
                       "digest": digest, "obs_digest": obs_digest}
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
