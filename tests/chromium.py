"""Headless Chromium (Debian's ``chromium``) for the tests that open a page in a real browser.

:func:`chromium_path` finds the binary (with ``CI=true`` it installs it: ``apt-get install -y chromium``,
as root; elsewhere the test is skipped with the command to install it). :func:`browse` runs it once on a
page or URL and returns stdout (the DOM with ``--dump-dom``) and the console lines of its log: with
``--enable-logging=stderr`` Chromium prints every console message, whatever its level (errors, warnings,
uncaught exceptions, Content-Security-Policy refusals), as an ``INFO:CONSOLE`` line. :func:`start` runs
it in the background for a page that reports back itself (the test stops it with :func:`stop`).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

BASE_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
              "--disable-background-networking", "--disable-component-update", "--disable-sync",
              "--enable-logging=stderr", "--v=0", "--hide-scrollbars")
FLAGS = (*BASE_FLAGS, "--virtual-time-budget=5000")
"""For one page: Chromium lets the page's scripts run for 5 s of virtual time, then prints and exits."""
CONSOLE = re.compile(r":CONSOLE[:(]\d+\)?\] (.*)")


def chromium_path() -> str:
    """Path of the ``chromium`` binary; installed from Debian's packages on CI when missing, else skip."""
    path = shutil.which("chromium")
    if path is None and os.environ.get("CI") == "true":
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        subprocess.run(["apt-get", "update", "-q"], check=True, env=env, capture_output=True, timeout=600)
        subprocess.run(["apt-get", "install", "-y", "-q", "chromium"], check=True, env=env, capture_output=True,
                       timeout=1200)
        path = shutil.which("chromium")
    if path is None:
        pytest.skip("chromium is not installed: apt-get update && apt-get install -y chromium (CI=true installs it)")
    return path


def browse(chromium: str, page: Path | str, profile: Path, *extra: str, timeout: float = 120) -> tuple[str, list[str]]:
    """Run chromium on ``page`` (a file or a URL); return stdout and the console lines of its log.

    ``extra`` flags come after :data:`FLAGS`, so one of them given again (``--virtual-time-budget=...``) wins.
    """
    target = page.resolve().as_uri() if isinstance(page, Path) else page
    proc = subprocess.run([chromium, *FLAGS, f"--user-data-dir={profile}", *extra, target],
                          capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout, [m.group(1) for m in CONSOLE.finditer(proc.stderr)]


def start(chromium: str, url: str, profile: Path, log: Path, *extra: str) -> subprocess.Popen[bytes]:
    """Start chromium on ``url`` in the background, its log into ``log``; it runs until :func:`stop`."""
    with log.open("wb") as sink:
        return subprocess.Popen([chromium, *BASE_FLAGS, f"--user-data-dir={profile}", *extra, url],
                                stdout=subprocess.DEVNULL, stderr=sink)


def stop(proc: subprocess.Popen[bytes], log: Path) -> list[str]:
    """Stop a chromium from :func:`start` (SIGTERM, then SIGKILL after 30 s); return the console lines of ``log``."""
    proc.terminate()
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    return [m.group(1) for m in CONSOLE.finditer(log.read_text(encoding="utf-8", errors="replace"))]
