"""The documentation site: ``mkdocs build --strict``, every page of docs/ in the navigation, the API reference.

The site is built once per session (``tests/docs/conftest.py``) into a temporary folder.
"""

from __future__ import annotations

import html
import importlib.util
import inspect
import re
from pathlib import Path
from typing import Any

import yaml

from conformance import suite
from tests.docs.site import ROOT, SiteBuild, build_site, mkdocs_config, nav_files

DOCS = ROOT / "docs"
NOT_PAGES = ("hooks/",)
"""Folders of docs/ that mkdocs.yml's ``exclude_docs`` keeps out of the site (they hold no pages)."""
TYPE_WORDS = {str: "string", int: "integer", float: "float", bool: "boolean", list: "list"}
API = {
    "api/gpu_env/index.html": ("gpu_env.AtariBatch", "gpu_env.AtariBatch.act", "gpu_env.AtariBatch.reset_game",
                               "gpu_env.AtariBatch.get_screen", "gpu_env.AtariBatch.load_ale_state",
                               "gpu_env.make_vec"),
    "api/evaluate/index.html": ("evaltk.evaluation.run.evaluate", "evaltk.evaluation.plan.EvalConfig",
                                "evaltk.evaluation.plan.EvaluationPlan",
                                "evaltk.evaluation.run.EvalResult"),
    "api/verdict/index.html": ("evaltk.verdict.compare", "evaltk.verdict.Comparison", "evaltk.verdict.Verdict",
                               "evaltk.verdict.VerdictRule"),
    "api/validate/index.html": ("evaltk.evaluation.validate.ValidateConfig", "evaltk.evaluation.validate.validate",
                                "evaltk.evaluation.validate.prepare_validation",
                                "evaltk.evaluation.validate.run_validation", "evaltk.evaluation.validate.Validation"),
    "api/suite_format/index.html": ("conformance.suite.load_suite", "conformance.suite.run_suite",
                                    "conformance.suite.Suite"),
}
"""Built page -> objects it documents (anchor ids mkdocstrings gives them)."""


def text_of(page: str) -> str:
    """Return the text of an HTML page: tags dropped (so ``a <code>b</code>`` reads ``a b``), whitespace collapsed."""
    return " ".join(html.unescape(re.sub(r"<[^>]+>", "", page)).split())


def test_site_builds_strictly(built_site: SiteBuild) -> None:
    assert built_site.returncode == 0, f"mkdocs build --strict failed:\n{built_site.log[-4000:]}"
    assert "WARNING" not in built_site.log, built_site.log
    assert (built_site.site / "index.html").is_file()
    assert (built_site.site / "search" / "search_index.json").is_file()  # the offline search's index
    workflow = "ci/evaltk-suites.yml"  # shipped with the site, for download
    assert (built_site.site / workflow).read_bytes() == (DOCS / workflow).read_bytes()


