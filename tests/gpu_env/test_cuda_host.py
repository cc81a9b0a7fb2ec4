"""The CUDA backend's Python code and kernels, run on the CPU through a host build of kernels.h.

``cuda_host_cupy`` stands in for CuPy (numpy arrays; each kernel executed thread by thread from a
g++ build of ``core/cuda/kernels.h``). Compared with the CPU backend (``AleBatch(backend="cpu")``)
frame by frame: rewards, RAM, screens, lives, flags; and the device preprocessing against
``gpu_env.preprocess``. What this cannot show: anything about CUDA execution (see test_cuda_gpu.py).
"""

from __future__ import annotations

import importlib.util
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

HERE = Path(__file__).resolve().parent
if importlib.util.find_spec("cupy") is not None:
    pytest.skip("CuPy is installed: the host stand-in would shadow it (test_cuda_gpu.py runs instead)",
                allow_module_level=True)


@pytest.fixture(scope="module")
def host_cupy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    if shutil.which("g++") is None:
        pytest.skip("g++ not found on PATH")
    sys.path.insert(0, str(HERE))
    try:
        import cuda_host_cupy
    finally:
        sys.path.remove(str(HERE))
    lib = cuda_host_cupy.build_library(tmp_path_factory.mktemp("cuda_host"))
    fake = cuda_host_cupy.make_module(lib)
    from gpu_env.cuda import module

    saved = sys.modules.get("cupy")
    sys.modules["cupy"] = fake
    module._modules.clear()
    try:
        yield fake
    finally:
        module._modules.clear()
        if saved is None:
            del sys.modules["cupy"]
        else:
            sys.modules["cupy"] = saved


def _compare(where: str, cpu: Any, dev: Any, r_cpu: Any, r_dev: Any) -> None:
    np.testing.assert_array_equal(r_dev.get(), r_cpu, err_msg=f"reward, {where}")
    np.testing.assert_array_equal(dev.get_ram().get(), cpu.get_ram(), err_msg=f"RAM, {where}")
    np.testing.assert_array_equal(dev.lives().get(), cpu.lives(), err_msg=f"lives, {where}")
    np.testing.assert_array_equal(dev.game_over(False).get(), cpu.game_over(False), err_msg=f"terminal, {where}")
    np.testing.assert_array_equal(dev.game_truncated().get(), cpu.game_truncated(), err_msg=f"truncated, {where}")
    np.testing.assert_array_equal(dev.frame_number().get(), cpu.frame_number(), err_msg=f"frame, {where}")
    np.testing.assert_array_equal(dev.episode_frame_number().get(), cpu.episode_frame_number(),
                                  err_msg=f"episode frame, {where}")
    np.testing.assert_array_equal(dev.get_screen().get(), cpu.get_screen(), err_msg=f"screen, {where}")


@pytest.mark.parametrize(("game", "frames"), [("breakout", 400), ("road_runner", 250)])
def test_host_kernels_equal_the_cpu_backend(host_cupy: Any, game: str, frames: int) -> None:
    from gpu_env.ale_batch import AleBatch
    from gpu_env.cuda.backend import CudaAtariBatch

    seeds = [3, 4, 5]
    cpu = AleBatch(game, 3, backend="cpu", seeds=seeds, repeat_action_probability=0.25, num_threads=1,
                   max_num_frames_per_episode=150)
    dev = CudaAtariBatch(game, 3, seeds=seeds, repeat_action_probability=0.25, max_num_frames_per_episode=150)
    assert dev.env_size == len(cpu.clone_state()[0]) - dev.stride
    _compare(f"{game} after load", cpu, dev, np.zeros(3, np.int32), host_cupy.zeros(3, np.int32))
    rng = np.random.default_rng(7)
    resets = 0
    for frame in range(frames):
        a = rng.integers(0, 18, 3)
        mask = rng.random(3) < 0.9
        _compare(f"{game} frame {frame}", cpu, dev, cpu.act(a, mask=mask), dev.act(a, mask=mask))
        over = cpu.game_over()
        if over.any():
            resets += int(over.sum())
            cpu.reset_game(over)
            dev.reset_game(over)
            _compare(f"{game} reset at frame {frame}", cpu, dev, np.zeros(3, np.int32), host_cupy.zeros(3, np.int32))
    assert resets > 0  # truncation at 150 frames forces resets through the masked reset kernel
    np.testing.assert_array_equal(dev.get_screen_grayscale().get(), cpu.get_screen_grayscale())
    np.testing.assert_array_equal(dev.get_screen_rgb().get(), cpu.get_screen_rgb())
    dev.restore_state(cpu.clone_state())
    _compare(f"{game} restored", cpu, dev, np.zeros(3, np.int32), host_cupy.zeros(3, np.int32))


