"""The native thread pool: gpu_env's host stepping engine (``make_vec`` on ``"cpu"``, every drop-in door).

:class:`NativePool` (``gpu_env/native/env_pool.cpp``) holds a pool's worker threads over a
:class:`NativeBackend`'s envs; each worker runs one env's request at a time with the client's rules
(``core/ale/``: EnvPool's ``pool_reset``/``pool_step`` in ``pool_rules.h``, ale-py's ``vec_reset``/``vec_step`` in
``vector_rules.h``, the SB3/CleanRL wrappers' ``WrapEnv`` or gymnasium's ``AtariEnv``/``AtariPreprocessing`` on the
same ``WrapEnv``, in ``wrap_rules.h``), the max-pool, grayscale, INTER_AREA resize and the frame stack.
:meth:`~NativePool.send` queues requests; :meth:`~NativePool.recv` waits for the next ``count`` envs
the workers complete and returns their outputs; :meth:`~NativePool.run_all` runs one
request per env of a set (the others report their current outputs) and returns every env's outputs in
env order. The pool keeps which envs are running (sent, not yet received: :attr:`~NativePool.running`),
so each door only checks its own callers' requests against it.

The doors over it, thin adapters each (the table of doors is in ``docs/architecture.md``):
:class:`gpu_env.envpool.AtariEnvPool` (rules :data:`ENVPOOL_RULES`),
:class:`gpu_env.ale_vector_interface.ALEVectorInterface` under :class:`gpu_env.ale_vector.AtariVectorEnv`
(:data:`ALE_VECTOR_RULES`) and :class:`gpu_env.presets.vector_env.PresetVecEnv` under ``gpu_env.presets``'
``"sb3"``/``"cleanrl"`` and :class:`gpu_env.sb3_vec.Sb3VecEnv` (:data:`PRESET_RULES`), and
:class:`gpu_env.backends.pool_vec.PoolEngine` under :class:`gpu_env.vector.AtariVecEnv` (``make_vec`` on backend
``"cpu"``; :data:`GYM_RULES`). The name says what it is: gpu_env's native thread pool, not the EnvPool
drop-in (:mod:`gpu_env.envpool`).
"""

from __future__ import annotations

import ctypes
from typing import Any

import numpy as np
import numpy.typing as npt

from gpu_env.backends.native import NativeBackend, palette_table
from gpu_env.binding import pointer
from gpu_env.errors import GpuEnvError
from gpu_env.preprocess_cpu import CpuObservation

_I32 = ctypes.c_int32
# The pool's kind: whose rules its workers run.
ENVPOOL_RULES, ALE_VECTOR_RULES, PRESET_RULES, GYM_RULES = 0, 1, 2, 3
# GYM_RULES' observation (env_pool.cpp GymObs): AtariPreprocessing's frame, AtariEnv's screen, its RAM.
GYM_PREPROCESSED, GYM_SCREEN, GYM_RAM = 0, 1, 2
# A request's op (REPORT: the env's current outputs, nothing run; STEP_RESET, presets only: a step, then a
# reset of an env whose episode ended, keeping its last stack and info as the final ones).
STEP, RESET, REPORT, STEP_RESET = 0, 1, 2, 3
_M64 = (1 << 64) - 1
# recv's outputs, in the library's order: name, dtype, per-row shape ("obs": the stack's shape).
OUTPUTS: tuple[tuple[str, Any, str], ...] = (
    ("env_id", np.int32, ""), ("obs", np.uint8, "obs"), ("final_obs", np.uint8, "obs"),
    ("reward", np.float32, ""), ("info_reward", np.float32, ""), ("int_reward", np.int32, ""),
    ("terminated", np.bool_, ""), ("truncated", np.bool_, ""), ("done", np.bool_, ""), ("game_over", np.uint8, ""),
    ("lives", np.int32, ""), ("elapsed_step", np.int32, ""), ("frame_number", np.int32, ""),
    ("episode_frame_number", np.int32, ""), ("ram", np.uint8, "ram"), ("preset", np.int32, "preset"),
)
_ROWS: dict[str, tuple[int, ...]] = {"obs": (), "ram": (128,), "preset": (16,), "": ()}


