"""The device check of gpu_env's CUDA backend, as one program: equality, throughput, memory, training, facts.

Run by ``benchmarks/gpu_check.sh`` (which prepares packages and the prebuilt module first). Stages, each
with its own time limit; results go to ``<out>/gpu_check.json`` and ``<out>/gpu_check.md`` after every
stage, so a stage that runs out of time still leaves the earlier ones:

1. facts: GPU name and driver (nvidia-smi), CUDA (torch, CuPy runtime, NVRTC), CuPy, how the module
   was loaded (prebuilt fatbin or NVRTC) and how long that took;
2. equality: ``CudaAtariBatch`` against ``AtariBatch(backend="cpu")``, every frame: reward, RAM,
   screen, lives, terminal, truncated, frame numbers; all ROMs x ``frames_all`` frames and
   ``games_long`` x ``frames_long`` frames, sticky actions 0.25, random actions, ``reset_game`` at
   game over; one thread and CUDA stream per game (16 at a time);
3. throughput through ``make_vec(backend="cuda", obs_format="torch")`` (CUDA tensors out): raw
   (frameskip 1, RAM observations, so frames/s is emulation) on Pong, Breakout, MsPacman, and the DQN
   setting (AtariPreprocessing 84x84 gray, frame_skip 4, noop_max 30, stack 4) on Pong, for each
   ``num_envs``; device bytes per env;
4. A2C+V-trace (``trainers.a2c``) on Pong for ``a2c_seconds`` with each of ``a2c_envs``: frames/s and
   the mean episode return at the end.

``--dry-run``: the same code with tiny sizes on the CPU machine, CuPy replaced by the host build of the
kernels (tests/gpu_env/cuda_host_cupy.py) when CuPy is absent; its numbers mean nothing.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import subprocess
import sys
import time
import traceback
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

LONG_GAMES = ("pong", "breakout", "ms_pacman", "space_invaders", "seaquest", "qbert", "road_runner",
              "montezuma_revenge", "pitfall2", "robotank")


@dataclass(frozen=True)
class Plan:
    """Sizes and time limits of one check (seconds are wall-clock limits of each stage)."""

    games_all: tuple[str, ...] | None = None  # None: every ROM gpu_env plays
    frames_all: int = 2_000
    games_long: tuple[str, ...] = LONG_GAMES
    frames_long: int = 10_000
    envs_equality: int = 2
    equality_threads: int = 16
    throughput_games: tuple[str, ...] = ("pong", "breakout", "ms_pacman")
    throughput_envs: tuple[int, ...] = (1024, 4096, 16384, 65536)
    throughput_seconds: float = 1.5
    a2c_envs: tuple[int, ...] = (4096, 16384)
    a2c_seconds: float = 60.0
    limits: dict[str, float] = field(default_factory=lambda: {
        "equality": 85.0, "throughput": 60.0, "a2c": 150.0})


DRY_PLAN = Plan(games_all=("pong", "breakout", "ms_pacman"), frames_all=30, games_long=("pong", "qbert"),
                frames_long=60, equality_threads=2, throughput_games=("pong",), throughput_envs=(8, 16),
                throughput_seconds=0.2, a2c_envs=(4,), a2c_seconds=3.0,
                limits={"equality": 120.0, "throughput": 60.0, "a2c": 60.0})


# ---------------------------------------------------------------------------------------------- helpers
def _install_host_cupy() -> Any:
    """Put the host build of the kernels in place of ``cupy`` (dry run on a machine without CuPy)."""
    import importlib
    import tempfile

    sys.path.insert(0, str(ROOT / "tests" / "gpu_env"))
    cuda_host_cupy = importlib.import_module("cuda_host_cupy")

    lib = cuda_host_cupy.build_library(Path(tempfile.gettempdir()) / "gpu_env_cuda_host_shim")
    fake = cuda_host_cupy.make_module(lib)
    sys.modules["cupy"] = fake
    return fake


def _synchronize(cp: Any) -> None:
    cp.cuda.Device().synchronize()


def _stream(cp: Any) -> Any:
    stream = getattr(cp.cuda, "Stream", None)
    return stream(non_blocking=False) if stream is not None else contextlib.nullcontext()


@contextlib.contextmanager
def _stage(results: dict[str, Any], name: str, write: Callable[[], None]) -> Iterator[dict[str, Any]]:
    entry: dict[str, Any] = {"status": "running"}
    results[name] = entry
    start = time.perf_counter()
    print(f"== {name}", flush=True)
    try:
        yield entry
        entry["status"] = "ok"
    except Exception as exc:  # a failed stage is reported, the next one still runs
        entry["status"] = "error"
        entry["error"] = f"{type(exc).__name__}: {exc}"[:2000]
        traceback.print_exc()
    finally:
        entry["seconds"] = round(time.perf_counter() - start, 2)
        print(f"== {name}: {entry['status']} in {entry['seconds']} s", flush=True)
        write()


# ---------------------------------------------------------------------------------------------- facts
def facts(cp: Any, dry_run: bool) -> dict[str, Any]:
    """Machine, driver and library versions, and how the CUDA module loads."""
    import torch

    from gpu_env.backends.cuda import module
    from gpu_env.backends.cuda.backend import CudaAtariBatch

    out: dict[str, Any] = {"python": platform.python_version(), "torch": torch.__version__,
                           "torch_cuda": torch.version.cuda, "cupy": getattr(cp, "__version__", "?"),
                           "dry_run": dry_run, "source_key": module.cache_key(module.KernelOptions(), "sm_90"),
                           "cache_dir": str(module.cache_dir())}
    try:
        smi = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,memory.total", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=30, check=False)
        out["nvidia_smi"] = smi.stdout.strip() or smi.stderr.strip()
    except (OSError, subprocess.TimeoutExpired) as exc:
        out["nvidia_smi"] = f"not available: {exc}"
    for name, call in (("cuda_runtime", "runtimeGetVersion"), ("cuda_driver", "driverGetVersion")):
        with contextlib.suppress(Exception):
            out[name] = int(getattr(cp.cuda.runtime, call)())
    with contextlib.suppress(Exception):
        out["nvrtc"] = ".".join(str(v) for v in cp.cuda.nvrtc.getVersion())
    prebuilt = module.cubin_path(module.KernelOptions(), "sm_90")
    out["prebuilt_file"] = str(prebuilt) if prebuilt.is_file() else None
    if prebuilt.is_file():
        out["prebuilt_images"] = module.fatbin_entries(prebuilt)
    start = time.perf_counter()
    CudaAtariBatch("pong", 1, seeds=[0])
    _synchronize(cp)
    out["module_load_s"] = round(time.perf_counter() - start, 3)
    out["module_load"] = dict(module.last_load)
    return out


# ---------------------------------------------------------------------------------------------- equality
def _mismatch(cpu: Any, gpu: Any, r_cpu: Any, r_gpu: Any, n: int) -> str | None:
    status = gpu._status.get()
    checks = (
        ("reward", r_gpu.get(), r_cpu),
        ("ram", gpu.get_ram().get(), cpu.get_ram()),
        ("lives", status[2], cpu.lives()),
        ("terminal", status[0] != 0, cpu.game_over(False)),
        ("truncated", status[1] != 0, cpu.game_truncated()),
        ("frame_number", status[3], cpu.frame_number()),
        ("episode_frame_number", status[4], cpu.episode_frame_number()),
        ("screen", gpu.get_screen().get(), cpu.get_screen()),
    )
    for name, got, want in checks:
        if not np.array_equal(np.asarray(got), np.asarray(want)):
            bad = [i for i in range(n) if not np.array_equal(np.asarray(got)[i], np.asarray(want)[i])]
            return f"{name} differs in envs {bad}"
    return None


def lockstep(cp: Any, game: str, frames: int, n: int, seed: int, deadline: float) -> dict[str, Any]:
    """Step ``game`` on both backends, comparing every frame; stops at the first mismatch or the deadline."""
    from gpu_env.atari_batch import AtariBatch
    from gpu_env.backends.cuda.backend import CudaAtariBatch

    seeds = [seed + i for i in range(n)]
    rng = np.random.default_rng(seed)
    row: dict[str, Any] = {"game": game, "envs": n, "frames_wanted": frames, "frames": 0, "resets": 0,
                           "mismatch": None}
    with _stream(cp):
        cpu = AtariBatch(game, n, backend="cpu", seeds=seeds, repeat_action_probability=0.25, num_threads=1)
        gpu = CudaAtariBatch(game, n, seeds=seeds, repeat_action_probability=0.25)
        zeros = np.zeros(n, np.int32)
        row["mismatch"] = _mismatch(cpu, gpu, zeros, cp.zeros(n, cp.int32), n)
        frame = 0
        while row["mismatch"] is None and frame < frames and time.perf_counter() < deadline:
            frame += 1
            actions = rng.integers(0, 18, n)
            r_gpu = gpu.act(actions, check=False)
            r_cpu = cpu.act(actions)
            row["mismatch"] = _mismatch(cpu, gpu, r_cpu, r_gpu, n)
            over = cpu.game_over()
            if row["mismatch"] is None and over.any():
                row["resets"] += int(over.sum())
                cpu.reset_game(over)
                gpu.reset_game(over)
                row["mismatch"] = _mismatch(cpu, gpu, zeros, cp.zeros(n, cp.int32), n)
            if row["mismatch"] is not None:
                row["mismatch"] = f"frame {frame}: {row['mismatch']}"
        row["frames"] = frame
    row["equal"] = row["mismatch"] is None and frame == frames
    return row


def equality(cp: Any, plan: Plan, entry: dict[str, Any]) -> None:
    """Both equality runs (all ROMs, then the long ones), one thread per game, inside the stage's limit."""
    from gpu_env import games

    deadline = time.perf_counter() + plan.limits["equality"]
    all_games = plan.games_all if plan.games_all is not None else tuple(sorted(games.games()))
    # The long runs first, so that they run beside the short ones instead of after them.
    jobs = [(g, plan.frames_long, 500_000 + 1000 * k) for k, g in enumerate(plan.games_long)]
    jobs += [(g, plan.frames_all, 1000 * k) for k, g in enumerate(all_games)]
    with ThreadPoolExecutor(max_workers=plan.equality_threads) as pool:
        rows = list(pool.map(lambda j: lockstep(cp, j[0], j[1], plan.envs_equality, j[2], deadline), jobs))
    long = len(plan.games_long)
    for key, subset in (("all_roms", rows[long:]), ("long", rows[:long])):
        entry[key] = {"games": len(subset), "frames_each": subset[0]["frames_wanted"] if subset else 0,
                      "equal": sum(r["equal"] for r in subset),
                      "frames_compared": sum(r["frames"] * r["envs"] for r in subset),
                      "mismatches": [r for r in subset if r["mismatch"]],
                      "unfinished": [r["game"] for r in subset if not r["equal"] and not r["mismatch"]]}
    entry["rows"] = rows


