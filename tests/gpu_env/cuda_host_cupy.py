"""Test-only stand-in for the slice of CuPy that gpu_env.backends.cuda uses, running the kernels on the CPU.

``core/cuda/kernels.h`` is compiled with g++ against ``cuda_host_shim.h`` into a shared library;
``RawModule.get_function(name)`` returns a callable that launches kernel ``name`` with the grid and
block it is given, every emulated CUDA thread with its own ``blockIdx``/``threadIdx``, spread over
``workers`` std::threads that run at the same time (so a race or an indexing bug shows on the CPU).
Grid-stride kernels are launched with a grid smaller than asked (``stride_launch``), so their loops
iterate. Arrays are numpy arrays with CuPy's ``get``/``set``.

Transfers: every way a CuPy program moves device data to the host (``get``, ``cupy.asnumpy``,
``bool()``/``int()``/``float()``/``item``/``tolist``/``tobytes``/``__array__``) is counted in
``module.transfers`` (a ``collections.Counter``). What this cannot see: ``numpy.asarray(x)`` on an
array (numpy takes a view of its own subclass without asking), and anything about CUDA execution
(warps, memory model, the real driver).
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import subprocess
import types
from collections import Counter
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from gpu_env.backends.cuda.module import KERNEL_NAMES, unit_source
from gpu_env.cuda_source import CORE_DIR

HERE = Path(__file__).resolve().parent
ENV_KERNELS = {"gpu_env_env_size", "gpu_env_load", "gpu_env_reset", "gpu_env_act",
               "gpu_env_vec_step", "gpu_env_set_mode", "gpu_env_status"}
transfers: Counter[str] = Counter()


class HostArray(np.ndarray):
    """A numpy array with CuPy's transfer methods; every device-to-host path is counted in ``transfers``."""

    def get(self) -> Any:
        """Return a host copy (cupy.ndarray.get)."""
        transfers["get"] += 1
        return np.array(self.view(np.ndarray))

    def set(self, value: Any) -> None:
        """Copy ``value`` in (cupy.ndarray.set)."""
        self[...] = value

    def __bool__(self) -> bool:
        """``bool(x)``: a device-to-host read in CuPy."""
        transfers["bool"] += 1
        return bool(self.view(np.ndarray))

    def __int__(self) -> int:
        """``int(x)``: a device-to-host read in CuPy."""
        transfers["int"] += 1
        return int(self.view(np.ndarray))

    def __float__(self) -> float:
        """``float(x)``: a device-to-host read in CuPy."""
        transfers["float"] += 1
        return float(self.view(np.ndarray))

    def item(self, *args: Any) -> Any:
        """``x.item()``: a device-to-host read in CuPy."""
        transfers["item"] += 1
        return self.view(np.ndarray).item(*args)

    def tolist(self) -> Any:
        """``x.tolist()``: a device-to-host copy in CuPy."""
        transfers["tolist"] += 1
        return self.view(np.ndarray).tolist()

    def tobytes(self, order: Any = "C") -> bytes:
        """``x.tobytes()``: a device-to-host copy in CuPy."""
        transfers["tobytes"] += 1
        return self.view(np.ndarray).tobytes(order)

    def __array__(self, dtype: Any = None, copy: Any = None) -> Any:
        """Implicit conversion by a non-numpy consumer (CuPy refuses it; counted here)."""
        transfers["__array__"] += 1
        base = self.view(np.ndarray)
        return base if dtype is None else base.astype(dtype)


def _wrap(x: Any) -> HostArray:
    return np.ascontiguousarray(x).view(HostArray)


GXX_FLAGS = ("-std=c++17", "-O1", "-fPIC", "-shared", "-pthread")


def build_library(out_dir: Path) -> Path:
    """Compile kernels.h for the host, with a concurrent launcher per kernel; returns the library's path.

    The library is named by the SHA-256 of the unit, the shim and the flags, so an unchanged source is
    not rebuilt when ``out_dir`` is kept between runs.
    """
    launchers = "".join(f"GPU_ENV_SHIM_LAUNCHER({name})\n" for name in KERNEL_NAMES)
    text = f'#include "cuda_host_shim.h"\n#include "cuda/kernels.h"\n{launchers}'
    digest = hashlib.sha256()
    for part in (text, unit_source(), (HERE / "cuda_host_shim.h").read_text(), *GXX_FLAGS):
        digest.update(part.encode() + b"\0")
    lib = out_dir / f"libgpu_env_kernels_host-{digest.hexdigest()[:16]}.so"
    if lib.is_file():
        return lib
    out_dir.mkdir(parents=True, exist_ok=True)
    unit = out_dir / f"{lib.stem}.cpp"
    unit.write_text(text)
    partial = out_dir / f"{lib.name}.{os.getpid()}.part"
    result = subprocess.run(["g++", *GXX_FLAGS, f"-I{HERE}", f"-I{CORE_DIR}", "-o", str(partial), str(unit)],
                            capture_output=True, text=True, timeout=900, check=False)
    if result.returncode != 0:
        raise RuntimeError(result.stderr[-4000:])
    partial.replace(lib)
    return lib


