"""The evaluation plan: one side of an evaluation, resolved and checked once, before any episode runs.

A side is a policy location, a simulator, an env spec, a base seed and a score table. :func:`plan`
turns one :class:`EvalConfig` into an :class:`EvaluationPlan`; :func:`plan_all` turns the sides of one
comparison (``evaltk validate``'s simulator and reference, a suite's ``transfer`` case) into plans
together, so the policy is loaded and the env described once for all of them and every simulator is
checked before any score table is opened. Every bad-input error (:class:`~evaltk.errors.EvaltkError`)
is raised here; :func:`evaltk.evaluation.run.run_plan` runs a plan.

Episode ``i`` of a plan with base seed ``S`` has the recorded seed :func:`evaltk.seeding.episode_seed`
``(S, i)``. A Doom env runs on ViZDoom under the default simulator (``gym``) and is recorded
as ``vizdoom``; the other simulators run Atari only.
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib.util
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evaltk.checkpoint import WEIGHTS_FILE, CheckpointSpec
from evaltk.envs import EnvInfo, EnvSpec, cap_episode_frames, describe, env_for_id
from evaltk.errors import EvaltkError, ScoreTableError, SpecError
from evaltk.evaluation.records import ScoreRow
from evaltk.evaluation.scores import SIMULATOR_FILE, TABLE_FILE, EvalSettings, TableWriter, open_tables
from evaltk.executor import EXECUTOR_MODULES
from evaltk.importers import ImportCaveats
from evaltk.locations import Resolved, resolve
from evaltk.policies import EpisodeSeeded, Policy, load_policy
from evaltk.registry import did_you_mean
from evaltk.seeding import episode_seed
from evaltk.simulators import Simulator, resolve_all

DEFAULT_TORCH_THREADS = 1
"""Torch threads for a checkpoint's batched inference: the ``--torch-threads`` default of every command, and what
suite cases run with (the env worker processes keep the other cores)."""
DOOM_SIMULATOR = "vizdoom"
"""The simulator recorded for Doom evaluations (``--sim gym``, the default, runs ViZDoom for Doom envs)."""


@dataclass(frozen=True)
class EvalRequest:
    """What every evaluation command is asked, whatever it does with the episodes.

    A policy location, where the files go, and the episodes to run: how many, from which base seed, on how
    many envs and worker processes. :class:`EvalConfig` (one side, ``evaltk evaluate``) and
    :class:`evaltk.evaluation.validate.ValidateConfig` (two sides compared, ``evaltk validate``) are requests.
    """

    checkpoint: str
    """A checkpoint location (:mod:`evaltk.locations`): a path, a builtin (``builtin:scripted``) or ``hf://ORG/REPO``."""
    out: Path
    """Output directory (:class:`EvalConfig`: the score table; ``ValidateConfig``: the report and the sides)."""
    episodes: int = 20
    seed: int = 0
    """Base seed: episode ``i`` gets the recorded seed :func:`evaltk.seeding.episode_seed` ``(seed, i)``."""
    num_envs: int = 4
    env_id: str | None = None
    """Env id; required for builtins, defaults to the checkpoint's own for checkpoints."""
    workers: int | None = None
    """Worker processes stepping the envs; None = min(num_envs, CPU count), 0 = in-process."""
    torch_threads: int = DEFAULT_TORCH_THREADS
    """Torch threads for the policy's batched inference while episodes run (restored after); the same default
    through every door (``--torch-threads``, suites)."""
    actions: str | None = None
    """Another library's checkpoint: ``greedy`` or ``sample`` actions (:data:`evaltk.importers.nets.ACTION_MODES`);
    None: as the library's own evaluation."""
    max_episode_frames: int | None = None
    """Frames after which an episode is cut (its row truncated): the env's own limit replaced
    (:func:`evaltk.envs.cap_episode_frames`); None keeps it."""


@dataclass(frozen=True)
class EvalConfig(EvalRequest):
    """What ``evaltk evaluate`` was asked to do: the request :func:`plan` resolves.

    ``out`` holds ``episodes.csv``, ``evaluation.json`` and ``summary.json``.
    """

    simulator: str = "gym"
    """The simulator (:func:`evaltk.simulators.get`): ``gym``, ``gpu_env``, ``envpool`` or ``MODULE:CALLABLE``."""
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
    env: EnvSpec | None = None
    """An env spec run instead of the checkpoint's own (``evaltk validate --align``); checked against the policy."""


