"""The project's own lint and type gates, and the module-length rule, run as tests, so CI enforces them."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.lint_tools import MYPY_RUN, ROOT, start_mypy, tool, unnice


def test_ruff_clean() -> None:
    result = subprocess.run([tool("ruff"), "check", "."], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_mypy_strict_clean(request: pytest.FixtureRequest) -> None:
    # Started niced by conftest.py when this test was collected outside pytest-xdist (tests/lint_tools.py), and
    # now only waited for; started here, at this worker's priority, otherwise.
    run = request.config.stash.get(MYPY_RUN, None)
    if run is not None:
        unnice(run)
    else:
        run = start_mypy(niced=False)
    if run is None:
        tool("mypy")  # fails, naming the fix
        return
    output, _ = run.communicate(timeout=900)
    assert run.returncode == 0, output


MAX_LINES = 500
SIZED_PACKAGES = ("evaltk", "conformance", "trainers", "gpu_env")
SIZED_SUFFIXES = (".py", ".h", ".cpp", ".cu")  # Python and the emulator's C++ (CONTRIBUTING.md: under 500 lines)


def long_modules(root: Path, packages: tuple[str, ...] = SIZED_PACKAGES, limit: int = MAX_LINES) -> list[str]:
    """Return ``"path: N lines"`` for each source file of ``packages`` under ``root`` longer than ``limit`` lines."""
    found = []
    for package in packages:
        for path in sorted(p for p in (root / package).rglob("*") if p.suffix in SIZED_SUFFIXES and p.is_file()):
            if {"__pycache__", "build"} & set(path.relative_to(root).parts):
                continue
            lines = len(path.read_text(encoding="utf-8").splitlines())
            if lines > limit:
                found.append(f"{path.relative_to(root)}: {lines} lines")
    return found


def test_no_source_file_is_over_500_lines() -> None:
    over = long_modules(ROOT)
    assert not over, f"Source files over {MAX_LINES} lines (split them by what they do):\n" + "\n".join(over)


def test_the_length_check_names_each_long_file(tmp_path: Path) -> None:
    (tmp_path / "evaltk" / "sub").mkdir(parents=True)
    (tmp_path / "evaltk" / "exact.py").write_text("x = 1\n" * MAX_LINES)
    (tmp_path / "evaltk" / "sub" / "long.py").write_text("x = 1\n" * (MAX_LINES + 1))
    (tmp_path / "gpu_env").mkdir()
    (tmp_path / "gpu_env" / "longer.py").write_text("x = 1\n" * 600)
    (tmp_path / "gpu_env" / "core").mkdir()
    (tmp_path / "gpu_env" / "core" / "cpu.h").write_text("int x;\n" * 501)
    (tmp_path / "gpu_env" / "core" / "notes.txt").write_text("x\n" * 900)  # not a source file
    assert long_modules(tmp_path) == ["evaltk/sub/long.py: 501 lines", "gpu_env/core/cpu.h: 501 lines",
                                      "gpu_env/longer.py: 600 lines"]


def conflict_markers(root: Path, files: list[str]) -> list[str]:
    """Return ``FILE:LINE`` of each line of ``files`` (paths under ``root``) that is a merge-conflict marker."""
    found = []
    for name in files:
        try:
            text = (root / name).read_text(encoding="utf-8")
        except (UnicodeDecodeError, FileNotFoundError, IsADirectoryError):
            continue  # binary, or a submodule / deleted path
        found += [f"{name}:{n}" for n, line in enumerate(text.splitlines(), 1)
                  if line.startswith(("<<<<<<< ", ">>>>>>> ")) or line == "======="]
    return found


def test_no_merge_conflict_markers_are_committed() -> None:
    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=False).stdout
    if not tracked:
        pytest.skip("not a git checkout: no tracked files to read")
    found = conflict_markers(ROOT, [f for f in tracked.splitlines() if not f.endswith((".png", ".npz", ".bin"))])
    assert not found, "merge-conflict markers (resolve them):\n" + "\n".join(found)


def test_the_conflict_check_names_each_marker(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("x\n<<<<<<< HEAD\none\n=======\ntwo\n>>>>>>> branch\n")
    (tmp_path / "b.md").write_text("== heading ==\n=======x\n")
    assert conflict_markers(tmp_path, ["a.md", "b.md"]) == ["a.md:2", "a.md:4", "a.md:6"]


def tracked_links(staged: str) -> list[str]:
    """Return the paths ``git ls-files -s`` output lists as symbolic links (mode 120000)."""
    return [line.split("\t", 1)[1] for line in staged.splitlines() if line.startswith("120000 ")]


def test_no_symbolic_link_is_committed() -> None:
    """A link (a worktree's ``.venv`` pointing at another checkout's) means nothing on a clone, or the wrong thing."""
    staged = subprocess.run(["git", "ls-files", "-s"], cwd=ROOT, capture_output=True, text=True, check=False).stdout
    if not staged:
        pytest.skip("not a git checkout: no tracked files to read")
    assert not tracked_links(staged), "symbolic links are tracked (git rm --cached them): " + ", ".join(
        tracked_links(staged))


def test_the_link_check_names_each_link() -> None:
    staged = ("100644 8f2e0c3a 0\tREADME.md\n120000 5d1f7a2b 0\t.venv\n"
              "100755 1a2b3c4d 0\tbenchmarks/gpu_check.sh\n")
    assert tracked_links(staged) == [".venv"]
