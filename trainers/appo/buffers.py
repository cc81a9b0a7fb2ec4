"""Shared-memory trajectory buffers. Processes exchange only indices; the data stays here.

Every array lives in its own :class:`multiprocessing.shared_memory.SharedMemory` block, so rollout workers
attach with numpy only (no torch import in the worker) and the learner sees the same memory as torch
tensors without copies. Layout (``S = num_envs * slots_per_env`` trajectory slots, ``T = rollout``):

- ``obs``      ``uint8[S, T + 1, C, H, W]``  observation before each step, plus the bootstrap one. Stored
  channels-last (``obs_hwc``, ``uint8[S, T + 1, H, W, C]``, the order ViZDoom renders in); ``np["obs"]`` is
  the channel-first view of the same memory, so torch reads it as a ``channels_last`` tensor and the model's
  float conversion is a straight cast instead of a transpose.
- ``actions``  ``int64[S, T, K]``            one index per action head
- ``logp``     ``float32[S, T]``             behaviour log-probability
- ``rewards``  ``float32[S, T]``, ``dones`` ``uint8[S, T]`` (episode ended after step t)
- ``version``  ``int32[S, T]``               policy version that chose the action
- ``rnn0``     ``float32[S, R]``             GRU state before step 0 (already reset if step 0 starts an episode)
- ``slot_ready`` ``uint8[S]``                1 = complete and owned by the learner, 0 = owned by its env
- ``env_slot``, ``env_t`` ``int32[E]``, ``env_first`` ``uint8[E]``: where each env writes now
- ``rnn``      ``float32[E, R]``             current GRU state per env (inference owns it)
- ``heartbeat`` ``float64[W]``               last ``time.monotonic()`` each worker was alive

A DAgger run (``teacher_logits > 0``, :mod:`trainers.appo.dagger`) adds what its teacher sees and says:

- ``teacher_obs`` ``uint8[E, C, H, W]``      the teacher's (marked) observation of each env's current frame, stored
  channels-last like ``obs``; ``players_now`` ``uint8[E, G]`` the players-position grid of that frame
- ``teacher_rnn`` ``float32[E, R']``         the teacher's GRU state per env (inference owns it)
- ``teacher_logits`` ``float32[S, T, A]``, ``teacher_value`` ``float32[S, T]``, ``players`` ``uint8[S, T, G]``: the
  teacher's logits and value and the grid at every step of a trajectory (written by inference with the actions)

Env ``e`` owns slots ``e * slots_per_env ... e * slots_per_env + slots_per_env - 1`` and cycles through them.
"""

from __future__ import annotations

import contextlib
import dataclasses
from dataclasses import dataclass
from multiprocessing import shared_memory
from typing import Any

import numpy as np


@dataclass(frozen=True)
class BufferLayout:
    """Sizes that fix every array's shape."""

    num_workers: int
    envs_per_worker: int
    slots_per_env: int
    rollout: int
    obs_shape: tuple[int, int, int]
    num_heads: int
    rnn_size: int
    teacher_logits: int = 0
    teacher_rnn_size: int = 0
    players_cells: int = 0

    @property
    def num_envs(self) -> int:
        """Total envs."""
        return self.num_workers * self.envs_per_worker

    @property
    def num_slots(self) -> int:
        """Total trajectory slots."""
        return self.num_envs * self.slots_per_env

    def arrays(self) -> dict[str, tuple[tuple[int, ...], Any]]:
        """Name -> (shape, numpy dtype) of every shared array."""
        s, t, e = self.num_slots, self.rollout, self.num_envs
        teacher: dict[str, tuple[tuple[int, ...], Any]] = {} if not self.teacher_logits else {
            "teacher_obs": ((e, *self.obs_shape[1:], self.obs_shape[0]), np.uint8),  # HWC storage
            "players_now": ((e, self.players_cells), np.uint8),
            "teacher_rnn": ((e, self.teacher_rnn_size), np.float32),
            "teacher_logits": ((s, t, self.teacher_logits), np.float32),
            "teacher_value": ((s, t), np.float32),
            "players": ((s, t, self.players_cells), np.uint8),
        }
        return {
            "obs": ((s, t + 1, *self.obs_shape[1:], self.obs_shape[0]), np.uint8),  # HWC storage
            "actions": ((s, t, self.num_heads), np.int64),
            "logp": ((s, t), np.float32),
            "rewards": ((s, t), np.float32),
            "dones": ((s, t), np.uint8),
            "version": ((s, t), np.int32),
            "rnn0": ((s, self.rnn_size), np.float32),
            "slot_ready": ((s,), np.uint8),
            "env_slot": ((e,), np.int32),
            "env_t": ((e,), np.int32),
            "env_first": ((e,), np.uint8),
            "rnn": ((e, self.rnn_size), np.float32),
            "heartbeat": ((self.num_workers,), np.float64),
            **teacher,
        }

    def to_dict(self) -> dict[str, Any]:
        """Picklable description (sent to worker processes)."""
        return dataclasses.asdict(self)


