"""Dependencies point one way (docs/architecture.md): every import of the project's code, checked from its source.

Layers, lowest first: ``gpu_env`` (imports nothing from the project); ``evaltk`` (gpu_env);
``trainers`` and ``conformance`` (gpu_env, evaltk); the command line on top: ``evaltk.cli`` (with
``evaltk/__main__.py``) and the commands trainers and conformance add to it through entry points
(:data:`FACES`). evaltk's own code, its command line included, imports neither trainers nor conformance. Every import
counts: module level, inside functions, under ``TYPE_CHECKING``. Packages (folders with an
``__init__.py``) must also not import each other in a loop, and neither may modules: an import inside a function
or under ``TYPE_CHECKING`` that closes a circle is a circle (the two modules are one thing, or a third module is
missing).
"""

from __future__ import annotations

import ast
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("gpu_env", "evaltk", "trainers", "conformance")
CLI = "evaltk.cli"
FACES = ("conformance.cli", "trainers.cli", "trainers.population_cli")
"""The commands conformance and trainers register with ``evaltk`` (pyproject's entry points): the CLI layer."""
ALLOWED: dict[str, frozenset[str]] = {
    "gpu_env": frozenset({"gpu_env"}),
    "evaltk": frozenset({"evaltk", "gpu_env"}),
    "trainers": frozenset({"trainers", "evaltk", "gpu_env"}),
    "conformance": frozenset({"conformance", "evaltk", "gpu_env"}),
    CLI: frozenset({CLI, "evaltk", "gpu_env", "trainers", "conformance"}),
}


@dataclass(frozen=True)
class Import:
    """One import statement of a project module: who imports what, where."""

    module: str  # the importing module, dotted
    target: str  # the imported module (or the package a name is taken from), dotted
    path: Path
    line: int


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> Iterator[tuple[str, Path]]:
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            yield _module_name(path), path


def _resolve(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    """Return the absolute module a ``from ... import`` names (relative imports resolved)."""
    if node.level == 0:
        return node.module or ""
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, node.module] if node.module else base)


def _imports() -> list[Import]:
    found: list[Import] = []
    for module, path in _modules():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                source = _resolve(module, path.name == "__init__.py", node)
                # ``from pkg import mod`` imports the module pkg.mod when it exists.
                targets = [f"{source}.{alias.name}" if _is_module(f"{source}.{alias.name}") else source
                           for alias in node.names]
            else:
                continue
            found.extend(Import(module, t, path, node.lineno) for t in targets if t.split(".")[0] in PACKAGES)
    return found


def _is_module(dotted: str) -> bool:
    base = ROOT.joinpath(*dotted.split("."))
    return base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()


def layer(module: str) -> str:
    """Return the layer a dotted module belongs to."""
    if module in (CLI, "evaltk.__main__", *FACES) or module.startswith(CLI + "."):
        return CLI
    return module.split(".")[0]


def package_of(module: str) -> str:
    """Return the innermost package (folder with ``__init__.py``) that holds ``module``."""
    return module if (ROOT.joinpath(*module.split(".")) / "__init__.py").is_file() else module.rpartition(".")[0]


def find_cycle(edges: dict[str, set[str]]) -> list[str] | None:
    """Return a loop of a directed graph as ``[a, b, ..., a]``, or None (iterative depth-first search)."""
    state: dict[str, int] = {}  # 1 = on the current path, 2 = done
    for start in sorted(edges):
        if state.get(start):
            continue
        path, stack = [start], [iter(sorted(edges[start]))]
        state[start] = 1
        while stack:
            nxt = next(stack[-1], None)
            if nxt is None:
                state[path.pop()] = 2
                stack.pop()
            elif state.get(nxt) == 1:
                return [*path[path.index(nxt):], nxt]
            elif not state.get(nxt):
                state[nxt] = 1
                path.append(nxt)
                stack.append(iter(sorted(edges.get(nxt, ()))))
    return None


@pytest.fixture(scope="module")
def imports() -> list[Import]:
    found = _imports()
    assert len(found) > 100, "the import scan found almost nothing: is ROOT right?"
    return found


def test_layers_point_one_way(imports: list[Import]) -> None:
    broken = [f"{i.path.relative_to(ROOT)}:{i.line}: {i.module} ({layer(i.module)}) imports {i.target}"
              for i in imports if layer(i.target) not in ALLOWED[layer(i.module)]]
    assert not broken, "imports against the layers of docs/architecture.md:\n" + "\n".join(broken)


