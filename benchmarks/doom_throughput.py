"""Doom throughput at Sample Factory's configuration, side by side: ours and Sample Factory 2.1.1, alternated.

    python benchmarks/doom_throughput.py            # builds build/sf_venv on first use, then quiet and loaded rounds

Rows (env frames = agent steps x frameskip; all on ``--scenario``, 160x120 render resized to 128x72 RGB,
frameskip 4, and the same model for both trainers: convnet_simple + GRU 512):

1. raw: one process stepping one ``DoomGame`` with random actions, ``get_state`` and the same resize our
   workers do; the ceiling is that rate x the number of cores;
2. ours, sampler only: ``trainers.appo`` with ``--sampler-only`` (workers, shared buffers, channels and the
   inference loop, random actions instead of the network, no learning);
3. ours, end to end: ``trainers.appo`` training at Sample Factory's Doom defaults unless told otherwise
   (2 workers x 4 envs, batch 1024, rollout 32, GAE lambda 0.95, gamma 0.99);
4. Sample Factory 2.1.1 end to end: ``sf_examples.vizdoom.train_vizdoom`` on doom_basic, ``--device=cpu``,
   every other option at its Doom default, stopped with SIGINT (its ``--train_for_seconds`` is a no-op in 2.1.1).

Rows 3 and 4 alternate (``--rounds`` times each, ours first) in every ``--modes`` entry: ``quiet`` runs them
alone, ``loaded`` with one CPU-bound process (a busy loop) competing for a core the whole row. Medians and the
ratio of medians are printed per mode, with the load average. Sample Factory runs from its own venv
(``--sf-venv``, default ``build/sf_venv``), built on first use with pinned versions (:data:`SF_PINS`; its
gymnasium 0.29 and numpy 1.26 differ from the project's) and the project venv's torch and vizdoom on its path.

Each trainer runs as a subprocess in its own session; the window starts ``--warmup`` seconds after its first
frames and lasts ``--seconds``. Frames per CPU-second count the trainer and all its live descendants (workers,
engines); wall-clock rates depend on the load (printed).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shlex
import signal
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # this checkout first (not an installed copy): a run measures the code beside it
    sys.path.insert(0, str(ROOT))
_CLK = os.sysconf("SC_CLK_TCK")
#: Sample Factory 2.1.1 and the versions of its dependencies its venv gets (``--no-deps``: nothing else is
#: resolved; torch 2.13 and vizdoom 1.3.2 come from the project venv through a ``.pth`` file).
SF_PINS: tuple[str, ...] = (
    "sample-factory==2.1.1", "gymnasium==0.29.1", "numpy==1.26.4", "faster-fifo==1.5.2", "signal-slot-mp==1.0.5",
    "tensorboardx==2.6.2.2", "protobuf==5.29.5", "packaging==24.2", "psutil==7.2.2", "threadpoolctl==3.5.0",
    "colorlog==6.12.0", "filelock==3.16.1", "huggingface-hub==0.36.2", "cloudpickle==3.1.3",
    "farama-notifications==0.0.6", "typing-extensions==4.16.0", "opencv-python-headless==4.10.0.84",
)
#: What the two trainers still do differently at this configuration (printed under the table's header).
STILL_DIFFERS = (
    "Sample Factory's Doom defaults clip the value loss (0.2), normalise returns and add a symmetric-KL exploration "
    "loss where ours has an entropy bonus, and its GAE uses the values recorded at inference (ours recomputes "
    "them); its own basic.cfg renders the HUD without decals or particles and reads 4 game variables (ours: "
    "ViZDoom's basic.cfg, no HUD, decals and particles, no variables; 0.03-0.08 ms more engine CPU per step "
    "for its settings in one engine); each has its own process layout and inference scheduling; ours learns "
    "faster, so its episodes in the window are shorter (more resets); Sample Factory computes in fp32, ours runs its "
    "encoder (convolutions and FC, in learner and inference) in bf16 where the CPU has bf16 instructions "
    "(--encoder-precision; fp32 weights and gradients)")
_SF_LINE = re.compile(r"\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d+)\].*Fps is \(10 sec: ([\d.na]+).*Total num frames: (\d+)")


def encoder_precision(ours_args: str) -> str:
    """Name what ``--encoder-precision`` (default ``auto``) in ``ours_args`` resolves to on this CPU."""
    # Imported here: torch is needed for this line of the table only, the rows run in subprocesses.
    import torch

    from trainers.appo.network import encoder_dtype

    words = shlex.split(ours_args)
    chosen = words[words.index("--encoder-precision") + 1] if "--encoder-precision" in words[:-1] else "auto"
    dtype = encoder_dtype(chosen)
    return f"{'bf16' if dtype is torch.bfloat16 else 'fp32'} (--encoder-precision {chosen})"


def tree_cpu_seconds(root: int) -> float:
    """CPU seconds (user+system) of ``root`` and every live descendant (workers, engines), plus reaped children."""
    from evaltk.envs.shm_reaper import stat_fields

    children: dict[int, list[int]] = {}
    times: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        fields = stat_fields(entry)
        if fields is None:
            continue
        pid = int(entry)
        children.setdefault(int(fields[1]), []).append(pid)
        times[pid] = sum(int(x) for x in fields[11:15])
    total, stack = 0, [root]
    while stack:
        pid = stack.pop()
        total += times.get(pid, 0)
        stack.extend(children.get(pid, []))
    return total / _CLK


def sf_python(venv: Path) -> str:
    """Return the python of Sample Factory's venv at ``venv``, building it first if it lacks :data:`SF_PINS`."""
    python = venv / "bin" / "python"
    stamp = venv / ".evaltk-pins"
    if python.is_file() and stamp.is_file() and stamp.read_text() == "\n".join(SF_PINS):
        return str(python)
    print(f"building Sample Factory's venv in {venv} (once): {' '.join(SF_PINS)}", file=sys.stderr)
    subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True)
    subprocess.run([str(python), "-m", "pip", "install", "-q", "--no-deps", *SF_PINS], check=True)
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          check=True, capture_output=True, text=True).stdout.strip()
    # The project venv's site-packages goes last on the path: torch and vizdoom come from it, every pinned
    # package from the venv itself (earlier on the path).
    Path(site, "evaltk_project.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    subprocess.run([str(python), "-c", "import sample_factory, sf_examples.vizdoom.train_vizdoom, torch, vizdoom"],
                   check=True)
    stamp.write_text("\n".join(SF_PINS))
    return str(python)


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
    stop(proc)
    return result