class SharedBuffers:
    """The arrays of a :class:`BufferLayout` in shared memory, as numpy views (``.np``)."""

    def __init__(self, layout: BufferLayout, names: dict[str, str] | None = None) -> None:
        self.layout = layout
        self.owner = names is None
        self._blocks: dict[str, shared_memory.SharedMemory] = {}
        self.np: dict[str, np.ndarray] = {}
        for key, (shape, dtype) in layout.arrays().items():
            nbytes = max(1, int(np.prod(shape)) * np.dtype(dtype).itemsize)
            if names is None:
                block = shared_memory.SharedMemory(create=True, size=nbytes)
            else:
                # Spawned children share the creator's resource tracker, so attaching registers nothing new;
                # the creator unlinks the block (and the tracker cleans up if the creator dies).
                block = shared_memory.SharedMemory(name=names[key])
            self._blocks[key] = block
            array: np.ndarray = np.ndarray(shape, dtype=dtype, buffer=block.buf)
            if names is None:
                array.fill(0)
            self.np[key] = array
        self.np["obs_hwc"] = self.np["obs"]
        self.np["obs"] = np.moveaxis(self.np["obs_hwc"], -1, -3)
        if "teacher_obs" in self.np:
            self.np["teacher_obs_hwc"] = self.np["teacher_obs"]
            self.np["teacher_obs"] = np.moveaxis(self.np["teacher_obs_hwc"], -1, -3)
        if self.owner:
            self.np["env_slot"][:] = np.arange(layout.num_envs, dtype=np.int32) * layout.slots_per_env

    @property
    def obs_hwc(self) -> np.ndarray:
        """The observations' own memory, ``uint8[S, T + 1, H, W, C]`` (``np["obs"]`` is its channel-first view)."""
        return self.np["obs_hwc"]

    def names(self) -> dict[str, str]:
        """Block names, for :meth:`attach` in another process."""
        return {k: b.name for k, b in self._blocks.items()}

    @classmethod
    def attach(cls, layout: dict[str, Any], names: dict[str, str]) -> SharedBuffers:
        """Attach to buffers created by another process."""
        spec = dict(layout)
        spec["obs_shape"] = tuple(spec["obs_shape"])
        return cls(BufferLayout(**spec), names)

    def env_slots(self, env: int) -> range:
        """Return the trajectory slots env ``env`` cycles through."""
        k = self.layout.slots_per_env
        return range(env * k, env * k + k)

    def close(self) -> None:
        """Detach; the creating process also frees the memory."""
        self.np.clear()
        for block in self._blocks.values():
            # A torch view may still be alive (BufferError): the mapping then goes when the process exits.
            with contextlib.suppress(BufferError):
                block.close()
            if self.owner:
                with contextlib.suppress(FileNotFoundError):
                    block.unlink()
        self._blocks.clear()
