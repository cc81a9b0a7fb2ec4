"""Find the references README, CONTRIBUTING and docs/ make to the project's code, and check that each exists.

A reference is a name rooted at one of the project's own folders (:data:`ROOTS`), in code (backticked spans,
which may run over a line break, fenced blocks, mkdocstrings ``::: name`` lines) or in prose:

- a path, ``evaltk/verdict/sample.py``, ``suites/*.toml``, ``gpu_env/native/*.{cpp,h}``: a file or folder that
  exists, or a glob that matches one (``<rom_id>`` and capitalised words such as ``NAME`` are placeholders,
  a ``...`` part ends the check at the folder before it);
- a dotted name, ``evaltk.verdict.compare``, ``gpu_env.make_vec``, ``evaltk.envs.atari_settings.UNKNOWN``: a
  module, or an attribute of one (found with :mod:`ast`, following the module's imports and its classes' bodies
  and bases; a name the source does not show is looked up on the imported module); ``X.a/b/c`` names the
  siblings ``X.a``, ``X.b``, ``X.c``;
- ``module:attr`` (``trainers.appo.model:AppoPolicy``) and ``path.py:name`` / ``path.py::test_name[param]``:
  the attribute, or the function or class, in that module or file;
- ``from evaltk.x import a, b`` in a code block: each imported name;
- a relative link target of README.md or CONTRIBUTING.md (mkdocs checks the links of docs/ itself).

A name under another project's folder (``cleanrl/tests/test_x.py``, ``$XDG_CACHE_HOME/evaltk``,
``https://github.com/evaltk/evaltk``) is not rooted at the start of a name and is not read as a reference.
"""

from __future__ import annotations

import ast
import fnmatch
import importlib
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from evaltk.shipped import PACKAGED_SUITES

ROOT = Path(__file__).resolve().parents[2]
ROOTS = ("evaltk", "gpu_env", "trainers", "conformance", "tests", "benchmarks", "suites", "docs")
"""The repository's top-level folders whose names the docs cite."""
PACKAGES = ("evaltk", "gpu_env", "trainers", "conformance", "tests", "benchmarks")
"""The roots a dotted name may start with (importable folders)."""
FILE_SUFFIXES = ("md", "py", "toml", "json", "yml", "yaml", "txt", "npz", "png", "svg", "h", "cpp", "cu", "so", "csv")
"""Last parts that make ``benchmarks.md`` a file name (a link's text), not a dotted name."""

_START = r"(?<![\w./$~:@-])"
"""A reference starts a name: not after a word, a path, a URL, ``$VAR/`` or ``~/``."""
PATH = re.compile(_START + r"(?:" + "|".join(ROOTS) + r")/[\w*<>{},.+/-]*(?:::?[A-Za-z_]\w*(?:\[[^\]\s]*\])?)?")
"""A path under a root, with an optional ``:name`` or ``::test[param]`` after a ``.py``."""
DOTTED = re.compile(_START + r"(?:" + "|".join(PACKAGES) + r")(?:\.[A-Za-z_]\w*)+(?::[A-Za-z_]\w*)?(?:/[A-Za-z_]\w*)*")
"""A dotted name, with an optional ``:attr`` and ``/sibling`` alternatives."""
FROM_IMPORT = re.compile(r"^\s*from\s+((?:" + "|".join(PACKAGES) + r")(?:\.\w+)*)\s+import\s+"
                         r"(?:\(([^)]*)\)|([\w \t,]+))", re.M)
"""``from evaltk.x import a, b`` (or ``import (a, b)`` over lines) in a code block."""
FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})[^\n]*\n(.*?)^ {0,3}\1[ \t]*$", re.M | re.S)
DIRECTIVE = re.compile(r"^:::\s+(\S+)", re.M)
LINK = re.compile(r"\]\(([^)\s]+)\)")
PLACEHOLDER = re.compile(r"<[^>/]*>|\b[A-Z][A-Z0-9_]*\b(?=[./]|$)")
"""``<rom_id>``, ``NAME``, ``DIR``: any name, for a path that does not exist as written."""
TRAILING = ".,;:)'\""
LAYOUT = re.compile(r"^((?:" + "|".join(ROOTS) + r")/(?:[\w.-]+/)*) {2,}(\S.*)$", re.M)
"""A line of a layout block in a fenced block: ``evaltk/   checkpoint, stats/, importers/ (...)``."""
LAYOUT_ITEM = re.compile(r"(?<![\w/.+-])[\w-]+(?:/|\.(?:py|h|cpp|toml))(?=[\s,;:]|$)")
"""A folder (``stats/``) or a file (``m6502.h``) a layout line lists, outside parentheses."""


