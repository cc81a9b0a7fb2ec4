"""The CUDA backend's Python code and kernels, run on the CPU through a host build of kernels.h.

``cuda_host_cupy`` stands in for CuPy (numpy arrays; each kernel executed thread by thread from a
g++ build of ``core/cuda/kernels.h``). Compared with the CPU backend (``AtariBatch(backend="cpu")``)
frame by frame: rewards, RAM, screens, lives, flags; the device observation kernels against OpenCV;
``make_vec(backend="cuda")`` against ``make_vec(backend="cpu")`` on every step — both run gymnasium's
AtariPreprocessing step from the same source, ``core/ale/preprocessing.h``. What this cannot show:
anything about CUDA execution (see test_cuda_gpu.py).
"""

from __future__ import annotations

import importlib.util
import shutil
import sys
import tempfile
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
def host_cupy() -> Iterator[Any]:
    if shutil.which("g++") is None:
        pytest.skip("g++ not found on PATH")
    sys.path.insert(0, str(HERE))
    try:
        import cuda_host_cupy
    finally:
        sys.path.remove(str(HERE))
    # Kept between runs (named by the source hash): the g++ build takes ~40 s of one core.
    lib = cuda_host_cupy.build_library(Path(tempfile.gettempdir()) / "gpu_env_cuda_host_shim")
    fake = cuda_host_cupy.make_module(lib)
    from gpu_env.backends.cuda import module

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
    from gpu_env.atari_batch import AtariBatch
    from gpu_env.backends.cuda.backend import CudaAtariBatch

    seeds = [3, 4, 5]
    cpu = AtariBatch(game, 3, backend="cpu", seeds=seeds, repeat_action_probability=0.25, num_threads=1,
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


def _area(frames: Any, width: int, height: int) -> Any:
    """cv2.resize(INTER_AREA) of each frame: the reference of the device resize."""
    import cv2

    return np.stack([cv2.resize(f, (width, height), interpolation=cv2.INTER_AREA) for f in np.asarray(frames)])


def test_host_integer_factor_resize(host_cupy: Any) -> None:
    from gpu_env.atari_batch import AtariBatch
    from gpu_env.backends.cuda.backend import CudaAtariBatch
    from gpu_env.backends.cuda.preprocess import CudaPreprocessor

    cpu = AtariBatch("pong", 1, backend="cpu", seeds=[1], num_threads=1)
    dev = CudaAtariBatch("pong", 1, seeds=[1])
    for width, height in ((80, 105), (32, 70)):  # 2x2 (rounds half up) and 5x3 factors
        pp = CudaPreprocessor(dev, frame_skip=1, screen_size=(width, height))
        pp.obs0[...] = dev.get_screen_grayscale()
        np.testing.assert_array_equal(pp.observe().get(), _area(cpu.get_screen_grayscale(), width, height))


def test_host_ale_backend_adapter_matches_the_cpu_backend(host_cupy: Any) -> None:
    """CudaAleBackend (host arrays, for AtariBatch(backend="cuda")) against AtariBatch(backend="cpu")."""
    from gpu_env.atari_batch import AtariBatch
    from gpu_env.backends.cuda.host import CudaAleBackend
    from gpu_env.backends.protocol import AleSettings

    seeds = np.array([11, 12], dtype=np.uint32)
    cpu = AtariBatch("space_invaders", 2, backend="cpu", seeds=seeds, frameskip=3, num_threads=1)
    settings = AleSettings(repeat_action_probability=0.25, frameskip=3)
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

    from gpu_env.backends.cuda.module import KernelOptions

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


# ------------------------------------------------------------------------------------------------
# Concurrency: the stand-in launches every kernel over its real grid with 8 std::threads at once and
# launches the grid-stride kernels with grids far smaller than the data (their loops iterate).


@pytest.fixture
def launch(host_cupy: Any) -> Iterator[Any]:
    config = host_cupy.launch_config
    saved = (config.workers, config.stride_launch)
    config.workers, config.stride_launch = 8, (3, 5)
    try:
        yield config
    finally:
        config.workers, config.stride_launch = saved


@pytest.mark.parametrize("game", ["pong", "breakout", "ms_pacman"])
def test_concurrent_env_kernels_equal_the_cpu_backend(host_cupy: Any, launch: Any, game: str) -> None:
    """37 envs in 2 blocks of 32 threads (27 idle), 8 threads at once, masked acts and resets, every frame."""
    from gpu_env.atari_batch import AtariBatch
    from gpu_env.backends.cuda.backend import CudaAtariBatch

    n = 37
    seeds = list(range(100, 100 + n))
    cpu = AtariBatch(game, n, backend="cpu", seeds=seeds, repeat_action_probability=0.25, num_threads=1,
                     max_num_frames_per_episode=120)
    dev = CudaAtariBatch(game, n, seeds=seeds, repeat_action_probability=0.25, max_num_frames_per_episode=120,
                         block_size=32)
    rng = np.random.default_rng(11)
    launched = launch.launches["gpu_env_act"]
    host_cupy.peak_concurrency(reset=True)
    for frame in range(40):
        a = rng.integers(0, 18, n)
        mask = rng.random(n) < 0.8
        _compare(f"{game} frame {frame}", cpu, dev, cpu.act(a, mask=mask), dev.act(a, mask=mask))
        over = cpu.game_over()
        if over.any():
            cpu.reset_game(over)
            dev.reset_game(over)
    assert launch.launches["gpu_env_act"] - launched == 40
    assert host_cupy.peak_concurrency() > 1  # emulated threads really ran at the same time
    np.testing.assert_array_equal(dev.get_screen_rgb().get(), cpu.get_screen_rgb())


@pytest.mark.parametrize("stride_launch", [(1, 1), (2, 7), (3, 5), (64, 256)])
def test_concurrent_grid_stride_kernels(host_cupy: Any, launch: Any, stride_launch: tuple[int, int]) -> None:
    """RAM, screens, max-pool, both resizes and the frame stack, for any grid (1 thread to more than the data)."""
    from gpu_env.atari_batch import AtariBatch
    from gpu_env.backends.cuda.backend import CudaAtariBatch
    from gpu_env.backends.cuda.preprocess import CudaPreprocessor

    launch.stride_launch = stride_launch
    n, depth = 13, 3
    seeds = list(range(n))
    cpu = AtariBatch("breakout", n, backend="cpu", seeds=seeds, num_threads=1)
    dev = CudaAtariBatch("breakout", n, seeds=seeds, block_size=32)
    pp = CudaPreprocessor(dev, frame_skip=2, screen_size=84)
    pp_int = CudaPreprocessor(dev, frame_skip=1, screen_size=(80, 105))
    push_stack = dev.kernel("gpu_env_frame_stack")
    stack = host_cupy.zeros((n, depth, 84, 84), dtype=np.uint8)
    want_stack = np.zeros((n, depth, 84, 84), dtype=np.uint8)
    rng = np.random.default_rng(5)
    for step in range(6):
        a = rng.integers(0, 18, n)
        cpu.act(a)
        dev.act(a)
        first = cpu.get_screen_grayscale()
        pp.obs1[...] = dev.get_screen_grayscale()
        cpu.act(a)
        dev.act(a)
        pp.obs0[...] = dev.get_screen_grayscale()
        frame = pp.observe()
        want = _area(np.maximum(first, cpu.get_screen_grayscale()), 84, 84)
        np.testing.assert_array_equal(frame.get(), want, err_msg=f"max-pool + resize, step {step}, {stride_launch}")
        mode = host_cupy.asarray(np.full(n, 2 if step == 0 else 1, dtype=np.uint8))  # refill, then push
        grid, block = dev.elementwise_grid(n * 84 * 84)
        push_stack(grid, block, (stack, frame, np.int32(n), np.int32(depth), np.uint64(84 * 84), mode))
        want_stack = (np.repeat(want[:, None], depth, axis=1) if step == 0
                      else np.concatenate([want_stack[:, 1:], want[:, None]], axis=1))
        np.testing.assert_array_equal(stack.get(), want_stack, err_msg=f"stack, step {step}, {stride_launch}")
        np.testing.assert_array_equal(dev.get_ram().get(), cpu.get_ram())
        np.testing.assert_array_equal(dev.get_screen().get(), cpu.get_screen())
        np.testing.assert_array_equal(dev.get_screen_rgb().get(), cpu.get_screen_rgb())
    pp_int.obs0[...] = dev.get_screen_grayscale()
    np.testing.assert_array_equal(pp_int.observe().get(), _area(cpu.get_screen_grayscale(), 80, 105))


# ------------------------------------------------------------------------------------------------
# make_vec(backend="cuda") through the stand-in: torch CPU tensors stand in for CUDA tensors (DLPack
# of host memory), the kernels run concurrently as above.

_VEC_KW: dict[str, Any] = {"frameskip": 1, "noop_max": 30, "frame_skip": 4, "screen_size": 84, "stack_size": 4,
                           "terminal_on_life_loss": True, "max_num_frames_per_episode": 300}


def _equal(a: Any, b: Any, what: str) -> None:
    np.testing.assert_array_equal(np.asarray(a), np.asarray(b), err_msg=what)


def _run_vec_pair(env_id: str, n: int, steps: int, autoreset: str, **kwargs: Any) -> int:
    import gpu_env

    cpu = gpu_env.make_vec(env_id, n, backend="cpu", obs_format="torch", num_threads=1, autoreset_mode=autoreset,
                           **kwargs)
    dev = gpu_env.make_vec(env_id, n, backend="cuda", obs_format="torch", autoreset_mode=autoreset, block_size=32,
                           noop_table_depth=5, **kwargs)
    assert dev.single_observation_space == cpu.single_observation_space
    o_cpu, i_cpu = cpu.reset(seed=21)
    o_dev, i_dev = dev.reset(seed=21)
    _equal(o_dev, o_cpu, "reset obs")
    _equal(i_dev["lives"], i_cpu["lives"], "reset lives")
    assert [tuple(p) for p in i_dev["seeds"]] == [tuple(p) for p in i_cpu["seeds"]]
    rng = np.random.default_rng(2)
    episodes = 0
    for step in range(steps):
        a = rng.integers(0, int(cpu.single_action_space.n), n)  # type: ignore[attr-defined]
        out_cpu = cpu.step(a)
        out_dev = dev.step(a)
        for k, name in enumerate(("obs", "reward", "terminated", "truncated")):
            _equal(out_dev[k], out_cpu[k], f"{name}, step {step}")
        info_cpu, info_dev = out_cpu[4], out_dev[4]
        for key in ("lives", "episode_frame_number", "frame_number"):
            _equal(info_dev[key], info_cpu[key], f"{key}, step {step}")
        if autoreset == "SameStep":  # "episode" is in the final info, as gymnasium's
            info_cpu, info_dev = info_cpu.get("final_info", info_cpu), info_dev["final_info"]
        done = np.asarray(info_dev["_episode"])
        _equal(done, np.asarray(out_cpu[2] | out_cpu[3]), f"_episode, step {step}")
        if done.any():
            episodes += int(done.sum())
            assert sorted(info_dev["episode"]) == sorted(info_cpu["episode"]), f"episode keys, step {step}"
            for key in ("r", "l", "frames", "_r", "_l", "_t", "_frames"):
                _equal(np.asarray(info_dev["episode"][key])[done], np.asarray(info_cpu["episode"][key])[done],
                       f"episode {key}, step {step}")
            if autoreset == "SameStep":  # the final info of the ended envs only, masks included
                assert sorted(info_dev) == sorted(info_cpu), f"final_info keys, step {step}"
                for key in ("lives", "_lives", "episode_frame_number", "_episode_frame_number", "frame_number",
                            "_frame_number"):
                    _equal(info_dev[key], info_cpu[key], f"final_info {key}, step {step}")
        if autoreset == "SameStep" and done.any():
            _equal(np.asarray(out_dev[4]["final_obs"])[done], np.asarray(out_cpu[4]["final_obs"])[done],
                   f"final_obs, step {step}")
    return episodes


@pytest.mark.parametrize("autoreset", ["NextStep", "SameStep"])
def test_host_vec_env_equals_the_cpu_make_vec(host_cupy: Any, launch: Any, autoreset: str) -> None:
    """make_vec(backend="cuda") step by step against make_vec(backend="cpu"): obs, rewards, flags, info, episodes."""
    episodes = _run_vec_pair("ALE/Breakout-v5", 5, 90, autoreset, **_VEC_KW)
    assert episodes >= 5  # lives lost (terminal_on_life_loss) and the 300-frame limit end episodes


def test_host_vec_env_raw_frames_equal_the_cpu_make_vec(host_cupy: Any, launch: Any) -> None:
    """Without preprocessing: frameskip in the batch, grayscale screens, a frame stack, autoreset at truncation."""
    episodes = _run_vec_pair("ALE/Pong-v5", 3, 40, "NextStep", frameskip=4, obs_type="grayscale", stack_size=2,
                             max_num_frames_per_episode=60)
    assert episodes >= 3


class _TorchTransfers:
    """Counts the torch calls that read a CUDA tensor on the host (or synchronise on its values)."""

    def __init__(self) -> None:
        import torch
        from torch.overrides import TorchFunctionMode

        reads = {torch.Tensor.item, torch.Tensor.tolist, torch.Tensor.numpy, torch.Tensor.cpu, torch.Tensor.__bool__,
                 torch.Tensor.__int__, torch.Tensor.__float__, torch.Tensor.__index__, torch.Tensor.nonzero,
                 torch.nonzero, torch.masked_select, torch.Tensor.masked_select, torch.unique}
        calls: list[str] = []
        self.calls = calls

        class Mode(TorchFunctionMode):
            def __torch_function__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
                bool_index = func is torch.Tensor.__getitem__ and any(
                    isinstance(x, torch.Tensor) and x.dtype == torch.bool
                    for x in (args[1] if isinstance(args[1], tuple) else (args[1],)))
                if func in reads or bool_index:
                    calls.append(getattr(func, "__name__", str(func)))
                return func(*args, **(kwargs or {}))

        self.mode = Mode()


def test_host_vec_step_makes_no_device_to_host_transfer(host_cupy: Any, launch: Any) -> None:
    """A step reads nothing back but the no-op cursors every ``noop_table_depth`` steps, across autoresets.

    No CuPy get/asnumpy/bool/item..., no torch item/cpu/bool/mask-index: over 40 steps with episodes
    ending and envs reset on the device, the only reads are the five documented cursor reads.
    """
    import torch

    import gpu_env

    env = gpu_env.make_vec("ALE/Breakout-v5", 3, backend="cuda", obs_format="torch", block_size=32,
                           noop_table_depth=8, **{
        k: v for k, v in _VEC_KW.items() if k != "max_num_frames_per_episode"}, max_num_frames_per_episode=40)
    env.reset(seed=1)
    actions = torch.zeros(3, dtype=torch.int64)
    counter = _TorchTransfers()
    host_cupy.transfers.clear()
    with counter.mode:
        for _ in range(7):  # the table of 8 pre-drawn no-op counts lasts 7 steps after reset
            obs, _, _, _, info = env.step(actions)
    assert dict(host_cupy.transfers) == {}
    assert counter.calls == []
    assert isinstance(obs, torch.Tensor)
    assert isinstance(info["_episode"], torch.Tensor)
    with counter.mode:  # the counters see reads when there are some
        bool(info["_episode"].any())
    assert counter.calls == ["__bool__"]
    counter.calls.clear()
    ended = torch.zeros(3, dtype=torch.int64)
    with counter.mode:  # steps 8..40 after reset: the refill reads the cursors at steps 8, 16, 24, 32 and 40
        for _ in range(33):
            _, _, _, _, info = env.step(actions)
            ended += info["_episode"].to(torch.int64)
    assert dict(host_cupy.transfers) == {"get": 5}
    assert counter.calls == []
    assert int(ended.sum()) >= 3  # episodes ended (40-frame limit, lives) and envs reset on the device meanwhile


def test_host_a2c_rollout_and_update_read_nothing_back(host_cupy: Any, launch: Any) -> None:
    """A2C+V-trace on backend="cuda": a rollout, the loss and an optimizer step read nothing on the host.

    ``take_episodes`` is the one read (torch CPU tensors stand in for CUDA tensors).
    """
    import torch

    from trainers.a2c.config import A2cConfig
    from trainers.a2c.model import NatureActorCritic
    from trainers.a2c.rollout import RolloutCollector
    from trainers.a2c.runner import _update, make_env, make_optimizer

    cfg = A2cConfig(game="Breakout", backend="cuda", num_envs=4, rollout=4, num_minibatches=2, noop_max=2)
    env = make_env(cfg)
    torch.manual_seed(0)
    model = NatureActorCritic((4, 84, 84), int(env.single_action_space.n), hidden_size=16)
    optimizer = make_optimizer(cfg, model)
    collector = RolloutCollector(env, model, cfg, torch.Generator().manual_seed(0), seed=3)
    counter = _TorchTransfers()
    host_cupy.transfers.clear()
    with counter.mode:
        terms = _update(cfg, model, optimizer, collector)
    assert dict(host_cupy.transfers) == {}
    assert counter.calls == []
    assert len(terms) == 2
    with counter.mode:
        returns, lengths = collector.take_episodes()
    assert counter.calls.count("tolist") == 2
    assert len(returns) == len(lengths)


def test_host_vec_env_names_what_is_not_on_the_device(host_cupy: Any) -> None:
    import gpu_env
    from gpu_env.errors import GpuEnvError, NotImplementedYetError

    with pytest.raises(NotImplementedYetError, match="grayscale_obs=False"):
        gpu_env.make_vec("ALE/Pong-v5", 2, backend="cuda", obs_format="torch", frameskip=1, grayscale_obs=False)
    with pytest.raises(NotImplementedYetError, match="stochastic frameskip"):
        gpu_env.make_vec("ALE/Pong-v5", 2, backend="cuda", obs_format="torch", frameskip=(2, 5))
    with pytest.raises(GpuEnvError, match="device='meta'"):
        gpu_env.make_vec("ALE/Pong-v5", 2, backend="cuda", obs_format="torch", device="meta")
    with pytest.raises(GpuEnvError, match="backend='cuda' returns CUDA tensors"):
        gpu_env.make_vec("ALE/Pong-v5", 2, backend="cuda", obs_format="numpy")
    with pytest.raises(GpuEnvError, match="pass obs_format='torch'"):  # the default is gymnasium's numpy
        gpu_env.make_vec("ALE/Pong-v5", 2, backend="cuda")
    from gpu_env.vector import AtariVecEnv

    one_class = gpu_env.make_vec("ALE/Pong-v5", 2, backend="cuda", obs_format="torch")
    assert type(one_class) is AtariVecEnv  # one env class, two engines


def test_host_vec_env_scaled_new_axis_observations_equal_the_cpu_make_vec(host_cupy: Any, launch: Any) -> None:
    """frame_skip 3, a 64x48 (non-integer) resize, scale_obs, grayscale_newaxis, a stack of 2."""
    _run_vec_pair("ALE/MsPacman-v5", 2, 15, "NextStep", frameskip=1, frame_skip=3, screen_size=(64, 48),
                  scale_obs=True, grayscale_newaxis=True, stack_size=2, noop_max=5)


def test_host_vec_env_equals_gymnasium(host_cupy: Any, launch: Any) -> None:
    """make_vec(backend="cuda") against gymnasium's own AtariPreprocessing over ale-py, not against the CPU library.

    The kernels' step is core/ale/preprocessing.h, the CPU library's too: this comparison holds it to the
    reference independently of the CPU build (life loss, max-pool, stack, autoresets with no-ops).
    Observations, rewards, flags and lives every step (the device env reports ``episode`` on every step,
    gymnasium only on episode ends: the CPU comparison above covers the episode statistics).
    """
    import gpu_env
    from tests.gpu_env.test_vector import DQN, reference

    kwargs: dict[str, Any] = {"stack_size": 4, "max_num_frames_per_episode": 200, **DQN, "terminal_on_life_loss": True}
    ref = reference("ALE/Breakout-v5", 2, **kwargs)
    dev = gpu_env.make_vec("ALE/Breakout-v5", 2, backend="cuda", obs_format="torch", block_size=32,
                           noop_table_depth=5, **kwargs)
    _equal(dev.reset(seed=3)[0], ref.reset(seed=3)[0], "reset obs")
    rng = np.random.default_rng(3)
    ended = 0
    for step in range(60):
        a = rng.integers(0, int(ref.single_action_space.n), 2)
        want, got = ref.step(a), dev.step(a)
        for k, name in enumerate(("obs", "reward", "terminated", "truncated")):
            _equal(got[k], want[k], f"{name}, step {step}")
        _equal(got[4]["lives"], want[4]["lives"], f"lives, step {step}")
        ended += int((want[2] | want[3]).sum())
    assert ended >= 2  # lost lives ended episodes, and the envs were reset with no-ops on the device
    ref.close()
