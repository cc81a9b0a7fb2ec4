"""Run ``evaltk`` in a Python that cannot see Sample Factory, as on a machine with ``evaltk[doom]`` alone.

:func:`python_without_sf` links every entry of this interpreter's site-packages into a folder, leaving
out Sample Factory's packages (``sample_factory``, ``sf_examples``, ``signal_slot`` and their
``.dist-info``), and returns the command prefix and environment that run this interpreter with that
folder as its only site-packages (``-S``: no ``site``, so the real site-packages is not on the path).
"""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
SF_ENTRIES = ("sample_factory", "sf_examples", "signal_slot")
"""Name prefixes of the site-packages entries Sample Factory 2.1.1 and signal-slot-mp install."""


def python_without_sf(folder: Path, *, cache: Path) -> tuple[list[str], dict[str, str]]:
    """Return ``(argv prefix, env)`` of a Python whose packages are this one's less Sample Factory's.

    ``cache`` becomes ``XDG_CACHE_HOME`` (evaltk's import cache, and no Sample Factory files unpacked there).
    """
    site = Path(sysconfig.get_paths()["purelib"])
    folder.mkdir(parents=True, exist_ok=True)
    for entry in site.iterdir():
        if entry.name.startswith(SF_ENTRIES) or entry.suffix == ".pth" or entry.name.startswith("__editable__"):
            continue
        (folder / entry.name).symlink_to(entry)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), str(folder)]), "XDG_CACHE_HOME": str(cache),
           "OMP_NUM_THREADS": "1"}
    return [sys.executable, "-S"], env


def run_evaltk(prefix: list[str], env: dict[str, str], args: list[str],
               timeout: float = 600) -> subprocess.CompletedProcess[str]:
    """Run ``python -m evaltk ARGS`` with ``prefix`` and ``env`` (:func:`python_without_sf`)."""
    return subprocess.run([*prefix, "-m", "evaltk", *args], capture_output=True, text=True, timeout=timeout, env=env,
                          cwd=REPO)
