"""The TIA on the 25 TIA/RIOT test programs: every frame's screen and RAM equal ale-py's recorded ones.

Reference: tests/data/atari/ale_reference_noop300.json.gz (ale-py 0.12.1, 300 NOOP frames after
loadROM). The start state is taken from ale-py itself (loadROM, then cloneState) and imported; every
later frame is emulated by gpu_env alone and compared with the recorded md5 / RAM.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from gpu_env.console_batch import ConsoleBatch
from gpu_env.console_native import ConsoleProps
from tests.data_paths import data_exists, data_path

REFERENCE = "atari/ale_reference_noop300.json.gz"
MISSING = "<missing test data>"


def _reference() -> dict[str, Any]:
    with gzip.open(data_path(REFERENCE)) as fh:
        data: dict[str, Any] = json.load(fh)
    return data


def _names() -> list[str]:
    """Return the ROM names, or one placeholder that fails (CI) or skips when the data is missing."""
    return sorted(_reference()["roms"]) if data_exists(REFERENCE) else [MISSING]


@pytest.fixture(scope="module")
def reference() -> dict[str, Any]:
    return _reference()


def _start(name: str, tmp_path: Path) -> tuple[ConsoleBatch, Any]:
    import ale_py

    target = tmp_path / ("tetris.bin" if name == "tetris.bin" else "earthworld.bin")
    shutil.copy(data_path(f"atari/roms/{name}"), target)
    ale = ale_py.ALEInterface()
    ale.setLoggerMode(ale_py.LoggerMode.Error)
    ale.setInt("random_seed", 0)
    ale.setFloat("repeat_action_probability", 0.0)
    ale.loadROM(str(target))
    rows = int(ale.getScreen().shape[0])
    batch = ConsoleBatch(target, 1, props=ConsoleProps(height=rows, pal=rows == 250))
    batch.load_ale_state(0, ale.cloneState(), ale.getScreen())
    return batch, ale


@pytest.mark.parametrize("name", _names())
def test_every_frame_matches_ale(name: str, reference: dict[str, Any], tmp_path: Path) -> None:
    expected = reference["roms"][name]
    batch, ale = _start(name, tmp_path)
    assert hashlib.md5(ale.getScreen().tobytes()).hexdigest() == expected["after_load"]["screen_md5"]
    noop = np.zeros(1, dtype=np.int64)
    for step in expected["steps"]:
        batch.step_frames(noop)
        frame = step["frame"]
        assert batch.get_ram()[0].tobytes().hex() == step["ram"], f"{name}: RAM differs at frame {frame}"
        # Tetris ends loadROM inside an interrupted frame; the frame buffer its second frame reuses
        # is not part of ale-py's state, so its picture is only comparable from frame 3 on.
        if name == "tetris.bin" and frame < 3:
            continue
        digest = hashlib.md5(batch.get_screen()[0].tobytes()).hexdigest()
        assert digest == step["screen_md5"], f"{name}: screen differs at frame {frame}"
