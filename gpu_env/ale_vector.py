"""ale-py 0.12's ``AtariVectorEnv`` on gpu_env: same constructor, options, outputs and rules.

``from gpu_env.ale_vector import AtariVectorEnv`` stands in for ``from ale_py.vector_env import
AtariVectorEnv``; :func:`register` points the vector entry point of every Atari id ale-py registers
(``"ALE/Breakout-v5"`` …) at it, so ``gymnasium.make_vec(id, n, **kwargs)`` runs on gpu_env while
``vectorization_mode="sync"`` still builds gymnasium's ``SyncVectorEnv`` over ale-py's ``AtariEnv``.

The rules are ale-py's ``PreprocessedEnv`` (v0.12.1, facts in ``vec_reset``/``vec_step`` of
``gpu_env/core/ale/vector_rules.h``), run per env by the worker threads of gpu_env's native thread pool
(:mod:`gpu_env.backends.native_pool`) with the max-pool, the INTER_AREA resize and ale-py's circular
frame stack (zeros after a reset). As in ale-py, the env's ``ale`` attribute is the low-level vector
interface (:class:`gpu_env.ale_vector_interface.ALEVectorInterface`: ``reset(env_ids, seeds)``,
``send``, ``recv``, ``get_action_set`` ...), which ``reset``/``step`` call after checking their arguments.
As in ale-py:

- ``reset(seed=..., options={"reset_mask": mask})``: a seed reloads the env's ROM with it and reseeds
  its no-op generator; an unseeded reset continues both. The first reset resets every env; partial
  resets need ``batch_size == num_envs`` and report the other envs' current outputs.
- ``step(actions)`` = ``send(actions)`` + ``recv()``; ``actions[k]`` goes to the ``k``-th env of the
  last batch received. With ``batch_size == num_envs`` outputs are in env order; otherwise ``recv``
  returns the first ``batch_size`` envs to finish (``info["env_id"]`` names them).
- ``autoreset_mode``: ``NextStep`` or ``SameStep`` (``info["final_obs"]`` when an env ended);
  ``Disabled`` is refused, as ale-py refuses it.
- outputs: uint8 observations ``[B, stack_num, H, W]`` (``[..., 3]`` in RGB), int32 rewards, bool
  terminations and truncations, ``info`` with int32 ``env_id``, ``lives``, ``frame_number`` and
  ``episode_frame_number``.

Unseeded resets draw their seeds from OS entropy (ale-py: ``std::random_device``). ``xla()`` and
``ale.handle()`` (ale-py's JAX functions) are not provided.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import numpy.typing as npt
from gymnasium import error
from gymnasium.spaces import Box, Discrete
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from gpu_env.ale_vector_interface import ALEVectorInterface
from gpu_env.autoreset import autoreset_mode
from gpu_env.errors import GpuEnvError

ENTRY_POINT = "gpu_env.ale_vector:AtariVectorEnv"
ALE_PY_ENTRY_POINT = "ale_py.vector_env:AtariVectorEnv"


ALE_AUTORESET_MODES = (AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP)
"""The autoreset modes ale-py's ``AtariVectorEnv`` accepts (``DISABLED`` is gymnasium's only)."""


def _autoreset_mode(value: AutoresetMode | str) -> AutoresetMode:
    """``value`` parsed by :func:`gpu_env.autoreset.autoreset_mode`, narrowed to :data:`ALE_AUTORESET_MODES`.

    Anything else is a ``ValueError``, the type ale-py raises, naming the two modes.
    """
    try:
        mode = autoreset_mode(value)
    except GpuEnvError:
        mode = None
    if mode is None or mode not in ALE_AUTORESET_MODES:
        name = value.value if isinstance(value, AutoresetMode) else value
        raise ValueError(f"Invalid autoreset_mode: {name} (ale-py's AtariVectorEnv takes "
                         f"{' or '.join(repr(m.value) for m in ALE_AUTORESET_MODES)})")
    return mode


class AtariVectorEnv(VectorEnv):
    """ale-py 0.12.1's ``AtariVectorEnv`` (see the module docstring); keywords and defaults are ale-py's.

    ``ale``: the low-level vector interface (:class:`~gpu_env.ale_vector_interface.ALEVectorInterface`),
    as ale-py's ``ale``; ``reset``, ``send`` and ``recv`` check their arguments and call it.
    """

    def __init__(self, game: str, num_envs: int, *, batch_size: int = 0, num_threads: int = 0,
                 thread_affinity_offset: int = -1, max_num_frames_per_episode: int = 108000,
                 repeat_action_probability: float = 0.0, full_action_space: bool = False, continuous: bool = False,
                 continuous_action_threshold: float = 0.5,
                 autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP,
                 img_height: int = 84, img_width: int = 84, grayscale: bool = True, stack_num: int = 4,
                 frameskip: int = 4, maxpool: bool = True, noop_max: int = 30, episodic_life: bool = False,
                 life_loss_info: bool = False, reward_clipping: bool = True, use_fire_reset: bool = True) -> None:
        if type(frameskip) is not int or frameskip <= 0:
            raise error.Error(f"Invalid frameskip {frameskip!r}: frameskip must be a positive int.")
        self.autoreset_mode = _autoreset_mode(autoreset_mode)
        self.num_envs = num_envs
        self.batch_size = num_envs if batch_size == 0 else batch_size
        if not 0 < self.batch_size <= num_envs:
            raise ValueError(f"batch_size={batch_size} must be in [0, num_envs={num_envs}] (0: num_envs)")
        self.ale = ALEVectorInterface(
            game, num_envs, frame_skip=frameskip, stack_num=stack_num, img_height=img_height, img_width=img_width,
            grayscale=grayscale, maxpool=maxpool, noop_max=noop_max, use_fire_reset=use_fire_reset,
            episodic_life=episodic_life, life_loss_info=life_loss_info, reward_clipping=reward_clipping,
            max_episode_steps=max_num_frames_per_episode, repeat_action_probability=repeat_action_probability,
            full_action_space=full_action_space or continuous, batch_size=batch_size, num_threads=num_threads,
            thread_affinity_offset=thread_affinity_offset, autoreset_mode=self.autoreset_mode.value)
        self.batch = self.ale.batch
        self.continuous = continuous
        self.continuous_action_threshold = continuous_action_threshold
        self.grayscale = grayscale
        self.single_observation_space = Box(0, 255, self.ale.get_observation_shape(), np.uint8)
        if continuous:
            self.single_action_space = Box(np.array([0.0, -np.pi, 0.0], dtype=np.float32),
                                           np.array([1.0, np.pi, 1.0], dtype=np.float32), dtype=np.float32)
        else:
            self.single_action_space = Discrete(len(self.ale.get_action_set()))
        self._num_actions = len(self.ale.get_action_set())
        self.observation_space = batch_space(self.single_observation_space, self.batch_size)
        self.action_space = batch_space(self.single_action_space, self.batch_size)
        self.metadata = {"autoreset_mode": self.autoreset_mode}

    def reset(self, *, seed: int | npt.NDArray[Any] | None = None,
              options: dict[str, Any] | None = None) -> tuple[npt.NDArray[np.uint8], dict[str, Any]]:
        """Reset every env, or those of ``options["reset_mask"]``; a seed reseeds them (``seed + k`` or one each)."""
        ids = np.arange(self.num_envs)
        if options is not None and "reset_mask" in options:
            mask = options["reset_mask"]
            if not isinstance(mask, np.ndarray) or mask.dtype != np.bool_:
                raise TypeError(f"`reset_mask` must be a boolean numpy array, got {type(mask)} with dtype "
                                f"{getattr(mask, 'dtype', None)}")
            if mask.shape != (self.num_envs,):
                raise ValueError(f"`reset_mask` must have shape {(self.num_envs,)}, got {mask.shape}")
            ids = np.flatnonzero(mask)
        return self.ale.reset(ids, self._reset_seeds(seed, len(ids)))

    @staticmethod
    def _reset_seeds(seed: int | npt.NDArray[Any] | None, count: int) -> npt.NDArray[np.int64]:
        if seed is None:
            return np.full(count, -1, dtype=np.int64)
        if isinstance(seed, int):
            return np.arange(seed, seed + count, dtype=np.int64)
        if isinstance(seed, np.ndarray):
            if seed.shape != (count,):
                raise ValueError(f"`seed` must have one entry per sub-environment being reset, expected shape "
                                 f"{(count,)}, got {seed.shape}")
            return seed.astype(np.int64)
        raise TypeError(f"Unsupported seed type {type(seed).__name__}: pass an int, a numpy array or None")

    def step(self, actions: npt.NDArray[Any]) -> tuple[Any, ...]:
        """``send(actions)`` then ``recv()``."""
        self.send(actions)
        return self.recv()

    def send(self, actions: npt.NDArray[Any]) -> None:
        """Queue ``actions[k]`` for the ``k``-th env of the last batch received (``[B, 3]`` float32 when continuous)."""
        if not isinstance(actions, np.ndarray):
            raise TypeError(f"actions must be a numpy array, got {type(actions).__name__}")
        if self.continuous:
            if actions.dtype != np.float32 or actions.shape != (self.batch_size, 3):
                raise ValueError(f"continuous actions must be float32[{self.batch_size}, 3], got {actions.dtype} "
                                 f"{actions.shape}")
            ids, strengths = self._continuous(actions), actions[:, 0]
        else:
            if actions.dtype not in (np.int32, np.int64) or actions.shape != (self.batch_size,):
                raise ValueError(f"actions must be int32 or int64 [{self.batch_size}], got {actions.dtype} "
                                 f"{actions.shape}")
            n = self._num_actions
            if (actions < 0).any() or (actions >= n).any():
                raise ValueError(f"actions must be in [0, {n}), got {actions!r}")
            ids, strengths = actions, np.ones(self.batch_size, dtype=np.float32)
        self.ale.send(ids, strengths)

    def _continuous(self, actions: npt.NDArray[np.float32]) -> npt.NDArray[np.int64]:
        """ALE's action of each (radius, angle, fire) triple: ``AtariEnv.map_action_idx`` of the thresholded parts."""
        from ale_py.env import AtariEnv

        t = self.continuous_action_threshold
        x = actions[:, 0] * np.cos(actions[:, 1])
        y = actions[:, 0] * np.sin(actions[:, 1])
        horizontal = (x > t).astype(int) - (x < -t).astype(int)
        vertical = (y > t).astype(int) - (y < -t).astype(int)
        fire = actions[:, 2] > t
        return np.array([AtariEnv.map_action_idx(int(h), int(v), bool(f)).value
                         for h, v, f in zip(horizontal, vertical, fire, strict=True)], dtype=np.int64)

    def recv(self) -> tuple[Any, ...]:
        """Return the next batch: ``(obs, rewards, terminations, truncations, info)`` (``ale.recv()``)."""
        return self.ale.recv()

    def xla(self) -> Any:
        """ale-py's JAX functions are not provided by gpu_env; this raises, naming the alternative."""
        raise NotImplementedError("gpu_env.ale_vector has no xla(): use ale_py.vector_env.AtariVectorEnv for JAX")

    def close_extras(self, **kwargs: Any) -> None:
        """Stop the pool's worker threads."""
        self.ale.close()


def register() -> list[str]:
    """Point the vector entry point of every id ale-py registers at :class:`AtariVectorEnv`; return those ids.

    ``gymnasium.make_vec(id, n, **kwargs)`` then builds this class with the id's registered kwargs
    (``game``, ``repeat_action_probability`` …) and ``kwargs``, as it built ale-py's.
    """
    import ale_py
    import gymnasium
    from gymnasium.envs.registration import registry

    gymnasium.register_envs(ale_py)
    ids = [i for i, spec in registry.items() if spec.vector_entry_point in (ALE_PY_ENTRY_POINT, ENTRY_POINT)]
    for env_id in ids:
        registry[env_id] = dataclasses.replace(registry[env_id], vector_entry_point=ENTRY_POINT)
    return ids
