"""Train a Sample Factory Doom agent with Sample Factory's defaults, then score it with SF's enjoy and evaltk.

From scratch, per ``--env``:

1. ``python -m sf_examples.vizdoom.train_vizdoom --env=ENV --experiment=EXP --train_dir=DIR --device=cpu
   --train_for_seconds=S`` (Sample Factory's own example script and defaults; ``--train-args`` adds
   options, ``--skip-train`` uses an existing ``DIR/EXP``);
2. ``benchmarks/sf_doom_enjoy.py``: Sample Factory's ``enjoy`` for ``--episodes`` episodes (sampled
   actions, its default), one row per episode in ``OUT/sf_enjoy/scores.csv``;
3. ``evaltk evaluate DIR/EXP --episodes N --out OUT/evaltk`` (the import samples too, as enjoy does);
4. ``evaltk compare OUT/sf_enjoy OUT/evaltk --margin M`` (unpaired: the two sides cannot share seeds).

Steps 1 and 2 run Sample Factory and need its runtime (``--sf-pythonpath``: a folder with
``gymnasium==0.29.1``, ``numpy==2.2.6``, ``huggingface_hub==0.25.2``, ``tensorboardX``, see
``docs/importers.md``; ``TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD=1`` is set for step 2 only). Without
``faster_fifo`` Sample Factory trains only with ``--serial_mode=True --async_rl=False``, which
``--train-args`` defaults to. ``OMP_NUM_THREADS`` defaults to 1 for every step (it changes no
result; with torch's default threads Sample Factory's ``enjoy`` ran about 30 times slower on two
shared cores). Example::

    python benchmarks/sf_doom_compare.py --env doom_basic --train-seconds 600 --episodes 100 --margin 0.3 \
        --sf-pythonpath deps --out runs/sf_basic_compare
"""

from __future__ import annotations

import argparse
import os
import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _run(cmd: list[str], env: dict[str, str]) -> None:
    print("+", shlex.join(cmd), flush=True)
    subprocess.run(cmd, env=env, check=True)


def main(argv: list[str] | None = None) -> int:
    """Run the four steps; the last line printed is evaltk compare's verdict."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--env", default="doom_basic")
    p.add_argument("--experiment", default=None, help="default: sf_<env>")
    p.add_argument("--train-dir", type=Path, default=Path("train_dir"))
    p.add_argument("--train-seconds", type=int, default=600)
    p.add_argument("--train-args", default="--serial_mode=True --async_rl=False")
    p.add_argument("--skip-train", action="store_true")
    p.add_argument("--episodes", type=int, default=100)
    p.add_argument("--margin", type=float, required=True, help="equivalence margin (absolute, in score units)")
    p.add_argument("--eval-frameskip", type=int, default=None, help="passed to sf_doom_enjoy.py (see there)")
    p.add_argument("--sf-pythonpath", default="", help="PYTHONPATH entries Sample Factory needs here")
    p.add_argument("--out", type=Path, required=True)
    args = p.parse_args(argv)
    exp = args.experiment or f"sf_{args.env}"
    py = sys.executable
    base = {"OMP_NUM_THREADS": "1", **os.environ}  # torch's default threads made enjoy ~30x slower on 2 busy cores
    sf_env = {**base, "PYTHONPATH": os.pathsep.join(x for x in (args.sf_pythonpath, str(ROOT)) if x)}
    ours = {**base, "PYTHONPATH": str(ROOT)}
    if not args.skip_train:
        _run([py, "-m", "sf_examples.vizdoom.train_vizdoom", f"--env={args.env}", f"--experiment={exp}",
              f"--train_dir={args.train_dir}", "--device=cpu", f"--train_for_seconds={args.train_seconds}",
              "--with_wandb=False", *shlex.split(args.train_args)], sf_env)
    _run([py, str(ROOT / "benchmarks" / "sf_doom_enjoy.py"), f"--env={args.env}", f"--experiment={exp}",
          f"--train_dir={args.train_dir}", f"--episodes={args.episodes}", f"--out={args.out / 'sf_enjoy'}",
          *([f"--eval-frameskip={args.eval_frameskip}"] if args.eval_frameskip else [])],
         {**sf_env, "TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD": "1"})
    _run([py, "-m", "evaltk.cli.main", "evaluate", str(args.train_dir / exp), "--episodes", str(args.episodes),
          "--out", str(args.out / "evaltk")], ours)
    _run([py, "-m", "evaltk.cli.main", "compare", str(args.out / "sf_enjoy" / "scores.csv"), str(args.out / "evaltk"),
          "--margin", str(args.margin), "--unpaired", "--out", str(args.out / "compare")], ours)
    return 0


if __name__ == "__main__":
    sys.exit(main())
