"""Build the CPU library of gpu_env's C++ core at install time.

Every ``gpu_env/native/*.cpp`` file is one translation unit of a single shared library,
``gpu_env/_native.so``, which ``gpu_env`` loads through ctypes (plain C ABI, no Python C-API),
so nothing is compiled at run time on the CPU. Since no Python ABI is involved, the library's name carries
no interpreter suffix (:class:`ParallelBuildExt`) and the wheel is tagged ``py3-none-<platform>``
(:class:`PlatformWheel`): one wheel for every CPython 3 the project supports. Test-only entry points
(RIOT/cartridge access replay) are not in it: ``tests/gpu_env/native/cart_test.cpp`` is compiled by the
tests themselves.

The library is built for baseline x86-64 (its AVX-512 kernels are chosen at run time, ``native/simd.h``), so
one wheel runs on any x86-64 machine (docs/packaging.md). The top-level ``suites/`` folder (suite files,
traces, the shipped checkpoint) is copied into the built package as ``evaltk/data/suites/``
(:class:`BuildPyWithSuites`).
"""

import os
import platform
import shutil
from concurrent.futures import ThreadPoolExecutor
from glob import glob
from pathlib import Path
from typing import Any

from setuptools import Extension, setup
from setuptools.command.bdist_wheel import bdist_wheel
from setuptools.command.build_ext import build_ext
from setuptools.command.build_py import build_py

SUITES = "suites"
# Where the suite folder lies in the built package (evaltk.shipped reads it there).
SHIPPED_SUITES = Path("evaltk", "data", "suites")
# Baseline x86-64 code (the AVX-512 kernels carry their own target attribute); other machines use the compiler's own.
BASELINE_ARCH = ["-march=x86-64", "-mtune=generic"] if platform.machine() in ("x86_64", "AMD64") else []


class ParallelBuildExt(build_ext):
    """Compile the library's translation units in parallel, one per core, into ``gpu_env/_native.so``.

    The emulator's CPU loop is compiled once per cartridge scheme, each in its own unit; setuptools
    would compile the sources of one extension one after another. The file name has no interpreter
    suffix (``.cpython-311-x86_64-linux-gnu``): the library is not a Python extension module.
    """

    def get_ext_filename(self, fullname: str) -> str:
        """``gpu_env/_native.so`` for ``gpu_env._native`` (``gpu_env.binding.LIBRARY``)."""
        return os.path.join(*fullname.split(".")) + ".so"

    def build_extensions(self) -> None:
        """Build as setuptools does, with ``compiler.compile`` fanned out over the sources."""
        compiler = self.compiler
        serial_compile = compiler.compile

        def parallel_compile(sources: list[str], *args: Any, **kwargs: Any) -> list[str]:
            with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
                objects = pool.map(lambda source: serial_compile([source], *args, **kwargs), sources)
                return [obj for per_source in objects for obj in per_source]

        compiler.compile = parallel_compile
        super().build_extensions()


native = Extension(
    "gpu_env._native",
    sources=sorted(glob("gpu_env/native/*.cpp")),
    include_dirs=["gpu_env/core", "gpu_env/native"],
    depends=sorted(glob("gpu_env/core/**/*.h", recursive=True) + glob("gpu_env/native/*.h")),
    language="c++",
    extra_compile_args=["-std=c++17", "-O3", "-fno-exceptions", "-fno-rtti", "-pthread", "-fvisibility=hidden",
                        # no fused multiply-add: the resize in native/preprocess.cpp must round as OpenCV does
                        "-ffp-contract=off",
                        # each cartridge scheme's CPU loop in its own unit (native/run_cpu_*.cpp; see core/console.h)
                        "-DGPU_ENV_SPLIT_CPU", *BASELINE_ARCH],
    extra_link_args=["-pthread"],
)


class BuildPyWithSuites(build_py):
    """Build the packages as setuptools does, plus a copy of ``suites/`` as ``evaltk/data/suites/``.

    An editable install reads ``suites/`` of the checkout itself, so nothing is copied there.
    """

    def run(self) -> None:
        """Copy the Python packages, then the suite folder (when the source tree has one)."""
        super().run()
        if self.editable_mode or not os.path.isdir(SUITES):
            return
        target = Path(self.build_lib) / SHIPPED_SUITES
        shutil.rmtree(target, ignore_errors=True)
        shutil.copytree(SUITES, target, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))


class PlatformWheel(bdist_wheel):
    """A wheel for any CPython 3 on this platform: tagged ``py3-none-<platform>``, not ``cp311-cp311-<platform>``.

    Its one compiled file is the ctypes library, which uses no Python C-API, so the interpreter and ABI
    tags of a C-extension wheel would only keep it from installing on other CPythons.
    """

    def get_tag(self) -> tuple[str, str, str]:
        """``("py3", "none", platform)``, the platform as setuptools decides it for a non-pure wheel."""
        _, _, platform_tag = super().get_tag()
        return "py3", "none", platform_tag


setup(ext_modules=[native] if native.sources else [],
      cmdclass={"build_ext": ParallelBuildExt, "build_py": BuildPyWithSuites, "bdist_wheel": PlatformWheel})
