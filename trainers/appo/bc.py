"""Behaviour cloning of recorded demonstrations (:mod:`trainers.appo.demos`) into the APPO model.

The network is the one APPO trains (:class:`trainers.appo.model.ActorCritic`: encoder, GRU, heads, built by
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
from evaltk.errors import SpecError
from trainers.appo import checkpointing, demos
from trainers.appo.config import AppoConfig
from trainers.appo.config import BcSettings as BcSettings  # declared with its flags; used as bc.BcSettings
from trainers.appo.learner import make_adam
from trainers.appo.model import ActorCritic, encoder_dtype, split_logits
from trainers.appo.scenario import resolve_scenario


def class_weights(counts: list[np.ndarray], balance: float, max_weight: float) -> list[np.ndarray]:
    """Per head, ``(count / max count) ** -balance`` clipped to ``max_weight`` (unseen classes get ``max_weight``).

    ``balance`` 0 gives all ones; 1 gives inverse frequency. Weights are then scaled so that their mean under
    the data's own class distribution is 1 (the loss keeps its scale).
    """
    out = []
    for c in counts:
        freq = c.astype(np.float64) / max(1.0, float(c.max()))
        w = np.where(freq > 0, np.power(np.maximum(freq, 1e-12), -balance), max_weight)
        w = np.minimum(w, max_weight)
        total = float(c.sum())
        if total > 0:
            w = w / float((w * c).sum() / total)
        out.append(w.astype(np.float32))
    return out


def action_counts(folder: Path, nvec: list[int]) -> list[np.ndarray]:
    """Count each head's choices over every chunk in ``folder`` (reads only the ``actions`` arrays)."""
    counts = [np.zeros(n, dtype=np.int64) for n in nvec]
    for episode in demos.episode_chunks(folder):
        for path in episode:
            with np.load(path, allow_pickle=False) as data:
                actions = data["actions"]
            for i, n in enumerate(nvec):
                counts[i] += np.bincount(actions[:, i], minlength=n)[:n]
    return counts


def _returns(paths: list[Path], gamma: float) -> np.ndarray:
    rewards = []
    for path in paths:
        with np.load(path, allow_pickle=False) as data:
            rewards.append(data["rewards"])
    r = np.concatenate(rewards).astype(np.float64)
    out = np.zeros_like(r)
    acc = 0.0
    for t in range(r.size - 1, -1, -1):
        acc = r[t] + gamma * acc
        out[t] = acc
    return out.astype(np.float32)


class DemoStreams:
    """``streams`` cursors over shuffled episodes; :meth:`next` returns the next ``seq_len`` steps of each.

    Returns time-major tensors: ``obs uint8[T, B, C, H, W]``, ``actions int64[T, B, K]``, ``resets bool[T, B]``
    (an episode starts at that step) and ``returns float32[T, B]``.
    """

    def __init__(self, folder: Path, streams: int, seq_len: int, gamma: float, rng: np.random.Generator) -> None:
        self.episodes = demos.episode_chunks(folder)
        self.streams, self.seq_len, self.gamma, self.rng = streams, seq_len, gamma, rng
        self.queue: list[int] = []
        self.cursors: list[dict[str, Any]] = [self._start() for _ in range(streams)]
        self.epochs = 0

    def _start(self) -> dict[str, Any]:
        if not self.queue:
            self.queue = [int(i) for i in self.rng.permutation(len(self.episodes))]
            self.epochs = getattr(self, "epochs", -1) + 1
        paths = self.episodes[self.queue.pop()]
        return {"paths": paths, "returns": _returns(paths, self.gamma), "chunk": -1, "data": None, "pos": 0,
                "step": 0}

    def _take(self, b: int, n: int) -> list[dict[str, np.ndarray]]:
        pieces: list[dict[str, np.ndarray]] = []
        while n > 0:
            cur = self.cursors[b]
            if cur["data"] is None or cur["pos"] >= len(cur["data"]["obs"]):
                cur["chunk"] += 1
                if cur["chunk"] >= len(cur["paths"]):
                    self.cursors[b] = self._start()
                    continue
                cur["data"], cur["pos"] = demos.load_chunk(cur["paths"][cur["chunk"]]), 0
            data, pos = cur["data"], cur["pos"]
            k = min(n, len(data["obs"]) - pos)
            piece = {key: data[key][pos:pos + k] for key in ("obs", "actions", "first")}
            piece["returns"] = cur["returns"][cur["step"]:cur["step"] + k]
            pieces.append(piece)
            cur["pos"] += k
            cur["step"] += k
            n -= k
        return pieces

    def next(self) -> dict[str, torch.Tensor]:
        """Return the next ``seq_len`` steps of every stream (see the class docstring)."""
        cols = []
        for b in range(self.streams):
            pieces = self._take(b, self.seq_len)
            cols.append({k: np.concatenate([p[k] for p in pieces]) for k in pieces[0]})
        return {
            "obs": torch.from_numpy(np.stack([c["obs"] for c in cols], axis=1)),
            "actions": torch.from_numpy(np.stack([c["actions"] for c in cols], axis=1).astype(np.int64)),
            "resets": torch.from_numpy(np.stack([c["first"] for c in cols], axis=1).astype(bool)),
            "returns": torch.from_numpy(np.stack([c["returns"] for c in cols], axis=1)),
        }


