"""Full ALE lockstep: ``AleBatch(backend="cpu")`` against ale-py from ``loadROM``, every frame.

Each env starts with ``loadROM`` (seed s, ``repeat_action_probability=0.25``) on both sides, then
random actions from ALE's full 18-action set; ``reset_game`` at every game over. Compared after
``loadROM``, after every ``act`` and after every reset: reward, lives, game over, frame numbers,
RAM and screen (palette indices; RGB and grayscale once per run).

Run the whole table (results go to docs/ale_semantics.md by hand):
    python tests/gpu_env/test_ale_lockstep.py --frames 20000 --seed 0 [--games pong,breakout]
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass

import numpy as np
import pytest

from gpu_env.ale_batch import NUM_ACTIONS, AleBatch


@dataclass(frozen=True)
class LockstepResult:
    """Outcome of one game's lockstep: ``divergence`` is None when every frame matched."""

    game: str
    frames: int
    resets: int
    divergence: str | None
    seconds: float


def _compare(ref: AleBatch, ours: AleBatch, where: str) -> str | None:
    a, b = ref.get_ram(), ours.get_ram()
    if not np.array_equal(a, b):
        cols = np.flatnonzero((a != b).any(axis=0))
        return f"{where}: RAM differs at {', '.join(hex(0x80 + int(c)) for c in cols[:8])}"
    a, b = ref.get_screen(), ours.get_screen()
    if a.shape != b.shape:
        return f"{where}: screen shape {a.shape} vs {b.shape}"
    if not np.array_equal(a, b):
        return f"{where}: screen differs in {int((a != b).sum())} pixels"
    for name in ("lives", "game_over", "game_truncated", "frame_number", "episode_frame_number"):
        x, y = getattr(ref, name)(), getattr(ours, name)()
        if not np.array_equal(x, y):
            return f"{where}: {name} {x.tolist()} vs {y.tolist()}"
    return None


def lockstep(game: str, frames: int, seed: int = 0, num_envs: int = 1, repeat_action_probability: float = 0.25,
             frameskip: int = 1, mode: int | None = None, difficulty: int | None = None) -> LockstepResult:
    """Step ale-py and gpu_env side by side; stop at the first difference."""
    start = time.perf_counter()
    kwargs = dict(seeds=[seed + i for i in range(num_envs)], repeat_action_probability=repeat_action_probability,
                  frameskip=frameskip, mode=mode, difficulty=difficulty)
    ref = AleBatch(game, num_envs, backend="ale_py", **kwargs)  # type: ignore[arg-type]
    ours = AleBatch(game, num_envs, backend="cpu", num_threads=1, **kwargs)  # type: ignore[arg-type]
    rng = np.random.default_rng(seed)
    resets = 0

    def result(divergence: str | None, done: int) -> LockstepResult:
        return LockstepResult(game, done, resets, divergence, time.perf_counter() - start)

    err = _compare(ref, ours, "after loadROM")
    if err is None and not (np.array_equal(ref.get_screen_rgb(), ours.get_screen_rgb())
                            and np.array_equal(ref.get_screen_grayscale(), ours.get_screen_grayscale())):
        err = "after loadROM: RGB/grayscale screens differ"
    if err is not None:
        return result(err, 0)
    for frame in range(1, frames + 1):
        actions = rng.integers(0, NUM_ACTIONS, num_envs)
        r1, r2 = ref.act(actions), ours.act(actions)
        if not np.array_equal(r1, r2):
            return result(f"frame {frame}: reward {r1.tolist()} vs {r2.tolist()}", frame - 1)
        err = _compare(ref, ours, f"frame {frame}")
        if err is not None:
            return result(err, frame - 1)
        over = ref.game_over()
        if over.any():
            ref.reset_game(over)
            ours.reset_game(over)
            resets += int(over.sum())
            err = _compare(ref, ours, f"reset after frame {frame}")
            if err is not None:
                return result(err, frame)
    if not (np.array_equal(ref.get_screen_rgb(), ours.get_screen_rgb())
            and np.array_equal(ref.get_screen_grayscale(), ours.get_screen_grayscale())):
        return result("end: RGB/grayscale screens differ", frames)
    return result(None, frames)


# Default (fast) set: a paddle game, an E0, an F6, an SC cart, DPC, FE, a PAL ROM with random
# select presses (Adventure), games whose setMode acts (Double Dunk, Berzerk), a partial-frame reset
# (Q*bert), and Lost Luggage (illegal FIRE actions, 38 select presses).
FAST_GAMES = ("pong", "breakout", "montezuma_revenge", "crossbow", "darkchambers", "pitfall2", "robotank",
              "adventure", "double_dunk", "berzerk", "qbert", "lost_luggage")


@pytest.mark.parametrize("game", FAST_GAMES)
def test_lockstep_from_load_rom(game: str) -> None:
    res = lockstep(game, frames=200, seed=3)
    assert res.divergence is None, res.divergence


def test_lockstep_frameskip_modes_and_batch() -> None:
    res = lockstep("space_invaders", frames=150, seed=11, num_envs=3, frameskip=3, mode=1, difficulty=1)
    assert res.divergence is None, res.divergence


@pytest.mark.slow
@pytest.mark.parametrize("game", FAST_GAMES)
def test_lockstep_long(game: str) -> None:
    res = lockstep(game, frames=20_000, seed=0)
    assert res.divergence is None, res.divergence


def main(argv: list[str] | None = None) -> int:
    """Run the lockstep over many games and print one line per game."""
    from ale_py import roms

    from gpu_env.games import MULTIPLAYER_ONLY

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--frames", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--games", default="", help="comma-separated ROM ids (default: all playable)")
    args = parser.parse_args(argv)
    games = args.games.split(",") if args.games else [g for g in roms.get_all_rom_ids() if g not in MULTIPLAYER_ONLY]
    failed = 0
    for game in games:
        res = lockstep(game, args.frames, seed=args.seed)
        failed += res.divergence is not None
        status = "OK" if res.divergence is None else f"DIVERGED {res.divergence}"
        print(f"{game:22s} frames={res.frames:6d} resets={res.resets:4d} {res.seconds:7.1f}s {status}", flush=True)
    print(f"{len(games) - failed}/{len(games)} games matched over {args.frames} frames (seed {args.seed})")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
