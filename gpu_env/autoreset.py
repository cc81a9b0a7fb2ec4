"""The per-step rules of every gpu_env vector env, written once.

The autoreset mode, the action check, the ``DISABLED`` refusal and gymnasium's ``final_obs`` array.

``gpu_env.vector`` (``make_vec``), ``gpu_env.presets.vector_env`` and ``gpu_env.sb3_vec`` call these; the native
pool does the stepping and resetting itself (``RESET``/``STEP``/``STEP_RESET`` per env).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt
from gymnasium.vector import AutoresetMode

from gpu_env.errors import GpuEnvError


def autoreset_mode(value: AutoresetMode | str) -> AutoresetMode:
    """``value`` as gymnasium's :class:`AutoresetMode`; an unknown one is a :class:`GpuEnvError` naming the three."""
    try:
        return AutoresetMode(value)
    except ValueError:
        modes = ", ".join(m.value for m in AutoresetMode)
        raise GpuEnvError(f"autoreset_mode={value!r}: use one of {modes}") from None


def checked_actions(actions: Any, num_envs: int, num_actions: int) -> npt.NDArray[np.int64]:
    """``actions`` as a host int[num_envs] array of indices in ``[0, num_actions)``, or a :class:`GpuEnvError`."""
    a = np.asarray(actions)
    if a.shape != (num_envs,) or a.dtype.kind not in "iu":
        raise GpuEnvError(f"actions must be int[{num_envs}], got dtype {a.dtype} and shape {a.shape}")
    if (a < 0).any() or (a >= num_actions).any():
        raise GpuEnvError(f"actions must be in [0, {num_actions}), got {a!r}")
    return a.astype(np.int64, copy=False)


def refuse_ended(mode: AutoresetMode, ended: npt.NDArray[np.bool_]) -> None:
    """Under ``DISABLED``, stepping an env whose episode ended (and was not reset) is a :class:`GpuEnvError`."""
    if mode is AutoresetMode.DISABLED and ended.any():
        raise GpuEnvError(f"envs {np.flatnonzero(ended).tolist()} ended and autoreset_mode is DISABLED: reset them "
                          "first with reset(options={'reset_mask': mask}) before the next step")


def final_obs_array(obs: npt.NDArray[Any], done: npt.NDArray[np.bool_]) -> npt.NDArray[np.object_]:
    """Gymnasium's ``info["final_obs"]`` under ``SAME_STEP``.

    An object array: env ``i``'s last observation where ``done[i]``, ``None`` elsewhere.
    """
    final = np.full(len(done), None, dtype=object)
    for i in np.flatnonzero(done):
        final[i] = obs[i].copy()
    return final
