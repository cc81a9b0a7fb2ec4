"""Test-only stand-in for the slice of CuPy that gpu_env.cuda uses, running the kernels on the CPU.

``core/cuda/kernels.h`` is compiled with g++ against ``cuda_host_shim.h`` into a shared library;
``RawModule.get_function(name)`` returns a callable that runs kernel ``name`` thread by thread
through ctypes. Arrays are numpy arrays with CuPy's ``get``/``set``. This exercises the backend's
Python code and the kernels' logic without a GPU; it proves nothing about CUDA execution.
"""

from __future__ import annotations

import ctypes
import subprocess
import types
from pathlib import Path
from typing import Any

import numpy as np

from gpu_env.cuda_source import CORE_DIR

HERE = Path(__file__).resolve().parent
ENV_KERNELS = {"gpu_env_load", "gpu_env_reset", "gpu_env_act", "gpu_env_act_preprocessed", "gpu_env_set_mode",
               "gpu_env_status"}


class HostArray(np.ndarray):
    """A numpy array with CuPy's transfer methods."""

    def get(self) -> Any:
        """Return a host copy (cupy.ndarray.get)."""
        return np.array(self)

    def set(self, value: Any) -> None:
        """Copy ``value`` in (cupy.ndarray.set)."""
        self[...] = value


def _wrap(x: Any) -> HostArray:
    return np.ascontiguousarray(x).view(HostArray)


def build_library(out_dir: Path) -> Path:
    """Compile kernels.h for the host; returns the shared library's path."""
    unit = out_dir / "kernels_host.cpp"
    unit.write_text('#include "cuda_host_shim.h"\n#include "cuda/kernels.h"\n')
    lib = out_dir / "libgpu_env_kernels_host.so"
    result = subprocess.run(["g++", "-std=c++17", "-O1", "-fPIC", "-shared", f"-I{HERE}", f"-I{CORE_DIR}", "-o",
                             str(lib), str(unit)], capture_output=True, text=True, timeout=600, check=False)
    if result.returncode != 0:
        raise RuntimeError(result.stderr[-4000:])
    return lib


def _c_arg(a: Any) -> Any:
    if isinstance(a, np.ndarray):
        assert a.flags.c_contiguous, "kernel arguments must be contiguous"
        return ctypes.c_void_p(a.ctypes.data)
    table: dict[type, Any] = {np.int32: ctypes.c_int32, np.uint32: ctypes.c_uint32, np.uint64: ctypes.c_uint64,
                              np.float32: ctypes.c_float}
    for kind, ctype in table.items():
        if isinstance(a, kind):
            return ctype(a)
    raise TypeError(f"unsupported kernel argument {a!r} of type {type(a)}")


class _Kernel:
    max_threads_per_block = 1024

    def __init__(self, lib: ctypes.CDLL, name: str) -> None:
        self._fn = getattr(lib, name)
        self._fn.restype = None
        self._set = lib.gpu_env_shim_set_thread
        self._name = name

    def __call__(self, grid: tuple[int, ...], block: tuple[int, ...], args: tuple[Any, ...]) -> None:
        c_args = [_c_arg(a) for a in args]
        if self._name in ENV_KERNELS:
            for b in range(grid[0]):
                for t in range(block[0]):
                    self._set(b, t, block[0], grid[0])
                    self._fn(*c_args)
        else:  # grid-stride kernels: one thread covers everything
            self._set(0, 0, 1, 1)
            self._fn(*c_args)


class _Module:
    lib: ctypes.CDLL | None = None

    def __init__(self, **_: Any) -> None:
        assert _Module.lib is not None

    def get_function(self, name: str) -> _Kernel:
        assert _Module.lib is not None
        return _Kernel(_Module.lib, name)


class _Device:
    compute_capability = "90"

    def __init__(self, index: int = 0) -> None:
        self.index = index

    def __enter__(self) -> _Device:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def synchronize(self) -> None:
        """Nothing to wait for."""


def make_module(lib_path: Path) -> types.ModuleType:
    """Build a module object that stands in for ``cupy`` (only what gpu_env.cuda calls)."""
    _Module.lib = ctypes.CDLL(str(lib_path))
    cp = types.ModuleType("cupy")
    cp.ndarray = HostArray  # type: ignore[attr-defined]
    for name in ("int32", "uint8", "uint32", "float32", "bool_", "int64", "uint64"):
        setattr(cp, name, getattr(np, name))
    cp.zeros = lambda shape, dtype=float: _wrap(np.zeros(shape, dtype))  # type: ignore[attr-defined]
    cp.ones = lambda shape, dtype=float: _wrap(np.ones(shape, dtype))  # type: ignore[attr-defined]
    cp.empty = lambda shape, dtype=float: _wrap(np.full(shape, 0xA5, dtype))  # type: ignore[attr-defined]
    cp.asarray = lambda x, dtype=None: _wrap(np.asarray(x, dtype))  # type: ignore[attr-defined]
    cp.ascontiguousarray = _wrap  # type: ignore[attr-defined]
    cp.flatnonzero = lambda x: _wrap(np.flatnonzero(x))  # type: ignore[attr-defined]
    cp.RawModule = _Module  # type: ignore[attr-defined]
    rng = np.random.default_rng(0)
    cp.random = types.SimpleNamespace(  # type: ignore[attr-defined]
        randint=lambda low, high, size, dtype=np.int64: _wrap(rng.integers(low, high, size, dtype=dtype)))
    pool = types.SimpleNamespace(free_all_blocks=lambda: None, used_bytes=lambda: 0)
    cp.get_default_memory_pool = lambda: pool  # type: ignore[attr-defined]
    compiler = types.SimpleNamespace(CompileException=RuntimeError)
    runtime = types.SimpleNamespace(getDeviceCount=lambda: 1)
    nvrtc = types.SimpleNamespace(getVersion=lambda: (13, 0))
    cp.cuda = types.SimpleNamespace(Device=_Device, runtime=runtime, nvrtc=nvrtc,  # type: ignore[attr-defined]
                                    compiler=compiler)
    return cp
