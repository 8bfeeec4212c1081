"""The HTTP client every remote read uses (a GGUF's ranges, safetensors headers, the Hub's
API): the standard library only, so that every wait is ours to bound:

* each wait (name resolution, connect, answer, each read of the body) is bounded by
  ``PAIRCHECK_HTTP_TIMEOUT`` seconds (default 20), and the whole read of one model by
  ``DEADLINE_FACTOR`` times that, so a server that trickles bytes cannot hold a run;
* name resolution and connection failures fail at once (retrying cannot fix them);
  429 is retried when its Retry-After (or the Hub's RateLimit reset) is short,
  500/502/503/504 at most twice with a short backoff; nothing is printed while retrying;
* redirects are followed by hand (at most 10, loops detected, the Authorization header
  dropped when the host changes);
* every failure becomes one ``InputError`` line.
"""

from __future__ import annotations

import email.utils
import http.client
import os
import socket
import ssl
import threading
import time
import urllib.request
from base64 import b64encode
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urljoin, urlsplit

from paircheck.errors import InputError

DEFAULT_TIMEOUT = 20.0
MAX_REDIRECTS = 10
# The whole remote read of one model may take this many PAIRCHECK_HTTP_TIMEOUTs: a 20 MB
# metadata on a 1 MB/s link fits in the default 200 s, a trickling server does not.
DEADLINE_FACTOR = 10
# Statuses that a retry can fix, how often, and the longest Retry-After waited for.
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
MAX_RETRIES = 2
MAX_RETRY_AFTER = 10.0
USER_AGENT = "paircheck (metadata-only GGUF reader)"


def http_timeout() -> float:
    raw = os.environ.get("PAIRCHECK_HTTP_TIMEOUT")
    if not raw:
        return DEFAULT_TIMEOUT
    try:
        value = float(raw)
    except ValueError:
        raise InputError("PAIRCHECK_HTTP_TIMEOUT", f"expected a number of seconds, got {raw!r}") from None
    return value if value > 0 else DEFAULT_TIMEOUT


@dataclass
class FetchStats:
    """What a remote read cost; tests and --verbose output read it."""

    requests: int = 0
    bytes_received: int = 0
    ranged: bool = True  # False when the server ignored Range (answered 200)


@dataclass
class _Response:
    status: int
    headers: http.client.HTTPMessage
    body: http.client.HTTPResponse
    conn: http.client.HTTPConnection
    url: str


