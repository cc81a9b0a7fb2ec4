"""CPU vs CUDA bit equality (RAM, screens, rewards, lives, flags, every frame) and device preprocessing.

Marked ``gpu``: skipped (with the reason) where CuPy or a GPU is missing; run by
``benchmarks/gpu_check.sh`` on a GPU machine. ``GPU_ENV_EQUALITY_FRAMES`` (default 10,000) sets the
frames per game. All games run at once: one thread and CUDA stream per game.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import pytest

pytestmark = pytest.mark.gpu

FRAMES = int(os.environ.get("GPU_ENV_EQUALITY_FRAMES", "10000"))
NUM_ENVS = 4
# Pong and Breakout (paddles), the Atari-57 regulars, Q*bert (partial frames after reset), and one
# ROM of each bank-switching scheme: F6, F6SC, F8SC, E0, DPC, FE.
GAMES = ("pong", "breakout", "ms_pacman", "space_invaders", "seaquest", "qbert", "road_runner", "klax",
         "elevator_action", "montezuma_revenge", "pitfall2", "robotank")


def _batches(game: str, seed: int) -> tuple[Any, Any]:
    from gpu_env.atari_batch import AtariBatch
    from gpu_env.backends.cuda.backend import CudaAtariBatch

    seeds = [seed + i for i in range(NUM_ENVS)]
    cpu = AtariBatch(game, NUM_ENVS, backend="cpu", seeds=seeds, repeat_action_probability=0.25, num_threads=1)
    gpu = CudaAtariBatch(game, NUM_ENVS, seeds=seeds, repeat_action_probability=0.25)
    return cpu, gpu


def _compare(game: str, frame: int, cpu: Any, gpu: Any, rewards_cpu: Any, rewards_gpu: Any) -> None:
    where = f"{game} frame {frame}"
    np.testing.assert_array_equal(rewards_gpu.get(), rewards_cpu, err_msg=f"reward, {where}")
    np.testing.assert_array_equal(gpu.get_ram().get(), cpu.get_ram(), err_msg=f"RAM, {where}")
    np.testing.assert_array_equal(gpu.lives().get(), cpu.lives(), err_msg=f"lives, {where}")
    np.testing.assert_array_equal(gpu.game_over(False).get(), cpu.game_over(False), err_msg=f"terminal, {where}")
    np.testing.assert_array_equal(gpu.game_truncated().get(), cpu.game_truncated(), err_msg=f"truncated, {where}")
    np.testing.assert_array_equal(gpu.frame_number().get(), cpu.frame_number(), err_msg=f"frame number, {where}")
    np.testing.assert_array_equal(gpu.get_screen().get(), cpu.get_screen(), err_msg=f"screen, {where}")


def _lockstep(game: str, seed: int) -> int:
    """Step one game on both backends for FRAMES frames, comparing every frame; return the resets."""
    import cupy as cp

    rng = np.random.default_rng(seed)
    cpu, gpu = _batches(game, seed)
    assert gpu.env_size == len(cpu.clone_state()[0]) - gpu.stride, f"AleEnv layout differs on the device ({game})"
    _compare(game, 0, cpu, gpu, np.zeros(NUM_ENVS, np.int32), cp.zeros(NUM_ENVS, cp.int32))
    resets = 0
    with cp.cuda.Stream(non_blocking=False):  # this thread's stream, ordered after the batch's set-up
        for frame in range(1, FRAMES + 1):
            actions = rng.integers(0, 18, NUM_ENVS)
            rewards_gpu = gpu.act(actions, check=False)  # runs on the GPU while the CPU steps
            rewards_cpu = cpu.act(actions)
            _compare(game, frame, cpu, gpu, rewards_cpu, rewards_gpu)
            over = cpu.game_over()
            if over.any():
                resets += int(over.sum())
                cpu.reset_game(over)
                gpu.reset_game(over)
                _compare(f"{game} (after reset_game)", frame, cpu, gpu, rewards_cpu, rewards_gpu)
            if frame % 2000 == 0:
                print(f"{game}: {frame} frames x {NUM_ENVS} envs equal, {resets} resets", flush=True)
    return resets


def test_cuda_equals_cpu_every_frame_on_twelve_games() -> None:
    """One thread per game (the C++ CPU backend and CuPy release the GIL), each with its own stream."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=len(GAMES)) as pool:
        futures = {g: pool.submit(_lockstep, g, 1000 * k) for k, g in enumerate(GAMES)}
        resets = {g: f.result() for g, f in futures.items()}
    print("resets per game:", resets)


