"""The CUDA module of gpu_env: one translation unit, its compile options, compiled once and cached.

The unit is ``gpu_env.cuda_source.device_source(["cuda/kernels.h"])``: the whole
console, the ALE layer (``core/ale/environment.h``) and the game registry, plus the kernels of
``core/cuda/kernels.h``. It does not depend on the ROM (the image, its scheme and the per-game
constants are kernel arguments), so one compiled module serves every ROM and several batches of
different ROMs in one process; a :class:`KernelOptions` variant (e.g. a game id fixed at compile
time) gets its own module.

``core/hd.h`` must not force-inline (``HD`` is ``__host__ __device__ inline`` under CUDA): with every
function force-inlined the reset sequence inlines the frame loop at every call site and ``nvcc --ptx``
of this unit does not finish in reasonable time or memory (docs/gpu_backend.md records the figures).

Compilation: a fatbin in the cache directory (``$GPU_ENV_CUDA_CACHE`` or ``~/.cache/gpu_env/cuda``),
named by the SHA-256 of source, options and architecture, is loaded if present (``python -m
gpu_env.backends.cuda.module prebuild`` makes it with nvcc on any machine, GPU or not: SASS for sm_90 plus
compute_90 PTX, which the driver compiles for newer GPUs); otherwise, or when the driver rejects the
file, CuPy compiles the unit with NVRTC, and CuPy's own kernel cache (``$CUPY_CACHE_DIR``) keeps the result.
Options: ``--std=c++17 --fmad=false`` (no fused multiply-add anywhere, so float/double results equal
the CPU build's) and the ``-D`` macros of :class:`KernelOptions`.
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import os
import shutil
import struct
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
    "gpu_env_vec_step",
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
    """``nvcc`` invocation with the same source and options NVRTC gets.

    ``kind``: ``ptx``, ``cubin`` (SASS for ``arch``) or ``fatbin`` (SASS for ``arch`` plus the PTX of its
    virtual architecture, which the driver compiles at load time for newer GPUs).
    """
    if kind not in ("ptx", "cubin", "fatbin"):
        raise ValueError(f"kind={kind!r}: use 'ptx', 'cubin' or 'fatbin'")
    if kind == "fatbin":
        virtual = "compute_" + _arch_number(arch)
        targets = ["-gencode", f"arch={virtual},code={arch}", "-gencode", f"arch={virtual},code={virtual}"]
    else:
        targets = [f"-arch={arch}"]
    return [nvcc, f"--{kind}", *targets, *nvrtc_options(options), "-o", str(out), str(unit)]


def _arch_number(arch: str) -> str:
    if not (arch.startswith("sm_") and arch[3:].isdigit()):
        raise ValueError(f"arch={arch!r}: use sm_XY, e.g. sm_90")
    return arch[3:]


def cache_dir() -> Path:
    """Where prebuilt modules live: ``$GPU_ENV_CUDA_CACHE`` or ``~/.cache/gpu_env/cuda``."""
    configured = os.environ.get("GPU_ENV_CUDA_CACHE")
    return Path(configured) if configured else Path.home() / ".cache" / "gpu_env" / "cuda"


def cache_key(options: KernelOptions, arch: str) -> str:
    """SHA-256 over the unit, the NVRTC options and the target (``sm_90``): the prebuilt file's name."""
    h = hashlib.sha256()
    h.update(unit_source().encode())
    for part in (*nvrtc_options(options), arch):
        h.update(b"\0" + part.encode())
    return h.hexdigest()


def cubin_path(options: KernelOptions, arch: str, directory: Path | None = None) -> Path:
    """Return the prebuilt fatbin of this variant for ``arch`` (SASS for ``arch`` + PTX of ``compute_XY``)."""
    return (directory if directory is not None else cache_dir()) / f"{cache_key(options, arch)}.fatbin"


def device_arch(cp: Any, device: int = 0) -> str:
    """``sm_XY`` of CUDA device ``device``."""
    with cp.cuda.Device(device):
        return f"sm_{cp.cuda.Device(device).compute_capability}"


def prebuilt_for(options: KernelOptions, arch: str, directory: Path | None = None) -> Path | None:
    """Return the prebuilt file a device of ``arch`` loads: its own, else an older arch's (its PTX), or None."""
    number = int(_arch_number(arch))
    for candidate in [arch, *(a for a in PREBUILT_ARCHS if int(_arch_number(a)) < number)]:
        path = cubin_path(options, candidate, directory)
        if path.is_file():
            return path
    return None


PREBUILT_ARCHS: tuple[str, ...] = ("sm_90",)
_FATBIN_MAGIC = 0xBA55ED50
_FATBIN_KINDS = {1: "ptx", 2: "elf"}


