"""Run the lockstep check over many ROMs and render ``docs/conformance.md``.

``sweep`` runs :func:`conformance.lockstep.run_lockstep` for each ROM (optionally in a process
pool); ``render_markdown`` turns the results into the conformance page: per ROM the frames
compared and the first divergence, with a one-line cause for every open divergence (from
``KNOWN_CAUSES``, or "not yet analysed").
"""

from __future__ import annotations

import datetime
from collections.abc import Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor

from conformance.lockstep import LockstepResult, run_lockstep

# One-line causes of divergences that were analysed, keyed by ROM id.
KNOWN_CAUSES: dict[str, str] = {}


def playable_roms() -> list[str]:
    """Return the 104 ROM ids ale-py 0.12 plays single-player (sorted)."""
    from gpu_env import games

    return sorted(games.games())


def atari57() -> set[str]:
    """ROM ids of the Atari-57 benchmark set."""
    from gpu_env import games

    return {rom for rom, info in games.games().items() if info.in_atari57}


def _one(args: tuple[str, int, int]) -> LockstepResult:
    game, frames, seed = args
    return run_lockstep(game, frames, seed)


def sweep(roms: Sequence[str], frames: int, seed: int, workers: int = 1) -> list[LockstepResult]:
    """Lockstep every ROM in ``roms`` for ``frames`` frames (same seed for all)."""
    jobs = [(rom, frames, seed) for rom in roms]
    if workers <= 1:
        return [_one(job) for job in jobs]
    with ProcessPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(_one, jobs))


def _cause(result: LockstepResult) -> str:
    return KNOWN_CAUSES.get(result.game, "not yet analysed")


def _row(result: LockstepResult, in57: bool) -> str:
    if result.diverged:
        what = ", ".join(result.fields)
        first = (f"frame {result.divergence_frame}: {what}; {len(result.ram_diffs)} RAM bytes, "
                 f"{result.pixel_diffs} pixels")
        cause = _cause(result)
    else:
        first, cause = "none", ""
    return (f"| {result.game} | {'yes' if in57 else ''} | {result.frames_compared} / {result.frames_requested} | "
            f"{result.warmup_frames} | {result.reimports} | {first} | {cause} |")


def render_markdown(results: Iterable[LockstepResult], *, seed: int, frames: int, command: str) -> str:
    """Render the text of ``docs/conformance.md`` for these results."""
    rows = sorted(results, key=lambda r: r.game)
    in57 = atari57()
    clean = [r for r in rows if not r.diverged]
    clean57 = [r for r in clean if r.game in in57]
    total57 = [r for r in rows if r.game in in57]
    lines = [
        "# gpu_env conformance: lockstep against ale-py 0.12.1",
        "",
        f"Generated {datetime.date.today().isoformat()} by `{command}`.",
        "",
        "Each ROM: ale-py (`repeat_action_probability=0`) plays a random number of random actions "
        f"(\"warm-up\", from seed {seed}), its `cloneState()` is imported into `gpu_env.AtariBatch` with "
        "`load_ale_state`, then both play the same random actions from the minimal action set for "
        f"{frames} frames. After every frame RAM (128 bytes), screen (palette indices), reward, lives and "
        "game over are compared; the run stops at the first difference. When ale-py's game ends, ale-py "
        "runs `reset_game`, plays 2 random frames alone, and its state is imported again (\"re-imports\"; "
        "gpu_env's own reset sequence is a separate issue). Warm-ups are at least 2 frames and end on a "
        "frame that started a new TIA frame: ALE does not serialize its two frame buffers, and the "
        "`getScreen()` before and after that frame restores them (a frame that ends above the bottom of "
        "the picture shows the older buffer).",
        "",
        f"**Result: {len(clean)} of {len(rows)} ROMs identical on every frame; Atari-57: "
        f"{len(clean57)} of {len(total57)}.**",
        "",
        "| ROM | Atari-57 | frames compared | warm-up | re-imports | first divergence | cause |",
        "|---|---|---|---|---|---|---|",
    ]
    lines += [_row(r, r.game in in57) for r in rows]
    lines += [
        "",
        "Reproduce one row: `evaltk conformance lockstep --game <rom> --frames "
        f"{frames} --seed {seed}` (writes a reference/ours/difference PNG on divergence).",
        "",
    ]
    return "\n".join(lines)
