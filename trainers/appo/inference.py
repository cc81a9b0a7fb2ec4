"""Batched inference: gathers the observations of every split that asked for actions and runs one forward pass.

It owns the per-env GRU states (``buffers.np["rnn"]``), stamps each action with the policy version, and
takes new weights from the learner between batches (:meth:`Inference.publish` is thread-safe).
"""

from __future__ import annotations

import copy
import functools
import queue
import threading
import time
from collections.abc import Callable, Mapping

import numpy as np
import torch

from trainers.appo import packed
from trainers.appo.buffers import SharedBuffers
from trainers.appo.dagger import Teacher
from trainers.appo.network import ActorCritic, sample_actions
from trainers.appo.rollout_worker import Channel


class Inference:
    """Serves ``(worker, split, generation)`` requests; replies ``(split, generation)`` on ``replies[worker]``.

    ``random_actions`` (sampler benchmark) skips the network and samples uniformly. ``wait_s``: after the first
    request of a batch, how long to wait for more, until half of all splits have asked. A forward pass
    has a fixed cost besides its per-env one (on the AMD guest of docs/benchmarks.md 6.4 ms for 2 envs and 10 ms
    for 8 with torch's own layers, MKL re-packing every weight matrix on each call; on the Intel AVX-512 guest
    1.2 and 2.9 ms), so a short wait buys fewer, larger passes; ``serve(timeout=0)`` (serial mode) never waits.
    ``packed_weights`` (default): the pass runs on :class:`trainers.appo.packed.PackedStep`, whose weights are
    packed once per published version, not per call. The env and split counts come from ``buffers.layout``.
    ``encoder_dtype``: the encoder's precision, the learner's (:func:`trainers.appo.network.encoder_dtype`).
    ``teacher`` (a DAgger run): after each pass it relabels the served steps (:meth:`trainers.appo.dagger.Teacher.
    relabel`); ``teacher_actions`` counts the steps that executed the teacher's action.
    """

    def __init__(self, model: ActorCritic, buffers: SharedBuffers, requests: Channel,
                 replies: Callable[[int], Channel], current_generation: Callable[[int], int],
                 worker_splits: int, seed: int, random_actions: bool = False, wait_s: float = 0.0,
                 packed_weights: bool = True, encoder_dtype: torch.dtype | None = None,
                 teacher: Teacher | None = None) -> None:
        self.model = copy.deepcopy(model).eval()
        for p in self.model.parameters():
            p.requires_grad_(False)
        self.buffers = buffers
        self.requests = requests
        self.replies = replies
        self.current_generation = current_generation
        self.envs_per_worker = buffers.layout.envs_per_worker
        self.per_split = self.envs_per_worker // worker_splits
        self.wait_s = wait_s
        self.enough_requests = max(1, buffers.layout.num_workers * worker_splits // 2)
        self.version = 0
        self._pending: tuple[dict[str, torch.Tensor], int] | None = None
        self._lock = threading.Lock()
        self._gen = torch.Generator().manual_seed(seed)
        self.samples = 0
        self.teacher = teacher
        self.teacher_actions = 0
        self.random_actions = random_actions
        self._np_rng = np.random.default_rng(seed)
        self._packed = (packed.PackedStep(self.model, buffers.layout.num_workers * self.envs_per_worker,
                                          encoder_dtype)
                        if packed_weights and packed.available(encoder_dtype) and not random_actions else None)
        self._step = (self._packed.step if self._packed is not None
                      else functools.partial(self.model.step, encoder_dtype=encoder_dtype))

    def publish(self, state: Mapping[str, torch.Tensor], version: int) -> None:
        """Hand over new weights (copied now; applied before the next batch)."""
        snapshot = {k: v.detach().clone() for k, v in state.items()}
        with self._lock:
            self._pending = (snapshot, version)

    def generator_state(self) -> torch.Tensor:
        """State of the action-sampling generator (for checkpoints)."""
        return self._gen.get_state()

    def set_generator_state(self, state: torch.Tensor) -> None:
        """Restore the action-sampling generator."""
        self._gen.set_state(state)

    def _apply_pending(self) -> None:
        with self._lock:
            pending, self._pending = self._pending, None
        if pending is not None:
            self.model.load_state_dict(pending[0])
            if self._packed is not None:
                self._packed.repack()
            self.version = pending[1]

    def serve(self, timeout: float, max_requests: int = 64) -> int:
        """Serve every waiting request (waiting up to ``timeout`` for the first); returns how many were served."""
        batch: list[tuple[int, int, int]] = []
        try:
            batch.append(self.requests.get(timeout=timeout) if timeout > 0 else self.requests.get(block=False))
        except queue.Empty:
            return 0
        deadline = time.monotonic() + (self.wait_s if timeout > 0 else 0.0)
        while len(batch) < max_requests:
            left = deadline - time.monotonic() if len(batch) < self.enough_requests else 0.0
            try:
                batch.append(self.requests.get(timeout=left) if left > 0 else self.requests.get(block=False))
            except queue.Empty:
                break
        batch = [r for r in batch if r[2] == self.current_generation(r[0])]
        if not batch:
            return 0
        self._apply_pending()
        self._forward(batch)
        for worker, split, generation in batch:
            self.replies(worker).put((split, generation))
        return len(batch)

    @torch.inference_mode()
    def _forward(self, batch: list[tuple[int, int, int]]) -> None:
        b = self.buffers.np
        envs = np.concatenate([np.arange(w * self.envs_per_worker + s * self.per_split,
                                         w * self.envs_per_worker + (s + 1) * self.per_split) for w, s, _ in batch])
        # The gathers and scatters of a few rows run in numpy (about 1 us each, a torch op 5-10 us); only the
        # forward pass and the sampling are torch ops.
        slots, steps = b["env_slot"][envs], b["env_t"][envs]
        if self.random_actions:  # sampler benchmark: no network, uniform actions, numpy only
            for head, n in enumerate(self.model.action_nvec):
                b["actions"][slots, steps, head] = self._np_rng.integers(0, n, len(envs))
        else:
            h = b["rnn"][envs]
            h[b["env_first"][envs] != 0] = 0.0  # an episode starts at this step: its GRU state starts from zero
            starts = steps == 0
            if starts.any():
                b["rnn0"][slots[starts]] = h[starts]
            obs = torch.from_numpy(b["obs_hwc"][slots, steps]).permute(0, 3, 1, 2)
            logits, _, h_new = self._step(obs, torch.from_numpy(h))
            actions, logp = sample_actions(logits, self.model.action_nvec, self._gen)
            b["actions"][slots, steps] = actions.numpy()
            b["logp"][slots, steps] = logp.numpy()
            b["rnn"][envs] = h_new.numpy()
            if self.teacher is not None:
                self.teacher_actions += self.teacher.relabel(b, envs, slots, steps, self.version)
        b["version"][slots, steps] = self.version
        self.samples += len(envs)
