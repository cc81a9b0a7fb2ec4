"""The A2C+V-trace run: build env, model and optimizer; alternate rollouts and updates; log and checkpoint.

Every tensor lives on the emulator's device (``env.device``: the CPU for ``backend="cpu"``, the GPU for
``"cuda"``). On ``cuda`` the rollout (emulation, preprocessing, autoreset, sampling), V-trace and the
updates run on the GPU; what crosses to the host is: once per rollout, the finished episodes' returns
and lengths (:meth:`RolloutCollector.take_episodes`); every ``noop_table_depth`` env steps, the env's
no-op cursors (int32[num_envs], gpu_env.backends.cuda.vec); once per log line, the five mean loss terms; and
the checkpoints. docs/a2c.md lists the same.
One rollout of ``rollout`` steps on ``num_envs`` envs is followed by ``num_minibatches`` updates, each on
its own group of envs (group ``g`` was collected by weights ``g`` updates older: V-trace corrects it).
"""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from evaltk import seeding
from trainers.a2c import checkpointing
from trainers.a2c.config import A2cConfig, ConfigError
from trainers.a2c.learner import LossTerms, a2c_vtrace_loss
from trainers.a2c.model import NatureActorCritic
from trainers.a2c.rollout import RolloutCollector
from trainers.common.run import MetricsWriter, Shutdown, open_run_dir
from trainers.common.state_io import write_run_config


@dataclass
class RunResult:
    """Summary of a finished run (also the ``--json`` output of ``evaltk train atari``)."""

    frames: int
    updates: int
    episodes: int
    seconds: float
    cpu_seconds: float
    fps: float
    mean_episode_return: float
    checkpoint: str
    stopped_by: str
    run_dir: str


def make_env(cfg: A2cConfig) -> Any:
    """Build the gpu_env vector env of ``cfg`` (ALE v5, frameskip 1, AtariPreprocessing options, frame stack).

    It returns torch tensors (``obs_format="torch"``: on the device with backend ``"cuda"``), which the
    learner batches without a copy through numpy.
    """
    import gpu_env

    return gpu_env.make_vec(
        cfg.env_id, cfg.num_envs, backend=cfg.backend, obs_format="torch", frameskip=1,
        repeat_action_probability=cfg.repeat_action_probability, noop_max=cfg.noop_max,
        frame_skip=cfg.frame_skip, screen_size=84, grayscale_obs=True, stack_size=cfg.stack_size,
        num_threads=cfg.env_threads or None)


def make_optimizer(cfg: A2cConfig, model: NatureActorCritic) -> torch.optim.Optimizer:
    """RMSprop (``rmsprop_alpha``, ``optimizer_eps``) or Adam (``optimizer_eps``) at ``learning_rate``."""
    if cfg.optimizer == "adam":
        return torch.optim.Adam(model.parameters(), lr=cfg.learning_rate, eps=cfg.optimizer_eps)
    return torch.optim.RMSprop(model.parameters(), lr=cfg.learning_rate, alpha=cfg.rmsprop_alpha,
                               eps=cfg.optimizer_eps)


def write_config(run_dir: Path, cfg: A2cConfig, device: torch.device, *, resumed_from: int | None) -> None:
    """Write ``config.json``: resolved config, derived values, provenance (git hash, versions), start history."""
    derived = {"env_id": cfg.env_id, "envs_per_minibatch": cfg.envs_per_minibatch,
               "frames_per_rollout": cfg.frames_per_rollout, "device": str(device)}
    write_run_config(run_dir, {"config": cfg.to_dict(), "derived": derived}, resumed_from_key="resumed_from_frames",
                     resumed_from=resumed_from, trainer="trainers.a2c_vtrace")


def _restore(cfg: A2cConfig, run_dir: Path, model: NatureActorCritic, optimizer: torch.optim.Optimizer,
             generator: torch.Generator) -> checkpointing.TrainState:
    from evaltk.policies import check_tensor_shapes

    policy, state = checkpointing.load_latest(run_dir)
    want_env = checkpointing.env_spec(cfg)
    if policy.spec.env_spec != want_env:
        raise ConfigError(f"--resume: the checkpoint in {run_dir} was trained on {policy.spec.env}, but the options "
                          f"give {want_env.to_json()}: resume with the run's own --game and preprocessing options")
    check_tensor_shapes(policy, model.tensor_shapes())
    model.load_state_dict(policy.tensors)
    optimizer.load_state_dict(state.optimizer)
    generator.set_state(state.sampler_rng)
    return state


def _update(cfg: A2cConfig, model: NatureActorCritic, optimizer: torch.optim.Optimizer,
            collector: RolloutCollector) -> list[LossTerms]:
    """Collect one rollout and take ``num_minibatches`` SGD steps on it; returns each step's loss terms."""
    rollout = collector.collect()
    terms = []
    k = cfg.envs_per_minibatch
    for g in range(cfg.num_minibatches):
        loss = a2c_vtrace_loss(model, rollout.envs(slice(g * k, (g + 1) * k)), value_coef=cfg.value_coef,
                               entropy_coef=cfg.entropy_coef, rho_bar=cfg.vtrace_rho, c_bar=cfg.vtrace_c)
        optimizer.zero_grad(set_to_none=True)
        loss.total.backward()  # type: ignore[no-untyped-call]
        torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.max_grad_norm)
        optimizer.step()
        terms.append(loss)
    return terms


