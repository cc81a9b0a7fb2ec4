"""Build the CPU library of gpu_env's C++ core at install time.

Every ``gpu_env/native/*.cpp`` file is one translation unit of a single shared library,
``gpu_env/_native*.so``, which ``gpu_env`` loads through ctypes (plain C ABI, no Python C-API),
so nothing is compiled at run time on the CPU. Test-only entry points (RIOT/cartridge access replay)
are not in it: ``tests/gpu_env/native/cart_test.cpp`` is compiled by the tests themselves.
"""

from glob import glob

from setuptools import Extension, setup

native = Extension(
    "gpu_env._native",
    sources=sorted(glob("gpu_env/native/*.cpp")),
    include_dirs=["gpu_env/core", "gpu_env/native"],
    depends=sorted(glob("gpu_env/core/**/*.h", recursive=True) + glob("gpu_env/native/*.h")),
    language="c++",
    extra_compile_args=["-std=c++17", "-O3", "-fno-exceptions", "-fno-rtti", "-pthread", "-fvisibility=hidden",
                        # no fused multiply-add: the resize in native/preprocess.cpp must round as OpenCV does
                        "-ffp-contract=off"],
    extra_link_args=["-pthread"],
)

setup(ext_modules=[native] if native.sources else [])
