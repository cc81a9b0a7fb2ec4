"""The test-only C entry points (``tests/gpu_env/native/cart_test.cpp``), compiled by the tests with g++.

They replay bus accesses against one RIOT or cartridge and boot a ROM on a console without a TIA,
running the same ``gpu_env/core`` headers the emulator uses. They are not part of the shipped CPU
library (``gpu_env/_native*.so``): this module compiles them once per core version into a cache
folder (``$GPU_ENV_TEST_BUILD``, else ``<tmp>/gpu_env-test-native``), keyed by a hash of the sources.
"""

from __future__ import annotations

import ctypes
import functools
import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from gpu_env.cuda_source import CORE_DIR

SOURCE = Path(__file__).resolve().parent / "native" / "cart_test.cpp"
# The flags of the shipped library (setup.py), so the tests exercise the same code generation.
FLAGS = ["-std=c++17", "-O2", "-fno-exceptions", "-fno-rtti", "-fvisibility=hidden", "-ffp-contract=off",
         "-fPIC", "-shared"]


def _sources_digest() -> str:
    digest = hashlib.sha256(" ".join(FLAGS).encode())
    for path in [SOURCE, *sorted(CORE_DIR.rglob("*.h"))]:
        digest.update(path.relative_to(path.parents[1]).as_posix().encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def _build_dir() -> Path:
    configured = os.environ.get("GPU_ENV_TEST_BUILD")
    return Path(configured) if configured else Path(tempfile.gettempdir()) / "gpu_env-test-native"


def build_library() -> Path:
    """Compile cart_test.cpp (if this version is not cached yet); returns the shared library's path."""
    compiler = shutil.which("g++")
    if compiler is None:
        pytest.fail("g++ not found on PATH: the RIOT/cartridge tests compile their entry points with it",
                    pytrace=False)
    out_dir = _build_dir()
    out_dir.mkdir(parents=True, exist_ok=True)
    lib = out_dir / f"libgpu_env_cart_test-{_sources_digest()}.so"
    if lib.exists():
        return lib
    partial = out_dir / f"{lib.name}.{os.getpid()}.tmp"
    result = subprocess.run([compiler, *FLAGS, f"-I{CORE_DIR}", "-o", str(partial), str(SOURCE)],
                            capture_output=True, text=True, timeout=600, check=False)
    if result.returncode != 0:
        raise RuntimeError(f"compiling {SOURCE} failed:\n{result.stderr[-4000:]}")
    partial.replace(lib)  # atomic: a concurrent test process sees the whole file or none
    return lib


@functools.cache
def cart_test_library() -> ctypes.CDLL:
    """Return the loaded test library (compiled on first use)."""
    return ctypes.CDLL(str(build_library()))
