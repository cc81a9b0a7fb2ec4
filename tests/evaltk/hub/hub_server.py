"""A small Hugging Face Hub on 127.0.0.1: the endpoints ``huggingface_hub``'s downloads call, over real HTTP.

Serves model repos held in memory (``{repo_id: {revision_sha: {path: bytes}}}`` plus branch names)
the way the Hub answers ``snapshot_download`` / ``hf_hub_download`` (``huggingface_hub`` 2.4):

* ``GET /api/models/{repo}/revision/{rev}``: the model info, whose ``sha`` is the commit the
  revision names (``X-Error-Code: RepoNotFound`` / ``RevisionNotFound`` with a 404 otherwise);
* ``GET /api/models/{repo}/tree/{rev}?recursive=...``: the file listing (``type``, ``path``,
  ``size``, ``oid`` = the git blob sha1, and ``lfs`` {``oid`` = sha256, ``size``, ``pointerSize``}
  for LFS files);
* ``HEAD``/``GET /{repo}/resolve/{rev}/{path}``: a git file answers 200 with ``X-Repo-Commit``,
  ``ETag`` (its blob sha1) and ``Content-Length``; an LFS file (``.zip``, ``.pth``, ...) answers 302
  to the CDN's ``/lfs/{sha256}`` with ``X-Repo-Commit``,
  ``X-Linked-Etag`` (its sha256) and ``X-Linked-Size``, which the client follows for the bytes.
  The CDN is a second server on another port: the client takes the file metadata from the redirect
  itself only when it leaves the Hub's origin, as on the real Hub.

Every request is logged (method, path) so a test can check what the client asked for.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote, urlsplit

LFS_SUFFIXES = (".zip", ".pth", ".safetensors", ".cleanrl_model", ".bin", ".pt")


def git_blob_sha1(data: bytes) -> str:
    """Return the git object id of a blob holding ``data`` (what the Hub reports as a file's ``oid``)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def commit_sha(files: Mapping[str, bytes]) -> str:
    """Return a 40-hex commit id determined by the files (the server's stand-in for a git commit)."""
    h = hashlib.sha1()
    for path in sorted(files):
        h.update(path.encode() + b"\0" + git_blob_sha1(files[path]).encode())
    return h.hexdigest()


@dataclass
class Repo:
    """One model repo: commits by sha and branch/tag names pointing at them."""

    commits: dict[str, dict[str, bytes]] = field(default_factory=dict)
    refs: dict[str, str] = field(default_factory=dict)

    def push(self, files: Mapping[str, bytes], branch: str = "main") -> str:
        """Add a commit holding ``files``, point ``branch`` at it; return its sha."""
        sha = commit_sha(files)
        self.commits[sha] = dict(files)
        self.refs[branch] = sha
        return sha

    def commit(self, rev: str) -> str | None:
        """Return the sha ``rev`` names (a branch, a tag or a sha of this repo), None if none."""
        return rev if rev in self.commits else self.refs.get(rev)


class _Handler(BaseHTTPRequestHandler):
    server: HubServer.HTTPServer

    def log_message(self, format: str, *args: object) -> None:
        """Log nothing to stderr (requests go to :attr:`HubServer.log`)."""

    def do_HEAD(self) -> None:
        """Answer a HEAD (file metadata)."""
        self._answer(body=False)

    def do_GET(self) -> None:
        """Answer a GET (API or file bytes)."""
        self._answer(body=True)

    def _send(self, status: int, headers: Mapping[str, str], payload: bytes, body: bool) -> None:
        self.send_response(status)
        for key, value in headers.items():
            self.send_header(key, value)
        if "Content-Length" not in headers:
            self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        if body:
            self.wfile.write(payload)

    def _error(self, code: str, message: str, body: bool) -> None:
        payload = json.dumps({"error": message}).encode()
        self._send(404, {"X-Error-Code": code, "X-Error-Message": message, "Content-Type": "application/json"},
                   payload, body)

    def _json(self, data: object, body: bool) -> None:
        self._send(200, {"Content-Type": "application/json"}, json.dumps(data).encode(), body)

    def _answer(self, body: bool) -> None:
        hub = self.server.hub
        url = urlsplit(self.path)
        parts = [unquote(p) for p in url.path.split("/")[1:]]
        hub.log.append((self.command, url.path))
        if parts[:1] == ["lfs"] and len(parts) == 2 and parts[1] in hub.lfs:
            data = hub.lfs[parts[1]]
            self._send(200, {"Content-Type": "application/octet-stream"}, data, body)
            return
        if parts[:2] == ["api", "models"] and len(parts) >= 6 and parts[4] in ("revision", "tree"):
            self._api(f"{parts[2]}/{parts[3]}", parts[4], parts[5], body)
            return
        if len(parts) >= 5 and parts[2] == "resolve":
            self._resolve(f"{parts[0]}/{parts[1]}", parts[3], "/".join(parts[4:]), body)
            return
        self._send(404, {}, b"not found", body)

    def _lookup(self, repo_id: str, rev: str, body: bool) -> tuple[Repo, str] | None:
        repo = self.server.hub.repos.get(repo_id)
        if repo is None:
            self._error("RepoNotFound", f"Repository {repo_id} not found", body)
            return None
        sha = repo.commit(rev)
        if sha is None:
            self._error("RevisionNotFound", f"Invalid rev id: {rev}", body)
            return None
        return repo, sha

    def _api(self, repo_id: str, kind: str, rev: str, body: bool) -> None:
        found = self._lookup(repo_id, rev, body)
        if found is None:
            return
        repo, sha = found
        files = repo.commits[sha]
        if kind == "revision":
            self._json({"id": repo_id, "sha": sha, "private": False,
                        "siblings": [{"rfilename": p} for p in sorted(files)]}, body)
            return
        listing: list[dict[str, object]] = []
        folders = sorted({"/".join(p.split("/")[:i]) for p in files for i in range(1, p.count("/") + 1)})
        for folder in folders:
            listing.append({"type": "directory", "path": folder, "oid": hashlib.sha1(folder.encode()).hexdigest(),
                            "size": 0})
        for path in sorted(files):
            data = files[path]
            entry: dict[str, object] = {"type": "file", "path": path, "size": len(data), "oid": git_blob_sha1(data)}
            if path.endswith(LFS_SUFFIXES):
                entry["lfs"] = {"oid": hashlib.sha256(data).hexdigest(), "size": len(data), "pointerSize": 134}
            listing.append(entry)
        self._json(listing, body)

    def _resolve(self, repo_id: str, rev: str, path: str, body: bool) -> None:
        found = self._lookup(repo_id, rev, body)
        if found is None:
            return
        repo, sha = found
        data = repo.commits[sha].get(path)
        if data is None:
            payload = b"Entry not found"
            self._send(404, {"X-Error-Code": "EntryNotFound", "X-Repo-Commit": sha}, payload, body)
            return
        if path.endswith(LFS_SUFFIXES):
            digest = hashlib.sha256(data).hexdigest()
            self.server.hub.lfs[digest] = data
            self._send(302, {"Location": f"{self.server.hub.cdn}/lfs/{digest}", "X-Repo-Commit": sha,
                             "X-Linked-Etag": f'"{digest}"', "X-Linked-Size": str(len(data)),
                             "ETag": f'"{git_blob_sha1(data)}"'}, b"", body)
            return
        self._send(200, {"X-Repo-Commit": sha, "ETag": f'"{git_blob_sha1(data)}"',
                         "Content-Type": "application/octet-stream"}, data, body)


class HubServer:
    """The repos served and the log of requests; :meth:`serve` runs it on 127.0.0.1 (a free port)."""

    class HTTPServer(ThreadingHTTPServer):
        """A threading HTTP server that knows its :class:`HubServer`."""

        hub: HubServer
        daemon_threads = True

    def __init__(self) -> None:
        self.repos: dict[str, Repo] = {}
        self.lfs: dict[str, bytes] = {}
        self.log: list[tuple[str, str]] = []
        self.cdn = ""
        self.marker = Path("/nonexistent")
        """A file a hostile repo's pickle would create if it were run (set by the fixture that adds one)."""

    def repo(self, repo_id: str) -> Repo:
        """Return the repo ``repo_id`` (created empty on first use)."""
        return self.repos.setdefault(repo_id, Repo())

    @contextmanager
    def serve(self) -> Iterator[str]:
        """Serve the Hub and its CDN until the block ends; yields the Hub's URL (``http://127.0.0.1:PORT``)."""
        servers = [HubServer.HTTPServer(("127.0.0.1", 0), _Handler) for _ in ("hub", "cdn")]
        threads = []
        for httpd in servers:
            httpd.hub = self
            threads.append(threading.Thread(target=httpd.serve_forever, name="hub-server", daemon=True))
            threads[-1].start()
        self.cdn = f"http://127.0.0.1:{servers[1].server_address[1]}"
        try:
            yield f"http://127.0.0.1:{servers[0].server_address[1]}"
        finally:
            for httpd, thread in zip(servers, threads, strict=True):
                httpd.shutdown()
                httpd.server_close()
                thread.join()
