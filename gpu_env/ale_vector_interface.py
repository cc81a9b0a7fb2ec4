"""ale-py 0.12.1's ``ALEVectorInterface`` on gpu_env: the low-level vector interface ``AtariVectorEnv.ale``.

``gpu_env.ale_vector.AtariVectorEnv(...).ale`` is this class, as ``ale_py.vector_env.AtariVectorEnv(...).ale``
is ``ale_py.ALEVectorInterface``; scripts that drive ``env.ale`` directly run unchanged. Same constructor
(``rom_path`` may also be an ale-py ROM id such as ``"breakout"``), same methods and results:

- ``reset(reset_indices, reset_seeds)`` -> ``(obs, info)``: reset the envs ``reset_indices`` (seed ``k``
  reloads env ``reset_indices[k]``'s ROM with ``reset_seeds[k]`` and reseeds its no-op generator; a
  negative seed continues both) and return the next batch; in a partial reset the other envs report
  their current outputs.
- ``send(action_ids, paddle_strengths)``: step the envs of the last batch received, ``action_ids[k]``
  (an index into :meth:`get_action_set`) for the ``k``-th of them.
- ``recv()`` -> ``(obs, rewards, terminations, truncations, info)``: the next batch (env order when
  ``batch_size == num_envs``, else the first ``batch_size`` envs to finish; ``info["env_id"]`` names them).
- ``get_action_set()`` (``ale_py.Action`` list), ``get_num_envs()``, ``get_observation_shape()``.

Arguments are converted as ale-py's nanobind binding converts them (sequences of ints: lists, tuples,
ranges, integer arrays; int32 range) and refused with its ``TypeError`` ("incompatible function
arguments", this class named in place of ``ale_py._ale_py.ALEVectorInterface``). The checks and their
texts are ale-py's ``EnvVectorizer``'s: ``ValueError`` for a duplicate env id, for ids and seeds of
different lengths, for a partial reset when ``batch_size < num_envs`` and for the wrong number of
actions; ``IndexError`` for an env id out of range; ``RuntimeError`` for a first reset that leaves an env
out and for ``send`` before any reset.

Where ale-py would wait for ever or let two requests run on one env, this raises instead:
``RuntimeError`` for ``recv()`` with fewer than ``batch_size`` envs running and for ``reset``/``send``
of an env whose previous request was not received, ``ValueError`` for an action index outside the
action set (ale-py's worker thread rejects it and its ``recv`` never returns). ``handle()`` (the
address ale-py's XLA functions take) raises ``NotImplementedError``: gpu_env has no XLA functions.

The envs run on gpu_env's native thread pool (:class:`gpu_env.backends.native_pool.NativePool`, rules
``ALE_VECTOR_RULES``): this class converts and checks the arguments and hands each request to the pool.
"""

from __future__ import annotations

import operator
import os
from collections.abc import Callable
from typing import Any, NoReturn

import numpy as np
import numpy.typing as npt

from gpu_env.backends.native_pool import ALE_VECTOR_RULES, REPORT, RESET, STEP, NativePool

AUTORESET_MODES = ("NextStep", "SameStep")
"""ale-py's ``autoreset_mode`` strings (gymnasium's ``AutoresetMode`` values it accepts)."""
_FIRE = 1  # ALE's PLAYER_A_FIRE
_INFO = ("env_id", "lives", "frame_number", "episode_frame_number")
_WANTED = ("obs", "int_reward", "terminated", "truncated", *_INFO)
_INT32 = (-(1 << 31), 1 << 31)
_SIGNATURES = {
    "reset": "reset(self, arg0: collections.abc.Sequence[int], arg1: collections.abc.Sequence[int], /) -> tuple",
    "send": "send(self, arg0: collections.abc.Sequence[int], arg1: collections.abc.Sequence[float], /) -> None",
}


def _int32(item: Any) -> int | None:
    """``item`` as nanobind's ``int`` caster takes it (``__index__``, int32 range), else None."""
    try:
        value = operator.index(item)
    except TypeError:
        return None
    return value if _INT32[0] <= value < _INT32[1] else None


def _float(item: Any) -> float | None:
    """``item`` as nanobind's ``float`` caster takes it (``__float__`` or ``__index__``, not text), else None."""
    if isinstance(item, str | bytes | bytearray):
        return None
    try:
        return float(item)
    except (TypeError, ValueError):
        return None


def _sequence(value: Any, element: Callable[[Any], Any]) -> list[Any] | None:
    """``value`` as nanobind's ``std::vector`` caster takes it (any sequence but ``str``/``bytes``), else None."""
    if isinstance(value, str | bytes | dict) or not hasattr(type(value), "__getitem__"):
        return None
    try:
        items = tuple(value)
    except TypeError:
        return None
    converted = [element(item) for item in items]
    return None if any(item is None for item in converted) else converted


