"""gpu_env: a batched Atari 2600 emulator, frame-exact with ale-py, for the CPU and the GPU.

One portable C++ core (``gpu_env/core``) is compiled into a CPU library at install time and
through CuPy/NVRTC for CUDA at run time.

Public API (DESIGN.md §2):

- :class:`AtariBatch` — ``N`` environments with ALE's full semantics (``loadROM`` power-on,
  ``reset_game``, sticky actions, per-game rewards/lives/termination, frameskip): env ``i`` with
  seed ``s`` behaves as ``ale_py.ALEInterface`` with ``random_seed=s``.
- :func:`make_vec` — a gymnasium ``VectorEnv`` equal to ``gymnasium.make_vec("ALE/...-v5", ...)``
  (ALE v5 kwargs, AtariPreprocessing options, frame stacking), observations as torch tensors.
- :class:`FrameBatch` — the frame-level console batch (imported ALE states, no reset sequence),
  which the lockstep harness uses.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gpu_env import errors

if TYPE_CHECKING:
    from gpu_env.ale_batch import AleBatch as AtariBatch
    from gpu_env.batch import FrameBatch
    from gpu_env.vector import make_vec

__version__ = "0.1.0"
__all__ = ["AtariBatch", "FrameBatch", "errors", "make_vec"]


def __getattr__(name: str) -> Any:
    """Import the heavy parts (torch, gymnasium) only when they are first used."""
    if name == "AtariBatch":
        from gpu_env.ale_batch import AleBatch

        return AleBatch
    if name == "FrameBatch":
        from gpu_env.batch import FrameBatch

        return FrameBatch
    if name == "make_vec":
        from gpu_env.vector import make_vec

        return make_vec
    raise AttributeError(f"module 'gpu_env' has no attribute {name!r}")
