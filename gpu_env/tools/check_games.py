"""Sweep: compare the per-game logic with ale-py on every playable ROM and print a table.

Run: ``python -m gpu_env.tools.check_games [--frames 5000] [--seed 0] [--games pong breakout]
[--all-modes --mode-frames 1000] [--fuzz 0.05] [--markdown]``. Exit status 1 if any frame differs.
"""

from __future__ import annotations

import argparse
import resource
import sys
import time

from gpu_env.games import game_info, games
from gpu_env.tools.game_traces import TraceReport, compare, record_ale_trace


def _row(r: TraceReport, markdown: bool) -> str:
    cells = [
        r.rom_id,
        str(r.mode),
        str(r.frames),
        str(r.episodes_ended),
        str(r.nonzero_rewards),
        str(r.lives_changes),
        str(r.reward_mismatches),
        str(r.terminal_mismatches),
        str(r.lives_mismatches),
        str(r.word_mismatches),
    ]
    if markdown:
        return "| " + " | ".join(cells) + " |"
    return f"{cells[0]:<20}" + "".join(f"{c:>11}" for c in cells[1:])


HEADER = [
    "rom",
    "mode",
    "frames",
    "game_overs",
    "rewards",
    "lives_chg",
    "bad_rew",
    "bad_term",
    "bad_lives",
    "bad_words",
]


def main(argv: list[str] | None = None) -> int:
    """Run the sweep; returns 0 when every compared frame agrees."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=5000, help="act() frames per ROM in the default mode")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random actions")
    parser.add_argument("--games", nargs="*", default=None, help="ROM ids (default: all 104)")
    parser.add_argument("--all-modes", action="store_true", help="also run every non-default mode")
    parser.add_argument("--mode-frames", type=int, default=1000, help="frames per non-default mode")
    parser.add_argument("--fuzz", type=float, default=0.0, help="fraction of frames with one RAM byte overwritten")
    parser.add_argument("--markdown", action="store_true", help="print a Markdown table")
    args = parser.parse_args(argv)
    if args.frames < 1 or args.mode_frames < 1:
        parser.error(f"--frames {args.frames} / --mode-frames {args.mode_frames} must be >= 1")
    if not 0.0 <= args.fuzz <= 1.0:
        parser.error(f"--fuzz {args.fuzz} must be in [0, 1]")
    roms = args.games if args.games else list(games())
    runs: list[tuple[str, int | None, int]] = []
    for rom in roms:
        info = game_info(rom)
        runs.append((rom, None, args.frames))
        if args.all_modes:
            runs += [(rom, m, args.mode_frames) for m in info.modes if m != info.default_mode]
    wall0, cpu0 = time.perf_counter(), time.process_time()
    if args.markdown:
        print("| " + " | ".join(HEADER) + " |")
        print("|" + "---|" * len(HEADER))
    else:
        print(f"{HEADER[0]:<20}" + "".join(f"{h:>11}" for h in HEADER[1:]))
    failures: list[TraceReport] = []
    total_frames = 0
    for i, (rom, mode, frames) in enumerate(runs):
        report = compare(record_ale_trace(rom, frames, seed=args.seed + i, mode=mode, fuzz=args.fuzz))
        total_frames += report.frames
        print(_row(report, args.markdown), flush=True)
        if not report.ok:
            failures.append(report)
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(
        f"\n{len(runs)} runs, {total_frames} frames compared, {len(failures)} with mismatches; "
        f"wall {wall:.1f} s, CPU {cpu:.1f} s, max RSS {rss / 1024:.0f} MiB"
    )
    for r in failures:
        print(f"MISMATCH {r.rom_id} mode {r.mode}: {r.first_mismatch}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
