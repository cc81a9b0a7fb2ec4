"""The documentation site built once per test session (``mkdocs build --strict`` into a temporary folder)."""

from __future__ import annotations

import importlib.util
import os

import pytest

from tests.docs.site import ROOT, SiteBuild, build_site


@pytest.fixture(scope="session")
def mkdocs_installed() -> None:
    """Skip without mkdocs-material and mkdocstrings (the ``docs`` extra); on CI (``CI=true``) fail instead."""
    missing = [m for m in ("mkdocs", "material", "mkdocstrings_handlers.python") if importlib.util.find_spec(m) is None]
    if missing:
        message = f"{', '.join(missing)} not installed: pip install -e '.[docs]'"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)


@pytest.fixture(scope="session")
def built_site(mkdocs_installed: None, tmp_path_factory: pytest.TempPathFactory) -> SiteBuild:
    """Build the site of this checkout strictly; a failed build is returned too, for the test to report."""
    return build_site(ROOT / "mkdocs.yml", tmp_path_factory.mktemp("site") / "site")
