"""Talk to a llama-server over HTTP: JSON requests with bounded waits and sizes, and its health.

Every failure is one :class:`~paircheck.errors.InputError` naming the URL (cannot connect,
503 while the model loads, an HTTP error with the server's own message, no answer in time,
a connection closed early, malformed JSON), so a command turns it into one line and exit 2.
``bench`` and ``probe`` both talk to the server through this module.
"""

from __future__ import annotations

import json
import os
import platform
import socket
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.client import HTTPException
from typing import Any

from paircheck.errors import InputError

MAX_RESPONSE_BYTES = 64 << 20
# One streamed token with its top probabilities is a few KiB.
MAX_EVENT_BYTES = 1 << 20


def _error_text(body: bytes) -> str:
    """The server's own error message (llama-server: {"error": {"message": ...}}), one line."""
    try:
        obj = json.loads(body)
        message = obj.get("error", {}).get("message") if isinstance(obj, dict) else None
    except (ValueError, AttributeError):
        message = None
    text = message if isinstance(message, str) else body.decode("utf-8", "replace")
    text = " ".join(text.split())
    return text[:200] + ("..." if len(text) > 200 else "")


def _opener(url: str) -> urllib.request.OpenerDirector:
    """No proxy for a server on this machine (a proxy from the environment would answer instead)."""
    host = urllib.parse.urlsplit(url).hostname or ""
    if host in ("127.0.0.1", "localhost", "::1"):
        return urllib.request.build_opener(urllib.request.ProxyHandler({}))
    return urllib.request.build_opener()


def _post(full: str, body: dict[str, Any] | None) -> urllib.request.Request:
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(full, data=data, method="GET" if body is None else "POST")
    if data is not None:
        req.add_header("Content-Type", "application/json")
    return req


@contextmanager
def _errors(full: str, timeout: float) -> Iterator[None]:
    """Turn every way an HTTP exchange with llama-server fails into one InputError line."""
    try:
        yield
    except urllib.error.HTTPError as exc:
        detail = _error_text(exc.read(64 << 10))
        if exc.code == 503:
            raise InputError(full, f"server is not ready (503, still loading the model?): {detail}") from None
        raise InputError(full, f"HTTP {exc.code}: {detail}") from None
    except urllib.error.URLError as exc:
        reason = exc.reason
        if isinstance(reason, (TimeoutError, socket.timeout)):
            raise InputError(full, f"no answer within {timeout:g} s") from None
        raise InputError(full, f"cannot connect: {getattr(reason, 'strerror', None) or reason}") from None
    except TimeoutError:
        raise InputError(full, f"no answer within {timeout:g} s") from None
    except (HTTPException, ConnectionError) as exc:
        raise InputError(full, f"connection failed mid-answer: {type(exc).__name__}: {exc}") from None


def request_json(url: str, path: str, body: dict[str, Any] | None = None, timeout: float = 30.0) -> Any:
    """GET (or POST ``body``) ``url + path`` and return the decoded JSON.

    Every failure is an InputError naming the URL: cannot connect, 503 while the
    model loads, another HTTP error with the server's message, no answer within
    ``timeout`` seconds, a connection closed early, malformed JSON.
    """
    full = url.rstrip("/") + path
    with _errors(full, timeout), _opener(full).open(_post(full, body), timeout=timeout) as resp:
        raw = resp.read(MAX_RESPONSE_BYTES + 1)
    if len(raw) > MAX_RESPONSE_BYTES:
        raise InputError(full, f"answer larger than {MAX_RESPONSE_BYTES >> 20} MiB")
    try:
        return json.loads(raw)
    except ValueError:
        raise InputError(full, f"malformed JSON in the answer: {raw[:80]!r}") from None


@contextmanager
def stream_events(
    url: str, path: str, body: dict[str, Any], timeout: float = 30.0
) -> Iterator[Iterator[dict[str, Any]]]:
    """POST ``body`` with ``"stream": true`` and yield each server-sent ``data:`` event as JSON.

    Leaving the ``with`` block closes the connection, which is how a reader that has what
    it needs stops the generation early: llama-server cancels a task whose client has gone
    (``should_stop`` in tools/server/server-context.cpp). ``timeout`` bounds each wait for
    the next event; a line longer than MAX_EVENT_BYTES is an error, not a memory cost.
    """
    full = url.rstrip("/") + path
    with _errors(full, timeout), _opener(full).open(_post(full, {**body, "stream": True}), timeout=timeout) as resp:

        def events() -> Iterator[dict[str, Any]]:
            with _errors(full, timeout):
                while True:
                    line = resp.readline(MAX_EVENT_BYTES + 1)
                    if not line:
                        return
                    if len(line) > MAX_EVENT_BYTES:
                        raise InputError(full, f"an event larger than {MAX_EVENT_BYTES >> 10} KiB")
                    if not line.startswith(b"data:"):
                        continue  # blank separators, comments and pings
                    payload = line[5:].strip()
                    if payload == b"[DONE]":
                        return
                    try:
                        event = json.loads(payload)
                    except ValueError:
                        raise InputError(full, f"malformed JSON in an event: {payload[:80]!r}") from None
                    if isinstance(event, dict) and "error" in event:
                        raise InputError(full, _error_text(payload))
                    if not isinstance(event, dict):
                        raise InputError(full, f"an event that is not a JSON object: {payload[:80]!r}")
                    yield event

        yield events()


def wait_ready(url: str, timeout: float, alive: Callable[[], str | None] | None = None) -> dict[str, Any]:
    """Poll ``/health`` until it answers 200; ``alive()`` returns an error text if the server died."""
    deadline = time.monotonic() + timeout
    last = "no answer yet"
    while True:
        if alive is not None:
            dead = alive()
            if dead:
                raise InputError(url, dead)
        try:
            health = request_json(url, "/health", timeout=5.0)
            return health if isinstance(health, dict) else {"status": health}
        except InputError as exc:
            last = exc.message
        if time.monotonic() >= deadline:
            raise InputError(url, f"not ready within {timeout:g} s: {last}")
        time.sleep(0.2)


def machine_info() -> dict[str, Any]:
    info: dict[str, Any] = {
        "system": platform.system(),
        "release": platform.release(),
        "machine": platform.machine(),
        "processor": platform.processor(),
        "cpu_count": os.cpu_count(),
        "python": platform.python_version(),
    }
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            first = fh.readline().split()
        if first[:1] == ["MemTotal:"]:
            info["memory_kib"] = int(first[1])
    except (OSError, ValueError, IndexError):
        pass
    return info