def test_clone_state_is_interchangeable_with_the_cpu_backend() -> None:
    from gpu_env.atari_batch import AtariBatch
    from gpu_env.backends.cuda.backend import CudaAtariBatch

    cpu = AtariBatch("breakout", 3, backend="cpu", seeds=[5, 6, 7], num_threads=1)
    rng = np.random.default_rng(0)
    for _ in range(300):
        cpu.act(rng.integers(0, 18, 3))
    gpu = CudaAtariBatch("breakout", 3, seeds=[1, 2, 3])
    gpu.restore_state(cpu.clone_state())
    for frame in range(300):
        a = rng.integers(0, 18, 3)
        _compare("breakout (restored)", frame, cpu, gpu, cpu.act(a), gpu.act(a))


def test_mask_leaves_other_envs_untouched() -> None:
    from gpu_env.backends.cuda.backend import CudaAtariBatch

    gpu = CudaAtariBatch("pong", 4, seeds=[1, 2, 3, 4])
    before = gpu.clone_state()
    mask = np.array([True, False, True, False])
    rewards = gpu.act(np.full(4, 3), mask=mask)
    after = gpu.clone_state()
    assert after[1] == before[1]
    assert after[3] == before[3]
    assert after[0] != before[0]
    assert after[2] != before[2]
    assert rewards.get()[[1, 3]].tolist() == [0, 0]


def test_arrays_reach_torch_without_a_copy() -> None:
    import torch

    from gpu_env.backends.cuda.backend import CudaAtariBatch, to_torch

    gpu = CudaAtariBatch("pong", 8, seeds=0)
    screens = gpu.get_screen_grayscale()
    tensor = to_torch(screens)
    assert tensor.is_cuda
    assert tensor.data_ptr() == screens.data.ptr
    assert tuple(tensor.shape) == (8, 210, 160)
    actions = torch.zeros(8, dtype=torch.int64, device="cuda")
    rewards = to_torch(gpu.act(actions))
    assert rewards.dtype == torch.int32
    assert rewards.is_cuda


def test_make_vec_on_the_device_equals_the_cpu_make_vec() -> None:
    """make_vec(backend="cuda") step by step against make_vec(backend="cpu"), 64 envs, 600 steps, episodes ending."""
    import torch

    import gpu_env

    kw: dict[str, Any] = {"frameskip": 1, "noop_max": 30, "frame_skip": 4, "screen_size": 84, "stack_size": 4,
                          "terminal_on_life_loss": True, "max_num_frames_per_episode": 1500}
    n = 64
    cpu = gpu_env.make_vec("ALE/Breakout-v5", n, backend="cpu", obs_format="torch", **kw)
    dev = gpu_env.make_vec("ALE/Breakout-v5", n, backend="cuda", obs_format="torch", **kw)
    assert type(dev) is type(cpu)  # one AtariVecEnv; the backend picks its engine
    o_cpu, _ = cpu.reset(seed=5)
    o_dev, _ = dev.reset(seed=5)
    assert o_dev.is_cuda
    np.testing.assert_array_equal(o_dev.cpu().numpy(), o_cpu.numpy())
    rng = np.random.default_rng(0)
    episodes = 0
    for step in range(600):
        a = rng.integers(0, 4, n)
        out_cpu = cpu.step(a)
        out_dev = dev.step(torch.from_numpy(a).cuda())
        for k, name in enumerate(("obs", "reward", "terminated", "truncated")):
            got, want = out_dev[k], out_cpu[k]
            assert isinstance(got, torch.Tensor)
            assert isinstance(want, torch.Tensor)
            np.testing.assert_array_equal(got.cpu().numpy(), want.numpy(), err_msg=f"{name}, {step}")
        done = out_dev[4]["_episode"].cpu().numpy()
        if done.any():
            episodes += int(done.sum())
            np.testing.assert_array_equal(out_dev[4]["episode"]["r"].cpu().numpy()[done],
                                          out_cpu[4]["episode"]["r"].numpy()[done], err_msg=f"return, {step}")
    assert episodes > 0
