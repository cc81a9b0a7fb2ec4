r"""Score a Sample Factory Doom experiment with Sample Factory's own ``enjoy``, one row per episode.

Runs ``sample_factory.enjoy.enjoy`` (Sample Factory's evaluation loop, its model, its env) on
``--train_dir/--experiment`` for ``--episodes`` episodes and writes ``scores.csv`` (``index``,
``env_id``, ``return``, ``reward``) that ``evaltk compare`` reads. ``return`` is what ``enjoy``
records per episode (``reward_list``): the episode's ``true_objective`` when the env reports one,
else the summed reward; ``reward`` is the summed (shaped, scaled) reward that ``enjoy`` averages in
its log. The rows are taken by a ``gymnasium.Wrapper`` registered around Sample Factory's own env
factory, which only watches ``step``; ``enjoy``'s printed average is checked against them.

Sample Factory 2.1.1 needs ``TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD=1`` on torch >= 2.6 (its ``torch.load``
unpickles the checkpoint: run this only on checkpoints you trust) and, with this repository's
environment, older ``gymnasium`` (0.29), ``numpy`` (< 2.3), ``huggingface_hub`` (< 0.26) and
``tensorboardX`` on ``PYTHONPATH`` (``docs/importers.md`` says how). Usage::

    TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD=1 PYTHONPATH=deps python benchmarks/sf_doom_enjoy.py \
        --env doom_basic --experiment sf_basic --train_dir train_dir --episodes 100 --out runs/sf_enjoy
"""

from __future__ import annotations

import argparse
import csv
import functools
import os
import sys
from pathlib import Path
from typing import Any


class _Recorder:
    """Collects per-episode ``true_objective`` (else the summed reward) as Sample Factory's ``enjoy`` does."""

    def __init__(self) -> None:
        self.rows: list[tuple[float, float]] = []


def _recording_env(recorder: _Recorder, spec: Any, name: str, cfg: Any, env_config: Any,
                   render_mode: str | None = None, **kwargs: Any) -> Any:
    import gymnasium as gym
    from sf_examples.vizdoom.doom.doom_utils import make_doom_env_from_spec  # type: ignore[import-untyped]

    class Record(gym.Wrapper):
        def __init__(self, env: Any) -> None:
            super().__init__(env)
            self.total = 0.0

        def step(self, action: Any) -> Any:
            obs, reward, terminated, truncated, info = self.env.step(action)
            self.total += float(reward)
            if terminated or truncated:
                objective = info.get("true_objective", self.total) if isinstance(info, dict) else self.total
                recorder.rows.append((float(objective), self.total))
                self.total = 0.0
            return obs, reward, terminated, truncated, info

    return Record(make_doom_env_from_spec(spec, name, cfg, env_config, render_mode, **kwargs))


def main(argv: list[str] | None = None) -> int:
    """Run Sample Factory's enjoy and write ``scores.csv``; print its mean and enjoy's own."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--env", required=True)
    p.add_argument("--experiment", required=True)
    p.add_argument("--train_dir", required=True)
    p.add_argument("--episodes", type=int, default=100)
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--deterministic", action="store_true", help="enjoy's --eval_deterministic (argmax actions)")
    p.add_argument("--eval-frameskip", type=int, default=None,
                   help="enjoy's --eval_env_frameskip (default: the Doom default 1, each action repeated "
                        "env_frameskip times; env_frameskip plays each action once, as evaltk does)")
    args = p.parse_args(argv)
    if os.environ.get("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD") != "1":
        print("error: Sample Factory's enjoy needs TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD=1 on torch >= 2.6", file=sys.stderr)
        return 2
    from sample_factory.enjoy import enjoy  # type: ignore[import-untyped]
    from sample_factory.envs.env_utils import register_env  # type: ignore[import-untyped]
    from sf_examples.vizdoom.doom.doom_utils import doom_env_by_name
    from sf_examples.vizdoom.train_vizdoom import (  # type: ignore[import-untyped]
        parse_vizdoom_cfg,
        register_vizdoom_components,
    )

    register_vizdoom_components()
    recorder = _Recorder()
    register_env(args.env, functools.partial(_recording_env, recorder, doom_env_by_name(args.env)))
    sf_argv = [f"--env={args.env}", f"--experiment={args.experiment}", f"--train_dir={args.train_dir}",
               "--no_render", f"--max_num_episodes={args.episodes}", "--device=cpu",
               *(["--eval_deterministic=True"] if args.deterministic else []),
               *([f"--eval_env_frameskip={args.eval_frameskip}"] if args.eval_frameskip else [])]
    cfg = parse_vizdoom_cfg(argv=sf_argv, evaluation=True)
    _, sf_mean = enjoy(cfg)
    rows = recorder.rows[:args.episodes]
    args.out.mkdir(parents=True, exist_ok=True)
    with open(args.out / "scores.csv", "w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["index", "env_id", "return", "reward"])
        for i, (objective, total) in enumerate(rows):
            writer.writerow([i, f"sf_{args.env}", repr(objective), repr(total)])
    mean = sum(r[0] for r in rows) / max(len(rows), 1)
    print(f"{len(rows)} episodes: mean true_objective {mean:.4f}; enjoy's mean episode reward (last <=100) "
          f"{sf_mean:.4f}; written {args.out / 'scores.csv'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
