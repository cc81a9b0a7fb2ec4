"""``report.html`` of ``evaltk validate`` opened in a real headless browser (Debian's ``chromium``).

Checks that the page renders (the DOM after scripts ran holds the verdict; a screenshot is produced
and is not blank), that its plots load (the page's own script marks ``data-images="loaded N/N"``
when every ``<img>`` decoded with ``naturalWidth > 0``) and that the console stays empty. Chromium's
``--enable-logging=stderr`` prints every console message, whatever its level (errors, warnings,
uncaught exceptions, Content-Security-Policy refusals), as an ``INFO:CONSOLE`` line, so the level
cannot be told from the log: the test requires no console line at all (the page logs nothing on its
own). Control pages with a broken image, a blocked external URL and an exception show that each
check fails when it should.

Chromium missing: with ``CI=true`` the fixture installs it (``apt-get install -y chromium``, as
root); elsewhere the tests are skipped with the command to install it (:mod:`tests.chromium`).
"""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import numpy as np
import pytest
from matplotlib import image as mpimg

from evaltk.cli.main import main
from evaltk.envs import env_for_id
from evaltk.policies import save_builtin
from tests.chromium import browse, chromium_path

SCREENSHOT_SIZE = (1280, 2400)
GREEN = (0x1A, 0x7F, 0x37)
"""The verdict colour of ``identical`` (``evaltk.report.html_report.VERDICT_COLOURS``)."""


@pytest.fixture(scope="session")
def chromium() -> str:
    """Path of the ``chromium`` binary; installed from Debian's packages on CI when missing."""
    return chromium_path()


@pytest.fixture(scope="module")
def report_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Run a real validation (the scripted policy as a checkpoint directory, gpu_env vs Gym, 10 seeds)."""
    out = tmp_path_factory.mktemp("validate")
    ckpt = save_builtin(tmp_path_factory.mktemp("ckpt") / "scripted", "scripted", env_for_id("ALE/Breakout-v5"))
    status = main(["validate", str(ckpt), "--episodes", "10", "--num-envs", "2", "--seed", "5", "--margin", "5",
                   "--resamples", "999", "--out", str(out)])
    assert status == 0
    return out


def test_report_is_self_contained(report_dir: Path) -> None:
    page = (report_dir / "report.html").read_text(encoding="utf-8")
    sources = re.findall(r"""(?:src|href)\s*=\s*["']([^"']*)""", page)
    assert len(sources) == 2  # report.png and pairs.png
    assert all(s.startswith("data:image/png;base64,") for s in sources), [s[:40] for s in sources]
    assert "url(" not in page
    assert "@import" not in page


def test_page_renders_with_images_and_no_console_output(chromium: str, report_dir: Path, tmp_path: Path) -> None:
    dom, console = browse(chromium, report_dir / "report.html", tmp_path / "profile", "--dump-dom")
    verdict = json.loads((report_dir / "report.json").read_text())["verdict_line"]
    assert verdict.startswith("verdict: identical on 10/10 seeds: fewer than 30% of episodes differ (95%)")
    assert verdict in dom.replace("&amp;", "&")
    assert 'data-images="loaded 2/2"' in dom  # set by the page's script once both plots decoded
    assert "What differs in what each side ran:" in dom
    assert console == []


def test_screenshot_is_not_blank(chromium: str, report_dir: Path, tmp_path: Path) -> None:
    shot = tmp_path / "report.png"
    _, console = browse(chromium, report_dir / "report.html", tmp_path / "profile", f"--screenshot={shot}",
                        f"--window-size={SCREENSHOT_SIZE[0]},{SCREENSHOT_SIZE[1]}")
    assert console == []
    pixels = np.round(np.asarray(mpimg.imread(shot))[..., :3] * 255).astype(np.uint8)  # PNG: floats in [0, 1]
    assert pixels.shape == (SCREENSHOT_SIZE[1], SCREENSHOT_SIZE[0], 3)
    ink = (pixels < 200).any(axis=2).mean()  # text, borders and plot lines on the white page
    assert 0.01 < ink < 0.6, ink
    assert (np.abs(pixels.astype(int) - GREEN).sum(axis=2) < 30).sum() > 500  # the verdict banner's colour
    keep = os.environ.get("EVALTK_KEEP_SCREENSHOT")
    if keep:
        shutil.copyfile(shot, keep)


def test_checks_catch_a_broken_page(chromium: str, report_dir: Path, tmp_path: Path) -> None:
    page = (report_dir / "report.html").read_text(encoding="utf-8")
    broken_image = tmp_path / "broken_image.html"  # one plot's PNG data cut short: it cannot decode
    broken_image.write_text(re.sub(r"(data:image/png;base64,)[A-Za-z0-9+/=]+", r"\1iVBORw0KGgo=", page, count=1),
                            encoding="utf-8")
    dom, _ = browse(chromium, broken_image, tmp_path / "p1", "--dump-dom")
    assert 'data-images="broken 1/2"' in dom
    external = tmp_path / "external.html"  # an outside URL and a script error: both reach the console
    external.write_text(page.replace("<h2>Files</h2>", '<img src="https://example.invalid/x.png">'
                                     "<script>undefinedFunction();</script><h2>Files</h2>"), encoding="utf-8")
    dom, console = browse(chromium, external, tmp_path / "p2", "--dump-dom")
    assert any("Content Security Policy" in line for line in console), console
    assert any("undefinedFunction is not defined" in line for line in console), console
    assert 'data-images="broken 1/3"' in dom