# ---------------------------------------------------------------------------------------------- throughput
SETTINGS: dict[str, dict[str, Any]] = {
    "raw": {"frameskip": 1, "obs_type": "ram", "repeat_action_probability": 0.25},
    "dqn": {"frameskip": 1, "repeat_action_probability": 0.25, "noop_max": 30, "frame_skip": 4, "screen_size": 84,
            "grayscale_obs": True, "stack_size": 4},
}


def _env_rate(cp: Any, env_id: str, n: int, setting: str, seconds: float, block_size: int = 128) -> dict[str, Any]:
    import torch

    import gpu_env

    pool = cp.get_default_memory_pool()
    start = time.perf_counter()
    env = gpu_env.make_vec(env_id, n, backend="cuda", obs_format="torch", block_size=block_size,
                           **SETTINGS[setting])
    env.reset(seed=0)
    _synchronize(cp)
    setup_s = time.perf_counter() - start
    per_step = 4 if setting == "dqn" else 1
    actions_n = int(env.single_action_space.n)
    gen = torch.Generator(device=env.device).manual_seed(0)
    env.step(torch.randint(0, actions_n, (n,), device=env.device, generator=gen))
    _synchronize(cp)
    steps, start = 0, time.perf_counter()
    while True:
        env.step(torch.randint(0, actions_n, (n,), device=env.device, generator=gen))
        steps += 1
        if steps % 8 == 0 and time.perf_counter() - start > seconds:
            _synchronize(cp)
            break
    wall = time.perf_counter() - start
    row = {"env_id": env_id, "setting": setting, "envs": n, "block": block_size,
           "frames_per_s": steps * n * per_step / wall, "steps_per_s": steps / wall, "steps": steps,
           "setup_s": round(setup_s, 2),
           "bytes_per_env": env.memory_bytes_per_env(),
           "pool_bytes_per_env": round(pool.used_bytes() / n)}
    env.close()
    del env
    pool.free_all_blocks()
    return row