def test_every_page_of_docs_is_in_the_navigation() -> None:
    pages = {p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md")}
    pages = {p for p in pages if not p.startswith(NOT_PAGES)}
    in_nav = list(nav_files(mkdocs_config()["nav"]))
    missing = sorted(pages - set(in_nav))
    assert not missing, (
        f"pages of docs/ missing from the site's navigation: {', '.join(missing)}. Add each one to `nav:` in "
        "mkdocs.yml under the section of its task (Install, Validate a checkpoint, Validate a simulator, "
        "Run the suites in CI, Tournaments, Train, Scale and speed, API reference) as `- Title: page.md`")
    absent = sorted(set(in_nav) - pages)
    assert not absent, f"mkdocs.yml's nav names pages that docs/ does not have: {', '.join(absent)}"
    assert len(in_nav) == len(set(in_nav)), "a page is in the nav twice"


def test_the_navigation_is_by_task() -> None:
    sections = [next(iter(entry)) for entry in mkdocs_config()["nav"] if isinstance(entry, dict)]
    for task in ("Install", "Validate a checkpoint", "Validate a simulator", "Run the suites in CI", "Tournaments",
                 "Train", "API reference"):
        assert task in sections, sections


def test_the_site_fetches_nothing_from_other_hosts(built_site: SiteBuild) -> None:
    assert mkdocs_config()["theme"]["font"] is False  # no Google Fonts
    fetched = re.compile(r"""<(?:script|img|iframe|source)\b[^>]*\bsrc=["']([^"']+)|<link\b[^>]*\bhref=["']([^"']+)""")
    outside = []
    for page in built_site.site.rglob("*.html"):
        for match in fetched.finditer(page.read_text(encoding="utf-8")):
            url = match.group(1) or match.group(2)
            if re.match(r"(?:[a-z]+:)?//", url):
                outside.append(f"{page.relative_to(built_site.site)}: {url}")
    assert outside == []
    for asset in [*built_site.site.rglob("*.css"), *built_site.site.rglob("*.js")]:
        text = asset.read_text(encoding="utf-8", errors="replace")
        assert "fonts.googleapis" not in text, asset
        assert "fonts.gstatic" not in text, asset


def test_api_reference_documents_the_public_api(built_site: SiteBuild) -> None:
    import conformance.suite
    import evaltk.evaluation.plan
    import evaltk.evaluation.run
    import evaltk.evaluation.validate
    import evaltk.verdict
    import gpu_env

    modules = {"gpu_env": gpu_env, "evaltk.evaluation.run": evaltk.evaluation.run,
               "evaltk.evaluation.plan": evaltk.evaluation.plan,
               "evaltk.verdict": evaltk.verdict, "evaltk.evaluation.validate": evaltk.evaluation.validate,
               "conformance.suite": conformance.suite}
    for page, objects in API.items():
        source = (built_site.site / page).read_text(encoding="utf-8")
        text = text_of(source)
        for name in objects:
            assert f'id="{name}"' in source, f"{page} does not document {name}"
        for name in objects:
            owner_name = next(m for m in sorted(modules, key=len, reverse=True) if name.startswith(m + "."))
            obj: Any = modules[owner_name]
            for part in name[len(owner_name) + 1:].split("."):
                obj = getattr(obj, part)
            summary = (inspect.getdoc(obj) or "").splitlines()[0]
            expected = " ".join(re.sub(r":\w+:`~?|`", "", summary).split())
            assert expected, f"{name} has no docstring"
            assert expected in text, f"{page}: the docstring of {name} ({expected!r}) is not shown"


def test_suite_format_page_lists_every_kind_and_field() -> None:
    page = (DOCS / "api" / "suite_format.md").read_text(encoding="utf-8")
    sections = dict(re.findall(r'^### kind = "(\w+)"\n(.*?)(?=^#|\Z)', page, re.M | re.S))
    assert set(sections) == set(suite.CASE_FIELDS), (
        f"docs/api/suite_format.md documents kinds {sorted(sections)}, the code has {sorted(suite.CASE_FIELDS)}: "
        "give each kind a '### kind = \"NAME\"' section with its field table")
    for kind, fields in suite.CASE_FIELDS.items():
        rows = {name: (kind_type, required) for name, kind_type, required in
                re.findall(r"^\| `(\w+)` \| (\w+) \| (yes|no) \|", sections[kind], re.M)}
        assert set(rows) == set(fields), f"kind {kind!r}: the page lists {sorted(rows)}, the code {sorted(fields)}"
        for name, spec in fields.items():
            assert rows[name] == (TYPE_WORDS[spec.types[0]], "yes" if spec.required else "no"), (kind, name, rows[name])


def test_a_page_left_out_of_the_navigation_fails_the_strict_build(mkdocs_installed: None, tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "index.md").write_text("# Home\n\nSee [the other page](other.md).\n", encoding="utf-8")
    (docs / "orphan.md").write_text("# Not in the nav\n", encoding="utf-8")
    real = mkdocs_config()
    small = {"site_name": "control", "docs_dir": "docs", "theme": real["theme"], "validation": real["validation"],
             "plugins": ["search"], "nav": [{"Home": "index.md"}]}
    (tmp_path / "mkdocs.yml").write_text(yaml.safe_dump(small), encoding="utf-8")
    result = build_site(tmp_path / "mkdocs.yml", tmp_path / "site")
    assert result.returncode != 0, result.log
    assert "orphan.md" in result.log  # the page left out of the nav is named
    assert "other.md" in result.log  # and the broken link


def load_hook(name: str) -> Any:
    """Import ``docs/hooks/NAME.py`` (the build's hooks are files, not a package)."""
    spec = importlib.util.spec_from_file_location(name, DOCS / "hooks" / f"{name}.py")
    assert spec is not None
    assert spec.loader is not None
    hook = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hook)
    return hook


def test_sphinx_roles_hook() -> None:
    hook = load_hook("sphinx_roles")
    assert hook.strip_roles("see :func:<code>prepare</code>.") == "see <code>prepare</code>."
    assert hook.strip_roles(":class:<code>~evaltk.errors.EvaltkError</code>") == "<code>EvaltkError</code>"
    assert hook.strip_roles(":mod:<code>gpu_env.presets</code>") == "<code>gpu_env.presets</code>"
    assert hook.strip_roles("a <code>b</code> c") == "a <code>b</code> c"


def test_list_breaks_hook() -> None:
    add = load_hook("list_breaks").add_list_breaks
    assert add("Commands:\n- a\n- b\n") == "Commands:\n\n- a\n- b\n"  # a list right under a paragraph line
    assert add("Steps:\n1. a\n2. b") == "Steps:\n\n1. a\n2. b"
    unchanged = ["text\n\n- a", "# Head\n- a", "| t |\n- a", "```\ncode:\n- a\n```", "text ends in\n2026. Next",
                 "* item\n  more\n\n  second paragraph\n* next", "* item\nlazy line\n* next"]
    for markdown in unchanged:
        assert add(markdown) == markdown, markdown


def test_nav_files_walks_sections() -> None:
    assert list(nav_files([{"A": "a.md"}, {"S": [{"B": "b.md"}, "c.md"]}])) == ["a.md", "b.md", "c.md"]
