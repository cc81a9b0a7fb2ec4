"""Per-episode digests: what "the same episode, step for step" is checked against.

Every simulator evaltk evaluates on hands the evaluation loop (:func:`evaltk.evaluation.run.run_plan`) the
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
  order, folded into the digest. A CRC per observation is far cheaper than a cryptographic hash of it
  (zlib-ng's SIMD CRC-32, a dependency of evaltk; the standard library's ``zlib.crc32``, the same
  function, where zlib-ng is not installed); two different observations escape it with probability
  2**-32 each, which is ample for telling simulators apart (nothing here guards against a simulator
  built to collide). The observation after the last step
  is left out: simulators differ in what they hand back there (the final frame or the next reset's).

:class:`EpisodeDigests` keeps each step's bytes for the whole batch in one row of a small log (one numpy
assignment per step, whatever the number of slots) and folds a slot's rows into its hashes when the log is
full or the slot's episode ends; the bytes hashed, and so the digests, are those defined above.

Because each simulator gives evaltk the checkpoint's observation (shape and dtype are checked), two tables
of one checkpoint always expose the same observation, and both digests are compared
(:func:`evaltk.verdict.decision.match_episodes`).
"""

from __future__ import annotations

import struct
from hashlib import blake2b
from typing import Any

import numpy as np
import numpy.typing as npt

try:
    from zlib_ng.zlib_ng import crc32 as crc32
except ImportError:  # the same CRC-32 from the standard library, slower (see the module docstring)
    from zlib import crc32 as crc32

DIGEST_SIZE = 16
"""Bytes of each digest (printed as 32 hex characters)."""
LOG_ROWS = 256
"""Steps a log holds before it folds them into the slots' hashes."""


def _hasher(kind: bytes) -> blake2b:
    return blake2b(kind, digest_size=DIGEST_SIZE)


class _Log:
    """Rows of one record per slot (``dtype``) with an active flag; folds a slot's active records into a hash."""

    def __init__(self, num_envs: int, dtype: npt.DTypeLike) -> None:
        self.records: npt.NDArray[Any] = np.zeros((LOG_ROWS, num_envs), dtype)
        self.active = np.zeros((LOG_ROWS, num_envs), np.bool_)
        self.rows = 0
        self.since = np.zeros(num_envs, np.int64)  # first row of each slot's current episode

    def next_row(self, hashes: list[blake2b]) -> int:
        """Return the row to write; when the log is full, fold every slot's rows into ``hashes`` first."""
        if self.rows == LOG_ROWS:
            for slot, h in enumerate(hashes):
                self.fold(slot, h)
            self.rows = 0
            self.since[:] = 0
        self.rows += 1
        return self.rows - 1

    def fold(self, slot: int, h: blake2b) -> None:
        """Hash ``slot``'s active records since its last fold (in step order) and mark them folded."""
        start = int(self.since[slot])
        if start < self.rows:
            h.update(self.records[start:self.rows, slot][self.active[start:self.rows, slot]].tobytes())
        self.since[slot] = self.rows

    def restart(self, slot: int) -> None:
        """Forget ``slot``'s unfolded records (its episode starts again)."""
        self.since[slot] = self.rows


class EpisodeDigests:
    """Running digests of ``num_envs`` slots' episodes (see the module docstring)."""

    def __init__(self, num_envs: int) -> None:
        self._steps = [_hasher(b"steps") for _ in range(num_envs)]
        self._obs = [_hasher(b"obs") for _ in range(num_envs)]
        self._crcs = _Log(num_envs, np.dtype("<u4"))
        self._step_log: _Log | None = None  # its record's shape is the action's, known at the first step

    def start(self, slot: int) -> None:
        """Begin a new episode in ``slot`` (forgets what the slot held)."""
        self._steps[slot] = _hasher(b"steps")
        self._obs[slot] = _hasher(b"obs")
        self._crcs.restart(slot)
        if self._step_log is not None:
            self._step_log.restart(slot)

    def observe(self, obs: npt.NDArray[np.generic], active: npt.NDArray[np.bool_]) -> None:
        """Fold the observation each active slot's policy is about to act on (``obs[K, ...]``, ``active: bool[K]``)."""
        row = self._crcs.next_row(self._obs)
        flat = np.ascontiguousarray(obs).data.cast("B")
        size = len(flat) // len(obs)
        crcs = self._crcs.records[row]
        for slot in np.flatnonzero(active).tolist():
            crcs[slot] = crc32(flat[slot * size:(slot + 1) * size])
        self._crcs.active[row] = active

    def step(self, actions: npt.NDArray[np.integer], rewards: npt.NDArray[np.number],
             active: npt.NDArray[np.bool_]) -> None:
        """Fold each active slot's action (``int64[K]``, or ``int64[K, n]`` multi-discrete) and reward of one step."""
        if self._step_log is None:
            record = np.dtype([("action", "<i8", np.shape(actions)[1:]), ("reward", "<f8")])
            self._step_log = _Log(len(self._steps), record)
        log = self._step_log
        row = log.next_row(self._steps)
        log.records["action"][row] = actions
        log.records["reward"][row] = rewards
        log.active[row] = active

    def finish(self, slot: int, steps: int, terminated: bool, truncated: bool) -> tuple[str, str]:
        """Close ``slot``'s episode after ``steps`` steps; return ``(digest, obs_digest)`` as hex."""
        self._crcs.fold(slot, self._obs[slot])
        if self._step_log is not None:
            self._step_log.fold(slot, self._steps[slot])
        steps_hash = self._steps[slot].copy()
        steps_hash.update(struct.pack("<q??", int(steps), bool(terminated), bool(truncated)))
        return steps_hash.hexdigest(), self._obs[slot].hexdigest()