def test_evaltk_imports_neither_trainers_nor_conformance(imports: list[Import]) -> None:
    broken = [f"{i.path.relative_to(ROOT)}:{i.line}: {i.module} imports {i.target}" for i in imports
              if i.module.split(".")[0] == "evaltk" and i.target.split(".")[0] in ("trainers", "conformance")]
    assert not broken, "evaltk imports trainers or conformance (their commands come by entry points):\n" + "\n".join(
        broken)


def test_the_faces_are_the_entry_points() -> None:
    """Every module of :data:`FACES` is a command pyproject registers, and every registered command is one."""
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["entry-points"]
    targets = {value.split(":")[0] for group in ("evaltk_commands", "evaltk_tournament_formats")
               for value in project[group].values()}
    assert targets == set(FACES)


def test_trainers_do_not_import_the_cli(imports: list[Import]) -> None:
    assert not [i for i in imports if layer(i.module) == "trainers" and layer(i.target) == CLI]
    assert layer("trainers.cli") == CLI


def test_no_import_loop_between_layers(imports: list[Import]) -> None:
    edges: dict[str, set[str]] = {}
    for i in imports:
        if layer(i.module) != layer(i.target):
            edges.setdefault(layer(i.module), set()).add(layer(i.target))
    assert find_cycle(edges) is None


def test_no_import_loop_between_packages(imports: list[Import]) -> None:
    edges: dict[str, set[str]] = {}
    for i in imports:
        source, target = package_of(i.module), package_of(i.target)
        # A package using its own subpackages is containment, not a dependency between packages.
        if source != target and not target.startswith(source + "."):
            edges.setdefault(source, set()).add(target)
    assert find_cycle(edges) is None


def module_edges(imports: list[Import]) -> dict[str, set[str]]:
    """Return the import graph between modules (a package's ``__init__`` is the package's module)."""
    edges: dict[str, set[str]] = {}
    for i in imports:
        if i.module != i.target:
            edges.setdefault(i.module, set()).add(i.target)
    return edges


def test_no_import_circle_between_modules(imports: list[Import]) -> None:
    cycle = find_cycle(module_edges(imports))
    assert cycle is None, ("modules import each other in a circle (function-level and TYPE_CHECKING imports "
                           "included): " + " -> ".join(cycle or []))