def throughput(cp: Any, plan: Plan, entry: dict[str, Any]) -> None:
    """Frames/s against num_envs through make_vec (raw on each game, the DQN setting on the first)."""
    names = {"pong": "ALE/Pong-v5", "breakout": "ALE/Breakout-v5", "ms_pacman": "ALE/MsPacman-v5"}
    deadline = time.perf_counter() + plan.limits["throughput"]
    configs = [(names[g], "raw") for g in plan.throughput_games] + [(names[plan.throughput_games[0]], "dqn")]
    rows: list[dict[str, Any]] = []
    entry["rows"] = rows
    for n in plan.throughput_envs:
        for env_id, setting in configs:
            if time.perf_counter() > deadline:
                entry["skipped_after"] = f"{env_id} {setting} {n}: stage time limit"
                return
            rows.append(_env_rate(cp, env_id, n, setting, plan.throughput_seconds))
            print(f"{env_id} {setting} x{n}: {rows[-1]['frames_per_s']:,.0f} frames/s", flush=True)
    n = plan.throughput_envs[min(2, len(plan.throughput_envs) - 1)]
    for block in (32, 64, 256):  # kernel variant: threads per block of the env kernels (default 128)
        if time.perf_counter() > deadline:
            entry["skipped_after"] = f"block {block}: stage time limit"
            return
        rows.append(_env_rate(cp, configs[0][0], n, "raw", plan.throughput_seconds, block))


