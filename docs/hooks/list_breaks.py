"""mkdocs hook: a list may start right under a paragraph line, as on GitHub.

The pages are written for GitHub's Markdown, where a bullet list (or an ordered list starting at 1) may
follow a paragraph line directly ("Commands:" then "- pytest ..."); Python-Markdown needs a blank line
there and otherwise reads the items as part of the paragraph. This hook adds that blank line (outside
code fences) before the page is rendered, so the site shows what GitHub shows; the files stay as written.
"""

from __future__ import annotations

import re
from typing import Any

ITEM = re.compile(r"(?:[-*+]|1[.)])\s")
"""A line that starts a list where GitHub lets it interrupt a paragraph: a bullet, or an ordered list at 1."""
ANY_ITEM = re.compile(r"\s*(?:[-*+]|\d+[.)])\s")
NOT_PARAGRAPH = re.compile(r"\s*(?:#|\||>|<|```|~~~)")
"""Lines that are not paragraph text: headings, table rows, quotes, HTML, fences."""


def add_list_breaks(markdown: str) -> str:
    """Return ``markdown`` with a blank line between a paragraph line and a list item that follows it.

    A list lasts over blank lines while the lines after them are indented (an item's further paragraphs)
    and ends at an unindented line after a blank one; inside a list nothing is added.
    """
    out: list[str] = []
    fenced = False
    in_list = False
    for line in markdown.split("\n"):
        previous = out[-1] if out else ""
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
        elif not fenced and line.strip():
            if ANY_ITEM.match(line):
                if (ITEM.match(line) and not in_list and previous.strip() and not NOT_PARAGRAPH.match(previous)
                        and not previous.startswith((" ", "\t"))):
                    out.append("")
                in_list = True
            elif not previous.strip() and not line.startswith((" ", "\t")):
                in_list = False
        out.append(line)
    return "\n".join(out)


def on_page_markdown(markdown: str, **kwargs: Any) -> str:
    """Add the blank lines to each page's Markdown (mkdocs ``on_page_markdown`` event)."""
    return add_list_breaks(markdown)