def test_a_function_level_circle_is_found(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The checker itself: two modules of a scratch tree that import each other, one of them inside a function."""
    pkg = tmp_path / "evaltk" / "things"
    pkg.mkdir(parents=True)
    (tmp_path / "evaltk" / "__init__.py").write_text("", encoding="utf-8")
    (pkg / "__init__.py").write_text("", encoding="utf-8")
    (pkg / "a.py").write_text("from evaltk.things import b\n", encoding="utf-8")
    (pkg / "b.py").write_text("def late() -> None:\n    from evaltk.things.a import late\n", encoding="utf-8")
    (pkg / "c.py").write_text("from evaltk.things import a\n", encoding="utf-8")
    monkeypatch.setitem(globals(), "ROOT", tmp_path)
    monkeypatch.setitem(globals(), "PACKAGES", ("evaltk",))
    assert find_cycle(module_edges(_imports())) == ["evaltk.things.a", "evaltk.things.b", "evaltk.things.a"]
    (pkg / "b.py").write_text("def late() -> None:\n    import math\n", encoding="utf-8")
    assert find_cycle(module_edges(_imports())) is None  # c -> a -> b: one way

    """The checker itself: a loop is reported as a closed path; a DAG has none."""
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b", "c"}, "b": {"c"}, "c": set()}) is None
    assert layer("evaltk.cli.train") == CLI
    assert layer("evaltk.report.comparison_report") == "evaltk"
    assert package_of("evaltk.report.comparison_report") == "evaltk.report"



def private_imports(source_text: str, module: str, is_package: bool = False) -> list[tuple[int, str]]:
    """Return ``(line, name)`` for each ``from X import _name`` where ``X`` is another project module.

    A private name belongs to its module: a caller elsewhere that needs it says that the module has a
    public function it has not admitted to (CONTRIBUTING.md, "Rules of the house"). Dunder names are public.
    """
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source_text)):
        if not isinstance(node, ast.ImportFrom):
            continue
        source = _resolve(module, is_package, node)
        if source.split(".")[0] not in PACKAGES or source == module:
            continue
        found.extend((node.lineno, f"{source}.{alias.name}") for alias in node.names
                     if alias.name.startswith("_") and not alias.name.startswith("__"))
    return found


def test_no_module_imports_a_private_name_of_another() -> None:
    broken = [f"{path.relative_to(ROOT)}:{line}: {module} imports {name}"
              for module, path in _modules()
              for line, name in private_imports(path.read_text(encoding="utf-8"), module, path.name == "__init__.py")]
    assert not broken, "private names imported across modules:\n" + "\n".join(broken)


def _owner_of_private(target: str) -> str | None:
    """Return the package or module a dotted target is private to (the part before its first ``_name``), or None."""
    parts = target.split(".")
    for k, part in enumerate(parts):
        if part.startswith("_") and not part.startswith("__"):
            return ".".join(parts[:k])
    return None


def private_module_imports(source_text: str, module: str, is_package: bool = False) -> list[tuple[int, str]]:
    """Return ``(line, module)`` for each import of a private module (``pkg._mod``) from outside ``pkg``.

    ``import pkg._mod``, ``from pkg._mod import name`` and ``from pkg import _mod`` all count; the
    modules inside ``pkg`` (its subpackages included) may import it.
    """
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source_text)):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            source = _resolve(module, is_package, node)
            targets = [source, *(f"{source}.{a.name}" for a in node.names if _is_module(f"{source}.{a.name}"))]
        else:
            continue
        for target in targets:
            owner = _owner_of_private(target)
            if target.split(".")[0] not in PACKAGES or owner is None:
                continue
            if module != owner and not module.startswith(owner + "."):
                found.append((node.lineno, target))
    return found


def test_no_module_imports_a_private_module_of_another_package() -> None:
    broken = [f"{path.relative_to(ROOT)}:{line}: {module} imports {target}"
              for module, path in _modules()
              for line, target in private_module_imports(path.read_text(encoding="utf-8"), module,
                                                         path.name == "__init__.py")]
    assert not broken, "private modules imported from outside their package:\n" + "\n".join(broken)


def test_private_module_check_sees_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The checker itself: each import form of a private module from outside is found; from inside it is not.

    The private module is made in a scratch tree (the project has none now), where ``_is_module`` looks.
    """
    (tmp_path / "gpu_env" / "presets").mkdir(parents=True)
    for name in ("__init__.py", "_engine.py"):
        (tmp_path / "gpu_env" / "presets" / name).write_text("", encoding="utf-8")
    monkeypatch.setitem(globals(), "ROOT", tmp_path)
    text = ("import gpu_env.presets._engine\nfrom gpu_env.presets._engine import Op\n"
            "from gpu_env.presets import _engine\n")
    assert private_module_imports(text, "gpu_env.envpool") == [
        (1, "gpu_env.presets._engine"), (2, "gpu_env.presets._engine"), (3, "gpu_env.presets._engine")]
    assert private_module_imports(text, "gpu_env.presets.wrappers") == []
    assert private_module_imports("from evaltk.evaluation.scores import read_table\n", "gpu_env.envpool") == []


def test_private_import_check_sees_one() -> None:
    """The checker itself: a private name is found, a dunder and a public name are not."""
    text = "from evaltk.evaluation.scores import _hidden, __version__, read_table\nfrom . import _sibling\n"
    assert private_imports(text, "evaltk.probe") == [(1, "evaltk.evaluation.scores._hidden"), (2, "evaltk._sibling")]


#: Notes a clone does not have (the house's documents outside the repository); spelled in pieces so that this file
#: does not cite them itself.
OUTSIDE_DOCUMENTS = ("DESIGN" + ".md", "STYLE" + ".md", "../" + "shared")


def external_citations(text: str) -> list[tuple[int, str]]:
    """Return ``(line, document)`` for each mention in ``text`` of a document outside the repository."""
    return [(number, name) for number, line in enumerate(text.splitlines(), start=1)
            for name in OUTSIDE_DOCUMENTS if name in line]


def test_no_tracked_file_cites_a_document_outside_the_repository() -> None:
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout: the tracked files are git's list")
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    broken = []
    for name in filter(None, listed.decode().split("\0")):
        path = ROOT / name
        data = path.read_bytes() if path.is_file() else b""
        if b"\0" not in data:  # text files only
            broken += [f"{name}:{line}: cites {doc}" for line, doc in external_citations(data.decode(errors="replace"))]
    assert not broken, ("documents a clone does not have are cited (point to docs/ or CONTRIBUTING.md instead):\n"
                        + "\n".join(broken))


def test_external_citation_check_sees_one() -> None:
    text = "ok\nsee " + OUTSIDE_DOCUMENTS[0] + " §1\nand " + OUTSIDE_DOCUMENTS[2] + "/x\ndocs/architecture.md\n"
    assert external_citations(text) == [(2, OUTSIDE_DOCUMENTS[0]), (3, OUTSIDE_DOCUMENTS[2])]
