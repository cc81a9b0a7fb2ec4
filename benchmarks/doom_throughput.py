"""Doom throughput, side by side in one run: raw ViZDoom ceiling, our sampler, our APPO, Sample Factory's APPO.

    python benchmarks/doom_throughput.py --sf-python /tmp/sf_venv/bin/python

Rows (env frames = agent steps x frameskip; all on ``--scenario``, 160x120 render resized to 128x72 RGB,
frameskip 4, and the same model size for both trainers):

1. raw: one process stepping one ``DoomGame`` with random actions, ``get_state`` and the same resize our
   workers do; the ceiling is that rate x the number of cores;
2. ours, sampler only: ``trainers.appo`` with ``--sampler-only`` (workers, shared buffers, channels and the
   inference loop, random actions instead of the network, no learning);
3. ours, end to end: ``trainers.appo`` training;
4. Sample Factory 2.1.1 end to end (with ``--sf-python``): ``sf_examples.vizdoom.train_vizdoom`` on doom_basic,
   ``--device=cpu``, stopped with SIGINT (its ``--train_for_seconds`` is a no-op in 2.1.1).

Each trainer runs as a subprocess in its own session; the window starts ``--warmup`` seconds after its first
frames and lasts ``--seconds``. Frames per CPU-second count the trainer and all its live descendants (workers,
engines), which is the fairer number on a shared machine; wall-clock rates depend on the load (printed).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
_CLK = os.sysconf("SC_CLK_TCK")
_SF_LINE = re.compile(r"\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d+)\].*Fps is \(10 sec: ([\d.na]+).*Total num frames: (\d+)")


def tree_cpu_seconds(root: int) -> float:
    """CPU seconds (user+system) of ``root`` and every live descendant (workers, engines), plus reaped children."""
    children: dict[int, list[int]] = {}
    times: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            raw = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        fields = raw[raw.rindex(")") + 2 :].split()
        pid = int(entry)
        children.setdefault(int(fields[1]), []).append(pid)
        times[pid] = sum(int(x) for x in fields[11:15])
    total, stack = 0, [root]
    while stack:
        pid = stack.pop()
        total += times.get(pid, 0)
        stack.extend(children.get(pid, []))
    return total / _CLK


def raw_vizdoom(scenario_name: str, seconds: float) -> dict[str, float]:
    """Step one DoomGame with random actions for ``seconds`` (get_state + resize); frames/s and per CPU-second."""
    import numpy as np

    from evaltk.envs import doom

    scenario = doom.get_scenario(scenario_name)
    game = doom.make_game(scenario, seed=0)
    game.init()
    rng = np.random.default_rng(0)
    n_buttons = len(scenario.buttons)
    out = np.empty((3, *scenario.obs_size), dtype=np.uint8)
    frames = 0
    pid = os.getpid()
    t0, c0 = time.monotonic(), tree_cpu_seconds(pid)
    while time.monotonic() - t0 < seconds:
        if game.is_episode_finished():
            game.new_episode()
        game.make_action([float(x) for x in rng.integers(0, 2, n_buttons)], scenario.frameskip)
        frames += scenario.frameskip
        if not game.is_episode_finished():
            doom.observation(game.get_state(), scenario, out=out)
    wall, cpu = time.monotonic() - t0, tree_cpu_seconds(pid) - c0
    game.close()
    return {"fps": frames / wall, "frames_per_cpu_s": frames / max(cpu, 1e-9), "frames": frames, "seconds": wall}


def _run_raw(scenario: str, seconds: float) -> dict[str, float]:
    out = subprocess.run([sys.executable, __file__, "--_raw", scenario, "--seconds", str(seconds)], cwd=ROOT,
                         capture_output=True, text=True, start_new_session=True, check=True, timeout=seconds + 120)
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def _window(proc: subprocess.Popen[str], progress: Any, warmup: float, seconds: float, limit: float
            ) -> dict[str, float]:
    """Follow ``progress() -> (frames | None)`` until the window is over; measure frames and CPU inside it."""
    start = time.monotonic()
    first = mark = None
    frames0 = cpu0 = 0.0
    result: dict[str, float] = {}
    while time.monotonic() - start < limit and proc.poll() is None:
        time.sleep(0.5)
        frames = progress()
        now = time.monotonic()
        if frames is None or frames <= 0:
            continue
        if first is None:
            first = now
            result["startup_s"] = now - start
        if mark is None and now - first >= warmup:
            mark, frames0, cpu0 = now, frames, tree_cpu_seconds(proc.pid)
        if mark is not None and now - mark >= seconds:
            cpu = tree_cpu_seconds(proc.pid) - cpu0
            result.update(fps=(frames - frames0) / (now - mark), frames_per_cpu_s=(frames - frames0) / max(cpu, 1e-9),
                          frames=frames - frames0, seconds=now - mark, cpu_seconds=cpu)
            break
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGINT)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    return result


def run_ours(args: argparse.Namespace, sampler_only: bool, workdir: Path) -> dict[str, float]:
    """Run ``python -m trainers.appo`` and measure its steady-state window from ``metrics.jsonl``."""
    out = workdir / ("sampler" if sampler_only else "train")
    cmd = [sys.executable, "-m", "trainers.appo", "--out", str(out), "--scenario", args.scenario,
           "--num-workers", str(args.num_workers), "--envs-per-worker", str(args.envs_per_worker),
           "--batch-size", str(args.batch_size), "--learner-threads", str(args.learner_threads),
           "--log-every-s", "1", "--save-every-s", "0"]
    if sampler_only:
        cmd.append("--sampler-only")
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, text=True,
                            start_new_session=True)

    def progress() -> float | None:
        path = out / "metrics.jsonl"
        if not path.is_file():
            return None
        lines = path.read_text().splitlines()
        return float(json.loads(lines[-1])["env_frames"]) if lines else None

    return _window(proc, progress, args.warmup, args.seconds, args.limit)


def run_sample_factory(args: argparse.Namespace, workdir: Path) -> dict[str, float]:
    """Run Sample Factory 2.1.1's Doom trainer with ``--sf-python`` and measure its window from its log."""
    log = workdir / "sf_log.txt"
    cmd = [args.sf_python, "-m", "sf_examples.vizdoom.train_vizdoom", f"--env=doom_{args.scenario}",
           "--experiment=bench", f"--train_dir={workdir / 'sf'}", f"--num_workers={args.num_workers}",
           f"--num_envs_per_worker={args.sf_envs_per_worker}", "--device=cpu", "--train_for_env_steps=100000000",
           "--seed=0", "--save_every_sec=100000"]
    fh = open(log, "w")  # noqa: SIM115 - closed below
    proc = subprocess.Popen(cmd, cwd=workdir, stdout=fh, stderr=subprocess.STDOUT, text=True, start_new_session=True,
                            env={**os.environ, "TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD": "1"})

    def progress() -> float | None:
        frames = None
        for match in _SF_LINE.finditer(log.read_text(errors="replace")):
            frames = float(match.group(3))
        return frames

    try:
        return _window(proc, progress, args.warmup, args.seconds, args.limit)
    finally:
        fh.close()