def stop(proc: subprocess.Popen[Any]) -> None:
    """Stop a trainer started in its own session: SIGINT to its group (it checkpoints), SIGKILL after 60 s."""
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGINT)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def run_ours(args: argparse.Namespace, sampler_only: bool, workdir: Path) -> dict[str, float]:
    """Run ``python -m trainers.appo`` and measure its steady-state window from ``metrics.jsonl``."""
    out = workdir / ("sampler" if sampler_only else "train")
    cmd = [sys.executable, "-m", "trainers.appo", "--out", str(out), "--scenario", args.scenario,
           "--num-workers", str(args.num_workers), "--envs-per-worker", str(args.envs_per_worker),
           "--batch-size", str(args.batch_size), "--learner-threads", str(args.learner_threads),
           "--advantage", args.advantage, "--gae-lambda", str(args.gae_lambda), "--rollout", str(args.rollout),
           "--log-every-s", "1", "--save-every-s", "0", *shlex.split(args.ours_args)]
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
    """Run Sample Factory 2.1.1's Doom trainer from its venv and measure its window from its log."""
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


@contextlib.contextmanager
def competitor(on: bool) -> Iterator[None]:
    """With ``on``, one CPU-bound process (a Python busy loop) runs for the duration of the block."""
    if not on:
        yield
        return
    proc = subprocess.Popen([sys.executable, "-c", "while True: pass"], start_new_session=True)
    try:
        yield
    finally:
        proc.kill()
        proc.wait()


