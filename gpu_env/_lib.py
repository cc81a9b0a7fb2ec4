"""Locate and load the CPU library built from ``gpu_env/native/*.cpp`` at install time."""

from __future__ import annotations

import ctypes
import functools
import importlib.machinery
from pathlib import Path
from typing import Any

import numpy.typing as npt

from gpu_env.errors import BackendError

ABI_VERSION = 3


@functools.cache
def native() -> ctypes.CDLL:
    """Return the loaded CPU library, or raise :class:`BackendError` saying how to build it."""
    here = Path(__file__).resolve().parent
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        candidate = here / f"_native{suffix}"
        if candidate.exists():
            lib = ctypes.CDLL(str(candidate))
            lib.gpu_env_abi_version.restype = ctypes.c_int
            found = lib.gpu_env_abi_version()
            if found != ABI_VERSION:
                raise BackendError(
                    f"{candidate} has ABI version {found}, this gpu_env expects {ABI_VERSION}: "
                    "rebuild it with `pip install -e .` (or `python setup.py build_ext --inplace`)."
                )
            return lib
    raise BackendError(
        f"gpu_env's CPU library (_native*.so) was not found in {here}: "
        "install the package with `pip install -e .` (or run `python setup.py build_ext --inplace`)."
    )


def pointer(array: npt.NDArray[Any]) -> ctypes.c_void_p:
    """``array``'s data as a ``void*`` argument that keeps ``array`` alive while the pointer lives.

    Callers pass temporaries (``mask.astype(np.uint8)``): a bare address would outlive the array, and
    its memory could be reused (by another thread's allocation) before the native call reads it.
    """
    address = ctypes.c_void_p(array.ctypes.data)
    address._array = array  # type: ignore[attr-defined]  # ctypes instances take attributes
    return address


def simd_kernels() -> str:
    """Which kernels the CPU library runs for screens and the resize here: ``"avx512"`` or ``"scalar"``.

    The AVX-512 kernels (``gpu_env/native/simd.h``) produce the same bytes as the scalar ones; they run
    when the CPU has AVX-512 F/BW/VL/VBMI and ``GPU_ENV_NO_SIMD`` is not set.
    """
    lib = native()
    lib.gpu_env_simd_kernels.restype = ctypes.c_int
    return "avx512" if lib.gpu_env_simd_kernels() else "scalar"
