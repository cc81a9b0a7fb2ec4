"""The one ctypes binding of the CPU library built from ``gpu_env/native/*.cpp`` at install time.

:func:`native` loads the library, checks its ABI version and declares the argument and result types
of the entry points that need them (:data:`SIGNATURES`: the console, CPU-harness and game-trace
entry points, and those returning something other than ``int``); the modules that call the library
(:mod:`gpu_env.backends.native`, :mod:`gpu_env.console_native`, :mod:`gpu_env.cpu_harness`,
:mod:`gpu_env.preprocess_cpu`, :mod:`gpu_env.tools.game_traces`) call through it and pass ctypes
values or :func:`pointer` arguments.
"""

from __future__ import annotations

import ctypes
import functools
from pathlib import Path
from typing import Any

import numpy.typing as npt

from gpu_env.errors import BackendError

ABI_VERSION = 6
LIBRARY = "_native.so"
"""The library's file name in ``gpu_env/``: no interpreter suffix, it is loaded by ctypes, not imported (setup.py)."""

_P = ctypes.c_void_p
_I32 = ctypes.c_int32
_U64 = ctypes.c_uint64
_U8P = ctypes.POINTER(ctypes.c_uint8)
_I32P = ctypes.POINTER(ctypes.c_int32)
_U64P = ctypes.POINTER(ctypes.c_uint64)

# entry point: (result type, argument types or None where the caller passes ctypes values itself)
SIGNATURES: dict[str, tuple[Any, list[Any] | None]] = {
    "gpu_env_simd_kernels": (ctypes.c_int, []),
    "gpu_env_ale_rom_new": (_P, None),
    "gpu_env_pool_new": (_P, None),
    "gpu_env_pool_send": (None, None),
    "gpu_env_pool_recv": (None, None),
    "gpu_env_pool_free": (None, None),
    "gpu_env_pool_obs_rows": (None, None),
    "gpu_env_console_size": (ctypes.c_uint32, []),
    "gpu_env_console_ram_offset": (ctypes.c_uint32, []),
    "gpu_env_console_configure": (None, [_P] + [_I32] * 11),
    "gpu_env_console_import_ale": (_I32, [_P] * 7 + [_I32]),
    "gpu_env_console_set_screens": (None, [_P, _P, _P, _P]),
    "gpu_env_batch_emulate": (None, [_P, _I32, _P, ctypes.c_uint32, _P, _U64, _P, _I32, _I32]),
    "gpu_env_batch_screens": (None, [_P, _I32, _P, _U64, _P]),
    "gpu_env_console_export_ale": (None, [_P] * 6),
    "gpu_env_harness_log_capacity": (ctypes.c_int32, []),
    "gpu_env_harness_step": (None, [_U8P, _I32P, _U64P, _U8P, _I32P, _I32P]),
    "gpu_env_harness_run_vectors": (None, [_I32, _I32P, _I32P, _I32P, _I32P, _I32P, _U8P, _U64P, _U8P, _I32P, _I32P]),
    "gpu_env_harness_run_program": (None, [_U8P, _I32P, ctypes.c_uint64, _U64P, _U64P, _U8P]),
    "gpu_env_games_init": (ctypes.c_int, [ctypes.c_int, _I32P]),
    "gpu_env_games_run_trace": (ctypes.c_int, [ctypes.c_int, ctypes.c_int, _U8P, _I32P, _I32P, _I32P, _I32P, _I32P]),
}


@functools.cache
def native() -> ctypes.CDLL:
    """Return the loaded CPU library, or raise :class:`BackendError` saying how to build it."""
    here = Path(__file__).resolve().parent
    candidate = here / LIBRARY
    if not candidate.exists():
        raise BackendError(
            f"gpu_env's CPU library ({LIBRARY}) was not found in {here}: "
            "install the package with `pip install -e .` (or run `python setup.py build_ext --inplace`)."
        )
    lib = ctypes.CDLL(str(candidate))
    lib.gpu_env_abi_version.restype = ctypes.c_int
    found = lib.gpu_env_abi_version()
    if found != ABI_VERSION:
        raise BackendError(
            f"{candidate} has ABI version {found}, this gpu_env expects {ABI_VERSION}: "
            "rebuild it with `pip install -e .` (or `python setup.py build_ext --inplace`)."
        )
    for name, (result, arguments) in SIGNATURES.items():
        function = getattr(lib, name)
        function.restype = result
        if arguments is not None:
            function.argtypes = arguments
    return lib


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
    return "avx512" if native().gpu_env_simd_kernels() else "scalar"