@dataclass(frozen=True)
class Reference:
    """One reference: the text as written, the document and line it is on."""

    text: str
    doc: str
    line: int

    def where(self) -> str:
        """Return ``doc:line``."""
        return f"{self.doc}:{self.line}"


def documents(root: Path = ROOT) -> list[Path]:
    """Return README.md, CONTRIBUTING.md and every ``docs/**/*.md`` under ``root`` that exists."""
    found = [root / name for name in ("README.md", "CONTRIBUTING.md") if (root / name).is_file()]
    return found + sorted((root / "docs").rglob("*.md"))


def references(text: str, doc: str, *, check_links: bool) -> list[Reference]:
    """Return the references in a Markdown ``text`` (see the module's docstring), each with its line."""
    found: list[Reference] = []

    def add(pattern: re.Pattern[str], chunk: str, offset: int) -> None:
        for match in pattern.finditer(chunk):
            ref = match.group(0).rstrip(TRAILING) if pattern is PATH else match.group(0)
            if pattern is DOTTED and ref.split(":")[0].rsplit(".", 1)[-1] in FILE_SUFFIXES:
                continue
            found.append(Reference(ref, doc, text.count("\n", 0, offset + match.start()) + 1))

    covered: list[tuple[int, int]] = []
    for fence in FENCE.finditer(text):
        body_at = fence.start(2)
        for pattern in (PATH, DOTTED):
            add(pattern, fence.group(2), body_at)
        for layout in LAYOUT.finditer(fence.group(2)):
            listed = re.sub(r"\([^()]*(?:\([^()]*\)[^()]*)*\)", "", layout.group(2))
            at = text.count("\n", 0, body_at + layout.start()) + 1
            found += [Reference(layout.group(1) + item.group(0), doc, at) for item in LAYOUT_ITEM.finditer(listed)]
        for imp in FROM_IMPORT.finditer(fence.group(2)):
            at = text.count("\n", 0, body_at + imp.start()) + 1
            found += [Reference(f"{imp.group(1)}:{name.strip()}", doc, at)
                      for name in (imp.group(2) or imp.group(3)).split(",") if name.strip()]
        covered.append(fence.span())
    masked = list(text)
    for start, end in covered:
        masked[start:end] = [c if c == "\n" else " " for c in text[start:end]]
    outside = "".join(masked)
    for directive in DIRECTIVE.finditer(outside):
        found.append(Reference(directive.group(1), doc, text.count("\n", 0, directive.start()) + 1))
    if check_links:
        for link in LINK.finditer(outside):
            target = link.group(1).split("#")[0]
            if target and not re.match(r"[a-z][a-z0-9+.-]*:", target):
                found.append(Reference("./" + target, doc, text.count("\n", 0, link.start()) + 1))
    outside = LINK.sub(lambda m: "]" + " " * (len(m.group(0)) - 1), outside)  # a link's target is not prose
    for pattern in (PATH, DOTTED):
        add(pattern, outside, 0)
    return sorted(set(found), key=lambda r: (r.line, r.text))


def problem(ref: Reference, root: Path = ROOT) -> str | None:
    """Return why ``ref`` names nothing in the checkout at ``root``, or None when it exists."""
    text = ref.text
    if text.startswith("./"):
        target = (root / ref.doc).parent / text[2:]
        return None if target.exists() else f"the link target {text[2:]} does not exist"
    if text.startswith(ROOTS) and "/" in text.split(":")[0] and not re.match(r"\w+(\.\w+)+/", text):
        return path_problem(text, root)
    return dotted_problem(text, root)


def path_problem(text: str, root: Path) -> str | None:
    """Return why the path ``text`` (maybe with ``:name`` or ``::test``) names nothing, or None."""
    path, _, name = text.partition(":")
    name = name.lstrip(":").split("[")[0]
    if built(path.rstrip("/"), root):
        return None
    if "/.../" in path + "/" or path.endswith("..."):
        path = path.split("...")[0]
    matches = existing(root, path.rstrip("/")) or existing(root, PLACEHOLDER.sub("*", path.rstrip("/")))
    if not matches:
        return f"no file or folder {path}"
    if name:
        source = matches[0]
        if source.suffix != ".py" or not source.is_file():
            return f"{path} is not a Python file, so it has no {name}"
        if name not in module_names(source):
            return f"{path} defines no {name}"
    return None