def bc_loss(model: ActorCritic, batch: dict[str, torch.Tensor], h0: torch.Tensor, weights: list[torch.Tensor],
            value_coef: float, dtype: torch.dtype | None) -> tuple[torch.Tensor, dict[str, float], torch.Tensor]:
    """Weighted cross-entropy (+ value regression) of a demonstration batch; returns (loss, metrics, last state)."""
    steps, streams = batch["actions"].shape[:2]
    flat = batch["obs"].reshape(steps * streams, *batch["obs"].shape[2:])
    feats = model.encode(flat, dtype).view(steps, streams, -1)
    keep = (~batch["resets"]).float().unsqueeze(-1)
    from trainers.appo.gru import gru_sequence

    core = gru_sequence(model.core, feats, h0, keep)
    logits, values = model.actor(core), model.critic(core).squeeze(-1)
    ce = torch.zeros(())
    correct = []
    for i, head in enumerate(split_logits(logits, model.action_nvec)):
        target = batch["actions"][..., i].reshape(-1)
        flat_logits = head.reshape(-1, head.shape[-1])
        ce = ce + torch.nn.functional.cross_entropy(flat_logits, target, weight=weights[i])
        correct.append((flat_logits.argmax(-1) == target).float().mean())
    value = torch.mean((values - batch["returns"]) ** 2)
    loss = ce + value_coef * value
    metrics = {"bc/cross_entropy": float(ce.detach()), "bc/value_loss": float(value.detach()),
               **{f"bc/accuracy_{i}": float(c) for i, c in enumerate(correct)}}
    return loss, metrics, core[-1].detach()


class AuxiliaryCloning:
    """The optional behaviour-cloning term of APPO's loss (``--bc-demos``, ``--bc-coef``, ``--bc-decay-steps``).

    Each learner step adds ``bc_coefficient(cfg, step)`` times the class-weighted cross-entropy (no value term) of
    ``bc_streams`` demonstration streams of ``rollout`` steps, with their own carried GRU state; at coefficient 0
    no demonstration batch is read.
    """

    def __init__(self, model: ActorCritic, cfg: AppoConfig) -> None:
        folder = Path(cfg.bc_demos)
        self.model, self.cfg = model, cfg
        counts = action_counts(folder, model.action_nvec)
        # Plain cross-entropy: the policy being trained samples its own heads, so no class weights (which would
        # pull it toward the rare choices, see calibrated_state).
        self.weights = [torch.from_numpy(w) for w in class_weights(counts, 0.0, 10.0)]
        self.streams = DemoStreams(folder, cfg.bc_streams, cfg.rollout, 0.99, seeding.rng(cfg.seed, "bc.demos"))
        self.h = torch.zeros(cfg.bc_streams, model.rnn_size)

    def add_to(self, terms: dict[str, torch.Tensor], step: int) -> dict[str, torch.Tensor]:
        """Return ``terms`` with ``bc_loss``/``bc_coef`` added and the weighted term added to ``loss``."""
        from trainers.appo.config import bc_coefficient

        coef = bc_coefficient(self.cfg, step)
        if coef <= 0:
            return {**terms, "bc_coef": torch.zeros(())}
        aux, _, self.h = bc_loss(self.model, self.streams.next(), self.h, self.weights, 0.0,
                                 encoder_dtype(self.cfg.encoder_precision))
        return {**terms, "loss": terms["loss"] + coef * aux, "bc_loss": aux.detach(), "bc_coef": torch.tensor(coef)}


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
    recorded = doom.scenario_from_env_spec(json.loads(meta.read_text())["env"])
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
