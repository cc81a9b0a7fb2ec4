"""The vector env of a backend, as ``make_vec`` returns it without a preset.

:class:`gpu_env.vector.AtariVecEnv` on the host backends, :class:`gpu_env.cuda.vec.CudaVecEnv` on the device.
"""

from __future__ import annotations

from typing import Any

from gpu_env.vector import AtariVecEnv


def atari_vec_env(env_id: str, num_envs: int, backend: str = "cpu", **kwargs: Any) -> AtariVecEnv:
    """``make_vec(env_id, num_envs, backend, **kwargs)`` without a preset: see :func:`gpu_env.make.make_vec`."""
    if backend == "cuda":
        from gpu_env.cuda.vec import CudaVecEnv

        return CudaVecEnv(env_id, num_envs, **kwargs)
    return AtariVecEnv(env_id, num_envs, backend=backend, **kwargs)
