"""The CPU library's AVX-512 kernels (``gpu_env/native/simd.h``) against its scalar code, in one run.

The kernels run where the CPU has AVX-512 F/BW/VL/VBMI; ``GPU_ENV_NO_SIMD=1`` keeps the scalar code.
The same inputs go through this process (whichever kernels it runs) and through a child process
with ``GPU_ENV_NO_SIMD=1``, and every byte must agree: screens of all 256 palette indices in RGB and
grayscale, and the INTER_AREA resize of random frames at sizes that take the windowed path (160 -> 84
wide), the gathered path (160 -> 64) and odd tails, and the TIA's object overlay (scanline pixels and
collision latches, ``gpu_env/native/tia_overlay.h``) on games with players, missiles, ball and playfield:
their screens every few frames and their saved states after some hundreds of frames. The other screen,
resize and lockstep tests compare whichever kernels run with ale-py and OpenCV.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from gpu_env.binding import simd_kernels

ROOT = Path(__file__).resolve().parents[2]

# (src_h, src_w, h, w): the DQN size, a gathered block width, PAL frames, sizes with partial blocks.
RESIZES = [(210, 160, 84, 84), (210, 160, 64, 64), (250, 160, 84, 84), (210, 160, 37, 101), (210, 152, 30, 17)]

# Objects of every kind: players with copies (space_invaders), missiles and ball (tennis, boxing, breakout),
# playfield under objects (seaquest, ms_pacman).
OVERLAY_GAMES = ["breakout", "space_invaders", "seaquest", "ms_pacman", "tennis", "boxing"]

# Run by the child and by this process: every output as one byte string.
PROGRAM = """
import sys
import numpy as np
from gpu_env import AtariBatch
from gpu_env.preprocess_cpu import CpuObservation
from gpu_env.binding import simd_kernels

RESIZES = {resizes!r}
OVERLAY_GAMES = {games!r}
batch = AtariBatch("pong", 2, seeds=[0, 1], num_threads=2)
states = []
for k, raw in enumerate(batch.clone_state()):
    state = bytearray(raw)
    env_bytes = len(state) - 2 * 160 * 250
    pattern = np.random.default_rng(k).permutation(np.resize(np.arange(256, dtype=np.uint8), 2 * 160 * 250))
    state[env_bytes:] = pattern.tobytes()
    states.append(bytes(state))
batch.restore_state(states)
parts = [batch.get_screen_rgb().tobytes(), batch.get_screen_grayscale().tobytes()]
for src_h, src_w, h, w in RESIZES:
    frames = np.random.default_rng(src_h + h + w).integers(0, 256, (3, src_h, src_w), dtype=np.uint8)
    frames[0] = 255
    frames[1] = (frames[1] // 85) * 85
    other = np.random.default_rng(w).integers(0, 256, frames.shape, dtype=np.uint8)
    pool = np.array([True, False, True])
    parts.append(CpuObservation(3, (src_h, src_w), (h, w), 1, num_threads=2)(frames, other, pool).tobytes())
for game in OVERLAY_GAMES:
    emulated = AtariBatch(game, 2, seeds=[3, 4], num_threads=2)
    plan = np.random.default_rng(len(game)).choice(emulated.minimal_action_set(), size=(600, 2))
    for t, actions in enumerate(plan):
        emulated.act(actions)
        if t % 7 == 0:
            parts.append(emulated.get_screen().tobytes())
    parts += emulated.clone_state()
sys.stdout.buffer.write(simd_kernels().encode() + b"\\n" + b"".join(parts))
"""


def _run(no_simd: bool) -> tuple[str, bytes]:
    env = {**os.environ, "GPU_ENV_NO_SIMD": "1" if no_simd else "0"}
    program = PROGRAM.format(resizes=RESIZES, games=OVERLAY_GAMES)
    result = subprocess.run([sys.executable, "-c", program], cwd=ROOT, env=env,
                            capture_output=True, check=True)
    kernels, _, payload = result.stdout.partition(b"\n")
    return kernels.decode(), payload


def test_no_simd_variable_selects_the_scalar_code() -> None:
    kernels, _ = _run(no_simd=True)
    assert kernels == "scalar"
    assert simd_kernels() in ("avx512", "scalar")


@pytest.mark.skipif(simd_kernels() != "avx512", reason="this CPU has no AVX-512 VBMI: only the scalar code runs")
def test_avx512_kernels_write_the_scalar_bytes() -> None:
    fast_kernels, fast = _run(no_simd=False)
    slow_kernels, slow = _run(no_simd=True)
    assert (fast_kernels, slow_kernels) == ("avx512", "scalar")
    assert len(fast) == len(slow) > 0
    if fast != slow:
        a, b = np.frombuffer(fast, np.uint8), np.frombuffer(slow, np.uint8)
        first = int(np.flatnonzero(a != b)[0])
        pytest.fail(f"{int((a != b).sum())} bytes differ, the first at offset {first}: {a[first]} vs {b[first]}")
