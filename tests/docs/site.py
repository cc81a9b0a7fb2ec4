"""Build the documentation site: ``mkdocs build --strict`` on a config into a folder, with its log and time."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class SiteBuild:
    """One ``mkdocs build --strict`` of the repository's ``mkdocs.yml``."""

    site: Path
    returncode: int
    log: str
    seconds: float


def build_site(config: Path, site: Path) -> SiteBuild:
    """Run ``python -m mkdocs build --strict`` on ``config`` into ``site``; the result, whatever it is."""
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file", str(config),
                           "--site-dir", str(site)], cwd=config.parent, capture_output=True, text=True, timeout=600,
                          env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    return SiteBuild(site, proc.returncode, proc.stdout + proc.stderr, time.perf_counter() - start)


def mkdocs_config() -> dict[str, Any]:
    """Return ``mkdocs.yml`` as data (it uses no YAML tags)."""
    data: dict[str, Any] = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    return data


def nav_files(node: Any) -> Iterator[str]:
    """Yield every page file named in a ``nav`` tree (titles and sections are walked through)."""
    if isinstance(node, str):
        yield node
    elif isinstance(node, list):
        for child in node:
            yield from nav_files(child)
    elif isinstance(node, dict):
        for child in node.values():
            yield from nav_files(child)
