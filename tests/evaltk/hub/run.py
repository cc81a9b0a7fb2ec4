"""Run ``python -m evaltk`` as a user would, against a Hub cache in a temporary ``HF_HOME``."""

from __future__ import annotations

import csv
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def evaltk(args: list[str], hf_home: Path, *, endpoint: str | None = None, offline: bool = False,
           python: list[str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run ``python -m evaltk args`` with the Hub cache in ``hf_home`` (and the importers' cache next to it).

    Its own process: ``huggingface_hub`` reads ``HF_ENDPOINT``, ``HF_HOME`` and ``HF_HUB_OFFLINE`` when imported.
    """
    env = {k: v for k, v in os.environ.items() if not k.startswith("HF_")}
    env.update(HF_HOME=str(hf_home), XDG_CACHE_HOME=str(hf_home.parent / "xdg"), HF_HUB_DISABLE_TELEMETRY="1",
               PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")])))
    if endpoint is not None:
        env["HF_ENDPOINT"] = endpoint
    if offline:
        env["HF_HUB_OFFLINE"] = "1"
    return subprocess.run([sys.executable, *(python or ["-m", "evaltk"]), *args], env=env, cwd=ROOT,
                          capture_output=True, text=True, timeout=300, check=False)


def error_of(proc: subprocess.CompletedProcess[str]) -> str:
    """Return the one ``error:`` line of a failed command (asserting exit status 2 and nothing else on stderr)."""
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2, proc.stderr
    assert len(lines) == 1, lines
    assert lines[0].startswith("error: ")
    return lines[0]


def rows(out: Path) -> list[dict[str, str]]:
    """Return the rows of ``out/episodes.csv``."""
    with open(out / "episodes.csv", newline="") as fh:
        return list(csv.DictReader(fh))


def snapshot(hf_home: Path, repo: str, sha: str) -> Path:
    """Return the client's cache folder of ``repo`` at commit ``sha``."""
    return hf_home / "hub" / f"models--{repo.replace('/', '--')}" / "snapshots" / sha