@dataclass
class HttpClient:
    """GET with bounded waits, bounded retries and hand-followed redirects, one keep-alive
    connection per host."""

    location: str  # what the user typed, for error messages
    headers: dict[str, str] = field(default_factory=dict)
    timeout: float = DEFAULT_TIMEOUT
    stats: FetchStats = field(default_factory=FetchStats)
    deadline: float | None = None  # absolute time.monotonic(); default DEADLINE_FACTOR * timeout from now
    # Called before each request is sent (ReadOptions.on_request): counts, and may stop, a scan.
    on_request: Callable[[], None] | None = None
    _conns: dict[tuple[str, str], http.client.HTTPConnection] = field(default_factory=dict)
    # Plain-http hosts reached through a proxy, with the headers for that proxy.
    _via_proxy: dict[tuple[str, str], dict[str, str]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.deadline is None:
            self.deadline = time.monotonic() + DEADLINE_FACTOR * self.timeout

    def close(self) -> None:
        for conn in self._conns.values():
            conn.close()
        self._conns.clear()

    def wait_budget(self) -> float:
        """How long the next wait may last: the per-wait timeout, cut to the deadline."""
        assert self.deadline is not None
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise InputError(
                self.location,
                f"gave up after {DEADLINE_FACTOR * self.timeout:g} s: the server is too slow "
                f"(PAIRCHECK_HTTP_TIMEOUT={self.timeout:g} s per wait, {DEADLINE_FACTOR}x that in all)",
            )
        return min(self.timeout, left)

    def _resolve(self, host: str, port: int) -> None:
        """Resolve ``host`` within the wait budget (getaddrinfo itself has no timeout), so a
        machine without network or DNS fails in seconds with one clear line."""
        budget = self.wait_budget()
        outcome: list[BaseException | None] = []

        def work() -> None:
            try:
                socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
                outcome.append(None)
            except OSError as exc:
                outcome.append(exc)

        thread = threading.Thread(target=work, daemon=True)
        thread.start()
        thread.join(budget)
        if not outcome:
            raise InputError(self.location, f"cannot resolve host {host} within {budget:g} s (no network or DNS?)")
        exc = outcome[0]
        if exc is not None:
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            raise InputError(self.location, f"cannot resolve host {host}: {reason} (no network, or a mistyped host?)")

    def _conn(self, scheme: str, netloc: str, fresh: bool = False) -> http.client.HTTPConnection:
        key = (scheme, netloc)
        conn = self._conns.get(key)
        if conn is not None and fresh:
            conn.close()
            conn = None
        if conn is None:
            budget = self.wait_budget()
            if scheme not in ("http", "https"):
                raise InputError(self.location, f"unsupported URL scheme {scheme!r}")
            proxy = _proxy_for(scheme, netloc)
            if scheme == "https":
                ctx = ssl.create_default_context()
                if proxy is not None:  # a CONNECT tunnel through the proxy, TLS to the host
                    conn = http.client.HTTPSConnection(proxy[0], timeout=budget, context=ctx)
                    conn.set_tunnel(netloc, headers=proxy[1])
                else:
                    conn = http.client.HTTPSConnection(netloc, timeout=budget, context=ctx)
            elif proxy is not None:  # plain http: absolute URLs sent to the proxy
                conn = http.client.HTTPConnection(proxy[0], timeout=budget)
                self._via_proxy[key] = proxy[1]
            else:
                conn = http.client.HTTPConnection(netloc, timeout=budget)
            self._resolve(conn.host, conn.port)
            self._conns[key] = conn
        return conn

    def get(self, url: str, extra: dict[str, str] | None = None, method: str = "GET") -> _Response:
        """The final answer to ``url`` after redirects and retries. Raises InputError for
        what cannot be fixed by retrying (and for retryable statuses once retries are spent)."""
        seen: set[str] = set()
        headers = {"User-Agent": USER_AGENT, "Accept-Encoding": "identity", **self.headers, **(extra or {})}
        origin = urlsplit(url).netloc
        for _ in range(MAX_REDIRECTS + 1):
            if url in seen:
                raise InputError(self.location, f"redirect loop at {url}")
            seen.add(url)
            parts = urlsplit(url)
            if parts.netloc != origin:
                # Never send the user's token to another host (a CDN, a mirror).
                headers.pop("Authorization", None)
            path = parts.path or "/"
            if parts.query:
                path += "?" + parts.query
            resp = self._request_with_retries(parts.scheme, parts.netloc, method, path, headers)
            if resp.status in (301, 302, 303, 307, 308):
                target = resp.getheader("Location")
                self._drain(resp)
                if not target:
                    raise InputError(self.location, f"HTTP {resp.status} redirect without a Location")
                url = urljoin(url, target)
                continue
            return _Response(resp.status, resp.msg, resp, self._conns[(parts.scheme, parts.netloc)], url)
        raise InputError(self.location, f"more than {MAX_REDIRECTS} redirects (last: {url})")

    def _drain(self, resp: http.client.HTTPResponse) -> None:
        """Read a small answer we do not use, so the connection can be reused."""
        try:
            if resp.length is not None and resp.length > (1 << 20):
                resp.close()
            else:
                resp.read()
        except (http.client.HTTPException, OSError):
            resp.close()

    def _request_with_retries(
        self, scheme: str, netloc: str, method: str, path: str, headers: dict[str, str]
    ) -> http.client.HTTPResponse:
        for attempt in range(MAX_RETRIES + 1):
            resp = self._request(scheme, netloc, method, path, headers)
            if resp.status not in RETRY_STATUSES:
                return resp
            delay = _retry_delay(resp, attempt)
            self._drain(resp)
            assert self.deadline is not None
            if delay is None or attempt == MAX_RETRIES or time.monotonic() + delay >= self.deadline:
                raise _retry_error(self.location, resp, attempt + 1)
            time.sleep(delay)
        raise AssertionError("unreachable")

    def _request(
        self, scheme: str, netloc: str, method: str, path: str, headers: dict[str, str]
    ) -> http.client.HTTPResponse:
        for attempt in (0, 1):
            conn = self._conn(scheme, netloc, fresh=attempt > 0)
            target, sent = path, headers
            if (scheme, netloc) in self._via_proxy:
                target, sent = f"{scheme}://{netloc}{path}", {**headers, **self._via_proxy[(scheme, netloc)]}
            if self.on_request is not None:
                self.on_request()
            try:
                conn.timeout = self.wait_budget()
                if conn.sock is not None:
                    conn.sock.settimeout(conn.timeout)
                conn.request(method, target, headers=sent)
                self.stats.requests += 1
                return conn.getresponse()
            except TimeoutError:
                wait = f"{conn.timeout:g}"
                raise InputError(self.location, f"no answer from {netloc} within {wait} s (timeout)") from None
            except ConnectionRefusedError:
                raise InputError(self.location, f"cannot connect to {netloc}: connection refused") from None
            except ssl.SSLError as exc:
                raise InputError(self.location, f"TLS error with {netloc}: {exc.reason or exc}") from None
            except (http.client.HTTPException, BrokenPipeError, ConnectionResetError) as exc:
                # A kept-alive connection the server closed meanwhile, or left garbage on
                # (a body longer than its Content-Length): retry once on a fresh one.
                if attempt:
                    closed = isinstance(exc, (ConnectionError, http.client.RemoteDisconnected))
                    what = "closed the connection" if closed else f"sent a malformed answer ({type(exc).__name__})"
                    raise InputError(self.location, f"the server at {netloc} {what}") from None
            except OSError as exc:
                raise InputError(self.location, f"cannot connect to {netloc}: {exc.strerror or exc}") from None
        raise AssertionError("unreachable")


def _proxy_for(scheme: str, netloc: str) -> tuple[str, dict[str, str]] | None:
    """The proxy (``host:port``, headers for it) that ``http(s)_proxy``/``no_proxy`` name
    for this host, as urllib and huggingface_hub honour them; None for a direct connection."""
    host = urlsplit(f"//{netloc}").hostname or netloc
    if urllib.request.proxy_bypass(host):
        return None
    url = urllib.request.getproxies().get(scheme)
    if not url:
        return None
    parts = urlsplit(url if "://" in url else f"http://{url}")
    if not parts.hostname:
        return None
    headers = {}
    if parts.username:
        token = b64encode(f"{parts.username}:{parts.password or ''}".encode()).decode()
        headers["Proxy-Authorization"] = f"Basic {token}"
    return f"{parts.hostname}:{parts.port or 80}", headers


def _retry_after(resp: http.client.HTTPResponse) -> float | None:
    value = (resp.getheader("Retry-After") or "").strip()
    if not value:
        return _ratelimit_reset(resp)
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _ratelimit_reset(resp: http.client.HTTPResponse) -> float | None:
    """Seconds until the window resets, from the Hub's ``RateLimit: "api";r=0;t=55`` header
    (IETF draft ratelimit-headers), parsed by huggingface_hub as its own retries do; None
    without one (or with an older huggingface_hub that has no parser)."""
    if resp.status != 429 or not resp.getheader("RateLimit"):
        return None
    try:
        from huggingface_hub.utils import parse_ratelimit_headers
    except ImportError:
        return None
    info = parse_ratelimit_headers(dict(resp.getheaders()))
    return float(info.reset_in_seconds) if info is not None and info.remaining == 0 else None


def _retry_delay(resp: http.client.HTTPResponse, attempt: int) -> float | None:
    """Seconds to wait before retrying, or None when waiting is not worth it."""
    if resp.status == 429:
        after = _retry_after(resp)
        if after is None:
            return 1.0
        return after if after <= MAX_RETRY_AFTER else None
    return 0.5 * (2**attempt)


def _retry_error(location: str, resp: http.client.HTTPResponse, attempts: int) -> InputError:
    tries = f" ({attempts} attempts)" if attempts > 1 else ""
    if resp.status == 429:
        after = _retry_after(resp)
        wait = f"; it asks to wait {after:.0f} s" if after is not None else ""
        return InputError(location, f"rate limited by the server (HTTP 429){wait}{tries}: try again later")
    status = f"HTTP {resp.status} {resp.reason}".rstrip()
    return InputError(location, f"{status}{tries}: the server failed; try again later")


def body_pieces(client: Any, resp: Any, want: int) -> Iterator[bytes]:
    """Up to ``want`` bytes of an answer's body, one piece at a time.

    read1 takes one recv at a time, so the overall deadline is checked between pieces even
    when a server trickles (read(n) would wait for all n bytes). A body that ends before its
    Content-Length raises ``http.client.IncompleteRead``; the caller words the error.
    """
    have = 0
    while have < want:
        sock = resp.conn.sock
        if sock is not None:
            sock.settimeout(client.wait_budget())
        else:
            client.wait_budget()
        piece = resp.body.read1(min(want - have, 1 << 20))
        if not piece:
            if resp.body.length:  # fewer bytes than the Content-Length promised
                raise http.client.IncompleteRead(b"", resp.body.length)
            return
        have += len(piece)
        yield piece


def status_error(location: str, status: int, reason: str, hub: bool = False) -> InputError:
    if status in (401, 403):
        hint = (
            "the repository is gated or private: accept its terms on the Hub, then log in "
            "(`hf auth login`) or set HF_TOKEN"
            if hub
            else "the server wants credentials (for a Hugging Face URL: log in with `hf auth login` or set HF_TOKEN)"
        )
        return InputError(location, f"access denied (HTTP {status}): {hint}")
    if status == 404:
        return InputError(location, "not found (HTTP 404)")
    if status == 416:
        return InputError(
            location,
            "the server refused the byte range (HTTP 416): the file is shorter than its header says (truncated?)",
        )
    return InputError(location, f"HTTP {status} {reason}".rstrip())