def _int32s(value: Any) -> npt.NDArray[np.int64] | None:
    """``value`` as ``std::vector<int>`` (:func:`_sequence` of :func:`_int32`; 1-D int arrays at once), else None."""
    if isinstance(value, np.ndarray) and value.ndim == 1 and value.dtype.kind in "iu":
        if len(value) and (value.max() >= _INT32[1] or (value.dtype.kind == "i" and value.min() < _INT32[0])):
            return None
        return value.astype(np.int64)
    items = _sequence(value, _int32)
    return None if items is None else np.array(items, dtype=np.int64)


def _floats(value: Any) -> npt.NDArray[np.float32] | None:
    """``value`` as ``std::vector<float>`` (:func:`_sequence` of :func:`_float`; 1-D real arrays at once), else None."""
    if isinstance(value, np.ndarray) and value.ndim == 1 and value.dtype.kind in "biuf":
        return value.astype(np.float32)
    items = _sequence(value, _float)
    return None if items is None else np.array(items, dtype=np.float32)


def _incompatible(method: str, *arguments: Any) -> TypeError:
    """Return nanobind's overload-resolution error for ``method`` called with ``arguments``."""
    types = ", ".join(type(argument).__name__ for argument in arguments)
    return TypeError(f"{method}(): incompatible function arguments. The following argument types are supported:\n"
                     f"    1. {_SIGNATURES[method]}\n\nInvoked with types: {__name__}.ALEVectorInterface, {types}")