def built(path: str, root: Path) -> bool:
    """Return whether ``path`` is made by a build, not kept in git.

    It is when ``.gitignore`` names it (``gpu_env/_native*.so``), or when it is the wheel's copy of the suites
    (:data:`evaltk.shipped.PACKAGED_SUITES`).
    """
    if path == PACKAGED_SUITES.relative_to(PACKAGED_SUITES.parents[2]).as_posix():
        return True
    ignore = root / ".gitignore"
    patterns = ignore.read_text(encoding="utf-8").split() if ignore.is_file() else []
    parts = path.split("/")
    return any(fnmatch.fnmatch(part, pat.strip("/")) or fnmatch.fnmatch(path, pat.strip("/"))
               for pat in patterns if not pat.startswith("#") for part in parts)


def existing(root: Path, glob: str) -> list[Path]:
    """Return the files and folders under ``root`` that ``glob`` (``*``, ``**``, ``{a,b}``) names."""
    return [m for g in expand_braces(glob) for m in (root.glob(g) if any(c in g for c in "*?[") else [root / g])
            if m.exists()]


def expand_braces(glob: str) -> list[str]:
    """Return ``glob`` with its first ``{a,b}`` expanded (recursively): ``*.{cpp,h}`` -> ``*.cpp``, ``*.h``."""
    match = re.search(r"\{([^{}]*)\}", glob)
    if match is None:
        return [glob]
    return [g for alt in match.group(1).split(",")
            for g in expand_braces(glob[:match.start()] + alt + glob[match.end():])]


def dotted_problem(text: str, root: Path) -> str | None:
    """Return why a dotted name (with ``:attr`` or ``/sibling`` alternatives) names nothing, or None."""
    head, *siblings = text.split("/")
    module, _, attr = head.partition(":")
    names = [module + ("." + attr if attr else "")]
    names += [names[0].rsplit(".", 1)[0] + "." + s for s in siblings]
    for name in names:
        why = resolve(tuple(name.split(".")), root)
        if why is not None:
            return why
    return None


def module_path(parts: tuple[str, ...], root: Path) -> Path | None:
    """Return the file (or namespace folder) of the module ``parts`` under ``root``, or None."""
    base = root.joinpath(*parts)
    for candidate in (base / "__init__.py", base.with_suffix(".py")):
        if candidate.is_file():
            return candidate
    return base if base.is_dir() and parts[0] in PACKAGES else None


def resolve(parts: tuple[str, ...], root: Path) -> str | None:
    """Return why ``parts`` (a module and attributes) names nothing under ``root``, or None when it resolves."""
    cut = next((i for i in range(len(parts), 0, -1) if module_path(parts[:i], root) is not None), 0)
    if cut == 0:
        return f"no module {parts[0]}"
    module, rest = parts[:cut], parts[cut:]
    if not rest or static_lookup(module, rest, root, 0) or (root == ROOT and imported_lookup(module, rest)):
        return None
    found = next(k for k in range(len(rest) - 1, -1, -1) if k == 0 or static_lookup(module, rest[:k], root, 0))
    return f"{'.'.join(module + rest[:found])} has no {rest[found]}"


def module_names(path: Path) -> dict[str, ast.AST]:
    """Return the names a module's top level binds (in ``if``/``try`` blocks too), each with its node."""
    return source_names(path.read_text(encoding="utf-8"))


@cache
def source_names(source: str) -> dict[str, ast.AST]:
    """Return the names the top level of a module's ``source`` binds (cached by the text, not the file)."""
    names: dict[str, ast.AST] = {}
    for node in walk_top(ast.parse(source).body):
        for name in bound_names(node):
            names.setdefault(name, node)
    return names


