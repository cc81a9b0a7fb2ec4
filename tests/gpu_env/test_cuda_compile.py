"""The CUDA backend's translation unit compiles for sm_90 exactly as NVRTC gets it (no GPU needed).

``nvcc --ptx`` runs wherever nvcc exists (CI here); the NVRTC library itself where libnvrtc is
found. The local-copy variant is compiled in the ``slow`` set.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from gpu_env.backends.cuda.module import KERNEL_NAMES, KernelOptions, nvcc_command, nvrtc_options, unit_source
from gpu_env.cuda_source import CORE_DIR
from tests.gpu_env.nvrtc_helpers import nvrtc_ptx


def _enum_names(text: str, first: str, last: str) -> list[str]:
    start = text.index(first)
    end = text.index(last, start) + len(last)
    return re.findall(r"\bk\w+", text[start:end])


def test_unit_is_self_contained_and_does_not_force_inline() -> None:
    source = unit_source()
    assert not re.search(r'^\s*#\s*include\s+"', source, flags=re.MULTILINE)
    assert source.count('#line 1 "hd.h"') == 1
    # Forcing HD inline made the unit uncompilable (8 min, 18 GB; docs/gpu_backend.md).
    hd = re.search(r"^#define HD (.*)$", source, flags=re.MULTILINE)
    assert hd is not None
    assert "__forceinline__" not in hd.group(1)
    for header in ("console.h", "ale/environment.h", "games/registry.h", "m6502.h"):
        assert source.count(f'#line 1 "{header}"') == 1, header
    for name in KERNEL_NAMES:
        assert f'extern "C" __global__ void {name}(' in source, name


def test_kernel_parameter_layout_matches_the_cpu_library() -> None:
    """kernels.h and native/ale_batch.cpp read the per-ROM int32 vector through the one layout of ale/params.h."""
    cpu = (CORE_DIR.parent / "native" / "ale_batch.cpp").read_text()
    gpu = (CORE_DIR / "cuda" / "kernels.h").read_text()
    for text in (cpu, gpu):
        assert "ale/params.h" in text
        assert "rom_from_params(" in text
        assert "kParamGameId," not in text  # no second copy of the layout
    names = _enum_names((CORE_DIR / "ale" / "params.h").read_text(), "kParamGameId", "kParamCount")
    assert (names[0], names[-1]) == ("kParamGameId", "kParamCount")
    assert len(names) == len(set(names))
    from gpu_env.backends.cuda.backend import PARAM_COUNT
    from gpu_env.binding import native

    assert native().gpu_env_ale_param_count() == PARAM_COUNT


def test_options_are_the_nvrtc_options() -> None:
    opts = nvrtc_options(KernelOptions(local_copy=True, game_id=7))
    assert opts[:2] == ["--std=c++17", "--fmad=false"]
    assert "-DGPU_ENV_CUDA_LOCAL_COPY=1" in opts
    assert "-DGPU_ENV_CUDA_GAME_ID=7" in opts
    cmd = nvcc_command("nvcc", Path("u.cu"), Path("u.ptx"), KernelOptions())
    assert cmd[1:3] == ["--ptx", "-arch=sm_90"]
    assert cmd[3:-3] == nvrtc_options(KernelOptions())


def _nvcc_ptx(tmp_path: Path, options: KernelOptions) -> str:
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        pytest.skip("nvcc not found on PATH: the CUDA toolkit is needed to compile device code")
    unit = tmp_path / "gpu_env_cuda.cu"
    unit.write_text(unit_source())
    ptx = tmp_path / "gpu_env_cuda.ptx"
    cmd = nvcc_command(nvcc, unit, ptx, options, "sm_90", "ptx")
    result = subprocess.run([*cmd[:-1], "-Werror", "all-warnings", cmd[-1]], capture_output=True, text=True,
                            timeout=600, check=False)
    assert result.returncode == 0, result.stderr[-4000:]
    return ptx.read_text()


def test_unit_compiles_with_nvcc_ptx_sm90(tmp_path: Path) -> None:
    text = _nvcc_ptx(tmp_path, KernelOptions())
    for name in KERNEL_NAMES:
        assert f".entry {name}(" in text, name
    assert ".target sm_90" in text


@pytest.mark.slow
def test_local_copy_variant_compiles_with_nvcc_ptx_sm90(tmp_path: Path) -> None:
    text = _nvcc_ptx(tmp_path, KernelOptions(local_copy=True, game_id=0))
    assert ".entry gpu_env_act(" in text


def test_unit_compiles_with_nvrtc() -> None:
    """The same string and options through libnvrtc itself (what CuPy's RawModule calls), to PTX."""
    ptx = nvrtc_ptx(unit_source(), "gpu_env_cuda.cu",
                    [*nvrtc_options(KernelOptions()), "--gpu-architecture=compute_90"])
    for name in KERNEL_NAMES:
        assert f".entry {name}(".encode() in ptx, name


def test_prebuild_writes_fatbins_named_by_cache_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The prebuild driver's bookkeeping (file names, options); a recording stand-in plays nvcc here."""
    from gpu_env.backends.cuda import module

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    calls = tmp_path / "calls.txt"
    fake = bin_dir / "nvcc"
    fake.write_text(f'#!/bin/sh\necho "$@" >> {calls}\nwhile [ "$1" != "-o" ]; do shift; done\necho fatbin > "$2"\n')
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("GPU_ENV_CUDA_CACHE", str(tmp_path / "cache"))
    variants = [KernelOptions(), KernelOptions(local_copy=True)]
    assert module.main(["prebuild", "--local", "-j", "2"]) == 0
    for options in variants:
        assert module.cubin_path(options, "sm_90").read_text() == "fatbin\n"
        assert module.cubin_path(options, "sm_90").name == f"{module.cache_key(options, 'sm_90')}.fatbin"
    lines = calls.read_text().splitlines()
    assert len(lines) == 2
    want = ("--fatbin -gencode arch=compute_90,code=sm_90 -gencode arch=compute_90,code=compute_90 "
            "--std=c++17 --fmad=false")
    assert all(line.startswith(want) for line in lines)
    assert module.cache_key(variants[0], "sm_90") != module.cache_key(variants[1], "sm_90")
    assert module.cache_key(variants[0], "sm_90") != module.cache_key(variants[0], "sm_80")
    assert module.main(["prebuild"]) == 0  # present: not rebuilt
    assert len(calls.read_text().splitlines()) == 2


class _RecordingCupy:
    """Just enough of CuPy for load_module's choice between a prebuilt file and NVRTC."""

    def __init__(self, capability: str, reject_files: bool = False) -> None:
        import types

        self.made: list[dict[str, object]] = []
        reject = reject_files
        made = self.made

        class Module:
            def __init__(self, **kwargs: object) -> None:
                if reject and "path" in kwargs:
                    raise RuntimeError("CUDA_ERROR_UNSUPPORTED_PTX_VERSION")
                made.append(kwargs)

            def get_function(self, name: str) -> str:
                return name

        class Device:
            compute_capability = capability

            def __init__(self, index: int = 0) -> None:
                self.index = index

            def __enter__(self) -> Device:
                return self

            def __exit__(self, *exc: object) -> None:
                return None

        self.RawModule = Module
        self.cuda = types.SimpleNamespace(Device=Device, compiler=types.SimpleNamespace(CompileException=ValueError))


@pytest.mark.parametrize(("capability", "reject", "want"), [
    ("90", False, "prebuilt"), ("100", False, "prebuilt"), ("80", False, "nvrtc"), ("90", True, "nvrtc")])
def test_load_module_prefers_the_prebuilt_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capability: str,
                                               reject: bool, want: str) -> None:
    """The file named by the source hash is loaded on sm_90 and newer, else NVRTC compiles.

    Newer GPUs load it through its PTX; an older GPU, or a driver that rejects the file, gets NVRTC.
    """
    from gpu_env.backends.cuda import module

    monkeypatch.setenv("GPU_ENV_CUDA_CACHE", str(tmp_path))
    module.cubin_path(KernelOptions(), "sm_90").write_bytes(b"fatbin")
    monkeypatch.setattr(module, "_modules", {})
    cp = _RecordingCupy(capability, reject)
    module.load_module(cp, KernelOptions())
    assert module.last_load["source"] == want
    if want == "prebuilt":
        assert cp.made == [{"path": str(module.cubin_path(KernelOptions(), "sm_90"))}]
    else:
        assert cp.made[0]["code"] == module.unit_source()
    module.cubin_path(KernelOptions(), "sm_90").unlink()
    monkeypatch.setattr(module, "_modules", {})
    module.load_module(_RecordingCupy("90"), KernelOptions())
    assert module.last_load["source"] == "nvrtc"
    assert "no prebuilt module" in module.last_load["reason"]


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not on PATH")
def test_prebuild_with_nvcc_holds_sass_and_ptx_of_every_kernel(tmp_path: Path) -> None:
    """The real prebuild (about 2-4 minutes of one core in ptxas): sm_90 SASS and compute_90 PTX, every kernel."""
    from gpu_env.backends.cuda import module

    (path,) = module.prebuild([KernelOptions()], "sm_90", tmp_path, 1)
    assert path == module.cubin_path(KernelOptions(), "sm_90", tmp_path)
    assert module.fatbin_entries(path) == [("ptx", "compute_90"), ("elf", "sm_90")]
    data = path.read_bytes()
    for name in KERNEL_NAMES:
        assert name.encode() + b"\0" in data, name
