"""gpu_env: a batched Atari 2600 emulator, frame-exact with ale-py, for the CPU and the GPU.

One portable C++ core (``gpu_env/core``) is compiled into a CPU library at install time and
through CuPy/NVRTC for CUDA at run time.

Public API (docs/ale_semantics.md, "Interfaces"):

- :class:`AtariBatch` — ``N`` environments with ALE's full semantics (``loadROM`` power-on,
  ``reset_game``, sticky actions, per-game rewards/lives/termination, frameskip, imported ale-py
  states): env ``i`` with seed ``s`` behaves as ``ale_py.ALEInterface`` with ``random_seed=s``.
  The one batch class; backends ``"cpu"``, ``"cuda"`` and ``"ale_py"`` (the reference).
- :func:`make_vec` — a gymnasium ``VectorEnv`` equal to ``gymnasium.make_vec(env_id, ...)`` for every
  Atari id ale-py registers (its registered settings, AtariPreprocessing options, frame stacking,
  gymnasium's infos and episode statistics), of gymnasium's numpy types or (``obs_format="torch"``) tensors.

The console layer under ``AtariBatch`` (emulation only, for ROMs without game rules such as the
TIA test ROMs) is :class:`gpu_env.console_batch.ConsoleBatch`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gpu_env import errors

if TYPE_CHECKING:
    from gpu_env.atari_batch import AtariBatch
    from gpu_env.make import make_vec

__all__ = ["AtariBatch", "errors", "make_vec"]


def __getattr__(name: str) -> Any:
    """Import on first use: ``AtariBatch`` (numpy, ale-py for its ROMs) and ``make_vec`` (also torch, gymnasium).

    ``__version__`` is the installed distribution's (gpu_env ships in evaltk's, versioned in one place).
    """
    if name == "__version__":
        from importlib.metadata import PackageNotFoundError, version

        try:
            return version("evaltk")
        except PackageNotFoundError:
            raise AttributeError("gpu_env.__version__ is the evaltk distribution's version, and evaltk is not "
                                 "installed here: `pip install -e .` in the checkout") from None
    if name == "AtariBatch":
        from gpu_env.atari_batch import AtariBatch

        return AtariBatch
    if name == "make_vec":
        from gpu_env.make import make_vec

        return make_vec
    raise AttributeError(f"module 'gpu_env' has no attribute {name!r}")