def walk_top(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Yield the statements of a body, descending into ``if``/``try``/``with`` blocks but not into defs."""
    for node in body:
        yield node
        if isinstance(node, (ast.If, ast.Try, ast.With)):
            for block in (getattr(node, "body", []), getattr(node, "orelse", []), getattr(node, "finalbody", []),
                          *[h.body for h in getattr(node, "handlers", [])]):
                yield from walk_top(block)


def bound_names(node: ast.AST) -> list[str]:
    """Return the names a statement binds at its level."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [node.name]
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return [a.asname or a.name.split(".")[0] for a in node.names]
    targets: list[ast.expr] = []
    if isinstance(node, ast.Assign):
        targets = node.targets
    elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
        targets = [node.target]
    names = []
    for target in targets:
        for sub in ast.walk(target):
            if isinstance(sub, ast.Name):
                names.append(sub.id)
    return names


def static_lookup(module: tuple[str, ...], rest: tuple[str, ...], root: Path, depth: int) -> bool:
    """Return whether the attributes ``rest`` of ``module`` are visible in the source (imports followed)."""
    path = module_path(module, root)
    if path is None or depth > 8:
        return False
    if path.is_dir() or path.name == "__init__.py":
        if module_path((*module, rest[0]), root) is not None:
            return not rest[1:] or static_lookup((*module, rest[0]), rest[1:], root, depth + 1)
        if path.is_dir():
            return False
    node = module_names(path).get(rest[0])
    if node is None:
        return False
    return follow(node, module, rest, root, depth)


def follow(node: ast.AST, module: tuple[str, ...], rest: tuple[str, ...], root: Path, depth: int) -> bool:
    """Return whether ``rest`` resolves from the statement ``node`` that binds ``rest[0]`` in ``module``."""
    name, more = rest[0], rest[1:]
    if isinstance(node, ast.ImportFrom):
        alias = next(a for a in node.names if (a.asname or a.name) == name)
        package = module if module_path(module, root) is not None and (
            module_path(module, root) or Path()).name == "__init__.py" else module[:-1]
        source = tuple((node.module or "").split(".")) if node.level == 0 else (
            package[:len(package) - node.level + 1] + tuple(filter(None, (node.module or "").split("."))))
        if not source or source[0] not in PACKAGES:
            return not more  # a name from another library: it exists if the import does
        return static_lookup(source, (alias.name, *more), root, depth + 1)
    if isinstance(node, ast.Import):
        alias = next(a for a in node.names if (a.asname or a.name.split(".")[0]) == name)
        target = tuple(alias.name.split(".")) if alias.asname else (alias.name.split(".")[0],)
        if target[0] not in PACKAGES:
            return not more
        return not more or static_lookup(target, more, root, depth + 1)
    if not more:
        return True
    if isinstance(node, ast.ClassDef):
        return class_has(node, module, more, root, depth)
    return False


def class_has(cls: ast.ClassDef, module: tuple[str, ...], rest: tuple[str, ...], root: Path, depth: int) -> bool:
    """Return whether the class ``cls`` of ``module`` has the attribute chain ``rest`` (bases followed)."""
    names: dict[str, ast.AST] = {}
    for node in walk_top(cls.body):
        for name in bound_names(node):
            names.setdefault(name, node)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for sub in ast.walk(node):
                if isinstance(sub, ast.Attribute) and isinstance(sub.value, ast.Name) and sub.value.id == "self" \
                        and isinstance(sub.ctx, ast.Store):
                    names.setdefault(sub.attr, sub)
    if rest[0] in names:
        inner = names[rest[0]]
        return not rest[1:] or (isinstance(inner, ast.ClassDef) and class_has(inner, module, rest[1:], root, depth))
    for base in cls.bases:
        if isinstance(base, ast.Name) and static_lookup(module, (base.id, *rest), root, depth + 1):
            return True
    return False


def imported_lookup(module: tuple[str, ...], rest: tuple[str, ...]) -> bool:
    """Return whether importing ``module`` and taking the attributes ``rest`` works (names made at run time)."""
    try:
        obj: object = importlib.import_module(".".join(module))
    except ImportError:
        return False
    for name in rest:
        if not hasattr(obj, name):
            return False
        obj = getattr(obj, name)
    return True


def broken(root: Path = ROOT, docs: list[Path] | None = None) -> list[str]:
    """Return ``"doc:line: `reference`: why"`` for each reference of ``docs`` that names nothing under ``root``.

    ``docs`` defaults to :func:`documents`; a document outside ``root`` is shown by its full path.
    """
    found = []
    for doc in documents(root) if docs is None else docs:
        rel = doc.relative_to(root).as_posix() if doc.is_relative_to(root) else str(doc)
        for ref in references(doc.read_text(encoding="utf-8"), rel, check_links=not rel.startswith("docs/")):
            why = problem(ref, root)
            if why is not None:
                found.append(f"{ref.where()}: `{ref.text}`: {why}")
    return found
