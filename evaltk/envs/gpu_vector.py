"""Evaluation episodes on gpu_env: the same slot interface as :class:`evaltk.envs.vector.EpisodeVector`.

``gpu_env.make_vec`` rebuilds the checkpoint's env (ALE v5 kwargs, AtariPreprocessing options, frame
stack) on the emulator; each slot is reset with its episode's seed exactly as ``env.reset(seed=s)``
on gymnasium, so with the same seeds and actions the rows equal the Gym backend's.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from evaltk.envs.spec import EnvSpec
from evaltk.envs.vector import StepResult
from evaltk.errors import SpecError


def make_vec_kwargs(spec: EnvSpec) -> tuple[str, dict[str, Any]]:
    """``(env_id, kwargs)`` for ``gpu_env.make_vec`` from a described Atari env spec.

    ``spec`` is an :class:`~evaltk.envs.EnvInfo`'s ``env``: checked and with every setting explicit by
    :func:`evaltk.envs.describe` (the plan describes each env once; it is not checked again here).
    """
    kwargs: dict[str, Any] = dict(spec.kwargs)
    ap = spec.preprocessing["atari_preprocessing"]
    if ap is not None:
        kwargs.update({k: (tuple(v) if isinstance(v, list) else v) for k, v in ap.items()})
    if spec.preprocessing["frame_stack"] > 1:
        kwargs["stack_size"] = spec.preprocessing["frame_stack"]
    return spec.env_id, kwargs


def _host(x: Any) -> np.ndarray:
    """Return ``x`` as a numpy array (a torch tensor is copied to the host first when it lives elsewhere)."""
    return x.detach().cpu().numpy() if hasattr(x, "detach") else np.asarray(x)


class GpuEnvEpisodeVector:
    """``num_envs`` slots of one gpu_env vector env of a described env spec (``EnvInfo.env``).

    ``obs`` holds every slot's latest observation.
    """

    def __init__(self, env: EnvSpec, num_envs: int, *, obs_shape: Sequence[int], obs_dtype: str,
                 backend: str = "cpu") -> None:
        import gpu_env

        env_id, kwargs = make_vec_kwargs(env)
        # host arrays straight from the emulator on the CPU; the device engine returns CUDA tensors only
        kwargs["obs_format"] = "torch" if backend == "cuda" else "numpy"
        try:
            self.vec = gpu_env.make_vec(env_id, num_envs, backend=backend, **kwargs)
        except gpu_env.errors.GpuEnvError as exc:
            raise SpecError(f"gpu_env cannot build {env_id} with {kwargs}: {exc}") from exc
        self.num_envs = num_envs
        self.obs = np.zeros((num_envs, *obs_shape), dtype=np.dtype(obs_dtype))

    def _store(self, obs: Any, mask: np.ndarray | None) -> None:
        """Copy the observations of the envs in ``mask`` (None: all) into :attr:`obs`."""
        array = _host(obs)
        if array.shape != self.obs.shape:
            raise SpecError(f"gpu_env returned observations of shape {array.shape}, the checkpoint expects "
                            f"{self.obs.shape}: the env spec and the emulator disagree")
        if mask is None:
            np.copyto(self.obs, array)
        else:
            self.obs[mask] = array[mask]

    def reset(self, slots: Sequence[int], seeds: Sequence[int]) -> None:
        """Reset each slot in ``slots`` with the matching seed (``env.reset(seed=seed)``)."""
        mask = np.zeros(self.num_envs, np.bool_)
        per_env: list[int | None] = [None] * self.num_envs
        for slot, seed in zip(slots, seeds, strict=True):
            mask[slot] = True
            per_env[slot] = int(seed)
        obs, _ = self.vec.reset(seed=per_env, options={"reset_mask": mask})
        self._store(obs, mask)

    def step(self, actions: np.ndarray, active: np.ndarray) -> StepResult:
        """Step every env (inactive slots' results are zeroed); ``actions``: int64[K]."""
        obs, reward, terminated, truncated, info = self.vec.step(np.asarray(actions, np.int64))
        self._store(obs, None)
        inactive = ~active

        def masked(x: Any, dtype: Any) -> np.ndarray:
            out = np.array(_host(x), dtype=dtype)  # a copy: the env may reuse its arrays
            out[inactive] = 0
            return out

        return StepResult(reward=masked(reward, np.float64), terminated=masked(terminated, np.bool_),
                          truncated=masked(truncated, np.bool_),
                          frames=masked(info["episode_frame_number"], np.int64))

    def close(self) -> None:
        """Release the emulator."""
        self.vec.close()

    def __enter__(self) -> GpuEnvEpisodeVector:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