class ALEVectorInterface:
    """ale-py 0.12.1's ``ALEVectorInterface`` (see the module docstring); keywords and defaults are ale-py's."""

    def __init__(self, rom_path: str | os.PathLike[str], num_envs: int, frame_skip: int = 4, stack_num: int = 4,
                 img_height: int = 84, img_width: int = 84, grayscale: bool = True, maxpool: bool = True,
                 noop_max: int = 30, use_fire_reset: bool = True, episodic_life: bool = False,
                 life_loss_info: bool = False, reward_clipping: bool = True, max_episode_steps: int = 108000,
                 repeat_action_probability: float = 0.0, full_action_space: bool = False, batch_size: int = 0,
                 num_threads: int = 0, thread_affinity_offset: int = -1, autoreset_mode: str = "NextStep") -> None:
        from gpu_env.atari_batch import AtariBatch

        if autoreset_mode not in AUTORESET_MODES:
            raise ValueError(f"Invalid autoreset_mode: {autoreset_mode}")
        self._num_envs = num_envs
        self._batch_size = num_envs if batch_size <= 0 else batch_size
        if self._batch_size > num_envs:
            raise ValueError(f"batch_size={batch_size} must be in [0, num_envs={num_envs}] (0: num_envs)")
        self._same_step = autoreset_mode == "SameStep"
        # Unseeded envs draw their seeds from OS entropy, as ale-py's std::random_device.
        seeds = np.random.SeedSequence().generate_state(2 * num_envs).reshape(2, num_envs)
        batch = AtariBatch(rom_path, num_envs, seeds=seeds[0], repeat_action_probability=repeat_action_probability)
        action_set = batch.legal_action_set() if full_action_space else batch.minimal_action_set()
        fire = use_fire_reset and _FIRE in action_set.tolist()
        rules = [frame_skip, noop_max, max_episode_steps, maxpool, fire, episodic_life, life_loss_info,
                 reward_clipping]
        frame = (img_height, img_width) if grayscale else (img_height, img_width, 3)
        self._obs_shape = (stack_num, *frame)
        cores = len(os.sched_getaffinity(0))
        threads = min(self._batch_size, cores) if num_threads <= 0 else min(num_threads, cores)
        self._pool = NativePool(batch.native_backend(), ALE_VECTOR_RULES, rules, seeds[1], action_set, grayscale,
                                (img_height, img_width), stack_num, self._obs_shape, threads,
                                same_step=self._same_step, affinity_offset=thread_affinity_offset)
        self.batch = batch
        self._action_set = action_set
        self._last_ids: npt.NDArray[np.int32] | None = None  # the envs of the last batch received

    def reset(self, reset_indices: Any, reset_seeds: Any, /) -> tuple[npt.NDArray[np.uint8], dict[str, Any]]:
        """Reset the envs ``reset_indices`` with ``reset_seeds`` (< 0: unseeded) and return the next batch."""
        ids, seeds = _int32s(reset_indices), _int32s(reset_seeds)
        if ids is None or seeds is None:
            raise _incompatible("reset", reset_indices, reset_seeds)
        if len(ids) != len(seeds):
            raise ValueError("env_ids and seeds must have same size")
        chosen = np.zeros(self._num_envs, dtype=np.bool_)
        for env_id in ids.tolist():
            if not 0 <= env_id < self._num_envs:
                raise IndexError(f"reset env_id {env_id} is out of range [0, {self._num_envs})")
            if chosen[env_id]:
                raise ValueError(f"reset has a duplicate env_id={env_id}")
            chosen[env_id] = True
        if len(ids) != self._num_envs:
            if self._last_ids is None:
                raise RuntimeError(f"The first reset() must reset every environment (got {len(ids)} of "
                                   f"{self._num_envs})")
            if self._batch_size != self._num_envs:
                raise ValueError("Partial reset is not supported for async mode where batch_size < num_envs (got "
                                 f"batch_size={self._batch_size}, num_envs={self._num_envs})")
        self._refuse_running(np.flatnonzero(chosen), "reset()")
        self._pool.send(ids.astype(np.int32), RESET, seeds=seeds)
        others = np.flatnonzero(~chosen)
        if len(others):
            self._pool.send(others.astype(np.int32), REPORT)
        obs, _, _, _, info = self.recv()
        info.pop("final_obs", None)
        return obs, info

    def send(self, action_ids: Any, paddle_strengths: Any, /) -> None:
        """Step the ``k``-th env of the last batch received with action index ``action_ids[k]``."""
        actions, strengths = _int32s(action_ids), _floats(paddle_strengths)
        if actions is None or strengths is None:
            raise _incompatible("send", action_ids, paddle_strengths)
        if len(actions) != len(strengths):
            raise ValueError("action_ids and paddle_strengths must have same size")
        if self._last_ids is None:
            raise RuntimeError("send() called before reset(); last_recv_env_ids_ is uninitialized")
        if len(actions) != self._batch_size:
            raise ValueError(f"Expected {self._batch_size} actions, got {len(actions)}")
        n = len(self._action_set)
        bad = actions[(actions < 0) | (actions >= n)]
        if len(bad):
            raise ValueError(f"Invalid action_id: {bad[0]} (the action set has {n} actions, 0 to {n - 1}; "
                             "ale-py's recv() would never return)")
        self._refuse_running(self._last_ids, "send()")
        self._pool.send(self._last_ids, STEP, actions.astype(np.int32), strengths)

    def recv(self) -> tuple[Any, ...]:
        """Return the next batch: ``(obs, rewards, terminations, truncations, info)``."""
        running = int(self._pool.running.sum())
        if running < self._batch_size:
            raise RuntimeError(f"recv() needs {self._batch_size} envs running but {running} are "
                               "(ale-py's recv() would never return): send(action_ids, paddle_strengths) first")
        ordered = np.arange(self._num_envs) if self._batch_size == self._num_envs else None
        wanted = (*_WANTED, "final_obs") if self._same_step else _WANTED
        out = self._pool.recv(self._batch_size, wanted, ordered)
        self._last_ids = out["env_id"]
        info: dict[str, Any] = {k: out[k] for k in _INFO}
        if self._same_step and (out["terminated"] | out["truncated"]).any():
            info["final_obs"] = out["final_obs"]
        return out["obs"], out["int_reward"], out["terminated"], out["truncated"], info

    def get_action_set(self) -> list[Any]:
        """Return the ALE action (``ale_py.Action``) of each action index: the minimal set, or the legal set."""
        from ale_py import Action

        return [Action(int(a)) for a in self._action_set]

    def get_num_envs(self) -> int:
        """Return the number of environments."""
        return self._num_envs

    def get_observation_shape(self) -> tuple[int, ...]:
        """Return one env's observation shape: ``(stack_num, img_height, img_width)`` (``+ (3,)`` in RGB)."""
        return self._obs_shape

    def handle(self) -> NoReturn:
        """ale-py's XLA handle; gpu_env has no XLA functions, so this raises, naming the alternative."""
        raise NotImplementedError("gpu_env's ALEVectorInterface has no handle() for XLA: use "
                                  "ale_py.vector_env.AtariVectorEnv for JAX")

    def close(self) -> None:
        """Stop the pool's worker threads (ale-py does this when its interface is freed)."""
        self._pool.close()

    def _refuse_running(self, ids: npt.NDArray[Any], method: str) -> None:
        busy = ids[self._pool.running[ids]]
        if len(busy):
            raise RuntimeError(f"{method} of env(s) {busy.tolist()} whose last request was not received: recv() "
                               "them first (ale-py would run two requests on one env)")
