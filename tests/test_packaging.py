"""Packaging as users expect: the pinned reference, capped gymnasium, real extras, the plugin, the shipped library.

Also: one version, the package data of the wheel, and the commands that must work from a wheel outside a checkout.
"""

from __future__ import annotations

import importlib.metadata
import os
import re
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import gymnasium
import pytest

from gpu_env.binding import native

ROOT = Path(__file__).resolve().parents[1]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
CODE = ("evaltk", "gpu_env", "trainers", "conformance")
# The module each optional dependency provides (extras other than ``dev``).
MODULE_OF = {"cupy-cuda12x": "cupy", "cupy-cuda13x": "cupy", "vizdoom": "vizdoom"}


def _name(requirement: str) -> str:
    match = re.match(r"[A-Za-z0-9_.-]+", requirement)
    assert match, requirement
    return match.group(0).lower()


def _requirement(name: str) -> str:
    (found,) = [r for r in PROJECT["dependencies"] if _name(r) == name]
    return str(found)


def test_ale_py_is_the_contract_version() -> None:
    assert _requirement("ale-py") == "ale-py==0.12.1"
    assert importlib.metadata.version("ale-py") == "0.12.1"


def test_gymnasium_is_capped_at_the_major_version_make_vec_reproduces() -> None:
    assert _requirement("gymnasium") == "gymnasium>=1.0,<2"
    assert gymnasium.__version__.split(".")[0] == "1"


def test_every_extra_is_used_by_the_code() -> None:
    sources = "\n".join(p.read_text(encoding="utf-8") for package in CODE for p in (ROOT / package).rglob("*.py"))
    extras: dict[str, list[str]] = PROJECT["optional-dependencies"]
    unused = []
    for extra, requirements in extras.items():
        if extra in ("dev", "docs"):  # docs: the site's build tools (mkdocs.yml, tests/docs/), not imported by the code
            continue
        for requirement in requirements:
            module = MODULE_OF.get(_name(requirement), _name(requirement).replace("-", "_"))
            pattern = rf"^\s*(import|from) {module}\b|import_module\(\"{module}\"\)"
            if not re.search(pattern, sources, flags=re.MULTILINE):
                unused.append(f"[{extra}] {requirement} (no code imports {module})")
    assert not unused


def test_suite_plugin_is_registered_as_a_pytest11_entry_point(pytestconfig: pytest.Config) -> None:
    assert PROJECT["entry-points"]["pytest11"] == {"conformance.pytest_plugin": "conformance.pytest_plugin"}
    # Whether this very run loaded it through the entry point, i.e. not by `-p` on the command line or in addopts.
    named = [*pytestconfig.getini("addopts"), *pytestconfig.invocation_params.args]
    if any("conformance.pytest_plugin" in arg for arg in named):
        pytest.skip("this run names the plugin with -p, so it cannot show that the entry point loads it")
    assert pytestconfig.pluginmanager.has_plugin("conformance.pytest_plugin"), (
        "the installed metadata is older than pyproject.toml: reinstall with `pip install -e .`")


def test_pytest_collects_a_suite_file_without_dash_p(tmp_path: Path) -> None:
    suite = tmp_path / "mini.toml"
    suite.write_text("[suite]\nname='p'\n[[case]]\nkind='trace'\nname='pong-tiny'\nrom='pong'\nframes=20\nseed=0\n")
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", str(suite), "-p", "no:cacheprovider",
                             "--rootdir", str(tmp_path)], capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert "1 passed" in result.stdout, result.stdout + result.stderr


def test_shipped_library_has_no_test_entry_points() -> None:
    lib = native()
    assert hasattr(lib, "gpu_env_harness_run_program")  # the flat-memory harness is public (gpu_env.cpu_harness)
    for name in ("gpu_env_test_cart_replay", "gpu_env_test_riot_replay", "gpu_env_test_mini_console_run"):
        assert not hasattr(lib, name), f"{name} is test-only: it belongs in tests/gpu_env/native/"


# --- The wheel: one version, the package data, the commands that must work outside a checkout ------------------

