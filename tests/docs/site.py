"""Build the documentation site: ``mkdocs build --strict`` on a config into a folder, with its log and time."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

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