def test_host_preprocessing_equals_the_cpu_pipeline(host_cupy: Any) -> None:
    import torch

    from gpu_env.ale_batch import AleBatch
    from gpu_env.cuda.backend import CudaAtariBatch
    from gpu_env.cuda.preprocess import CudaPreprocessor
    from gpu_env.preprocess import AreaResize

    n, skip = 2, 4
    cpu = AleBatch("ms_pacman", n, backend="cpu", seeds=[9, 8], num_threads=1)
    dev = CudaAtariBatch("ms_pacman", n, seeds=[9, 8])
    pp = CudaPreprocessor(dev, frame_skip=skip, screen_size=84, stack_size=3)
    resize = AreaResize(210, 160, 84, 84)
    obs = pp.reset()
    stack = resize(torch.from_numpy(cpu.get_screen_grayscale())).unsqueeze(1).repeat(1, 3, 1, 1)
    np.testing.assert_array_equal(obs.get(), stack.numpy())
    rng = np.random.default_rng(1)
    for step in range(12):
        a = rng.integers(0, 18, n)
        obs, reward, term, trunc = pp.step(a)
        total = np.zeros(n)
        screens = []
        for _ in range(skip):
            total += cpu.act(a)
            screens.append(cpu.get_screen_grayscale())
        assert not cpu.game_over().any()
        frame = resize(torch.from_numpy(np.maximum(screens[-1], screens[-2])))
        stack = torch.cat([stack[:, 1:], frame.unsqueeze(1)], dim=1)
        np.testing.assert_array_equal(reward.get(), total.astype(np.float32), err_msg=f"reward, step {step}")
        np.testing.assert_array_equal(obs.get(), stack.numpy(), err_msg=f"observation, step {step}")
        assert not term.get().any()
        assert not trunc.get().any()


def test_host_integer_factor_resize(host_cupy: Any) -> None:
    import torch

    from gpu_env.ale_batch import AleBatch
    from gpu_env.cuda.backend import CudaAtariBatch
    from gpu_env.cuda.preprocess import CudaPreprocessor
    from gpu_env.preprocess import AreaResize

    cpu = AleBatch("pong", 1, backend="cpu", seeds=[1], num_threads=1)
    dev = CudaAtariBatch("pong", 1, seeds=[1])
    for width, height in ((80, 105), (32, 70)):  # 2x2 (rounds half up) and 5x3 factors
        pp = CudaPreprocessor(dev, frame_skip=1, screen_size=(width, height))
        obs = pp.reset()
        want = AreaResize(210, 160, height, width)(torch.from_numpy(cpu.get_screen_grayscale()))
        np.testing.assert_array_equal(obs.get(), want.numpy())


def test_host_ale_backend_adapter_matches_the_cpu_backend(host_cupy: Any) -> None:
    """CudaAleBackend (host arrays, for AleBatch(backend="cuda")) against AleBatch(backend="cpu")."""
    from gpu_env.ale_batch import AleBatch
    from gpu_env.cuda.backend import CudaAleBackend

    seeds = np.array([11, 12], dtype=np.uint32)
    cpu = AleBatch("space_invaders", 2, backend="cpu", seeds=seeds, frameskip=3, num_threads=1)
    settings = {"repeat_action_probability": 0.25, "frameskip": 3, "max_num_frames_per_episode": 0}
    dev = CudaAleBackend(cpu.rom_path, 2, seeds, settings)
    assert dev.screen_height == cpu.screen_shape[0]
    assert dev.minimal_action_set().tolist() == cpu.minimal_action_set().tolist()
    assert dev.available_modes() == cpu.available_modes()
    everyone = np.ones(2, dtype=np.bool_)
    strength = np.ones(2, dtype=np.float32)
    rng = np.random.default_rng(3)
    for step in range(60):
        a = rng.integers(0, 18, 2)
        np.testing.assert_array_equal(dev.act(a, strength, everyone), cpu.act(a), err_msg=f"reward, step {step}")
        np.testing.assert_array_equal(dev.get_ram(), cpu.get_ram())
        np.testing.assert_array_equal(dev.get_screen_grayscale(), cpu.get_screen_grayscale())
        np.testing.assert_array_equal(dev.lives(), cpu.lives())
        np.testing.assert_array_equal(dev.game_over(True), cpu.game_over(True))
    mode = cpu.available_modes()[-1]
    cpu.set_mode(mode)
    dev.set_mode(everyone, mode)
    cpu.reset_game()
    dev.reset_game(everyone)
    np.testing.assert_array_equal(dev.get_ram(), cpu.get_ram())
    np.testing.assert_array_equal(dev.frame_numbers()[1], cpu.episode_frame_number())
    cpu.load_rom(seeds=[5, 6])
    dev.load_rom(everyone, np.array([5, 6], dtype=np.uint32))
    np.testing.assert_array_equal(dev.get_ram(), cpu.get_ram())
    np.testing.assert_array_equal(dev.get_screen(), cpu.get_screen())


def test_host_benchmark_rows(host_cupy: Any, capsys: pytest.CaptureFixture[str]) -> None:
    """benchmarks/atari_gpu.py's measuring code runs end to end (tiny sizes; the numbers mean nothing here)."""
    import importlib.util as util

    from gpu_env.cuda.module import KernelOptions

    spec = util.spec_from_file_location("atari_gpu", HERE.parents[1] / "benchmarks" / "atari_gpu.py")
    assert spec is not None
    assert spec.loader is not None
    bench = util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    rows = bench._gpu_rows(host_cupy, "pong", 4, 0.05, 32, KernelOptions(), ["raw", "pp"])
    assert [r["mode"] for r in rows] == ["raw", "pp84x4"]
    assert all(r["fps"] > 0 and r["bytes_per_env"] > 80_000 for r in rows)
    rows += bench._cpu_rows("pong", 2, 0.05)
    assert {r["variant"].split(" x")[0] for r in rows[2:]} == {"gpu_env cpu", "ale_py AtariVectorEnv"}
    bench._print(rows, "host stand-in")
    assert "host stand-in" in capsys.readouterr().out