def _evaltk(*args: str, cwd: Path, pythonpath: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": pythonpath or str(ROOT)}
    return subprocess.run([sys.executable, "-m", "evaltk", *args], capture_output=True, text=True, cwd=cwd, env=env,
                          timeout=300)


def test_the_version_is_written_in_one_place() -> None:
    import evaltk
    import gpu_env

    assert "version" not in PROJECT
    assert "version" in PROJECT["dynamic"]
    setuptools_config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    assert setuptools_config["dynamic"]["version"] == {"attr": "evaltk.__version__"}
    assigned = [str(p.relative_to(ROOT)) for package in CODE for p in (ROOT / package).rglob("*.py")
                if re.search(r"^__version__\s*=", p.read_text(encoding="utf-8"), flags=re.MULTILINE)]
    assert assigned == ["evaltk/__init__.py"]
    assert gpu_env.__version__ == evaltk.__version__
    assert importlib.metadata.version("evaltk") == evaltk.__version__, (
        "the installed metadata is older than evaltk/__init__.py: reinstall with `pip install -e .`")


def test_version_flag_names_the_packages_that_decide_results(tmp_path: Path) -> None:
    import evaltk

    def found(*distributions: str) -> str:
        for distribution in distributions:
            try:
                return importlib.metadata.version(distribution)
            except importlib.metadata.PackageNotFoundError:
                continue
        return "not installed"

    result = _evaltk("--version", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == f"evaltk {evaltk.__version__} ({ROOT / 'evaltk'})"
    assert lines[1:4] == [f"ale-py {found('ale-py')}", f"ViZDoom {found('vizdoom')}", f"torch {found('torch')}"]
    assert lines[4].startswith(f"CuPy {found('cupy-cuda12x', 'cupy-cuda13x', 'cupy-cuda11x', 'cupy')}")
    assert len(lines) == 5


def _build_py(tmp_path: Path) -> Path:
    """Run setup.py's build_py (no compiler) into tmp_path/lib, with its egg-info in tmp_path too; return lib."""
    lib, egg = tmp_path / "lib", tmp_path / "egg"
    egg.mkdir()
    result = subprocess.run([sys.executable, "setup.py", "-q", "egg_info", "--egg-base", str(egg), "build_py",
                             "--build-lib", str(lib)], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert result.returncode == 0, result.stderr
    return lib


def _files(folder: Path) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file() and "__pycache__" not in p.parts}


def test_the_built_package_carries_the_data_it_needs(tmp_path: Path) -> None:
    lib = _build_py(tmp_path)
    built = _files(lib)
    # ROM tables, the C++ core NVRTC compiles for CUDA (every header), the CPU library's sources, py.typed markers.
    assert "gpu_env/data/games.json" in built
    headers = {f"gpu_env/{name}" for name in _files(ROOT / "gpu_env") if name.startswith("core/") and
               name.endswith(".h")}
    assert "gpu_env/core/cuda/kernels.h" in headers
    assert headers <= built
    assert {f"{package}/py.typed" for package in CODE} <= built
    # Sample Factory's Doom cfgs and maps (evaltk.envs.doom_files) with their licence.
    vendored = {f"evaltk/envs/sample_factory_scenarios/{name}"
                for name in _files(ROOT / "evaltk" / "envs" / "sample_factory_scenarios")}
    assert {"evaltk/envs/sample_factory_scenarios/LICENSE", "evaltk/envs/sample_factory_scenarios/ssl2.cfg",
            "evaltk/envs/sample_factory_scenarios/battle.wad"} <= vendored <= built
    # suites/ (suite files, their traces, the A2C checkpoint) as evaltk/data/suites, byte for byte.
    suites = _files(ROOT / "suites")
    assert {"gpu_env_traces.toml", "checkpoints/a2c_breakout/policy.safetensors"} <= suites
    assert {name for name in built if name.startswith("evaltk/data/suites/")} == {
        f"evaltk/data/suites/{name}" for name in suites}
    for name in suites:
        assert (lib / "evaltk/data/suites" / name).read_bytes() == (ROOT / "suites" / name).read_bytes(), name


def test_the_sdist_manifest_keeps_suites_and_sources() -> None:
    manifest = (ROOT / "MANIFEST.in").read_text(encoding="utf-8")
    assert re.search(r"^graft suites$", manifest, flags=re.MULTILINE)
    package_data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"][
        "package-data"]["gpu_env"]
    assert {"core/**/*.h", "native/*.cpp", "native/*.h", "data/*.json"} <= set(package_data)


def _installed_copy(tmp_path: Path) -> str:
    """Copy the evaltk package alone to a folder first on PYTHONPATH: as a wheel installs it, no checkout above."""
    site = tmp_path / "site"
    shutil.copytree(ROOT / "evaltk", site / "evaltk", ignore=shutil.ignore_patterns("__pycache__"))
    return os.pathsep.join([str(site), str(ROOT)])


def test_bench_outside_a_checkout_says_how_to_get_one(tmp_path: Path) -> None:
    pythonpath = _installed_copy(tmp_path)
    result = _evaltk("bench", "atari_cpu", cwd=tmp_path, pythonpath=pythonpath)
    assert result.returncode == 2
    (line,) = result.stderr.splitlines()
    assert line.startswith("error: evaltk bench runs the scripts in benchmarks/ of a source checkout")
    assert f"{tmp_path / 'site'}" in line
    assert "git clone https://github.com/evaltk/evaltk" in line
    # The same installed evaltk, run from inside a checkout, uses that checkout's benchmarks.
    result = _evaltk("bench", "no_such_benchmark", cwd=ROOT, pythonpath=pythonpath)
    assert result.returncode == 2
    assert f"unknown benchmark 'no_such_benchmark': available in {ROOT / 'benchmarks'}: " in result.stderr
    assert "atari_cpu" in result.stderr


def test_shipped_outside_a_checkout_without_packaged_data_is_one_error(tmp_path: Path) -> None:
    result = _evaltk("shipped", cwd=tmp_path, pythonpath=_installed_copy(tmp_path))
    assert result.returncode == 2
    (line,) = result.stderr.splitlines()
    assert line.startswith("error: this evaltk")
    assert "has no suite folder" in line


COMPILERS = ("gcc", "g++", "cc", "c++", "clang", "clang++")


def _path_without_compilers(folder: Path) -> str:
    """Build ``folder``: links to every program on this PATH except C/C++ compilers; return it as a PATH."""
    folder.mkdir()
    for directory in os.environ["PATH"].split(os.pathsep):
        for program in Path(directory).glob("*") if Path(directory).is_dir() else []:
            name = program.name
            if re.fullmatch(r"(.*-)?(gcc|g\+\+|cc|c\+\+|cpp|clang|clang\+\+)(-[0-9.]+)?|cc1.*", name):
                continue
            if not (folder / name).exists() and os.access(program, os.X_OK):
                (folder / name).symlink_to(program)
    assert all(shutil.which(c, path=str(folder)) is None for c in COMPILERS)
    return str(folder)


def _run(argv: list[str], cwd: Path, path: str, timeout: int = 1800,
         status: int = 0) -> subprocess.CompletedProcess[str]:
    """Run ``argv`` with PATH ``path`` and no PYTHONPATH (nothing of the checkout leaks in); assert its status."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    result = subprocess.run(argv, capture_output=True, text=True, cwd=cwd, env={**env, "PATH": path}, timeout=timeout)
    assert result.returncode == status, f"{argv}: {result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    return result


@pytest.mark.slow
@pytest.mark.timeout(7200)
def test_the_wheel_installs_and_validates_without_a_compiler(tmp_path: Path) -> None:
    """`make wheel`, then a fresh venv with no compiler on PATH: pip install, validate, a suite, bench, SIMD choice."""
    import evaltk

    dist = tmp_path / "dist"
    _run(["make", "wheel", f"VENV={tmp_path / 'tools'}", f"DIST={dist}"], ROOT, os.environ["PATH"], timeout=5400)
    (wheel,) = dist.glob("*.whl")
    # One wheel for every CPython 3: the library is loaded by ctypes, no Python ABI in it (setup.py).
    assert re.fullmatch(rf"evaltk-{re.escape(evaltk.__version__)}-py3-none-manylinux_2_\d+_x86_64\.whl", wheel.name)
    assert (dist / f"evaltk-{evaltk.__version__}.tar.gz").is_file()
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
    assert {"evaltk/data/suites/checkpoints/a2c_breakout/policy.safetensors", "evaltk/data/suites/gpu_env_traces.toml",
            "gpu_env/core/cuda/kernels.h", "gpu_env/data/games.json"} <= names
    assert "gpu_env/_native.so" in names

    path = _path_without_compilers(tmp_path / "bin")
    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", str(venv)], tmp_path, path)
    bin_path = os.pathsep.join([str(venv / "bin"), path])
    python, evaltk_cmd = str(venv / "bin" / "python"), str(venv / "bin" / "evaltk")
    _run([python, "-m", "pip", "install", "-q", "torch==2.13.0"], tmp_path, bin_path)
    _run([python, "-m", "pip", "install", "-q", str(wheel)], tmp_path, bin_path)

    work = tmp_path / "work"
    work.mkdir()
    version = _run([evaltk_cmd, "--version"], work, bin_path).stdout.splitlines()
    assert version[0].startswith(f"evaltk {evaltk.__version__} ({venv}/lib/")
    checkpoint = _run([evaltk_cmd, "shipped", "a2c_breakout"], work, bin_path).stdout.strip()
    assert checkpoint == str(Path(version[0].split("(")[1].rstrip(")")) / "data/suites/checkpoints/a2c_breakout")
    validated = _run([evaltk_cmd, "validate", checkpoint, "--episodes", "10", "--seed", "0", "--num-envs", "4",
                      "--margin", "2", "--out", str(work / "quickstart")], work, bin_path)
    assert "verdict: identical" in validated.stdout.splitlines()[-1]
    _run([evaltk_cmd, "conformance", "run", "--builtin", "gpu_env_traces", "--workdir", str(work / "c")], work,
         bin_path)
    bench = _run([evaltk_cmd, "bench", "atari_cpu"], work, bin_path, status=2)
    assert bench.stderr.startswith("error: evaltk bench runs the scripts in benchmarks/ of a source checkout")
    kernels = _run([python, "-c", "from gpu_env.binding import simd_kernels; print(simd_kernels())"], work, bin_path)
    flags = set(re.findall(r"\bavx512\w+", Path("/proc/cpuinfo").read_text(encoding="utf-8")))
    expected = "avx512" if {"avx512f", "avx512bw", "avx512vl", "avx512vbmi"} <= flags else "scalar"
    assert kernels.stdout.strip() == expected
