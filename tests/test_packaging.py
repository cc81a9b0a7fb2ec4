"""Packaging as users expect: the pinned reference, capped gymnasium, real extras, the plugin, the shipped library."""

from __future__ import annotations

import importlib.metadata
import re
import subprocess
import sys
import tomllib
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
        if extra == "dev":
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