@dataclass(frozen=True)
class EvaluationPlan:
    """One side of an evaluation, resolved and checked: what :func:`evaltk.evaluation.run.run_plan` runs.

    Plain values only (no methods): every caller reads its fields.
    """

    config: EvalConfig
    """The request, with ``checkpoint`` pinned (``hf://ORG/REPO@<commit sha>``)."""
    simulator: Simulator
    simulator_name: str
    """The simulator as score tables record it (``envpool`` for ``envpool:KEY=VALUE``, ``vizdoom`` for Doom)."""
    simulator_settings: dict[str, Any]
    """The simulator's effective settings, from its check (written to ``simulator.json``)."""
    policy: Policy
    info: EnvInfo
    """The env: the resolved env spec and its spaces."""
    settings: EvalSettings
    """The score table's settings (``evaluation.json``): checkpoint label, policy digest, env, seed, simulator."""
    provenance: dict[str, Any]
    old_rows: list[ScoreRow]
    """Rows already in the table (a resumed evaluation), in file order."""
    todo: list[int]
    """The episode indices still to run, ascending."""
    writer: TableWriter
    """Appends this plan's rows to ``config.out/episodes.csv``."""
    caveats: ImportCaveats | None = None
    """What an imported checkpoint's library did that the reference env does not reproduce (printed before the
    first episode by the commands), or None."""


def checkpoint_label(ref: str, builtin: bool) -> str:
    """How a checkpoint location is recorded: builtins as ``builtin:<name>``, others as given (pinned)."""
    return f"builtin:{ref}" if builtin and not ref.startswith("builtin:") else ref


def env_for_cli_id(env_id: str) -> EnvSpec:
    """Env spec for ``--env-id``: a ViZDoom scenario name (``basic``, ``deathmatch_bots``, ...) or a gymnasium id."""
    if "/" not in env_id and importlib.util.find_spec("vizdoom") is not None:
        from evaltk.envs import doom
        from evaltk.envs.atari import registered_atari_ids

        if env_id in doom.SCENARIOS:
            return doom.env_spec(doom.SCENARIOS[env_id])
        atari_ids = registered_atari_ids()
        if env_id not in atari_ids:
            hint = did_you_mean(env_id, [*doom.SCENARIOS, *atari_ids])
            raise SpecError(f"--env-id {env_id!r} is neither a ViZDoom scenario nor an Atari env id: {hint}use a "
                            f"scenario ({', '.join(sorted(doom.SCENARIOS))}) or an Atari id such as ALE/Breakout-v5")
    return env_for_id(env_id)


