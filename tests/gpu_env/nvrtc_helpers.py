"""Compile a CUDA source string with libnvrtc itself (what CuPy's ``RawModule`` calls), no GPU needed."""

from __future__ import annotations

import ctypes
import ctypes.util
import importlib
import os
from pathlib import Path

import pytest


def find_nvrtc() -> str | None:
    """Locate libnvrtc: $GPU_ENV_NVRTC_LIB, the system library path, or NVIDIA's pip wheels."""
    configured = os.environ.get("GPU_ENV_NVRTC_LIB")
    if configured:
        return configured
    found = ctypes.util.find_library("nvrtc")
    if found:
        return found
    for package in ("nvidia.cu13", "nvidia.cuda_nvrtc"):
        try:
            module = importlib.import_module(package)
        except ImportError:
            continue
        for root in getattr(module, "__path__", []):
            candidates = sorted(Path(root).glob("lib/libnvrtc.so*"))
            if candidates:
                return str(candidates[0])
    return None


def nvrtc_ptx(source: str, name: str, options: list[str]) -> bytes:
    """PTX of ``source`` compiled with ``options``; skips the test without libnvrtc, fails with NVRTC's log."""
    path = find_nvrtc()
    if path is None:
        pytest.skip("libnvrtc not found: install nvidia-cuda-nvrtc or set GPU_ENV_NVRTC_LIB")
    lib = ctypes.CDLL(path)
    program = ctypes.c_void_p()
    assert lib.nvrtcCreateProgram(ctypes.byref(program), source.encode(), name.encode(), 0, None, None) == 0
    opts = [o.encode() for o in options]
    status = lib.nvrtcCompileProgram(program, len(opts), (ctypes.c_char_p * len(opts))(*opts))
    size = ctypes.c_size_t()
    lib.nvrtcGetProgramLogSize(program, ctypes.byref(size))
    log = ctypes.create_string_buffer(size.value)
    lib.nvrtcGetProgramLog(program, log)
    assert status == 0, log.value.decode(errors="replace")[-4000:]
    lib.nvrtcGetPTXSize(program, ctypes.byref(size))
    ptx = ctypes.create_string_buffer(size.value)
    lib.nvrtcGetPTX(program, ptx)
    lib.nvrtcDestroyProgram(ctypes.byref(program))
    return ptx.value
