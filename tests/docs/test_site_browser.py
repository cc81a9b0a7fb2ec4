"""The built documentation site opened in headless Chromium, served from 127.0.0.1 by a local HTTP server.

``harness.html`` (served next to the site, same origin) opens the home page in a frame, follows every link
of its navigation and records per page the title, the first heading, every image of the article (decoded,
``naturalWidth > 0``) and any resource fetched from another origin; it posts each page's record to the
server as it goes and the whole result at the end, which the test waits for (an event, with a bound only a
hang reaches). Chromium resolves no host name but 127.0.0.1, so nothing can come from the network, and its
log must hold no console line at all (errors and warnings print as ``CONSOLE`` lines). A control site with a
broken image, an outside URL and a script error shows that each check fails when it should (a failed image
load prints no console line; the image check catches it).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest

from tests.chromium import chromium_path, start, stop
from tests.docs.site import SiteBuild, mkdocs_config, nav_files

HARNESS = Path(__file__).with_name("harness.html")
OFFLINE = "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"
WALK_BOUND_S = 600
"""Upper bound for the whole walk (about 30 s on 2 busy cores); only a hang reaches it."""
CONTROL_HOME = """<!doctype html><html><head><meta charset="utf-8"><title>control</title></head><body>
<nav class="md-nav md-nav--primary"><a class="md-nav__link" href="/control/broken/">broken</a></nav>
<article><h1>Control home</h1></article></body></html>"""
CONTROL_BROKEN = """<!doctype html><html><head><meta charset="utf-8"><title>broken</title></head><body>
<article><h1>Broken</h1><img src="missing.png" alt="missing"><img src="https://example.invalid/x.png" alt="x">
<script>undefinedFunction();</script></article></body></html>"""


@dataclass
class Walk:
    """What the harness posted: each page's record as it came, then the result."""

    pages: list[dict[str, Any]] = field(default_factory=list)
    result: dict[str, Any] | None = None
    done: threading.Event = field(default_factory=threading.Event)


class SiteHandler(SimpleHTTPRequestHandler):
    """Files of the built site, plus the harness and the control pages at fixed paths, and the harness's posts."""

    pages: ClassVar[dict[str, bytes]] = {}
    walk: ClassVar[Walk]

    def do_GET(self) -> None:
        body = self.pages.get(self.path.split("?", 1)[0])
        if body is None:
            super().do_GET()
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:
        data = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if self.path == "/progress":
            self.walk.pages.append(data)
        elif self.path == "/result":
            self.walk.result = data
            self.walk.done.set()
        self.send_response(204)
        self.end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        """Keep the test's output quiet."""


@pytest.fixture(scope="module")
def chromium() -> str:
    """Path of the ``chromium`` binary; installed from Debian's packages on CI when missing."""
    return chromium_path()


@pytest.fixture
def server(built_site: SiteBuild) -> Iterator[tuple[str, Walk]]:
    """Serve the built site on ``http://127.0.0.1:PORT`` (an ephemeral port); the base URL and the walk's record."""
    assert built_site.returncode == 0, built_site.log[-3000:]
    walk = Walk()
    pages = {"/harness.html": HARNESS.read_bytes(), "/control/": CONTROL_HOME.encode(),
             "/control/broken/": CONTROL_BROKEN.encode()}
    handler = type("Handler", (SiteHandler,), {"pages": pages, "walk": walk})
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), partial(handler, directory=str(built_site.site)))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}", walk
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()


def run_walk(chromium: str, server: tuple[str, Walk], start_path: str, tmp_path: Path) -> tuple[dict[str, Any],
                                                                                               list[str]]:
    """Run the harness from ``start_path`` until it posts its result; the result and Chromium's console lines."""
    base, walk = server
    log = tmp_path / "chromium.log"
    proc = start(chromium, f"{base}/harness.html?start={start_path}", tmp_path / "profile", log, OFFLINE)
    try:
        finished = walk.done.wait(WALK_BOUND_S)
    finally:
        console = stop(proc, log)
    reached = [page["path"] for page in walk.pages]
    assert finished, f"the walk did not finish in {WALK_BOUND_S} s; pages done: {reached}; console: {console}"
    assert walk.result is not None
    assert "error" not in walk.result, walk.result
    return walk.result, console


def nav_paths() -> list[str]:
    """URL paths of the pages in ``mkdocs.yml``'s nav (``a2c.md`` -> ``/a2c/``, ``api/index.md`` -> ``/api/``)."""
    paths = []
    for name in nav_files(mkdocs_config()["nav"]):
        stem = name.removesuffix(".md").removesuffix("index").rstrip("/")
        paths.append("/" + (stem + "/" if stem else ""))
    return paths


def test_every_page_of_the_navigation_renders_with_its_images(chromium: str, server: tuple[str, Walk],
                                                               tmp_path: Path) -> None:
    result, console = run_walk(chromium, server, "/", tmp_path)
    assert console == []
    visited = [page["path"] for page in result["pages"]]
    assert visited == nav_paths()  # every page, in the order of the nav, reached from the home page's links
    assert [url for url in result["nav"] if not url.startswith(server[0])] == []
    for page in result["pages"]:
        assert page["h1"], page
        assert page["title"].endswith("- evaltk") or page["path"] == "/", page
        assert page["text_length"] > 200, page
        assert page["foreign"] == [], page
        assert all(image["ok"] for image in page["images"]), page
    images = {image["src"]: image["width"] for page in result["pages"] for image in page["images"]}
    assert {"../a2c_learning_curve.png", "../selfplay_duel_curve.png", "../doom_basic_vs_sf.png"} <= set(images)
    assert min(images.values()) > 100, images


def test_the_checks_catch_a_broken_page(chromium: str, server: tuple[str, Walk], tmp_path: Path) -> None:
    result, console = run_walk(chromium, server, "/control/", tmp_path)
    (page,) = result["pages"]
    assert page["path"] == "/control/broken/"
    assert [image["ok"] for image in page["images"]] == [False, False]
    assert page["foreign"] == ["https://example.invalid/x.png"]
    assert any("undefinedFunction is not defined" in line for line in console), console