def _c_arg(a: Any) -> Any:
    if isinstance(a, np.ndarray):
        if not a.flags.c_contiguous:
            raise ValueError("kernel arguments must be contiguous")
        return ctypes.c_void_p(a.ctypes.data)
    table: dict[type, Any] = {np.int32: ctypes.c_int32, np.uint32: ctypes.c_uint32, np.uint64: ctypes.c_uint64,
                              np.float32: ctypes.c_float}
    for kind, ctype in table.items():
        if isinstance(a, kind):
            return ctype(a)
    raise TypeError(f"unsupported kernel argument {a!r} of type {type(a)}")


class LaunchConfig:
    """How the stand-in launches kernels.

    ``workers`` std::threads per launch; grid-stride kernels get at most ``stride_launch`` =
    (blocks, threads per block), whatever the caller asks for; ``launches`` counts launches by kernel.
    """

    workers = 8
    stride_launch: tuple[int, int] = (3, 5)
    launches: ClassVar[Counter[str]] = Counter()


class _Kernel:
    max_threads_per_block = 1024

    def __init__(self, lib: ctypes.CDLL, name: str) -> None:
        self._fn = getattr(lib, f"gpu_env_shim_launch_{name}")
        self._fn.restype = None
        self._fn.argtypes = [ctypes.c_uint, ctypes.c_uint, ctypes.c_uint, ctypes.c_void_p]
        self._name = name

    def __call__(self, grid: tuple[int, ...], block: tuple[int, ...], args: tuple[Any, ...]) -> None:
        c_args = [_c_arg(a) for a in args]
        pointers = (ctypes.c_void_p * max(1, len(c_args)))(*[ctypes.addressof(c) for c in c_args])
        g, b = int(grid[0]), int(block[0])
        if self._name not in ENV_KERNELS:
            g, b = min(g, LaunchConfig.stride_launch[0]), min(b, LaunchConfig.stride_launch[1])
        LaunchConfig.launches[self._name] += 1
        self._fn(g, b, LaunchConfig.workers, ctypes.cast(pointers, ctypes.c_void_p))


def peak_concurrency(reset: bool = True) -> int:
    """Most emulated CUDA threads that were inside a kernel at the same moment since the last reset."""
    if _Module.lib is None:
        raise RuntimeError("make_module() first")
    return int(_Module.lib.gpu_env_shim_peak_concurrency(int(reset)))


class _Module:
    lib: ctypes.CDLL | None = None

    def __init__(self, **_: Any) -> None:
        if _Module.lib is None:
            raise RuntimeError("make_module() first")

    def get_function(self, name: str) -> _Kernel:
        if _Module.lib is None:
            raise RuntimeError("make_module() first")
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


def _asnumpy(x: Any) -> Any:
    transfers["asnumpy"] += 1
    return np.array(np.asarray(x).view(np.ndarray))


def make_module(lib_path: Path) -> types.ModuleType:
    """Build a module object that stands in for ``cupy`` (only what gpu_env.backends.cuda calls)."""
    _Module.lib = ctypes.CDLL(str(lib_path))
    cp = types.ModuleType("cupy")
    cp.ndarray = HostArray  # type: ignore[attr-defined]
    for name in ("int32", "uint8", "uint32", "float32", "float64", "bool_", "int64", "uint64"):
        setattr(cp, name, getattr(np, name))
    cp.zeros = lambda shape, dtype=float: _wrap(np.zeros(shape, dtype))  # type: ignore[attr-defined]
    cp.ones = lambda shape, dtype=float: _wrap(np.ones(shape, dtype))  # type: ignore[attr-defined]
    cp.empty = lambda shape, dtype=float: _wrap(np.full(shape, 0xA5, dtype))  # type: ignore[attr-defined]
    cp.asarray = lambda x, dtype=None: _wrap(np.asarray(x, dtype))  # type: ignore[attr-defined]
    cp.ascontiguousarray = _wrap  # type: ignore[attr-defined]
    cp.flatnonzero = lambda x: _wrap(np.flatnonzero(x))  # type: ignore[attr-defined]
    cp.from_dlpack = lambda x: _wrap(np.from_dlpack(x))  # type: ignore[attr-defined]
    cp.asnumpy = _asnumpy  # type: ignore[attr-defined]
    cp.RawModule = _Module  # type: ignore[attr-defined]
    cp.transfers = transfers  # type: ignore[attr-defined]
    cp.launch_config = LaunchConfig  # type: ignore[attr-defined]
    cp.peak_concurrency = peak_concurrency  # type: ignore[attr-defined]
    rng = np.random.default_rng(0)
    cp.random = types.SimpleNamespace(  # type: ignore[attr-defined]
        randint=lambda low, high, size, dtype=np.int64: _wrap(rng.integers(low, high, size, dtype=dtype)))
    pool = types.SimpleNamespace(free_all_blocks=lambda: None, used_bytes=lambda: 0, total_bytes=lambda: 0)
    cp.get_default_memory_pool = lambda: pool  # type: ignore[attr-defined]
    compiler = types.SimpleNamespace(CompileException=RuntimeError)
    runtime = types.SimpleNamespace(getDeviceCount=lambda: 1, runtimeGetVersion=lambda: 0,
                                    driverGetVersion=lambda: 0)
    nvrtc = types.SimpleNamespace(getVersion=lambda: (13, 0))
    cp.cuda = types.SimpleNamespace(Device=_Device, runtime=runtime, nvrtc=nvrtc,  # type: ignore[attr-defined]
                                    compiler=compiler)
    cp.__version__ = "host-shim"  # type: ignore[attr-defined]
    return cp
