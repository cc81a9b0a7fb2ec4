"""mkdocs hook: show the project's Sphinx-style roles (``:func:`x```) in docstrings as plain code.

The docstrings name objects as ``:func:`prepare``` / ``:class:`~evaltk.errors.EvaltkError```, which
Markdown renders as ``:func:<code>prepare</code>``; this hook drops the role, and as Sphinx does, a
leading ``~`` keeps only the last name, so the API pages read ``prepare`` and ``EvaltkError``.
"""

from __future__ import annotations

import re
from typing import Any

ROLE = re.compile(r":(?:func|class|meth|mod|attr|data|exc|obj|const):<code>(~?)([^<]*)</code>")
"""A role before a code span; group 1 is the ``~`` (if any), group 2 the name."""


def strip_roles(html: str) -> str:
    """Return ``html`` with every Sphinx role before a ``<code>`` span removed."""
    return ROLE.sub(lambda m: f"<code>{m.group(2).rsplit('.', 1)[-1] if m.group(1) else m.group(2)}</code>", html)


def on_page_content(html: str, **kwargs: Any) -> str:
    """Strip the roles from each page's rendered content (mkdocs ``on_page_content`` event)."""
    return strip_roles(html)
