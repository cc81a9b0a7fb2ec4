"""Per-episode digests: what "the same episode, step for step" is checked against.

Every simulator evaltk evaluates on hands the evaluation loop (:func:`evaltk.evaluate.run_plan`) the
same things per step: the observation the policy acts on (the checkpoint's observation, ``[K, *obs_shape]``),
the action, the reward and the end flags. :class:`EpisodeDigests` folds them, per slot, into two digests
(BLAKE2b, 128 bits, hex) written to each score-table row:

* ``digest`` - the step stream: for every step the action (little-endian ``int64``, each component of a
  multi-discrete one) and the reward (as little-endian ``float64``), then
  the episode's length in steps and its ``terminated``/``truncated`` flags. Two episodes with the same
  digest took the same actions, got the same reward on every step and ended on the same step the same way.
  A reward delayed by one step changes it even when the return does not.
* ``obs_digest`` - every observation the policy acted on (the reset observation and each one after a
  non-final step): the CRC-32 of each observation's raw bytes (the checkpoint's dtype and shape), in
  order, folded into the digest. A CRC per observation costs a fifth of a cryptographic hash of it; two
  different observations escape it with probability 2**-32 each, which is ample for telling simulators
  apart (nothing here guards against a simulator built to collide). The observation after the last step
  is left out: simulators differ in what they hand back there (the final frame or the next reset's).

Because each simulator gives evaltk the checkpoint's observation (shape and dtype are checked), two tables
of one checkpoint always expose the same observation, and both digests are compared
(:func:`evaltk.verdict.decision.match_episodes`).
"""

from __future__ import annotations

import struct
import zlib
from hashlib import blake2b

import numpy as np

DIGEST_SIZE = 16
"""Bytes of each digest (printed as 32 hex characters)."""


def _hasher(kind: bytes) -> blake2b:
    return blake2b(kind, digest_size=DIGEST_SIZE)


class EpisodeDigests:
    """Running digests of ``num_envs`` slots' episodes (see the module docstring)."""

    def __init__(self, num_envs: int) -> None:
        self._steps = [_hasher(b"steps") for _ in range(num_envs)]
        self._obs = [_hasher(b"obs") for _ in range(num_envs)]

    def start(self, slot: int) -> None:
        """Begin a new episode in ``slot`` (forgets what the slot held)."""
        self._steps[slot] = _hasher(b"steps")
        self._obs[slot] = _hasher(b"obs")

    def observe(self, obs: np.ndarray, active: np.ndarray) -> None:
        """Fold the observation each active slot's policy is about to act on (``obs[K, ...]``, ``active: bool[K]``)."""
        for slot in np.flatnonzero(active).tolist():
            self._obs[slot].update(struct.pack("<I", zlib.crc32(np.ascontiguousarray(obs[slot]).data)))

    def step(self, actions: np.ndarray, rewards: np.ndarray, active: np.ndarray) -> None:
        """Fold each active slot's action (``int64[K]``, or ``int64[K, n]`` multi-discrete) and reward of one step."""
        for slot in np.flatnonzero(active).tolist():
            self._steps[slot].update(np.asarray(actions[slot], dtype="<i8").tobytes())
            self._steps[slot].update(struct.pack("<d", float(rewards[slot])))

    def finish(self, slot: int, steps: int, terminated: bool, truncated: bool) -> tuple[str, str]:
        """Close ``slot``'s episode after ``steps`` steps; return ``(digest, obs_digest)`` as hex."""
        steps_hash = self._steps[slot].copy()
        steps_hash.update(struct.pack("<q??", int(steps), bool(terminated), bool(truncated)))
        return steps_hash.hexdigest(), self._obs[slot].hexdigest()
