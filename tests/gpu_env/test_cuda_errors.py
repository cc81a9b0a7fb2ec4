"""``backend="cuda"`` without CuPy, a GPU or NVRTC fails with a message naming what is missing."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from gpu_env.backends.cuda import errors
from gpu_env.errors import BackendError

ROOT = Path(__file__).resolve().parents[2]
HAS_CUPY = importlib.util.find_spec("cupy") is not None


@pytest.mark.skipif(HAS_CUPY, reason="CuPy is installed here: the missing-CuPy path cannot be exercised")
def test_cuda_batch_without_cupy_names_the_install_command() -> None:
    from gpu_env.backends.cuda.backend import CudaAtariBatch

    with pytest.raises(BackendError, match=r"needs CuPy.*pip install -e '\.\[cuda\]'"):
        CudaAtariBatch("pong", 2)


def test_cuda_batch_checks_its_arguments_before_the_device() -> None:
    from gpu_env.backends.cuda.backend import CudaAtariBatch

    with pytest.raises(ValueError, match="block_size"):
        CudaAtariBatch("pong", 2, block_size=100)
    with pytest.raises(ValueError, match="num_envs"):
        CudaAtariBatch("pong", 0)


def _runtime(count: Any) -> SimpleNamespace:
    """Build a stand-in for ``cupy`` exposing only what require_device reads (no CUDA driver exists here)."""

    def get_count() -> int:
        if isinstance(count, Exception):
            raise count
        return int(count)

    return SimpleNamespace(cuda=SimpleNamespace(runtime=SimpleNamespace(getDeviceCount=get_count)))


def test_no_device_messages() -> None:
    with pytest.raises(BackendError, match=r"found no CUDA device \(0 visible"):
        errors.require_device(_runtime(0))
    with pytest.raises(BackendError, match="found no CUDA device: the CUDA driver"):
        errors.require_device(_runtime(RuntimeError("cudaErrorNoDevice")))
    with pytest.raises(BackendError, match="device 3 does not exist"):
        errors.require_device(_runtime(2), device=3)
    assert errors.device_count(_runtime(RuntimeError("x"))) == 0


def test_missing_nvrtc_message() -> None:
    def fail() -> tuple[int, int]:
        raise OSError("libnvrtc.so.12: cannot open shared object file")

    stand_in = SimpleNamespace(cuda=SimpleNamespace(nvrtc=SimpleNamespace(getVersion=fail)))
    with pytest.raises(BackendError, match=r"NVRTC, which could not be loaded.*libnvrtc"):
        errors.require_nvrtc(stand_in)


@pytest.mark.skipif(HAS_CUPY, reason="CuPy is installed here: the benchmark would try the GPU")
def test_gpu_benchmark_refuses_without_a_gpu() -> None:
    result = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "atari_gpu.py"), "--quick"],
                            capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "no GPU benchmark was run" in result.stderr
    assert "CuPy" in result.stderr


def test_every_cuda_module_imports_without_a_gpu() -> None:
    """Each module of the CUDA backend loads in a fresh interpreter without importing CuPy."""
    import pkgutil

    import gpu_env.backends.cuda as package

    names = sorted(f"gpu_env.backends.cuda.{m.name}" for m in pkgutil.iter_modules(package.__path__))
    assert {"gpu_env.backends.cuda.backend", "gpu_env.backends.cuda.host"} <= set(names)
    code = (f"import importlib, sys\nfor name in {names!r}:\n    importlib.import_module(name)\n"
            "print('cupy' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
