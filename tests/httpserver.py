"""A real HTTP server on 127.0.0.1 for the source tests: files with Range support, the
Hugging Face Hub endpoints huggingface_hub calls, and faults on demand.

It counts the body bytes it actually writes to the socket, so a test can assert that
only the metadata of a GGUF crossed the wire.

Hub layout served (``HF_ENDPOINT`` pointed at ``server.url``), in the shapes huggingface_hub
parses (``HfApi.list_models``, ``model_info``, ``hf_hub_download``; checked by
tests/scan/test_hub_standin.py):

* ``GET /api/models?author=&search=&filter=...&sort=&limit=&expand=...&cursor=``: the model
  listing: ``author`` is the namespace, ``search`` a case-insensitive substring of the id,
  every ``filter`` a tag the model must carry (the library and ``base_model:...`` relations
  are tags, as on the Hub), sorted by downloads; at most ``min(limit, server.page_size)``
  per page, the next page in a ``Link: <...>; rel="next"`` header; ``expand`` picks the
  properties (``_id`` and ``id`` always), else the Hub's default ones. Private repos are
  listed only for their token;
* ``GET /api/models/{org}/{name}/tree/{rev}[/{path}]``: the file list (JSON);
* ``GET /api/models/{org}/{name}[/revision/{rev}]``: model info with ``siblings``
  (``expand=`` as above; ``blobs=true`` adds ``size``, ``blobId`` and ``lfs`` to each file);
  a gated repo's info is public, as on the Hub;
* ``HEAD|GET /{org}/{name}/resolve/{rev}/{file}``: the file, with ``X-Repo-Commit``,
  ``ETag`` and Range support; a gated repo's files need its token (401 without a token,
  403 with another one).

Faults on the API paths (``/api/models`` for every listing page) include ``truncate`` and
``stallbody`` too: the JSON answer is served as a file.

Faults are set per URL path with ``server.fault(path, kind)``: ``norange`` (answer 200
with the whole body), ``416``, ``truncate`` (promise more bytes than sent, then close),
``stall`` (never answer within the client's timeout; logged with status 0), ``401``, ``403``, ``404``,
``loop`` (redirect to itself via a second URL), ``html`` (an HTML page instead),
``badrange`` (206 with bytes from another offset than asked), ``stallbody`` (send half
the body, then stall), ``trickle`` (one small piece every ``trickle_seconds``, each
within any sane timeout), ``shortlen`` (a Content-Length smaller than the body sent:
garbage left on the kept-alive connection), ``longlen`` (a Content-Length larger than
the body, connection kept open: the client waits for bytes that never come),
``CODExN`` (answer HTTP CODE to the first N requests, then serve normally; a 429 carries
``Retry-After: server.retry_after``), ``CODE`` for any other status (always),
``redirect:URL`` (302 to URL, for example on another server) and ``afterN:KIND`` (the first N
requests served normally, then KIND, for example a listing whose second page is cut).
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

COMMIT = "0123456789abcdef0123456789abcdef01234567"
_RANGE = re.compile(r"bytes=(\d+)-(\d*)$")


@dataclass
class Repo:
    files: dict[str, Path | bytes]
    gated_token: str | None = None  # when set, a request needs "Bearer <token>"
    # What the Hub's listing and model info say besides the files (tags, gated, library_name,
    # downloads, safetensors, gguf, cardData, private, ...), in the Hub's JSON spelling.
    info: dict[str, Any] = field(default_factory=dict)
    commit: str = ""  # the repo's commit (COMMIT when not given)
    public_info: bool = False  # a gated repo: the model info is public, the files are not


@dataclass
class Counters:
    requests: int = 0
    body_bytes: int = 0
    by_path: dict[str, int] = field(default_factory=dict)
    log: list[tuple[str, str, str | None, int]] = field(default_factory=list)  # method, path, Range, status
    auth: list[str | None] = field(default_factory=list)  # the Authorization header of each request


class TestServer:
    """Start with ``with TestServer() as server:``; ``server.url`` is the base URL."""

    __test__ = False  # not a pytest test class

    def __init__(self) -> None:
        self.files: dict[str, Path | bytes] = {}
        self.repos: dict[str, Repo] = {}
        self.faults: dict[str, str] = {}
        self.counters = Counters()
        self.lock = threading.Lock()
        self.stall_seconds = 5.0
        self.trickle_seconds = 0.2
        self.retry_after = "1"
        self.fault_hits: dict[str, int] = {}
        self.page_size = 1000  # the Hub's own cap on one listing page
        handler = _make_handler(self)
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> TestServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def add_file(self, path: str, content: Path | bytes) -> str:
        self.files["/" + path.lstrip("/")] = content
        return f"{self.url}/{path.lstrip('/')}"

    def add_repo(
        self,
        repo_id: str,
        files: dict[str, Path | bytes],
        gated_token: str | None = None,
        info: dict[str, Any] | None = None,
        commit: str | None = None,
    ) -> None:
        info = dict(info or {})
        gated = info.get("gated") not in (None, False)
        self.repos[repo_id] = Repo(dict(files), gated_token, info, commit or COMMIT, public_info=gated)

    def fault(self, path: str, kind: str) -> None:
        self.faults["/" + path.lstrip("/")] = kind

    def reset_counters(self) -> None:
        with self.lock:
            self.counters = Counters()


def _size(content: Path | bytes) -> int:
    return len(content) if isinstance(content, bytes) else content.stat().st_size


def _read(content: Path | bytes, start: int, length: int) -> bytes:
    if isinstance(content, bytes):
        return content[start : start + length]
    with open(content, "rb") as handle:
        handle.seek(start)
        return handle.read(length)


def _make_handler(server: TestServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as real servers

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_HEAD(self) -> None:
            self._handle(head=True)

        def do_GET(self) -> None:
            self._handle(head=False)

        # -- plumbing
        def _status(
            self, code: int, body: bytes = b"", headers: dict[str, str] | None = None, head: bool = False
        ) -> None:
            self._record(code)
            self.send_response(code)
            for key, value in (headers or {}).items():
                self.send_header(key, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if not head and body:
                self._write(body)

        def _record(self, code: int) -> None:
            path = urlsplit(self.path).path
            with server.lock:
                server.counters.requests += 1
                server.counters.log.append((self.command, path, self.headers.get("Range"), code))
                server.counters.auth.append(self.headers.get("Authorization"))

        def _write(self, data: bytes) -> bool:
            path = urlsplit(self.path).path
            for i in range(0, len(data), 64 << 10):
                piece = data[i : i + (64 << 10)]
                try:
                    self.wfile.write(piece)
                    self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError, OSError):
                    return False
                with server.lock:
                    server.counters.body_bytes += len(piece)
                    server.counters.by_path[path] = server.counters.by_path.get(path, 0) + len(piece)
            return True

        def _handle(self, head: bool) -> None:
            path = unquote(urlsplit(self.path).path)
            fault = server.faults.get(path)
            if fault and (m := re.fullmatch(r"after(\d+):(.+)", fault)):
                # The first N requests are answered normally (a listing's first pages), then the fault.
                with server.lock:
                    hits = server.fault_hits[path] = server.fault_hits.get(path, 0) + 1
                fault = m[2] if hits > int(m[1]) else None
            if fault == "stall":
                self._record(0)  # received, never answered (status 0): the client counts it too
                time.sleep(server.stall_seconds)
                self.close_connection = True
                return
            if fault and (m := re.fullmatch(r"(\d{3})x(\d+)", fault)):
                with server.lock:
                    hits = server.fault_hits[path] = server.fault_hits.get(path, 0) + 1
                if hits <= int(m[2]):
                    extra = {"Retry-After": server.retry_after} if m[1] == "429" else {}
                    self._status(int(m[1]), b"try again", extra, head)
                    return
                fault = None
            if fault and fault.startswith("redirect:"):
                self._status(302, b"", {"Location": fault[len("redirect:") :]}, head)
                return
            if fault and re.fullmatch(r"\d{3}", fault) and fault != "416":
                code = int(fault)
                extra = {"Retry-After": server.retry_after} if code == 429 else {}
                self._status(code, b'{"error": "denied"}', {"Content-Type": "application/json", **extra}, head)
                return
            if fault == "loop":
                target = path + "-again" if not path.endswith("-again") else path[: -len("-again")]
                server.faults.setdefault(target, "loop")
                self._status(302, b"", {"Location": target}, head)
                return
            if fault == "html":
                page = b"<!DOCTYPE html><html><body>Sign in</body></html>"
                self._status(200, page, {"Content-Type": "text/html"}, head)
                return
            if path in server.files:
                self._serve(server.files[path], fault, head, {})
                return
            if path == "/api/models":
                self._listing(fault, head)
                return
            if path.startswith("/api/models/"):
                self._api(path[len("/api/models/") :], head, fault)
                return
            match = re.match(r"^/(?P<repo>[^/]+/[^/]+)/resolve/(?P<rev>[^/]+)/(?P<file>.+)$", path)
            if match and match["repo"] in server.repos:
                repo = server.repos[match["repo"]]
                if not self._authorized(repo, head):
                    return
                content = repo.files.get(match["file"])
                if content is None:
                    self._status(404, b"Entry not found", {"X-Error-Code": "EntryNotFound"}, head)
                    return
                etag = hashlib.sha1(match["file"].encode() + str(_size(content)).encode()).hexdigest()
                extra = {"X-Repo-Commit": repo.commit, "ETag": f'"{etag}"'}
                self._serve(content, fault, head, extra)
                return
            self._status(404, b"not found", {"X-Error-Code": "RepoNotFound"}, head)

        def _authorized(self, repo: Repo, head: bool) -> bool:
            if repo.gated_token is None:
                return True
            sent = self.headers.get("Authorization")
            if sent == f"Bearer {repo.gated_token}":
                return True
            # As the Hub: 401 without a token, 403 with a token that has not been granted access.
            code = 403 if sent else 401
            self._status(code, b'{"error": "Access to this repo is restricted"}', {"X-Error-Code": "GatedRepo"}, head)
            return False

        def _visible(self, repo: Repo) -> bool:
            return not repo.info.get("private") or self.headers.get("Authorization") == f"Bearer {repo.gated_token}"

        def _json(self, body: Any, fault: str | None, head: bool, headers: dict[str, str] | None = None) -> None:
            # Served as a file, so the body faults (truncate, stallbody, trickle) apply to API answers too.
            self._serve(json.dumps(body).encode(), fault, head, {"Content-Type": "application/json", **(headers or {})})

        def _model(self, repo_id: str, repo: Repo, expand: list[str] | None, blobs: bool = False) -> dict[str, Any]:
            """One model as the Hub's API spells it; ``expand``: only those properties."""
            siblings = []
            for name, content in sorted(repo.files.items()):
                entry: dict[str, Any] = {"rfilename": name}
                if blobs:
                    size = _size(content)
                    entry.update(size=size, blobId=hashlib.sha1(name.encode()).hexdigest())
                    if size > 10 << 20:
                        entry["lfs"] = {"size": size, "sha256": hashlib.sha256(name.encode()).hexdigest(),
                                        "pointerSize": 135}
                siblings.append(entry)
            full: dict[str, Any] = {
                "_id": hashlib.sha1(repo_id.encode()).hexdigest()[:24],
                "id": repo_id,
                "modelId": repo_id,
                "author": repo_id.split("/")[0],
                "sha": repo.commit,
                "private": False,
                "gated": False,
                "disabled": False,
                "downloads": 0,
                "likes": 0,
                "tags": [],
                "library_name": None,
                "createdAt": "2024-09-19T00:00:00.000Z",
                "lastModified": "2024-09-25T00:00:00.000Z",
                "siblings": siblings,
                **repo.info,
            }
            if expand:
                # Only the properties asked for, and only those the model has (as the Hub).
                return {"_id": full["_id"], "id": repo_id, **{k: full[k] for k in expand if full.get(k) is not None}}
            if blobs:
                return {**full, "siblings": siblings}
            return full

        def _listing(self, fault: str | None, head: bool) -> None:
            from urllib.parse import parse_qs, urlencode

            query = parse_qs(urlsplit(self.path).query)
            one = {k: v[-1] for k, v in query.items()}
            filters = query.get("filter", [])
            expand = query.get("expand", [])
            limit = int(one.get("limit", "1000"))
            start = int(one.get("cursor", "0"))
            found = []
            for repo_id, repo in server.repos.items():
                model = self._model(repo_id, repo, None)
                tags = set(model["tags"]) | ({model["library_name"]} if model["library_name"] else set())
                if "author" in one and repo_id.split("/")[0].lower() != one["author"].lower():
                    continue
                if "search" in one and one["search"].lower() not in repo_id.lower():
                    continue
                if not all(f in tags for f in filters) or not self._visible(repo):
                    continue
                found.append((model, repo_id, repo))
            if one.get("sort") == "downloads":
                found.sort(key=lambda item: (-int(item[0]["downloads"] or 0), item[1]))
            page = found[start : start + min(limit, server.page_size)]
            body = [self._model(repo_id, repo, expand or None) for _, repo_id, repo in page]
            headers = {}
            if start + len(page) < len(found) and len(page) == min(limit, server.page_size):
                rest = [(k, v) for k, vs in query.items() if k != "cursor" for v in vs]
                link = f"{server.url}/api/models?{urlencode(rest + [('cursor', str(start + len(page)))])}"
                headers["Link"] = f'<{link}>; rel="next"'
            self._json(body, fault, head, headers)

        def _api(self, rest: str, head: bool, fault: str | None = None) -> None:
            from urllib.parse import parse_qs

            parts = rest.split("/")
            repo_id = "/".join(parts[:2])
            repo = server.repos.get(repo_id)
            if repo is None or not self._visible(repo):
                self._status(404, b'{"error": "Repository not found"}', {"X-Error-Code": "RepoNotFound"}, head)
                return
            if not repo.public_info and not self._authorized(repo, head):
                return
            entries = [
                {"type": "file", "path": name, "size": _size(content), "oid": hashlib.sha1(name.encode()).hexdigest()}
                for name, content in sorted(repo.files.items())
            ]
            if len(parts) >= 4 and parts[2] == "tree":
                prefix = "/".join(parts[4:])
                self._json([e for e in entries if e["path"].startswith(prefix)], fault, head)
                return
            query = parse_qs(urlsplit(self.path).query)
            blobs = query.get("blobs", [""])[-1].lower() == "true"
            model = self._model(repo_id, repo, query.get("expand"), blobs)
            if not query.get("expand"):
                # Sizes as before for the callers that always got them (paircheck asks blobs=true).
                model["siblings"] = [{"rfilename": e["path"], "size": e["size"], **({k: v for k, v in s.items()
                                      if k != "rfilename"})} for e, s in zip(entries, model["siblings"], strict=True)]
            self._json(model, fault, head)

        def _serve(self, content: Path | bytes, fault: str | None, head: bool, extra: dict[str, str]) -> None:
            size = _size(content)
            wanted = self.headers.get("Range")
            match = _RANGE.match(wanted or "")
            if fault == "416" or (match and int(match[1]) >= size and size > 0) or (match and size == 0):
                self._status(416, b"", {"Content-Range": f"bytes */{size}", **extra}, head)
                return
            if match and fault not in ("norange", "norange-shortlen", "norange-longlen"):
                start = int(match[1])
                if fault == "badrange":
                    start = max(0, start - 100) if start else 100
                end = min(int(match[2]) if match[2] else size - 1, size - 1)
                length = end - start + 1
                headers = {"Content-Range": f"bytes {start}-{end}/{size}", "Accept-Ranges": "bytes", **extra}
                code = 206
            else:
                start, length, code = 0, size, 200
                headers = {"Accept-Ranges": "none" if fault and fault.startswith("norange") else "bytes", **extra}
            self._record(code)
            self.send_response(code)
            for key, value in headers.items():
                self.send_header(key, value)
            lied = {"shortlen": max(0, length - 1000), "norange-shortlen": max(0, length - 1000),
                    "longlen": length + 1000, "norange-longlen": length + 1000}.get(fault or "", length)
            self.send_header("Content-Length", str(lied))
            self.end_headers()
            if head:
                return
            if fault == "stallbody":
                self._write(_read(content, start, max(1, length // 2)))
                time.sleep(server.stall_seconds)
                self.close_connection = True
                return
            if fault == "trickle":
                pos = start
                while pos < start + length:
                    if not self._write(_read(content, pos, 64)):
                        break
                    pos += 64
                    time.sleep(server.trickle_seconds)
                self.close_connection = True
                return
            if fault in ("longlen", "norange-longlen"):
                self._write(_read(content, start, length))
                time.sleep(server.stall_seconds)
                self.close_connection = True
                return
            if fault == "truncate":
                self._write(_read(content, start, max(0, length // 2)))
                self.close_connection = True
                return
            # Stream in pieces so a client that stops reading stops the transfer.
            pos = start
            while pos < start + length:
                piece = _read(content, pos, min(1 << 20, start + length - pos))
                if not self._write(piece):
                    self.close_connection = True
                    return
                pos += len(piece)

    return Handler


class ForwardProxy:
    """A plain-HTTP forward proxy on 127.0.0.1 (absolute-form GET), counting what it relays."""

    __test__ = False

    def __init__(self) -> None:
        import http.client

        self.seen: list[str] = []
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                proxy.seen.append(self.path)
                parts = urlsplit(self.path)
                upstream = http.client.HTTPConnection(parts.netloc, timeout=10)
                headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "proxy-connection")}
                upstream.request("GET", parts.path + (f"?{parts.query}" if parts.query else ""), headers=headers)
                resp = upstream.getresponse()
                body = resp.read()
                self.send_response(resp.status)
                for key, value in resp.getheaders():
                    if key.lower() not in ("content-length", "connection", "transfer-encoding"):
                        self.send_header(key, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
                upstream.close()

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> ForwardProxy:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
