"""The CUDA module of gpu_env: one translation unit, its compile options, compiled once and cached.

The unit is ``gpu_env.cuda_source.device_source(["cuda/kernels.h"])``: the whole
console, the ALE layer (``core/ale/environment.h``) and the game registry, plus the kernels of
``core/cuda/kernels.h``. It does not depend on the ROM (the image, its scheme and the per-game
constants are kernel arguments), so one compiled module serves every ROM and several batches of
different ROMs in one process; a :class:`KernelOptions` variant (e.g. a game id fixed at compile
time) gets its own module.

``core/hd.h`` must not force-inline (``HD`` is ``__host__ __device__ inline`` under CUDA): with every
function force-inlined, ``nvcc --ptx`` of this unit ran 8 minutes and took 18 GB of memory without
finishing (the reset sequence inlines the frame loop at every call site); with the compiler choosing,
it takes 11-20 s here (docs/gpu_backend.md).

Compilation: a cubin in the cache directory (``$GPU_ENV_CUDA_CACHE`` or ``~/.cache/gpu_env/cuda``),
named by the SHA-256 of source, options and architecture, is loaded if present (``python -m
gpu_env.cuda.module prebuild`` makes them with nvcc, several variants in parallel); otherwise CuPy
compiles the unit with NVRTC, and CuPy's own kernel cache (``$CUPY_CACHE_DIR``) keeps the result.
Options: ``--std=c++17 --fmad=false`` (no fused multiply-add anywhere, so float/double results equal
the CPU build's) and the ``-D`` macros of :class:`KernelOptions`.
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gpu_env.cuda_source import device_source
from gpu_env.errors import BackendError

KERNEL_HEADER = "cuda/kernels.h"
KERNEL_NAMES: tuple[str, ...] = (
    "gpu_env_env_size",
    "gpu_env_load",
    "gpu_env_reset",
    "gpu_env_act",
    "gpu_env_act_preprocessed",
    "gpu_env_set_mode",
    "gpu_env_status",
    "gpu_env_ram",
    "gpu_env_screen",
    "gpu_env_max_pool",
    "gpu_env_area_resize",
    "gpu_env_area_resize_int",
    "gpu_env_frame_stack",
)
BASE_OPTIONS: tuple[str, ...] = ("--std=c++17", "--fmad=false")


@dataclass(frozen=True)
class KernelOptions:
    """Compile-time variants of the kernels (each is a separate module).

    local_copy: work on a thread-local copy of each env's state (``GPU_ENV_CUDA_LOCAL_COPY=1``)
        instead of in place in the array of structs in global memory.
    game_id: fix the game id (``gpu_env.games`` id) at compile time (``GPU_ENV_CUDA_GAME_ID``);
        ``None`` reads it from the per-ROM parameters (one module for every game).
    """

    local_copy: bool = False
    game_id: int | None = None

    def defines(self) -> list[str]:
        """Return the ``-D`` options of this variant."""
        gid = -1 if self.game_id is None else int(self.game_id)
        return [f"-DGPU_ENV_CUDA_LOCAL_COPY={int(self.local_copy)}", f"-DGPU_ENV_CUDA_GAME_ID={gid}"]

    def label(self) -> str:
        """Return a short name for tables: ``inplace`` / ``local``, plus ``-g<id>`` when specialised."""
        base = "local" if self.local_copy else "inplace"
        return base if self.game_id is None else f"{base}-g{self.game_id}"


@functools.cache
def unit_source() -> str:
    """Return the complete translation unit NVRTC compiles (and the tests give ``nvcc --ptx``)."""
    return device_source([KERNEL_HEADER])


def nvrtc_options(options: KernelOptions) -> list[str]:
    """Return the options NVRTC gets (CuPy adds the architecture, ``-arch=sm_XY``, itself)."""
    return [*BASE_OPTIONS, *options.defines()]


def nvcc_command(nvcc: str, unit: Path, out: Path, options: KernelOptions, arch: str = "sm_90",
                 kind: str = "ptx") -> list[str]:
    """``nvcc`` invocation with the same source and options NVRTC gets; ``kind``: ``ptx`` or ``cubin``."""
    if kind not in ("ptx", "cubin"):
        raise ValueError(f"kind={kind!r}: use 'ptx' or 'cubin'")
    return [nvcc, f"--{kind}", f"-arch={arch}", *nvrtc_options(options), "-o", str(out), str(unit)]


def cache_dir() -> Path:
    """Where prebuilt cubins live: ``$GPU_ENV_CUDA_CACHE`` or ``~/.cache/gpu_env/cuda``."""
    configured = os.environ.get("GPU_ENV_CUDA_CACHE")
    return Path(configured) if configured else Path.home() / ".cache" / "gpu_env" / "cuda"


def cache_key(options: KernelOptions, arch: str) -> str:
    """SHA-256 over the unit, the NVRTC options and the architecture (``sm_90``)."""
    h = hashlib.sha256()
    h.update(unit_source().encode())
    for part in (*nvrtc_options(options), arch):
        h.update(b"\0" + part.encode())
    return h.hexdigest()


def cubin_path(options: KernelOptions, arch: str) -> Path:
    """Return the cache file of a prebuilt cubin of this variant and architecture."""
    return cache_dir() / f"{cache_key(options, arch)}.cubin"


def device_arch(cp: Any, device: int = 0) -> str:
    """``sm_XY`` of CUDA device ``device``."""
    with cp.cuda.Device(device):
        return f"sm_{cp.cuda.Device(device).compute_capability}"


_modules: dict[tuple[KernelOptions, str], Any] = {}


def load_module(cp: Any, options: KernelOptions, device: int = 0) -> Any:
    """Return the compiled ``cupy.RawModule`` of ``options`` for ``device`` (compiled once per process)."""
    arch = device_arch(cp, device)
    key = (options, arch)
    if key in _modules:
        return _modules[key]
    prebuilt = cubin_path(options, arch)
    try:
        if prebuilt.is_file():
            module = cp.RawModule(path=str(prebuilt))
        else:
            module = cp.RawModule(code=unit_source(), options=tuple(nvrtc_options(options)), backend="nvrtc")
        module.get_function(KERNEL_NAMES[0])  # forces compilation/loading now, so errors surface here
    except cp.cuda.compiler.CompileException as exc:
        raise BackendError(f"NVRTC could not compile gpu_env's CUDA kernels ({options.label()}, {arch}): "
                           f"{str(exc)[-2000:]}") from exc
    _modules[key] = module
    return module


def prebuild(variants: list[KernelOptions], arch: str, out_dir: Path, jobs: int) -> list[Path]:
    """Compile ``variants`` to cubins in ``out_dir`` with nvcc (``jobs`` at a time); returns the files."""
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        raise BackendError("nvcc not found on PATH: prebuilding cubins needs the CUDA toolkit's nvcc")
    out_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        unit = Path(tmp) / "gpu_env_device.cu"
        unit.write_text(unit_source())

        def build(options: KernelOptions) -> Path:
            target = out_dir / f"{cache_key(options, arch)}.cubin"
            if target.is_file():
                return target
            partial = target.with_suffix(".cubin.part")
            result = subprocess.run(nvcc_command(nvcc, unit, partial, options, arch, "cubin"),
                                    capture_output=True, text=True, check=False)
            if result.returncode != 0:
                raise BackendError(f"nvcc failed for {options.label()}: {result.stderr[-2000:]}")
            partial.replace(target)
            return target

        with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
            return list(pool.map(build, variants))


def main(argv: list[str] | None = None) -> int:
    """``python -m gpu_env.cuda.module prebuild [--arch sm_90] [--out DIR] [--local] [--game-id N] [-j N]``."""
    parser = argparse.ArgumentParser(prog="python -m gpu_env.cuda.module")
    sub = parser.add_subparsers(dest="command", required=True)
    pre = sub.add_parser("prebuild", help="compile cubins with nvcc into the cache directory")
    pre.add_argument("--arch", default="sm_90")
    pre.add_argument("--out", type=Path, default=None, help="default: $GPU_ENV_CUDA_CACHE or ~/.cache/gpu_env/cuda")
    pre.add_argument("--local", action="store_true", help="also build the local-copy variant")
    pre.add_argument("--game-id", type=int, action="append", default=[], help="also build game-specialised variants")
    pre.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1)
    sub.add_parser("source", help="print the translation unit")
    args = parser.parse_args(argv)
    if args.command == "source":
        sys.stdout.write(unit_source())
        return 0
    variants = [KernelOptions()]
    if args.local:
        variants.append(KernelOptions(local_copy=True))
    variants += [KernelOptions(game_id=g) for g in args.game_id]
    out = args.out if args.out is not None else cache_dir()
    for path, options in zip(prebuild(variants, args.arch, out, args.jobs), variants, strict=True):
        print(f"{options.label()}: {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