def pcg64_words(generator: np.random.Generator) -> list[int]:
    """Return a numpy ``PCG64`` generator's state as the pool's six words (``gpu_env_pool_np_random``)."""
    st = generator.bit_generator.state
    if st["bit_generator"] != "PCG64":
        raise GpuEnvError(f"the pool draws from PCG64 generators, got {st['bit_generator']}")
    state, inc = int(st["state"]["state"]), int(st["state"]["inc"])
    return [state >> 64, state & _M64, inc >> 64, inc & _M64, int(st["has_uint32"]), int(st["uinteger"])]


class NativePool:
    """A pool of ``kind``'s rules over ``backend``'s envs (see the module docstring).

    ``rules``: the kind's rules (``gpu_env_pool_new`` in ``env_pool.cpp``; padded to 8);
    ``seeds``: each env's own ``std::mt19937`` seed; ``action_set``: the ALE action of each action
    index; ``obs_shape``: one env's stacked observation (the frame layout is the caller's choice);
    ``affinity_offset`` >= 0 pins worker ``t`` to core ``(affinity_offset + t) % cores``.
    """

    def __init__(self, backend: NativeBackend, kind: int, rules: list[int], seeds: npt.ArrayLike,
                 action_set: npt.NDArray[np.int64], grayscale: bool, size: tuple[int, int], stack_num: int,
                 obs_shape: tuple[int, ...], num_threads: int, same_step: bool = False,
                 affinity_offset: int = -1) -> None:
        n = backend.num_envs
        h = backend.screen_height
        channels = 1 if grayscale else 3
        self._resize = CpuObservation(n, (h, 160), size, channels)
        if not self._resize.native:
            raise GpuEnvError(f"an image size of {size} is larger than the {h}x160 screen: gpu_env's pools "
                              "resize down only (INTER_AREA); use a size of at most the screen's")
        raw = (n, h, 160) if grayscale else (n, h, 160, 3)
        self._bufs = (np.zeros(raw, dtype=np.uint8), np.zeros(raw, dtype=np.uint8))
        padded = [*rules, *[0] * (8 - len(rules))]
        config = np.array([kind, same_step, backend.default_program(), *padded], dtype=np.int32)
        self._keep = (config, np.asarray(seeds, dtype=np.int64).astype(np.uint32),
                      np.ascontiguousarray(action_set, dtype=np.int32))
        self._lib = backend.library
        self.num_envs = n
        self.obs_shape = obs_shape
        handle, envs, n_c, buffers, stride = backend.pool_arguments()
        self._pool: ctypes.c_void_p | None = ctypes.c_void_p(self._lib.gpu_env_pool_new(
            handle, envs, n_c, buffers, stride, pointer(self._keep[0]), pointer(self._keep[1]),
            pointer(self._keep[2]), _I32(len(action_set)), palette_table(grayscale), _I32(channels), _I32(h),
            pointer(self._bufs[0]), pointer(self._bufs[1]), *self._resize.resize_args(), _I32(stack_num),
            _I32(max(1, num_threads)), _I32(affinity_offset)))
        self._backend = backend  # the envs the pool steps must outlive it
        self._rows: npt.NDArray[np.uint8] | None = None  # the output rows the workers write (kept alive here)
        self.running: npt.NDArray[np.bool_] = np.zeros(n, dtype=np.bool_)
        """bool[num_envs]: the envs sent and not yet received (set by :meth:`send`, cleared by :meth:`recv`)."""
        self._all_ids = np.arange(n, dtype=np.int32)

    def send(self, ids: npt.ArrayLike, ops: npt.ArrayLike, actions: npt.ArrayLike | None = None,
             strengths: npt.ArrayLike | None = None, seeds: npt.ArrayLike | None = None) -> None:
        """Queue request ``k``: env ``ids[k]``, op ``ops[k]``, action, paddle strength, reset seed (-1: none)."""
        ids_a = np.ascontiguousarray(ids, dtype=np.int32)
        count = len(ids_a)
        ops_a = np.ascontiguousarray(np.broadcast_to(ops, (count,)), dtype=np.int32)
        acts = np.ascontiguousarray(np.zeros(count) if actions is None else actions, dtype=np.int32)
        power = np.ascontiguousarray(np.ones(count) if strengths is None else strengths, dtype=np.float32)
        seed_a = np.ascontiguousarray(np.full(count, -1) if seeds is None else seeds, dtype=np.int64)
        self.running[ids_a] = True
        self._lib.gpu_env_pool_send(self._pool, pointer(ids_a), pointer(ops_a), pointer(acts), pointer(power),
                                    pointer(seed_a), _I32(count))

    def recv(self, count: int, wanted: tuple[str, ...], order: npt.ArrayLike | None = None) -> dict[str, Any]:
        """Wait for ``count`` envs; the ``wanted`` outputs in completion order (or ``order``'s, the ids outstanding)."""
        out: dict[str, Any] = {}
        pointers = (ctypes.c_void_p * len(OUTPUTS))()
        for k, (name, dtype, shape) in enumerate(OUTPUTS):
            if name in wanted:
                row = self.obs_shape if shape == "obs" else _ROWS[shape]
                out[name] = np.empty((count, *row), dtype=dtype)
                pointers[k] = out[name].ctypes.data
        env_ids = out["env_id"] if "env_id" in wanted else np.empty(count, dtype=np.int32)
        pointers[0] = env_ids.ctypes.data  # always read: it clears `running`
        order_p = None if order is None else pointer(np.ascontiguousarray(order, dtype=np.int32))
        self._lib.gpu_env_pool_recv(self._pool, _I32(count), order_p, pointers)
        self.running[env_ids] = False
        return out

    def run_all(self, ids: npt.NDArray[np.integer[Any]], ops: npt.ArrayLike, wanted: tuple[str, ...],
                actions: npt.ArrayLike | None = None, strengths: npt.ArrayLike | None = None,
                seeds: npt.ArrayLike | None = None) -> dict[str, Any]:
        """Run request ``k`` (``ops[k]``, ``actions[k]`` ...) on env ``ids[k]``, REPORT on every other env.

        Returns the ``wanted`` outputs of every env, in env order. Nothing may be running before.
        """
        if self.running.any():
            raise GpuEnvError(f"internal: run_all with envs {np.flatnonzero(self.running).tolist()} still "
                              "running: recv them first")
        self.send(ids, ops, actions, strengths, seeds)
        if len(ids) != self.num_envs:
            others = np.flatnonzero(~self.running)
            if len(others):
                self.send(others, REPORT)
        return self.recv(self.num_envs, wanted, self._all_ids)

    def obs_rows(self, rows: npt.NDArray[np.uint8] | None) -> None:
        """Have each request write its env's observation to ``rows[env]`` (gymnasium's stack; None: stop).

        ``rows``: uint8 ``[num_envs, *obs_shape]``, C-contiguous; the worker that runs a request writes the
        row, so :meth:`recv` need not copy ``"obs"``. The pool holds the array until the next call, so requests
        still running (a Ctrl-C between :meth:`send` and :meth:`recv`) never write into freed memory. Call it
        only while no request is running.
        """
        if rows is not None and (rows.shape != (self.num_envs, *self.obs_shape) or rows.dtype != np.uint8
                                 or not rows.flags.c_contiguous):
            raise GpuEnvError(f"internal: obs rows must be C-contiguous uint8{[self.num_envs, *self.obs_shape]}")
        if self.running.any():
            raise GpuEnvError(f"internal: obs rows changed with envs {np.flatnonzero(self.running).tolist()} "
                              "running: recv them first")
        self._lib.gpu_env_pool_obs_rows(self._pool, None if rows is None else pointer(rows))
        self._rows = rows

    def np_random(self, ids: npt.ArrayLike, words: npt.ArrayLike, now: bool) -> None:
        """Set the numpy generators of envs ``ids`` to ``words`` (rows of :func:`pcg64_words`).

        ``now``: the generator that draws; otherwise the one a seeded reset of the env restores.
        """
        ids_a = np.ascontiguousarray(ids, dtype=np.int32)
        words_a = np.ascontiguousarray(np.asarray(words, dtype=np.uint64).reshape(len(ids_a), 6))
        self._lib.gpu_env_pool_np_random(self._pool, pointer(ids_a), pointer(words_a), _I32(len(ids_a)),
                                         _I32(int(now)))

    def close(self) -> None:
        """Stop the worker threads and free the pool (a closed pool takes no more requests)."""
        pool = getattr(self, "_pool", None)
        if pool is not None:
            self._pool = None
            self._lib.gpu_env_pool_free(pool)

    def __del__(self) -> None:
        self.close()
