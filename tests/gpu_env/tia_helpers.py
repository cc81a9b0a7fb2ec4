"""Shared helpers of the TIA/console/batch tests: ale-py instances and imported batches."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from gpu_env.console_batch import ConsoleBatch


def make_ale(game: str | Path, warmup: int = 0, seed: int = 0) -> Any:
    """Return an ale-py ALEInterface on ``game`` (sticky actions off) after ``warmup`` random minimal actions.

    ``game`` is a ROM id, or the path of a ROM file (ale-py runs a ROM it does not know under the settings
    of the game its file name names).
    """
    import ale_py
    from ale_py import roms

    ale = ale_py.ALEInterface()
    ale.setLoggerMode(ale_py.LoggerMode.Error)
    ale.setInt("random_seed", 0)
    ale.setFloat("repeat_action_probability", 0.0)
    ale.loadROM(str(game if isinstance(game, Path) else roms.get_rom_path(game)))
    actions = ale.getMinimalActionSet()
    rng = np.random.default_rng(seed)
    for _ in range(warmup):
        ale.act(actions[int(rng.integers(len(actions)))])
    return ale


def imported_batch(game: str, num_envs: int, ale: Any, **kwargs: Any) -> ConsoleBatch:
    """Return a batch whose every environment starts from ale-py's current state."""
    batch = ConsoleBatch(game, num_envs, **kwargs)
    state, screen = ale.cloneState(), ale.getScreen()
    for i in range(num_envs):
        batch.load_ale_state(i, state, screen)
    return batch