def main(argv: list[str] | None = None) -> int:
    """Run every row and print the table (``--json``: also the numbers as the last line)."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scenario", default="basic")
    parser.add_argument("--seconds", type=float, default=60.0, help="measurement window of each trainer row")
    parser.add_argument("--warmup", type=float, default=20.0, help="seconds after the first frames before measuring")
    parser.add_argument("--raw-seconds", type=float, default=15.0)
    parser.add_argument("--limit", type=float, default=400.0, help="give up on a row after this many seconds")
    parser.add_argument("--num-workers", type=int, default=2)
    parser.add_argument("--envs-per-worker", type=int, default=8, help="ours")
    parser.add_argument("--batch-size", type=int, default=512, help="ours")
    parser.add_argument("--learner-threads", type=int, default=1, help="ours: torch threads of the learner")
    parser.add_argument("--sf-envs-per-worker", type=int, default=4, help="Sample Factory")
    parser.add_argument("--sf-python", default=None, help="python of a venv with sample-factory==2.1.1")
    parser.add_argument("--skip", nargs="*", default=[], choices=["raw", "sampler", "train", "sf"])
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--_raw", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args._raw:
        print(json.dumps(raw_vizdoom(args._raw, args.seconds)))
        return 0
    cores = os.cpu_count() or 1
    rows: dict[str, dict[str, float]] = {}
    load = [os.getloadavg()[0]]
    with tempfile.TemporaryDirectory(prefix="doom_bench_") as tmp:
        work = Path(tmp)
        if "raw" not in args.skip:
            rows["raw"] = _run_raw(args.scenario, args.raw_seconds)
        if "sampler" not in args.skip:
            rows["sampler"] = run_ours(args, True, work)
        if "train" not in args.skip:
            rows["train"] = run_ours(args, False, work)
        if args.sf_python and "sf" not in args.skip:
            rows["sf"] = run_sample_factory(args, work)
    load.append(os.getloadavg()[0])
    print_table(rows, cores, load, args)
    if args.json:
        print(json.dumps({"rows": rows, "cores": cores, "load": load}))
    return 0


def print_table(rows: dict[str, dict[str, float]], cores: int, load: list[float], args: argparse.Namespace) -> None:
    """Print the comparison table with ratios."""
    raw = rows.get("raw", {})
    ceiling = raw.get("fps", float("nan")) * cores
    ceiling_cpu = raw.get("frames_per_cpu_s", float("nan"))
    names = {"raw": "raw ViZDoom, 1 process",
             "sampler": f"ours sampler-only ({args.num_workers}x{args.envs_per_worker})",
             "train": f"ours APPO end-to-end ({args.num_workers}x{args.envs_per_worker}, batch {args.batch_size})",
             "sf": f"Sample Factory 2.1.1 end-to-end ({args.num_workers}x{args.sf_envs_per_worker})"}
    print(f"\nscenario {args.scenario}, 160x120 -> 128x72 RGB, frameskip 4, {cores} cores, "
          f"load average {load[0]:.1f} -> {load[-1]:.1f}")
    print(f"{'row':58s} {'frames/s':>10s} {'frames/CPU-s':>13s} {'startup s':>10s}  ratio")
    if raw:
        print(f"{'raw ceiling = raw x ' + str(cores) + ' cores':58s} {ceiling:10.0f} {ceiling_cpu:13.0f}")
    for key, row in rows.items():
        ratio = ""
        if key == "sampler" and raw:
            ratio = (f"{row.get('fps', float('nan')) / ceiling:.2f} of ceiling (wall), "
                     f"{row.get('frames_per_cpu_s', float('nan')) / ceiling_cpu:.2f} per CPU-s")
        if key == "train" and "sf" in rows:
            sf = rows["sf"]
            ratio = (f"{row.get('fps', float('nan')) / sf.get('fps', float('nan')):.2f}x SF (wall), "
                     f"{row.get('frames_per_cpu_s', float('nan')) / sf.get('frames_per_cpu_s', float('nan')):.2f}x "
                     "SF per CPU-s")
        fps, per_cpu = row.get("fps", float("nan")), row.get("frames_per_cpu_s", float("nan"))
        print(f"{names[key]:58s} {fps:10.0f} {per_cpu:13.0f} {row.get('startup_s', 0.0):10.1f}  {ratio}")


if __name__ == "__main__":
    sys.exit(main())