def main(argv: list[str] | None = None) -> int:
    """Run every row and print the table (``--json``: also the numbers as the last line)."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scenario", default="basic")
    parser.add_argument("--seconds", type=float, default=40.0, help="measurement window of each trainer row")
    parser.add_argument("--warmup", type=float, default=15.0, help="seconds after the first frames before measuring")
    parser.add_argument("--raw-seconds", type=float, default=15.0)
    parser.add_argument("--limit", type=float, default=400.0, help="give up on a row after this many seconds")
    parser.add_argument("--rounds", type=int, default=2, help="ours/Sample Factory alternations per mode")
    parser.add_argument("--modes", nargs="+", default=["quiet", "loaded"], choices=["quiet", "loaded"],
                        help="loaded: one CPU-bound process competes for a core during every trainer row")
    parser.add_argument("--num-workers", type=int, default=2, help="both trainers")
    parser.add_argument("--envs-per-worker", type=int, default=4, help="ours (Sample Factory: --sf-envs-per-worker)")
    parser.add_argument("--batch-size", type=int, default=1024, help="ours (Sample Factory's default is 1024)")
    parser.add_argument("--rollout", type=int, default=32, help="ours (Sample Factory's default is 32)")
    parser.add_argument("--advantage", default="gae", choices=["gae", "vtrace"], help="ours (Sample Factory: GAE)")
    parser.add_argument("--gae-lambda", type=float, default=0.95, help="ours (Sample Factory's default is 0.95)")
    parser.add_argument("--learner-threads", type=int, default=1, help="ours: torch threads of the learner")
    parser.add_argument("--ours-args", default="", help="ours: further trainers.appo options, e.g. "
                        "'--no-packed-inference' (printed with the table)")
    parser.add_argument("--sf-envs-per-worker", type=int, default=4, help="Sample Factory")
    parser.add_argument("--sf-venv", type=Path, default=ROOT / "build" / "sf_venv",
                        help="Sample Factory's venv, built there on first use (default build/sf_venv)")
    parser.add_argument("--skip", nargs="*", default=[], choices=["raw", "sampler", "train", "sf"])
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--_raw", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args._raw:
        print(json.dumps(raw_vizdoom(args._raw, args.seconds)))
        return 0
    if "sf" not in args.skip:
        args.sf_python = sf_python(args.sf_venv)
    cores = os.cpu_count() or 1
    rows: dict[str, dict[str, float]] = {}
    rounds: dict[str, list[dict[str, dict[str, float]]]] = {}
    load = [os.getloadavg()[0]]
    with tempfile.TemporaryDirectory(prefix="doom_bench_") as tmp:
        work = Path(tmp)
        if "raw" not in args.skip:
            rows["raw"] = _run_raw(args.scenario, args.raw_seconds)
        if "sampler" not in args.skip:
            rows["sampler"] = run_ours(args, True, work / "sampler")
        for mode in args.modes:
            for i in range(args.rounds):
                got: dict[str, dict[str, float]] = {}
                for key in ("train", "sf"):
                    if key in args.skip:
                        continue
                    with competitor(mode == "loaded"):
                        before = os.getloadavg()[0]
                        row_dir = work / f"{mode}{i}{key}"
                        row_dir.mkdir()
                        got[key] = (run_ours(args, False, row_dir) if key == "train"
                                    else run_sample_factory(args, row_dir))
                        got[key]["load"] = (before + os.getloadavg()[0]) / 2
                    print(f"[{mode} round {i + 1}/{args.rounds}] {key}: {got[key].get('fps', float('nan')):.0f} "
                          f"frames/s, load {got[key]['load']:.1f}", file=sys.stderr, flush=True)
                rounds.setdefault(mode, []).append(got)
    load.append(os.getloadavg()[0])
    print_table(rows, rounds, cores, load, args)
    if args.json:
        print(json.dumps({"rows": rows, "rounds": rounds, "cores": cores, "load": load}))
    return 0


def _median(values: list[float]) -> float:
    values = [v for v in values if v == v]
    return statistics.median(values) if values else float("nan")


def print_table(rows: dict[str, dict[str, float]], rounds: dict[str, list[dict[str, dict[str, float]]]], cores: int,
                load: list[float], args: argparse.Namespace) -> None:
    """Print the raw/sampler rows, then per mode the alternated trainer rounds, their medians and the ratios."""
    nan = float("nan")
    raw = rows.get("raw", {})
    ceiling = raw.get("fps", nan) * cores
    ceiling_cpu = raw.get("frames_per_cpu_s", nan)
    print(f"\nscenario {args.scenario}, 160x120 -> 128x72 RGB, frameskip 4, convnet_simple + GRU 512, {cores} cores, "
          f"load average {load[0]:.1f} -> {load[-1]:.1f}")
    extra = f" {args.ours_args}" if args.ours_args else ""
    print(f"ours: {args.num_workers} workers x {args.envs_per_worker} envs, batch {args.batch_size}, rollout "
          f"{args.rollout}, {args.advantage} (lambda {args.gae_lambda}){extra}; "
          f"Sample Factory 2.1.1: {args.num_workers} x "
          f"{args.sf_envs_per_worker}, its Doom defaults (batch 1024, rollout 32, GAE 0.95); both --device cpu")
    print(f"still differs: {STILL_DIFFERS}")
    print(f"ours' encoder in training here: {encoder_precision(args.ours_args)}")
    print(f"{'row':44s} {'frames/s':>10s} {'frames/CPU-s':>13s} {'startup s':>10s} {'load':>6s}  ratio")
    if raw:
        print(f"{'raw ViZDoom, 1 process':44s} {raw['fps']:10.0f} {raw['frames_per_cpu_s']:13.0f}")
        print(f"{'raw ceiling = raw x ' + str(cores) + ' cores':44s} {ceiling:10.0f} {ceiling_cpu:13.0f}")
    if "sampler" in rows:
        row = rows["sampler"]
        print(f"{'ours sampler-only, quiet':44s} {row.get('fps', nan):10.0f} {row.get('frames_per_cpu_s', nan):13.0f} "
              f"{row.get('startup_s', nan):10.1f} {'':6s}  {row.get('fps', nan) / ceiling:.2f} of ceiling (wall)")
    names = {"train": "ours APPO", "sf": "Sample Factory 2.1.1"}
    for mode, played in rounds.items():
        for i, got in enumerate(played):
            for key, row in got.items():
                print(f"{f'{mode} {i + 1}: {names[key]}':44s} {row.get('fps', nan):10.0f} "
                      f"{row.get('frames_per_cpu_s', nan):13.0f} {row.get('startup_s', nan):10.1f} "
                      f"{row.get('load', nan):6.1f}")
        med = {key: {m: _median([g[key].get(m, nan) for g in played if key in g]) for m in ("fps", "frames_per_cpu_s")}
               for key in names if any(key in g for g in played)}
        paired = [g["train"].get("fps", nan) / g["sf"].get("fps", nan) for g in played if "train" in g and "sf" in g]
        if paired:
            print(f"{f'{mode}, each round: ours / SF':44s} {'':10s} {'':13s} {'':10s} {'':6s}  "
                  + ", ".join(f"{r:.2f}x" for r in paired))
        for key, row in med.items():
            ratio = ""
            if key == "train" and "sf" in med:
                ratio = (f"{row['fps'] / med['sf']['fps']:.2f}x SF (wall), "
                         f"{row['frames_per_cpu_s'] / med['sf']['frames_per_cpu_s']:.2f}x SF per CPU-s")
            print(f"{f'{mode}, median: {names[key]}':44s} {row['fps']:10.0f} {row['frames_per_cpu_s']:13.0f} "
                  f"{'':10s} {'':6s}  {ratio}")


if __name__ == "__main__":
    sys.exit(main())