def _digest(spec: CheckpointSpec, path: Path | None) -> str:
    """Return the policy digest: its spec (less provenance) and, for a checkpoint with tensors, its weights file."""
    h = hashlib.sha256()
    ident = {k: v for k, v in dataclasses.asdict(spec).items() if k != "provenance"}
    h.update(json.dumps(ident, sort_keys=True).encode())
    if path is not None and not spec.model_class.startswith("builtin:"):
        with open(path / WEIGHTS_FILE, "rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                h.update(chunk)
    return h.hexdigest()


@dataclass(frozen=True)
class _Policy:
    """A loaded policy, the location it came from (with the label tables record) and its digest."""

    policy: Policy
    location: Resolved
    digest: str


def _load(config: EvalConfig) -> _Policy:
    """Resolve ``config.checkpoint`` (:mod:`evaltk.locations` refuses a name that is none) and load its policy."""
    found = resolve(config.checkpoint, fmt=config.checkpoint_format, env_id=config.env_id, actions=config.actions)
    builtin: list[bool] = []

    def builtin_env() -> EnvSpec:
        builtin.append(True)
        if config.env_id is None:
            raise SpecError(f"builtin policy {found.ref!r} needs an environment: pass --env-id (e.g. "
                            "ALE/Breakout-v5, or a ViZDoom scenario such as basic)")
        return env_for_cli_id(config.env_id)

    policy = load_policy(found.ref, builtin_env=builtin_env)
    path = None if builtin else Path(found.ref)
    location = dataclasses.replace(found, label=checkpoint_label(found.label, bool(builtin)))
    return _Policy(policy, location, _digest(policy.spec, path))


def resolve_policy(config: EvalConfig) -> tuple[Policy, EnvInfo, str]:
    """Load the policy of ``config``, build its env spec and check they fit; returns (policy, env info, digest)."""
    loaded = _load(config)
    return loaded.policy, _describe(config, loaded.policy, {}), loaded.digest


def _env(config: EvalConfig, policy: Policy) -> EnvSpec:
    """Return the env spec ``config`` runs: the policy's own (or ``config.env``), with --env-id and sticky actions."""
    env = policy.spec.env_spec if config.env is None else config.env
    if env.family == "doom":  # a Doom env is its scenario: --env-id picks another built-in scenario
        if config.env_id is not None and config.env_id != env.env_id:
            env = env_for_cli_id(config.env_id)
    elif config.env_id is not None:
        env = dataclasses.replace(env, env_id=config.env_id)
    if config.repeat_action_probability is not None:
        p = config.repeat_action_probability
        if env.family != "atari":
            raise SpecError(f"--repeat-action-probability applies to Atari envs only, not {env.env_id!r}")
        if not (isinstance(p, int | float) and 0.0 <= p <= 1.0):
            raise SpecError(f"--repeat-action-probability must be in [0, 1], got {p!r}; ALE v5 uses 0.25")
        env = dataclasses.replace(env, kwargs={**env.kwargs, "repeat_action_probability": float(p)})
    return env if config.max_episode_frames is None else cap_episode_frames(env, config.max_episode_frames)


def _describe(config: EvalConfig, policy: Policy, described: dict[str, EnvInfo]) -> EnvInfo:
    """Describe ``config``'s env and check the policy fits it; ``described`` holds the envs already described."""
    env = _env(config, policy)
    key = json.dumps(env.to_json(), sort_keys=True, default=str)
    if key not in described:
        described[key] = describe(env, policy=policy.spec)
    return described[key]


def _check_request(config: EvalConfig) -> None:
    """Refuse impossible numbers and executor options before anything is loaded."""
    if config.executor not in EXECUTOR_MODULES:
        raise EXECUTOR_MODULES.unknown(config.executor, label="--executor")
    if config.executor == "ray":  # a missing Ray is bad input too: say so before anything runs
        from evaltk.executor.ray_executor import import_ray

        import_ray()
    elif config.ray_address is not None:
        raise SpecError(f"--ray-address {config.ray_address} needs --executor ray")
    if config.torch_threads < 1:
        raise SpecError(f"--torch-threads {config.torch_threads}: use 1 or more")
    if config.episodes < 1 or config.num_envs < 1:
        raise SpecError(f"--episodes and --num-envs must be >= 1, got {config.episodes} and {config.num_envs}")


DOOM_FIX = "drop {option} (gym, the default, runs ViZDoom for Doom envs)"
"""What :func:`plan_all` tells a user whose simulator cannot run a Doom env, unless the caller says otherwise."""


def _check_family(config: EvalConfig, info: EnvInfo, option: str, doom_fix: str) -> None:
    """Refuse a Doom env on a simulator other than ``gym`` (ViZDoom), fast resets on Doom, and other families."""
    family, env_id = info.env.family, info.env.env_id
    if family == "doom":
        if config.simulator != "gym":
            raise SpecError(f"{option} {config.simulator} runs Atari envs only, and {env_id} is a ViZDoom scenario: "
                            + doom_fix.format(option=option))
        if config.fast_reset:
            raise SpecError(f"--fast-reset restores ALE states and does not apply to the ViZDoom scenario {env_id}: "
                            "drop --fast-reset")
    elif family != "atari":
        raise EvaltkError(f"evaltk evaluate does not run {family} envs (not implemented yet): use an Atari or Doom "
                          "checkpoint")


SideFiles = Callable[[EvalConfig, str, dict[str, Any], EnvInfo, list[ScoreRow]], Mapping[Path, Any]]
"""A caller's JSON files of one side (path: object), from its config, recorded simulator name, the settings the
simulator reported (its identity's), env and the rows already in its table."""


def plan_all(configs: Sequence[EvalConfig], *, options: Sequence[str] | None = None,
             simulators: Sequence[Simulator] | None = None,
             side_files: SideFiles | None = None, doom_fix: str = DOOM_FIX) -> tuple[EvaluationPlan, ...]:
    """Resolve and check the sides ``configs`` of one evaluation, then open (or resume) their score tables.

    The sides share one policy location (checkpoint, format, ``--env-id``); it is loaded once. ``options``
    names each side's simulator option in messages (default ``--sim``); ``simulators`` are the sides'
    simulators when the caller resolved them already (:func:`evaltk.simulators.resolve_all`). ``side_files``
    returns the caller's own JSON files of a side (validate's ``environment.json``) from its config, simulator
    name, reported settings, env and rows so far; ``doom_fix`` is what to do instead when a side's simulator cannot
    run a Doom env (``{option}`` is replaced by the side's option). Every side's request, simulator, env, table
    and rows are checked before any file is written; the new tables' manifests, each side's ``simulator.json``
    and ``side_files`` are then written in one stage (:func:`evaltk.evaluation.scores.open_tables`), so a refused
    side leaves no side's files changed.
    """
    options = list(options or ["--sim"] * len(configs))
    first = configs[0]
    if any((c.checkpoint, c.checkpoint_format, c.env_id, c.actions)
           != (first.checkpoint, first.checkpoint_format, first.env_id, first.actions) for c in configs):
        raise ValueError("plan_all plans the sides of one policy location: plan other policies separately")
    for config in configs:
        _check_request(config)
    sims = tuple(simulators) if simulators is not None else resolve_all([c.simulator for c in configs], options)
    loaded = _load(first)
    where = loaded.location
    described: dict[str, EnvInfo] = {}
    first_seeds = {base: episode_seed(base, 0) for base in dict.fromkeys(c.seed for c in configs)}
    sides = []
    for config, sim, option in zip(configs, sims, options, strict=True):
        info = _describe(config, loaded.policy, described)
        _check_family(config, info, option, doom_fix)
        identity = sim.check(info, seed=first_seeds[config.seed])  # each simulator is checked on episode 0
        name = DOOM_SIMULATOR if info.env.family == "doom" else sim.name
        settings = _settings(config, loaded, info, name)
        sides.append((dataclasses.replace(config, checkpoint=where.label), sim, name, info, settings, identity))

    def files(rows: list[list[ScoreRow]]) -> dict[Path, Any]:
        written: dict[Path, Any] = {}
        for (config, _, name, info, settings, identity), found in zip(sides, rows, strict=True):
            _check_rows(config.out, settings, found)
            written[config.out / SIMULATOR_FILE] = identity["settings"]
            if side_files is not None:
                written.update(side_files(config, name, identity["settings"], info, found))
        return written

    opened = open_tables([(c.out, settings, where.provenance, identity) for c, _, _, _, settings, identity in sides],
                         files=files)
    plans = []
    for (config, sim, name, info, settings, identity), (rows, writer) in zip(sides, opened, strict=True):
        done = {r.index for r in rows}
        plans.append(EvaluationPlan(config, sim, name, identity["settings"], loaded.policy, info, settings,
                                    where.provenance, rows,
                                    [i for i in range(config.episodes) if i not in done], writer, where.caveats))
    return tuple(plans)


def plan(config: EvalConfig) -> EvaluationPlan:
    """Resolve and check one evaluation and open (or resume) its score table (:func:`plan_all` of one side)."""
    return plan_all([config])[0]


def _settings(config: EvalConfig, loaded: _Policy, info: EnvInfo, simulator: str) -> EvalSettings:
    """Return the score table's settings; a batch-seeded policy's actions depend on how episodes share the batch."""
    seeded = isinstance(loaded.policy, EpisodeSeeded)
    stored = EnvSpec.from_json(json.loads(json.dumps(info.env.to_json())))  # as evaluation.json holds it (no tuples)
    return EvalSettings(checkpoint=loaded.location.label, policy_digest=loaded.digest, env=stored,
                        seed=config.seed, simulator=simulator, policy_seeding="per-episode" if seeded else "per-batch",
                        num_envs=None if seeded else config.num_envs)


def _check_rows(out: Path, settings: EvalSettings, rows: list[ScoreRow]) -> None:
    """Refuse rows of another evaluation (other seeds or env) in a resumed table."""
    for row in rows:
        if row.seed != episode_seed(settings.seed, row.index) or row.env_id != settings.env.env_id:
            raise ScoreTableError(f"{out / TABLE_FILE} row for episode {row.index} does not belong to this "
                                  "evaluation (seed/env differ): use another --out or delete that directory")
