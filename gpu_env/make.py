"""``gpu_env.make_vec``: ``gymnasium.make_vec``'s arguments for ale-py's Atari ids, on gpu_env.

By default it returns what gymnasium returns (numpy observations, float64 rewards, bool flags, gymnasium's
info dtypes); ``obs_format="torch"`` asks for torch tensors (the trainers, and backend ``"cuda"``).
"""

from __future__ import annotations

from typing import Any, overload

from gymnasium.vector import VectorEnv

from gpu_env.vector import AtariVecEnv


@overload
def make_vec(env_id: str, num_envs: int, backend: str = "cpu", *, preset: None = None,
             **kwargs: Any) -> AtariVecEnv: ...
@overload
def make_vec(env_id: str, num_envs: int, backend: str = "cpu", *, preset: str, **kwargs: Any) -> VectorEnv: ...
def make_vec(env_id: str, num_envs: int, backend: str = "cpu", *, preset: str | None = None,
             **kwargs: Any) -> VectorEnv:
    """Step, on gpu_env, the env ``gymnasium.make_vec(env_id, num_envs, vectorization_mode="sync", ...)`` steps.

    The same frames, rewards, flags and infos, by default of gymnasium's types (``obs_format="torch"``: tensors).

    ``env_id``: any Atari id ale-py registers (``ALE/Breakout-v5``, ``BreakoutNoFrameskip-v4``,
    ``Breakout-v4``, ``Breakout-v0``, ...) or its ``-ram`` form; its registered settings
    (``gymnasium.registry[env_id].kwargs``) are the defaults, as in ``gymnasium.make``.
    ``kwargs``: the ``AtariEnv`` options, which override them (``frameskip``,
    ``repeat_action_probability``, ``full_action_space``, ``mode``, ``difficulty``, ``obs_type``,
    ``max_num_frames_per_episode``), the ``AtariPreprocessing`` options (``noop_max``, ``frame_skip``,
    ``screen_size``, ``terminal_on_life_loss``, ``grayscale_obs``, ``grayscale_newaxis``, ``scale_obs``),
    ``stack_size`` (``FrameStackObservation``), ``autoreset_mode``, ``obs_format`` (``"numpy"``,
    default, or ``"torch"``), ``render_mode`` (``"rgb_array"`` or None), ``device`` and ``num_threads``
    (default :func:`gpu_env.vector.default_num_threads`).

    ``backend="cpu"`` (the default) steps it in the native thread pool (:mod:`gpu_env.backends.pool_vec`);
    ``backend="cuda"`` steps the same env on the GPU (:mod:`gpu_env.backends.cuda.vec`); it needs
    ``obs_format="torch"`` (CUDA tensors out) and takes the extra options ``cuda_device``, ``block_size``,
    ``noop_table_depth``. ``backend="ale_py"`` is refused: the reference over ale-py is gymnasium's own
    ``gymnasium.make_vec(env_id, num_envs, vectorization_mode="sync", ...)``.

    ``preset``: a client's preprocessing reproduced bit for bit (``"sb3"``, ``"cleanrl"``,
    ``"gymnasium"``, ``"envpool"``; :mod:`gpu_env.presets`, docs/drop_in.md) instead of the options above;
    every preset returns numpy arrays (:mod:`gpu_env.presets` lists each one's types).
    """
    if preset is not None:
        from gpu_env.presets import make as make_preset

        return make_preset(env_id, num_envs, preset, backend=backend, **kwargs)
    return AtariVecEnv(env_id, num_envs, backend=backend, **kwargs)
