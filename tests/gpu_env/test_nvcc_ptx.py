"""The device translation unit compiles for the GPU; the core stays freestanding C++17.

The unit is what gpu_env.cuda_source.device_source gives NVRTC.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from gpu_env.cuda_source import CORE_DIR, device_source
from gpu_env.errors import GpuEnvError
from tests.gpu_env.nvrtc_helpers import nvrtc_ptx

CORE_PARTS = ["m6502.h", "riot.h", "cart/cart.h"]

KERNELS = r"""
struct FlatBus {
  uint8_t* memory;
  uint32_t cycles;
  __device__ uint8_t peek(uint16_t address) { return memory[address]; }
  __device__ uint8_t poke(uint16_t address, uint8_t value, uint8_t) { memory[address] = value; return 0; }
  __device__ void add_cycles(uint32_t n) { cycles += n; }
};

// One 6502 per thread, each on its own flat 64 KiB memory: one instruction per launch.
extern "C" __global__ void step_kernel(M6502* cpus, uint8_t* memories, uint32_t* cycles, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  FlatBus bus{memories + (unsigned long long)i * 65536ull, 0};
  m6502_step(cpus[i], bus);
  cycles[i] = bus.cycles;
}

// RIOT and cartridge entry points, as the console will call them.
extern "C" __global__ void device_kernel(Riot* riots, Cart* carts, const uint8_t* rom, uint32_t rom_size,
                                         const uint32_t* random_values, uint8_t* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  riot_reset(riots[i], random_values[i]);
  riot_poke(riots[i], 0x296, 10, 100);
  out[i] = riot_peek(riots[i], 0x284, 200, 0xFF, 0xFF);
  cart_init(carts[i], static_cast<uint8_t>(i % kCartSchemeCount));
  cart_reset(carts[i], random_values, 0);
  cart_poke(carts[i], rom, rom_size, 0x1FF8, 0, 10);
  out[i] ^= cart_peek(carts[i], rom, rom_size, 0x1000, 20);
  cart_system_cycles_reset(carts[i], 300);
  riot_system_cycles_reset(riots[i], 300);
}
"""


def test_device_source_inlines_every_core_include_once() -> None:
    source = device_source([*CORE_PARTS, KERNELS])
    assert not re.search(r'^\s*#\s*include\s+"', source, flags=re.MULTILINE)
    assert "#pragma once" not in source
    for header in ("hd.h", "m6502.h", "riot.h", "cart/cart_state.h", "cart/cart_dpc.h", "cart/superchip.h"):
        assert source.count(f'#line 1 "{header}"') == 1, header
    assert source.index('#line 1 "hd.h"') < source.index("struct M6502 {")
    assert "step_kernel" in source


def test_device_source_rejects_bad_parts() -> None:
    with pytest.raises(GpuEnvError, match="at least one part"):
        device_source([])
    with pytest.raises(GpuEnvError, match="does not exist"):
        device_source(["no_such_header.h"])


def test_core_headers_are_freestanding_cpp17(tmp_path: Path) -> None:
    """Host compile of the same headers without the C++ standard library, exceptions or RTTI."""
    compiler = shutil.which("g++")
    if compiler is None:
        pytest.skip("g++ not found on PATH")
    unit = tmp_path / "freestanding.cpp"
    unit.write_text("\n".join(f'#include "{p}"' for p in CORE_PARTS) + "\nint main() { return 0; }\n")
    result = subprocess.run(
        [
            compiler,
            "-std=c++17",
            "-fsyntax-only",
            "-nostdinc++",
            "-fno-exceptions",
            "-fno-rtti",
            "-Wall",
            "-Wextra",
            "-Werror",
            f"-I{CORE_DIR}",
            str(unit),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr


def test_device_translation_unit_compiles_with_nvcc(tmp_path: Path) -> None:
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        pytest.skip("nvcc not found on PATH: the CUDA toolkit is needed to compile device code")
    unit = tmp_path / "gpu_env_device.cu"
    unit.write_text(device_source([*CORE_PARTS, KERNELS]))
    ptx = tmp_path / "gpu_env_device.ptx"
    result = subprocess.run(
        [nvcc, "--ptx", "-std=c++17", "-arch=sm_90", "-Werror", "all-warnings", "-o", str(ptx), str(unit)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-4000:]
    text = ptx.read_text()
    assert ".entry step_kernel" in text
    assert ".entry device_kernel" in text


def test_device_translation_unit_compiles_with_nvrtc() -> None:
    """The same string through NVRTC itself (what CuPy's RawModule calls), no GPU needed."""
    ptx = nvrtc_ptx(device_source([*CORE_PARTS, KERNELS]), "gpu_env_device.cu",
                    ["--std=c++17", "--gpu-architecture=compute_90"])
    assert b".entry step_kernel" in ptx
    assert b".entry device_kernel" in ptx
