"""The C++ per-game logic against ale-py, frame by frame, on RAM recorded from ale-py.

The default run covers a handful of games chosen for their special cases; the ``slow`` test sweeps
all 104 (``python -m gpu_env.tools.check_games`` is the same sweep with a table).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from gpu_env.cuda_source import device_source
from gpu_env.games import games
from gpu_env.tools.game_traces import compare, record_ale_trace

# (rom, mode, frames, fuzz): why each is here. fuzz = fraction of frames with one RAM byte that the
# logic reads overwritten before the frame (reaches rare branches; both sides read the same RAM).
CASES = [
    ("pong", None, 1500, 0.0),  # paddles, reward from two counters
    ("breakout", None, 1500, 0.0),  # m_started flag, lives, game overs within 1500 frames
    ("klax", None, 1500, 0.0),  # reads F6SC cartridge RAM
    ("qbert", None, 1500, 0.0),  # lives counted from a signed byte's history
    ("hangman", None, 1500, 0.0),  # reward from two scores, two-frame timer
    ("asteroids", None, 1500, 0.05),  # score wrap-around at 100,000
    ("skiing", None, 1500, 0.0),  # negative rewards, illegal FIRE actions
    ("tennis", None, 1500, 0.0),  # reward from two delta counters
    ("casino", 3, 1000, 0.0),  # the poker-solitaire branch of Casino's logic
    ("video_checkers", 11, 800, 0.0),  # reversed-checkers mode flag set by setMode
    ("riverraid", None, 1500, 0.0),  # lives from the history of one byte
    ("darkchambers", None, 600, 0.05),  # level/score monotonic counters, SC cart
    ("video_chess", None, 1500, 0.05),  # checkmate rewards, only reached with fuzzing
    ("miniature_golf", None, 1500, 0.05),  # per-hole stroke counting
]


@pytest.mark.parametrize(("rom", "mode", "frames", "fuzz"), CASES, ids=[f"{c[0]}-{c[1]}-{c[3]}" for c in CASES])
def test_game_logic_matches_ale(rom: str, mode: int | None, frames: int, fuzz: float) -> None:
    report = compare(record_ale_trace(rom, frames, seed=7, mode=mode, fuzz=fuzz))
    assert report.frames >= frames - 50
    assert report.ok, report.first_mismatch


def _staged(pairs: list[tuple[int, int]]) -> dict[int, list[tuple[int, int]]]:
    return {row: pairs for row in range(100, 130)}  # written before each of these acts


_BOARD = [o for o in range(0x00, 0x23) if o not in (0x08, 0x11, 0x1A)]
_POINTS = [*range(0x01, 0x0E), *range(0x0F, 0x1C)]
# Endings random play never reaches, staged with ale.setRAM (offsets from 0x80): rom, mode, RAM
# writes, the rewards ALE must give.
STAGED = [
    ("video_checkers", None, [(o, 0) for o in _BOARD] + [(0x00, 0x90)], {-1}),  # no black piece left
    ("video_checkers", 11, [(o, 0) for o in _BOARD] + [(0x00, 0x90)], {1}),  # same, reversed rules
    ("backgammon", None, [(0x00, 0xF1), (0x0E, 0x0F)] + [(o, 0) for o in _POINTS], {1}),  # 15 borne off
    ("superman", None, [(0x00, 0xAC), (0x01, 0xF2), (0x1F, 0x40)], {5998, 5999}),  # Clark at the Planet
    ("et", None, [(0x65, 0xFF), (0x00, 8)], set()),  # no lives, game-over screen
    ("pitfall2", None, [(0x47, 0x19), (0x48, 0x90), (0x49, 0x00)], {195000}),  # maximum score
]


@pytest.mark.parametrize(("rom", "mode", "pairs", "rewards"), STAGED, ids=[f"{c[0]}-{c[1]}" for c in STAGED])
def test_staged_endings_match_ale(rom: str, mode: int | None, pairs: list[tuple[int, int]], rewards: set[int]) -> None:
    trace = record_ale_trace(rom, 300, seed=3, mode=mode, pokes=_staged(pairs))
    report = compare(trace)
    assert report.ok, report.first_mismatch
    assert report.episodes_ended > 0
    assert set(trace.reward.tolist()) - {0} == rewards


def test_cases_exercise_rewards_lives_and_game_overs() -> None:
    """The default cases see rewards, lives changes and game overs (so the comparison can fail)."""
    reports = [compare(record_ale_trace(rom, frames, seed=7, mode=mode)) for rom, mode, frames, _ in CASES[:3]]
    assert sum(r.nonzero_rewards for r in reports) > 0
    assert sum(r.lives_changes for r in reports) > 0
    assert sum(r.episodes_ended for r in reports) > 0


@pytest.mark.slow
def test_all_games_match_ale() -> None:
    failures = []
    for i, rom in enumerate(games()):
        report = compare(record_ale_trace(rom, 3000, seed=i))
        if not report.ok:
            failures.append((rom, report.first_mismatch))
    assert failures == []


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not found: the device compile check needs it")
def test_game_logic_compiles_for_the_device(tmp_path: Path) -> None:
    kernel = """
struct GameMem { const uint8_t* ram; __device__ uint8_t peek(uint16_t a) { return ram[a & 0x7F]; } };
extern "C" __global__ void games_step(const uint16_t* ids, gpu_env::games::GameState* g, const uint8_t* ram,
                                      int32_t* lives, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  GameMem m{ram + 128 * i};
  gpu_env::games::game_set_mode_begin(ids[i], g[i], 0);
  gpu_env::games::game_step(ids[i], g[i], m);
  gpu_env::games::game_set_mode_end(ids[i], g[i], 0, m);
  lives[i] = gpu_env::games::game_lives(ids[i], g[i]) + gpu_env::games::game_is_legal(ids[i], 1);
  if (lives[i] < 0) gpu_env::games::game_reset(ids[i], g[i]);
}
"""
    source = tmp_path / "games.cu"
    source.write_text(device_source(["games/registry.h", kernel]))
    result = subprocess.run(
        ["nvcc", "--ptx", "-std=c++17", str(source), "-o", str(tmp_path / "games.ptx")],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert ".entry games_step" in (tmp_path / "games.ptx").read_text()