# ---------------------------------------------------------------------------------------------- A2C
def a2c(plan: Plan, entry: dict[str, Any], run_root: Path, write: Callable[[], None]) -> None:
    """A2C+V-trace on Pong with each env count for ``a2c_seconds``: frames/s, episodes, mean return."""
    from trainers.a2c.config import A2cConfig
    from trainers.a2c.runner import run

    rows: list[dict[str, Any]] = []
    entry["rows"] = rows
    for n in plan.a2c_envs:
        run_dir = run_root / time.strftime("%Y%m%d-%H%M%S") / f"a2c_pong_{n}"
        cfg = A2cConfig(game="Pong", backend="cuda", num_envs=n, max_seconds=plan.a2c_seconds, out=str(run_dir),
                        log_every_s=max(1.0, plan.a2c_seconds / 6),
                        save_every_s=1e9, num_minibatches=4 if n % 4 == 0 else 1)
        result = run(cfg, log=lambda line: print(line, flush=True))
        rows.append({"envs": n, "fps": result.fps, "frames": result.frames, "updates": result.updates,
                     "episodes": result.episodes, "mean_episode_return": result.mean_episode_return,
                     "seconds": round(result.seconds, 1)})
        write()


# ---------------------------------------------------------------------------------------------- report
def markdown(results: dict[str, Any]) -> str:
    """Return the results as Markdown tables."""
    lines = ["# gpu_env device check", ""]
    f = results.get("facts", {})
    if f:
        lines += ["| fact | value |", "| --- | --- |"]
        lines += [f"| {k} | {v} |" for k, v in f.items() if k not in ("status",)]
        lines.append("")
    eq = results.get("equality", {})
    if eq:
        lines += ["## CUDA vs CPU, every frame", "", "| run | games | frames each | equal | env-frames compared |"
                  " mismatches | unfinished |", "| --- | --- | --- | --- | --- | --- | --- |"]
        for key in ("all_roms", "long"):
            if key in eq:
                r = eq[key]
                bad = "; ".join(f"{m['game']}: {m['mismatch']}" for m in r["mismatches"]) or "none"
                lines.append(f"| {key} | {r['games']} | {r['frames_each']} | {r['equal']} | {r['frames_compared']:,}"
                             f" | {bad} | {', '.join(r['unfinished']) or 'none'} |")
        lines += ["", f"status: {eq.get('status')} {eq.get('error', '')}", ""]
    tp = results.get("throughput", {})
    if tp:
        lines += ["## make_vec(backend='cuda') throughput", "", "| env | setting | num_envs | block | frames/s |"
                  " steps/s | device B/env | pool B/env | setup s |",
                  "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
        for r in tp.get("rows", []):
            lines.append(f"| {r['env_id']} | {r['setting']} | {r['envs']} | {r['block']} | {r['frames_per_s']:,.0f} | "
                         f"{r['steps_per_s']:.1f} | {r['bytes_per_env']:,} | {r['pool_bytes_per_env']:,} | "
                         f"{r['setup_s']} |")
        lines += ["", f"status: {tp.get('status')} {tp.get('error', '')} {tp.get('skipped_after', '')}", ""]
    tr = results.get("a2c", {})
    if tr:
        lines += ["## A2C+V-trace, Pong", "", "| num_envs | frames/s | frames | updates | episodes | mean return |",
                  "| --- | --- | --- | --- | --- | --- |"]
        for r in tr.get("rows", []):
            lines.append(f"| {r['envs']} | {r['fps']:,.0f} | {r['frames']:,} | {r['updates']} | {r['episodes']} | "
                         f"{r['mean_episode_return']:.2f} |")
        lines += ["", f"status: {tr.get('status')} {tr.get('error', '')}", ""]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Run the check; exit 0 when every stage ran and every equality run is equal, 1 otherwise, 2 without CuPy."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, required=True, help="folder for gpu_check.json and gpu_check.md")
    parser.add_argument("--dry-run", action="store_true", help="tiny sizes; the host kernels when CuPy is absent")
    parser.add_argument("--stages", nargs="+", default=["facts", "equality", "throughput", "a2c"],
                        choices=["facts", "equality", "throughput", "a2c"])
    parser.add_argument("--runs", type=Path, default=Path("/tmp/gpu_check_runs"), help="A2C run folders")
    args = parser.parse_args(argv)
    plan = DRY_PLAN if args.dry_run else Plan()
    try:
        import cupy as cp
    except ImportError:
        if not args.dry_run:
            print("gpu_check: CuPy is not installed: nothing was measured (pass --dry-run to test the script)",
                  file=sys.stderr)
            return 2
        cp = _install_host_cupy()
    args.out.mkdir(parents=True, exist_ok=True)
    results: dict[str, Any] = {"plan": asdict(plan), "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}

    def write() -> None:
        (args.out / "gpu_check.json").write_text(json.dumps(results, indent=1, default=str))
        (args.out / "gpu_check.md").write_text(markdown(results))

    if "facts" in args.stages:
        with _stage(results, "facts", write) as entry:
            entry.update(facts(cp, args.dry_run))
    if "equality" in args.stages:
        with _stage(results, "equality", write) as entry:
            equality(cp, plan, entry)
    if "throughput" in args.stages:
        with _stage(results, "throughput", write) as entry:
            throughput(cp, plan, entry)
    if "a2c" in args.stages:
        with _stage(results, "a2c", write) as entry:
            a2c(plan, entry, args.runs, write)
    write()
    print(markdown(results))
    ok = all(results[s]["status"] == "ok" for s in args.stages)
    eq = results.get("equality", {})
    ok = ok and all(not eq.get(k, {}).get("mismatches") for k in ("all_roms", "long"))
    return 0 if ok else 1


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    raise SystemExit(main())
