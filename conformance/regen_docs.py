"""Regenerate ``docs/conformance.md``: ``python -m conformance.regen_docs [--frames N] [--seed S]``.

Runs the lockstep engine (``conformance/lockstep.py``) on every ROM ale-py plays single-player (or
``--games ...``) in both start modes (``ale-state`` and ``boot``, see ``conformance.report``) and
rewrites the page above :data:`KEEP_MARKER` (the hand-written sections below it are kept). The full
default run (104 ROMs x 2 modes x 5,000 frames) takes about 24 minutes with two workers on two cores
(docs/conformance.md names the run).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from conformance.report import playable_roms, render_markdown, sweep

DOCS_PAGE = Path(__file__).resolve().parents[1] / "docs" / "conformance.md"
#: Everything from this line on in the page is written by hand and kept when the sweep rewrites the page.
KEEP_MARKER = "<!-- hand-written below: kept by conformance.regen_docs -->"


def main(argv: list[str] | None = None) -> int:
    """Run the sweep and write the page; returns 0 (divergences are reported, not errors)."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--frames", type=int, default=5000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--games", nargs="+", default=None, help="ROM ids (default: all 104 playable)")
    parser.add_argument("--workers", type=int, default=2, help="processes")
    parser.add_argument("--out", type=Path, default=DOCS_PAGE)
    args = parser.parse_args(argv)
    roms = args.games or playable_roms()
    results = sweep(roms, args.frames, args.seed, workers=args.workers,
                    progress=lambda r: print(f"{r.summary()} [{r.seconds:.0f} s]", flush=True))
    command = "python -m conformance.regen_docs " + " ".join(argv if argv is not None else sys.argv[1:])
    args.out.parent.mkdir(parents=True, exist_ok=True)
    text = render_markdown(results, seed=args.seed, frames=args.frames, command=command.strip())
    old = args.out.read_text() if args.out.is_file() else ""
    if KEEP_MARKER in old:  # the hand-written part (suites, Doom, policy traces) survives regeneration
        text = text.rstrip("\n") + "\n\n" + old[old.index(KEEP_MARKER):]
    args.out.write_text(text)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