def _record(terms: list[LossTerms], window: deque[float], frames: int, updates: int, episodes: int,
            seconds: float, cpu: float, fps: float) -> dict[str, Any]:
    def mean(xs: list[torch.Tensor]) -> float:
        return float(torch.stack(xs).mean()) if xs else float("nan")

    return {"frames": frames, "updates": updates, "episodes": episodes, "seconds": round(seconds, 3),
            "charts/episodic_return": sum(window) / len(window) if window else float("nan"),
            "charts/episodes_in_window": len(window),
            "losses/policy": mean([t.policy for t in terms]), "losses/value": mean([t.value for t in terms]),
            "losses/entropy": mean([t.entropy for t in terms]), "losses/mean_rho": mean([t.mean_rho for t in terms]),
            "perf/fps": fps, "perf/cpu_seconds": round(cpu, 3)}


def run(cfg: A2cConfig, log: Any = print) -> RunResult:
    """Train until ``max_frames`` (total, across resumes), ``max_seconds`` (this invocation) or a signal."""
    cfg.check()
    run_dir = open_run_dir(cfg.out, resume=cfg.resume, error=ConfigError)
    torch.set_num_threads(cfg.torch_threads)
    env = make_env(cfg)
    device: torch.device = env.device
    obs_shape = tuple(int(d) for d in env.single_observation_space.shape)
    torch.manual_seed(seeding.seed(cfg.seed, "a2c.weights"))
    model = NatureActorCritic((obs_shape[0], obs_shape[1], obs_shape[2]), int(env.single_action_space.n)).to(device)
    optimizer = make_optimizer(cfg, model)
    generator = torch.Generator(device=device)
    generator.manual_seed(seeding.seed(cfg.seed, "a2c.actions"))
    frames = updates = episodes = resumes = 0
    if cfg.resume:
        state = _restore(cfg, run_dir, model, optimizer, generator)
        frames, updates, episodes, resumes = state.frames, state.updates, state.episodes, state.resumes + 1
    start_frames = frames
    write_config(run_dir, cfg, device, resumed_from=frames if cfg.resume else None)
    env_seeds = [seeding.seed(cfg.seed, "a2c.env", resumes, i) for i in range(cfg.num_envs)]
    collector = RolloutCollector(env, model, cfg, generator, seed=env_seeds)
    metrics = MetricsWriter(run_dir)
    stop = Shutdown()
    window: deque[float] = deque(maxlen=cfg.stats_window)
    t0, cpu0 = time.monotonic(), time.process_time()
    last_log = last_save = t0
    log_frames = frames
    terms: list[LossTerms] = []
    checkpoint, stopped_by = "", ""

    def save() -> str:
        return str(checkpointing.save(run_dir, cfg, model, checkpointing.TrainState(
            updates=updates, frames=frames, episodes=episodes, train_seconds=time.monotonic() - t0, resumes=resumes,
            optimizer=optimizer.state_dict(), sampler_rng=generator.get_state())))

    with stop:
        try:
            while not stopped_by:
                terms += _update(cfg, model, optimizer, collector)
                frames += cfg.frames_per_rollout
                updates += cfg.num_minibatches
                returns, _ = collector.take_episodes()
                episodes += len(returns)
                window.extend(returns)
                now = time.monotonic()
                if cfg.max_frames and frames >= cfg.max_frames:
                    stopped_by = "max_frames"
                elif cfg.max_seconds and now - t0 >= cfg.max_seconds:
                    stopped_by = "max_seconds"
                elif stop.signal:
                    stopped_by = stop.signal
                if stopped_by or now - last_log >= cfg.log_every_s:
                    fps = (frames - log_frames) / max(now - last_log, 1e-9)
                    cpu = time.process_time() - cpu0
                    record = _record(terms, window, frames, updates, episodes, now - t0, cpu, fps)
                    metrics.write(record, frames)
                    log(f"frames {frames:>10,}  updates {updates:>7,}  episodes {episodes:>6,}  "
                        f"return(last {len(window)}) {record['charts/episodic_return']:8.2f}  fps {fps:7.0f}  "
                        f"entropy {record['losses/entropy']:.3f}  rho {record['losses/mean_rho']:.3f}")
                    last_log, log_frames, terms = now, frames, []
                if cfg.save_every_s and not stopped_by and now - last_save >= cfg.save_every_s:
                    checkpoint, last_save = save(), now
            checkpoint = save()
        finally:
            metrics.close()
            env.close()
    seconds = time.monotonic() - t0
    return RunResult(frames=frames, updates=updates, episodes=episodes, seconds=seconds,
                     cpu_seconds=time.process_time() - cpu0,
                     fps=(frames - start_frames) / max(seconds, 1e-9),
                     mean_episode_return=sum(window) / len(window) if window else float("nan"),
                     checkpoint=checkpoint, stopped_by=stopped_by, run_dir=str(run_dir))
