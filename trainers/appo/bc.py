"""Behaviour cloning of recorded demonstrations (:mod:`trainers.appo.demos`) into the APPO model.

The network is the one APPO trains (:class:`trainers.appo.network.ActorCritic`: encoder, GRU, heads, built by
:func:`trainers.appo.runner.build_model` from the same :class:`~trainers.appo.config.AppoConfig`). Training is
sequence-aware: ``streams`` parallel streams each walk through whole episodes in order (episodes shuffled),
``seq_len`` steps per SGD step, and the GRU state is carried from one step to the next of a stream (detached:
truncated backpropagation through time) and zeroed where an episode starts. The loss per step is

* the cross-entropy of each head's logits against the demonstrated choice, weighted per class
  (:func:`class_weights`: ``(frequency / max frequency) ** -class_balance``, clipped to ``max_class_weight``,
  so rare choices such as attack or a sharp turn count more), summed over heads;
* plus ``value_coef`` times the squared error of the critic against the demonstration's discounted return
  (``gamma``), so reinforcement learning started from the clone begins with a fitted critic.

The observation normaliser is updated from every batch. The result is an ordinary evaltk checkpoint
(``OUT/policy/``; every ``save_every_s`` and at the end) that ``evaltk evaluate``, ``evaltk tournament``, a
``bots`` suite case and ``evaltk train doom --init-from`` take, its actor bias corrected for the class weights
(:func:`calibrated_state`) so that it samples each choice as often as the demonstrator made it.
``OUT/bc.json`` holds the settings and the class weights, ``OUT/metrics.jsonl`` one line per logged step.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np
import torch

from evaltk import checkpoint as evaltk_checkpoint
from evaltk import seeding
from evaltk.atomic import write_json_atomic
from evaltk.envs import doom
from evaltk.envs.spec import EnvSpec
from evaltk.errors import SpecError
from trainers.appo import checkpointing
from trainers.appo.cloning import DemoStreams, action_counts, bc_loss, class_weights
from trainers.appo.config import AppoConfig
from trainers.appo.config import BcSettings as BcSettings  # declared with its flags; used as bc.BcSettings
from trainers.appo.learner import make_adam
from trainers.appo.network import ActorCritic, encoder_dtype
from trainers.appo.scenario import resolve_scenario


def calibrated_state(model: ActorCritic, weights: list[np.ndarray] | None) -> dict[str, torch.Tensor]:
    """Return ``model``'s state dict with ``log(weight)`` of each class subtracted from its actor bias.

    A cross-entropy weighted by ``w_c`` is minimised by probabilities proportional to ``w_c p(c)``: sampling from
    the raw heads would take rare choices (firing a rocket) ``w_c`` times too often. Subtracting ``log w_c`` from
    each logit gives back ``p(c)`` (logit adjustment), so the saved policy acts with the demonstrated frequencies.
    """
    state = {k: v.detach().clone() for k, v in model.state_dict().items()}
    if weights is not None:
        state["actor.bias"] -= torch.from_numpy(np.log(np.concatenate(weights)).astype(np.float32))
    return state


def save_policy(out: Path, cfg: AppoConfig, scenario: doom.DoomScenario, model: ActorCritic, steps: int,
                samples: int, weights: list[np.ndarray] | None = None, name: str = "policy") -> Path:
    """Write the model (calibrated by ``weights``, :func:`calibrated_state`) as the evaltk checkpoint ``out/name``."""
    spec = checkpointing.policy_spec(cfg, scenario, model, samples * scenario.frameskip, steps)
    spec.provenance["trainer"] = "trainers.appo.bc"
    return evaltk_checkpoint.save(out / name, spec, calibrated_state(model, weights))


def check_demos(folder: Path, scenario: doom.DoomScenario) -> None:
    """Raise :class:`SpecError` unless ``folder`` holds demonstrations of ``scenario``'s observation and heads."""
    meta = folder / "demos.json"
    if not meta.exists():
        raise SpecError(f"{folder} is not a demonstrations folder (no demos.json); record one with "
                        "evaltk train doom --record-demos DIR")
    recorded = doom.scenario_from_env_spec(EnvSpec.from_json(json.loads(meta.read_text())["env"], f"{meta} env"))
    if ((recorded.obs_size, recorded.action_heads, recorded.mark_players)
            != (scenario.obs_size, scenario.action_heads, scenario.mark_players)):
        raise SpecError(f"the demonstrations in {folder} were recorded for scenario {recorded.name!r} "
                        f"(observation {recorded.obs_size}, mark_players {recorded.mark_players}); use them with "
                        f"--scenario {recorded.name} and no resolution overrides")


def train(cfg: AppoConfig, settings: BcSettings, log: Callable[[str], None] = print) -> dict[str, Any]:
    """Clone ``settings.demos`` into a fresh APPO model until ``max_steps`` or ``cfg.max_seconds``; return a summary."""
    from trainers.appo.runner import build_model

    folder, out = Path(settings.demos), Path(cfg.out)
    scenario = resolve_scenario(cfg)
    check_demos(folder, scenario)
    if not (settings.max_steps or cfg.max_seconds):
        raise SpecError("behaviour cloning needs a stop: give --max-seconds or --bc-steps")
    out.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(seeding.seed(cfg.seed, "bc.weights"))
    torch.set_num_threads(cfg.learner_threads)
    model = build_model(cfg, scenario)
    counts = action_counts(folder, model.action_nvec)
    weights = class_weights(counts, settings.class_balance, settings.max_class_weight)
    write_json_atomic(out / "bc.json", {"settings": asdict(settings), "config": cfg.to_dict(),
                                        "action_counts": [c.tolist() for c in counts],
                                        "class_weights": [w.tolist() for w in weights]})
    streams = DemoStreams(folder, settings.streams, settings.seq_len, settings.gamma, seeding.rng(cfg.seed, "bc.demos"))
    optimizer = make_adam(list(model.parameters()), cfg.learning_rate, cfg.adam_eps)
    tweights = [torch.from_numpy(w) for w in weights]
    dtype = encoder_dtype(cfg.encoder_precision)
    h = torch.zeros(settings.streams, model.rnn_size)
    t0 = last_save = time.monotonic()
    steps = samples = 0
    metrics: dict[str, float] = {}
    with (out / "metrics.jsonl").open("a") as mlog:
        while not (settings.max_steps and steps >= settings.max_steps) and not (
                cfg.max_seconds and time.monotonic() - t0 >= cfg.max_seconds):
            batch = streams.next()
            if cfg.normalize_obs:
                model.update_normalizer(batch["obs"][::4].reshape(-1, *batch["obs"].shape[2:]))
            loss, metrics, h = bc_loss(model, batch, h, tweights, settings.value_coef, dtype)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()  # type: ignore[no-untyped-call]
            torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.max_grad_norm)
            optimizer.step()
            steps += 1
            samples += settings.seq_len * settings.streams
            if steps % settings.log_every == 0:
                line = {"step": steps, "samples": samples, "epochs": streams.epochs,
                        "seconds": round(time.monotonic() - t0, 1), **metrics}
                mlog.write(json.dumps(line) + "\n")
                mlog.flush()
                log(" ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in line.items()))
            if cfg.save_every_s and time.monotonic() - last_save >= cfg.save_every_s:
                last_save = time.monotonic()
                save_policy(out, cfg, scenario, model, steps, samples, weights)
    path = save_policy(out, cfg, scenario, model, steps, samples, weights)
    return {"checkpoint": str(path), "steps": steps, "samples": samples, "epochs": streams.epochs,
            "seconds": time.monotonic() - t0, "final": metrics}
