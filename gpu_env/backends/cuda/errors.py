"""Checks that ``backend="cuda"`` can run here; each failure names what is missing and the fix."""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any

from gpu_env.errors import BackendError

INSTALL_HINT = (
    "pip install -e '.[cuda]' (cupy-cuda12x; on a CUDA 13 driver install cupy-cuda13x instead)"
)


def import_cupy() -> ModuleType:
    """Return the ``cupy`` module, or raise :class:`BackendError` saying how to install it."""
    try:
        return importlib.import_module("cupy")
    except ImportError as exc:
        raise BackendError(f"backend='cuda' needs CuPy, which is not installed ({exc}): {INSTALL_HINT}") from exc


def device_count(cp: Any) -> int:
    """Count the CUDA devices CuPy sees (0 when the driver/runtime reports none or fails)."""
    try:
        return int(cp.cuda.runtime.getDeviceCount())
    except Exception:
        return 0


def require_device(cp: Any, device: int = 0) -> None:
    """Raise :class:`BackendError` unless CUDA device ``device`` exists."""
    try:
        count = int(cp.cuda.runtime.getDeviceCount())
    except Exception as exc:
        raise BackendError(
            f"backend='cuda' found no CUDA device: the CUDA driver/runtime reported {exc!r}. "
            "Run on a machine with an NVIDIA GPU and driver, or use backend='cpu'."
        ) from exc
    if count == 0:
        raise BackendError("backend='cuda' found no CUDA device (0 visible; check CUDA_VISIBLE_DEVICES): "
                           "run on a machine with an NVIDIA GPU, or use backend='cpu'.")
    if not 0 <= device < count:
        raise BackendError(f"CUDA device {device} does not exist ({count} visible): pass device in [0, {count})")


def require_nvrtc(cp: Any) -> tuple[int, int]:
    """NVRTC's version, or :class:`BackendError` when CuPy cannot load libnvrtc."""
    try:
        major, minor = cp.cuda.nvrtc.getVersion()
    except Exception as exc:
        raise BackendError(
            f"backend='cuda' compiles its kernels with NVRTC, which could not be loaded ({exc!r}): install the "
            "CUDA toolkit's NVRTC (e.g. pip install nvidia-cuda-nvrtc-cu12, or nvidia-cuda-nvrtc for CUDA 13) "
            "matching your CuPy build."
        ) from exc
    return int(major), int(minor)


def require_cuda(device: int = 0) -> ModuleType:
    """CuPy, a CUDA device and NVRTC, all checked; returns the ``cupy`` module."""
    cp = import_cupy()
    require_device(cp, device)
    require_nvrtc(cp)
    return cp
