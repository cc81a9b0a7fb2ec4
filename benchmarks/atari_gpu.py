"""GPU throughput of gpu_env's CUDA backend against the CPU backend and ale-py on the same machine.

For each game (default Pong, Breakout, MsPacman) and number of environments (256 ... 32K):
  * raw: ``CudaAtariBatch.act`` (frameskip 1, sticky actions 0.25, random actions generated on the
    device), finished episodes reset on the device every 32 steps; frames/s = emulated ALE frames;
  * preprocessed: ``gpu_env.make_vec(..., backend="cuda", obs_format="torch")`` (CUDA tensors out)
    with the DQN setting (frameskip 1, AtariPreprocessing frame_skip 4, 84x84 gray, max-pool, noop_max 30,
    stack 4, sticky actions 0.25, autoreset on the device) stepped with random device actions — the path
    users run; frames/s counts the 4 emulated frames of each step;
  * device memory per environment (the batch's own buffers, and the CuPy pool's bytes in use / N).
Kernel variants (thread per env in place vs local copy; block sizes) are timed at one size.
References on the same machine's cores: gpu_env's CPU backend (``AtariBatch(backend="cpu")``, all
threads) and ``ale_py.AtariVectorEnv`` (raw: frameskip 1, RGB 210x160, no stack; preprocessed: its
84x84 gray, frameskip 4, max-pool, stack 4), each with ``--cpu-envs`` environments.

Refuses (exit 2, nothing measured) when CuPy or a GPU is missing.

Usage: python benchmarks/atari_gpu.py [--games pong breakout ms_pacman] [--envs 256 1024 4096 16384 32768]
       [--seconds 2] [--quick] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from gpu_env.errors import BackendError  # noqa: E402

# make_vec's DQN setting (gymnasium's AtariPreprocessing defaults with a stack of 4)
DQN: dict[str, Any] = {"frameskip": 1, "repeat_action_probability": 0.25, "noop_max": 30, "frame_skip": 4,
                       "screen_size": 84, "grayscale_obs": True, "stack_size": 4}


def _timed(cp: Any, seconds: float, step: Any) -> tuple[int, float]:
    """Call ``step()`` (it returns frames) until ``seconds`` pass; returns (frames, seconds), GPU synced."""
    frames = 0
    cp.cuda.Device().synchronize()
    start = time.perf_counter()
    while True:
        frames += step()
        if frames and time.perf_counter() - start > seconds:
            cp.cuda.Device().synchronize()
            if time.perf_counter() - start > seconds:
                break
    return frames, time.perf_counter() - start


def _gpu_rows(cp: Any, game: str, n: int, seconds: float, block: int, options: Any,
              modes: list[str]) -> list[dict[str, Any]]:
    from gpu_env.backends.cuda.backend import CudaAtariBatch

    pool = cp.get_default_memory_pool()
    pool.free_all_blocks()
    rows: list[dict[str, Any]] = []
    t0 = time.perf_counter()
    batch = CudaAtariBatch(game, n, seeds=np.arange(n), repeat_action_probability=0.25, block_size=block,
                           options=options)
    cp.cuda.Device().synchronize()
    load_s = time.perf_counter() - t0
    base = {"game": game, "envs": n, "block": block, "variant": options.label(), "load_s": round(load_s, 3)}
    counter = {"steps": 0}

    def raw_step() -> int:
        actions = cp.random.randint(0, 18, n, dtype=cp.int32)
        batch.act(actions, check=False)
        counter["steps"] += 1
        if counter["steps"] % 32 == 0:
            over = batch.game_over()
            if bool(over.any()):
                batch.reset_game(over)
        return n

    if "raw" in modes:
        raw_step()
        frames, secs = _timed(cp, seconds, raw_step)
        rows.append({**base, "mode": "raw", "fps": frames / secs, "ms_per_step": 1000 * secs * n / frames,
                     "bytes_per_env": batch.memory_bytes_per_env(), "pool_bytes_per_env": pool.used_bytes() / n})
    if "pp" in modes:
        import torch

        import gpu_env

        env_id = "ALE/" + "".join(part.capitalize() for part in game.split("_")) + "-v5"  # ms_pacman: MsPacman
        env = gpu_env.make_vec(env_id, n, backend="cuda", obs_format="torch", block_size=block, **DQN)
        env.reset(seed=0)
        actions_n = int(env.single_action_space.n)
        gen = torch.Generator(device=env.device).manual_seed(0)

        def pp_step() -> int:
            env.step(torch.randint(0, actions_n, (n,), device=env.device, generator=gen))
            return 4 * n

        pp_step()
        frames, secs = _timed(cp, seconds, pp_step)
        rows.append({**base, "variant": "make_vec", "mode": "pp84x4", "fps": frames / secs,
                     "ms_per_step": 4000 * secs * n / frames, "bytes_per_env": env.memory_bytes_per_env(),
                     "pool_bytes_per_env": pool.used_bytes() / n})
        env.close()
    return rows


def _cpu_rows(game: str, n: int, seconds: float) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    threads = os.cpu_count() or 1
    rng = np.random.default_rng(0)
    from gpu_env.atari_batch import AtariBatch

    cpu = AtariBatch(game, n, backend="cpu", seeds=np.arange(n), repeat_action_probability=0.25, num_threads=threads)
    frames, start, cpu0 = 0, time.perf_counter(), time.process_time()
    while time.perf_counter() - start < seconds:
        cpu.act(rng.integers(0, 18, n))
        over = cpu.game_over()
        if over.any():
            cpu.reset_game(over)
        frames += n
    wall = time.perf_counter() - start
    rows.append({"game": game, "envs": n, "variant": f"gpu_env cpu x{threads}", "mode": "raw", "fps": frames / wall,
                 "cpu_s": time.process_time() - cpu0})
    try:
        import ale_py
    except ImportError:
        return rows
    settings: tuple[tuple[str, dict[str, Any], int], ...] = (
        ("raw", {"frameskip": 1, "img_height": 210, "img_width": 160, "grayscale": False, "stack_num": 1,
                 "maxpool": False, "noop_max": 0}, 1),
        ("pp84x4", {"frameskip": 4, "img_height": 84, "img_width": 84, "grayscale": True, "stack_num": 4,
                    "maxpool": True, "noop_max": 30}, 4),
    )
    for mode, kwargs, per_step in settings:
        env = ale_py.AtariVectorEnv(game, n, num_threads=threads, repeat_action_probability=0.25,
                                    reward_clipping=False, use_fire_reset=False, **kwargs)
        env.reset(seed=0)
        frames, start, cpu0 = 0, time.perf_counter(), time.process_time()
        while time.perf_counter() - start < seconds:
            env.step(rng.integers(0, int(getattr(env.single_action_space, "n", 18)), n))
            frames += per_step * n
        wall = time.perf_counter() - start
        rows.append({"game": game, "envs": n, "variant": f"ale_py AtariVectorEnv x{threads}", "mode": mode,
                     "fps": frames / wall, "cpu_s": time.process_time() - cpu0})
        env.close()
    return rows


def _print(rows: list[dict[str, Any]], device: str) -> None:
    print(f"device: {device}")
    print(f"{'game':<10} {'mode':<7} {'variant':<28} {'block':>5} {'envs':>6} {'frames/s':>12} {'ms/step':>8} "
          f"{'B/env':>8} {'pool B/env':>10} {'load s':>7}")
    for r in rows:
        print(f"{r['game']:<10} {r['mode']:<7} {r['variant']:<28} {r.get('block', '-')!s:>5} {r['envs']:>6} "
              f"{r['fps']:>12,.0f} {r.get('ms_per_step', float('nan')):>8.2f} {r.get('bytes_per_env', 0):>8} "
              f"{r.get('pool_bytes_per_env', 0):>10.0f} {r.get('load_s', float('nan')):>7.2f}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", nargs="+", default=["pong", "breakout", "ms_pacman"])
    parser.add_argument("--envs", nargs="+", type=int, default=[256, 1024, 4096, 16384, 32768])
    parser.add_argument("--seconds", type=float, default=2.0, help="timed seconds per configuration")
    parser.add_argument("--variant-envs", type=int, default=16384, help="env count of the kernel-variant rows")
    parser.add_argument("--blocks", nargs="+", type=int, default=[32, 64, 128, 256])
    parser.add_argument("--local", action="store_true", help="also time the local-copy kernel variant")
    parser.add_argument("--cpu-envs", type=int, default=256, help="envs of the CPU references (0: skip them)")
    parser.add_argument("--quick", action="store_true", help="one game, 256 and 1024 envs, 0.5 s each")
    parser.add_argument("--json", type=Path, default=None, help="also write the rows as JSON here")
    args = parser.parse_args(argv)
    if args.quick:
        args.games, args.envs, args.seconds, args.blocks, args.cpu_envs = ["pong"], [256, 1024], 0.5, [128], 64
        args.variant_envs = 1024
    try:
        from gpu_env.backends.cuda.errors import require_cuda

        cp = require_cuda()
    except BackendError as exc:
        print(f"atari_gpu: no GPU benchmark was run: {exc}", file=sys.stderr)
        return 2
    from gpu_env.backends.cuda.module import KernelOptions

    props = cp.cuda.runtime.getDeviceProperties(0)
    name = props["name"].decode() if isinstance(props["name"], bytes) else str(props["name"])
    device = f"{name}, {props['multiProcessorCount']} SMs, {props['totalGlobalMem'] / 2**30:.0f} GiB"
    rows: list[dict[str, Any]] = []
    for game in args.games:
        for n in args.envs:
            rows += _gpu_rows(cp, game, n, args.seconds, 128, KernelOptions(), ["raw", "pp"])
            print(rows[-2]["game"], n, f"raw {rows[-2]['fps']:,.0f} fps, pp {rows[-1]['fps']:,.0f} fps", flush=True)
    game = args.games[0]
    for block in args.blocks:
        if block != 128:
            rows += _gpu_rows(cp, game, args.variant_envs, args.seconds, block, KernelOptions(), ["raw"])
    if args.local:
        rows += _gpu_rows(cp, game, args.variant_envs, args.seconds, 128, KernelOptions(local_copy=True), ["raw"])
    if args.cpu_envs > 0:
        for game in args.games:
            rows += _cpu_rows(game, args.cpu_envs, args.seconds)
    _print(rows, device)
    if args.json is not None:
        args.json.write_text(json.dumps({"device": device, "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
