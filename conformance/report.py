"""Run the lockstep engine over many ROMs and render ``docs/conformance.md``.

``sweep`` runs :func:`conformance.lockstep.run_lockstep` for each ROM and start mode (optionally in a
process pool); ``render_markdown`` turns the results into the conformance page: per ROM and mode
the frames compared and the first divergence, with a one-line cause for every open divergence (from
``KNOWN_CAUSES``, or "not yet analysed").
"""

from __future__ import annotations

import datetime
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor

from conformance.lockstep import LockstepConfig, LockstepResult, run_lockstep

# One-line causes of divergences that were analysed, keyed by ROM id.
KNOWN_CAUSES: dict[str, str] = {}


def playable_roms() -> list[str]:
    """Return the 104 ROM ids ale-py 0.12 plays single-player (sorted)."""
    from gpu_env import games

    return sorted(games.games())


def atari57() -> set[str]:
    """Return the ROM ids of the Atari-57 benchmark set."""
    from gpu_env import games

    return {rom for rom, info in games.games().items() if info.in_atari57}


def sweep_config(game: str, start: str, frames: int, seed: int) -> LockstepConfig:
    """Return the configuration of one ROM in a sweep and in the all-ROM test.

    ``ale-state``: minimal action set, sticky actions off (ALE does not serialize the sticky RNG);
    ``boot``: ALE v5's defaults, the full action set and sticky actions 0.25.
    """
    if start == "boot":
        return LockstepConfig(game, frames, seed=seed, start="boot", actions="full", repeat_action_probability=0.25)
    return LockstepConfig(game, frames, seed=seed, start="ale-state")


def _one(config: LockstepConfig) -> LockstepResult:
    return run_lockstep(config)


def sweep(roms: Sequence[str], frames: int, seed: int, starts: Sequence[str] = ("ale-state", "boot"),
          workers: int = 1, progress: Callable[[LockstepResult], None] | None = None) -> list[LockstepResult]:
    """Lockstep every ROM in ``roms`` in every start mode for ``frames`` frames (same seed for all).

    ``progress`` is called with each result as it arrives (in the order of the jobs).
    """
    jobs = [sweep_config(rom, start, frames, seed) for rom in roms for start in starts]
    results: list[LockstepResult] = []
    if workers <= 1:
        stream: Iterable[LockstepResult] = map(_one, jobs)
        return _collect(stream, results, progress)
    with ProcessPoolExecutor(max_workers=workers) as pool:
        return _collect(pool.map(_one, jobs), results, progress)


def _collect(stream: Iterable[LockstepResult], results: list[LockstepResult],
             progress: Callable[[LockstepResult], None] | None) -> list[LockstepResult]:
    for result in stream:
        results.append(result)
        if progress is not None:
            progress(result)
    return results


def _cell(result: LockstepResult | None) -> str:
    if result is None:
        return "not run"
    if result.divergence is None:
        return f"{result.frames_compared} / {result.config.frames} identical, {result.resets} resets"
    cause = KNOWN_CAUSES.get(result.game, "not yet analysed")
    return f"**{result.divergence.summary()}** ({cause})"


def render_markdown(results: Iterable[LockstepResult], *, seed: int, frames: int, command: str) -> str:
    """Render the text of ``docs/conformance.md`` for these results."""
    by_rom: dict[str, dict[str, LockstepResult]] = {}
    for r in results:
        by_rom.setdefault(r.game, {})[r.config.start] = r
    in57 = atari57()
    starts = ("ale-state", "boot")
    lines = [
        "# gpu_env conformance: lockstep against ale-py 0.12.1",
        "",
        f"Generated {datetime.date.today().isoformat()} by `{command}`.",
        "",
        "Each ROM runs twice through the lockstep engine (`conformance/lockstep.py`), gpu_env's CPU backend "
        "(`gpu_env.AtariBatch`) next to ale-py, stopping at the first difference. After the start, after every "
        "frame and after every reset it compares reward, RAM (128 bytes), screen (palette indices), lives, "
        "game over, truncation and both frame counters; RGB and grayscale screens at the start and the end.",
        "",
        f"* **ale-state**: ale-py (`repeat_action_probability=0`) plays a random number of random actions "
        f"(\"warm-up\", stream `lockstep.actions` of base seed {seed}, `evaltk/seeding.py`), its `cloneState()` "
        f"is imported with `AtariBatch.load_ale_state`, then "
        f"both play the same random actions from the minimal action set for {frames} frames. When ale-py's "
        "game ends it runs `reset_game` and 2 random frames alone and its state is imported again. Warm-ups "
        "end on a frame that started a new TIA frame: ALE does not serialize its two frame buffers, and the "
        "`getScreen()` before and after that frame restores them.",
        f"* **boot**: both sides run their own `loadROM` with the same `random_seed` (stream `lockstep.ale` of base "
        f"seed {seed}) and ALE v5's settings "
        f"(sticky actions 0.25, ALE's mt19937 on both sides), then the same random actions from the full "
        f"18-action set for {frames} frames, `reset_game` on both at every game over.",
        "",
    ]
    for start in starts:
        rows = [by_rom[rom][start] for rom in sorted(by_rom) if start in by_rom[rom]]
        clean = [r for r in rows if not r.diverged]
        clean57 = [r for r in clean if r.game in in57]
        total57 = [r for r in rows if r.game in in57]
        lines.append(f"**{start}: {len(clean)} of {len(rows)} ROMs identical on every frame; Atari-57: "
                     f"{len(clean57)} of {len(total57)}.**")
        lines.append("")
    lines += ["| ROM | Atari-57 | ale-state | boot |", "|---|---|---|---|"]
    for rom in sorted(by_rom):
        cells = [_cell(by_rom[rom].get(start)) for start in starts]
        lines.append(f"| {rom} | {'yes' if rom in in57 else ''} | {cells[0]} | {cells[1]} |")
    lines += [
        "",
        f"Reproduce one row: `evaltk conformance lockstep --game <rom> --frames {frames} --seed {seed}` "
        "(ale-state) or add `--start boot --actions full --sticky 0.25`; a divergence writes a "
        "reference | ours | difference PNG.",
        "",
    ]
    return "\n".join(lines)