def fatbin_entries(path: Path) -> list[tuple[str, str]]:
    """(kind, arch) of each image in a CUDA fatbin, e.g. ``[("ptx", "compute_90"), ("elf", "sm_90")]``.

    Reads the container's headers (magic, header size, body size; per image: kind, header size,
    image size, arch at byte 28), enough to check what a prebuild wrote without cuobjdump.
    """
    data = path.read_bytes()
    if len(data) < 16 or struct.unpack_from("<I", data, 0)[0] != _FATBIN_MAGIC:
        raise BackendError(f"{path} is not a CUDA fatbin (bad magic): rebuild it with "
                           "python -m gpu_env.backends.cuda.module prebuild")
    header, body = struct.unpack_from("<HQ", data, 6)[0], struct.unpack_from("<Q", data, 8)[0]
    out: list[tuple[str, str]] = []
    offset = header
    while offset + 32 <= min(len(data), header + body):
        kind, _, image_header, image_size = struct.unpack_from("<HHIQ", data, offset)
        arch = struct.unpack_from("<I", data, offset + 28)[0]
        name = _FATBIN_KINDS.get(kind, f"kind{kind}")
        out.append((name, f"{'compute' if name == 'ptx' else 'sm'}_{arch}"))
        offset += image_header + image_size
    return out
_modules: dict[tuple[KernelOptions, str], Any] = {}
last_load: dict[str, str] = {}


def load_module(cp: Any, options: KernelOptions, device: int = 0) -> Any:
    """Return the ``cupy.RawModule`` of ``options`` for ``device`` (loaded or compiled once per process).

    A prebuilt file whose name is the current source hash (:func:`prebuilt_for`) is loaded; when there is
    none, or the driver rejects it (e.g. a driver older than the nvcc that built it), NVRTC compiles the
    unit. ``last_load`` records which happened (``{"source": "prebuilt" | "nvrtc", "path": ...}``).
    """
    arch = device_arch(cp, device)
    key = (options, arch)
    if key in _modules:
        return _modules[key]
    prebuilt = prebuilt_for(options, arch)
    module = None
    if prebuilt is not None:
        try:
            module = cp.RawModule(path=str(prebuilt))
            module.get_function(KERNEL_NAMES[0])
            last_load.update(source="prebuilt", path=str(prebuilt), reason="")
        except Exception as exc:  # the driver's error types vary; NVRTC is the documented fallback
            module = None
            last_load.update(source="nvrtc", path="", reason=f"prebuilt {prebuilt} not loadable: {exc!r}"[:500])
    if module is None:
        try:
            module = cp.RawModule(code=unit_source(), options=tuple(nvrtc_options(options)), backend="nvrtc")
            module.get_function(KERNEL_NAMES[0])  # forces compilation now, so errors surface here
        except cp.cuda.compiler.CompileException as exc:
            raise BackendError(f"NVRTC could not compile gpu_env's CUDA kernels ({options.label()}, {arch}): "
                               f"{str(exc)[-2000:]}") from exc
        if prebuilt is None:
            last_load.update(source="nvrtc", path="", reason=f"no prebuilt module for this source in {cache_dir()}")
    _modules[key] = module
    return module


def prebuild(variants: list[KernelOptions], arch: str, out_dir: Path, jobs: int) -> list[Path]:
    """Compile ``variants`` to fatbins (SASS for ``arch`` + PTX) in ``out_dir`` with nvcc; returns the files.

    A file already present for the current source hash is kept (nothing is rebuilt).
    """
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        raise BackendError("nvcc not found on PATH: prebuilding needs the CUDA toolkit's nvcc "
                           "(or skip it: NVRTC compiles the kernels on the device)")
    out_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        unit = Path(tmp) / "gpu_env_device.cu"
        unit.write_text(unit_source())

        def build(options: KernelOptions) -> Path:
            target = cubin_path(options, arch, out_dir)
            if target.is_file():
                return target
            partial = target.with_name(target.name + ".part")
            result = subprocess.run(nvcc_command(nvcc, unit, partial, options, arch, "fatbin"),
                                    capture_output=True, text=True, check=False)
            if result.returncode != 0:
                raise BackendError(f"nvcc failed for {options.label()}: {result.stderr[-2000:]}")
            partial.replace(target)
            return target

        with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
            return list(pool.map(build, variants))


def main(argv: list[str] | None = None) -> int:
    """``python -m gpu_env.backends.cuda.module prebuild [--arch sm_90] [--out DIR] [--local] [--game-id N] [-j N]``."""
    parser = argparse.ArgumentParser(prog="python -m gpu_env.backends.cuda.module")
    sub = parser.add_subparsers(dest="command", required=True)
    pre = sub.add_parser("prebuild", help="compile the kernels with nvcc into the cache directory")
    pre.add_argument("--arch", default="sm_90")
    pre.add_argument("--out", type=Path, default=None, help="default: $GPU_ENV_CUDA_CACHE or ~/.cache/gpu_env/cuda")
    pre.add_argument("--local", action="store_true", help="also build the local-copy variant")
    pre.add_argument("--game-id", type=int, action="append", default=[], help="also build game-specialised variants")
    pre.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1)
    sub.add_parser("source", help="print the translation unit")
    sub.add_parser("key", help="print the source hash of the default variant for sm_90 (the prebuilt file's name)")
    args = parser.parse_args(argv)
    if args.command == "source":
        sys.stdout.write(unit_source())
        return 0
    if args.command == "key":
        print(cache_key(KernelOptions(), "sm_90"))
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
