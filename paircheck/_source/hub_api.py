"""The Hub's model API (search and model info), called as huggingface_hub calls it, within a budget.

The calls, as huggingface_hub 2.4.0 makes them (``hf_api.py``, ``utils/_pagination.py``):

* ``HfApi.list_models(author=, search=, filter=[...], sort="downloads", limit=, expand=[...])``:
  ``GET {endpoint}/api/models?author=..&search=..&filter=..&sort=downloads&limit=..&expand=..``
  (list values repeat their key); the next page is the URL of the answer's
  ``Link: <...>; rel="next"`` header, followed only on the endpoint's own host;
* ``HfApi.model_info(repo_id, expand=[...])``: ``GET {endpoint}/api/models/{repo_id}?expand=..``.

Each answer is parsed by huggingface_hub's own ``ModelInfo``, so a listing reads exactly as
HfApi would return it. The requests themselves go through ``http_client.HttpClient`` rather than
HfApi, because HfApi sends through a shared httpx client without a timeout and
``http_backoff`` retries 429 and 5xx five times, each time sleeping what the Hub's
Retry-After or RateLimit header asks plus a second (an hour if it says so) and logging a
warning per retry. Ours bounds every wait by ``PAIRCHECK_HTTP_TIMEOUT``, retries a 429 only
when the wait asked for is short (at most twice), fails at once when the host cannot be
reached, and counts every call against ``max_calls``.

What comes back is checked before anything uses it: repo ids must look like ``org/name``
and file names must be printable relative paths, since both end up in URLs and in the
download commands a person pastes into a shell.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urlencode, urlsplit

from paircheck._source.http_client import HttpClient, http_timeout
from paircheck._source.hub import MAX_API_BYTES, HubSettings, _read_limited
from paircheck.errors import InputError

if TYPE_CHECKING:
    from huggingface_hub.hf_api import ModelInfo

# What a listing asks the Hub for (``expand``): the commit, the files, access, the library,
# the tags that carry ``base_model:`` relations, popularity, and parameter counts.
EXPAND = ("sha", "siblings", "gated", "private", "library_name", "tags", "downloads", "safetensors", "gguf")
REPO_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[A-Za-z0-9_.][\w.-]*$")
_LINK_NEXT = re.compile(r'<([^>]+)>\s*;\s*rel="?next"?', re.I)


def valid_repo_id(value: object) -> bool:
    return isinstance(value, str) and len(value) <= 200 and bool(REPO_ID.match(value)) and ".." not in value


def valid_filename(value: object) -> bool:
    """A repo file name safe to put in a URL path and a shell command: printable, relative,
    no ``..`` component."""
    if not isinstance(value, str) or not value or len(value) > 500 or value.startswith("/"):
        return False
    if any(not ch.isprintable() for ch in value):
        return False
    return ".." not in value.split("/")


class CallBudgetSpent(Exception):
    """The scan's budget of API calls is spent; what was gathered so far is kept."""


@dataclass
class Listing:
    """One search's answer: the models (first pages kept when a later page fails), why it
    stopped early (``error``), and whether the call budget cut it (``cut``)."""

    models: list[ModelInfo] = field(default_factory=list)
    error: InputError | None = None
    cut: bool = False
    dropped: int = 0  # entries that were not a model paircheck can name safely


class HubApi:
    """Model search and model info on the Hub at ``settings.endpoint``, at most ``max_calls``
    calls (each page of a listing is one call)."""

    def __init__(self, settings: HubSettings, max_calls: int, on_request: Callable[[], None] | None = None) -> None:
        headers = {"Authorization": f"Bearer {settings.token}"} if settings.token else {}
        self.settings = settings
        self.max_calls = max_calls
        self.calls = 0
        self.urls: list[str] = []  # every call made, in order (the scan's "searched")
        self.client = HttpClient(settings.endpoint, headers, http_timeout(), on_request=on_request)

    def close(self) -> None:
        self.client.close()

    def list_models(
        self,
        *,
        author: str | None = None,
        search: str | None = None,
        filters: Sequence[str] = (),
        limit: int = 100,
        expand: Sequence[str] = EXPAND,
    ) -> Listing:
        """``HfApi.list_models(author=, search=, filter=, sort="downloads", limit=, expand=)``,
        page after page until ``limit`` models; a failing page ends the listing with what came."""
        params: list[tuple[str, str]] = [("filter", f) for f in filters]
        if author:
            params.append(("author", author))
        if search:
            params.append(("search", search))
        params += [("sort", "downloads"), ("limit", str(limit))] + [("expand", e) for e in expand]
        url: str | None = f"{self.settings.endpoint}/api/models?{urlencode(params)}"
        out = Listing()
        while url is not None and len(out.models) < limit:
            try:
                data, headers = self._get_json(url, "the Hub's model listing")
            except CallBudgetSpent:
                out.cut = True
                break
            except InputError as exc:
                out.error = exc
                break
            if not isinstance(data, list):
                out.error = InputError(self.settings.endpoint, "the Hub answered a listing that is not a list")
                break
            for item in data:
                info = parse_model_info(item)
                if info is None:
                    out.dropped += 1
                else:
                    out.models.append(info)
            url = self._next_page(headers.get("Link"))
        del out.models[limit:]
        return out

    def model_info(self, repo_id: str, expand: Sequence[str] = EXPAND) -> ModelInfo:
        """``HfApi.model_info(repo_id, expand=[...])``. Raises InputError (or CallBudgetSpent)."""
        if not valid_repo_id(repo_id):
            raise InputError(repo_id, "not a Hugging Face repo id")
        query = urlencode([("expand", e) for e in expand])
        data, _ = self._get_json(f"{self.settings.endpoint}/api/models/{quote(repo_id)}?{query}",
                                 f"the Hub's model info of {repo_id}", repo_id)
        info = parse_model_info(data)
        if info is None or info.id != repo_id:
            raise InputError(repo_id, f"the Hub at {self.settings.endpoint} answered a model info that is not one")
        return info

    def _get_json(self, url: str, what: str, repo_id: str | None = None) -> tuple[Any, Any]:
        if self.calls >= self.max_calls:
            raise CallBudgetSpent()
        self.calls += 1
        self.urls.append(url)
        resp = self.client.get(url, {"Accept": "application/json"})
        if resp.status != 200:
            self.client._drain(resp.body)
            raise self._status_error(resp.status, resp.headers.get("X-Error-Code", ""), repo_id)
        raw = _read_limited(self.client, resp, MAX_API_BYTES, what)
        try:
            return json.loads(raw), resp.headers
        except ValueError:
            raise InputError(
                self.settings.endpoint,
                f"the Hub answered {what} with something that is not JSON (a proxy or captive portal page? "
                "check HF_ENDPOINT)",
            ) from None

    def _status_error(self, status: int, code: str, repo_id: str | None) -> InputError:
        where = repo_id or self.settings.endpoint
        if repo_id and (status == 404 or code == "RepoNotFound"):
            return InputError(where, "no such repository on the Hub (or it is private: log in or set HF_TOKEN)")
        if status in (401, 403):
            hint = ("the token was refused (HF_TOKEN or the saved login is invalid or expired: `hf auth login` "
                    "again, or unset HF_TOKEN)" if self.settings.token
                    else "the Hub wants a login (`hf auth login` or HF_TOKEN)")
            return InputError(where, f"access denied (HTTP {status}): {hint}")
        return InputError(where, f"the Hub at {self.settings.endpoint} answered HTTP {status}")

    def _next_page(self, link: str | None) -> str | None:
        """The ``rel="next"`` URL, only on the endpoint's own scheme and host (the token is sent there)."""
        match = _LINK_NEXT.search(link or "")
        if match is None:
            return None
        url = match.group(1)
        here, there = urlsplit(self.settings.endpoint), urlsplit(url)
        return url if (there.scheme, there.netloc) == (here.scheme, here.netloc) else None


def parse_model_info(item: object) -> ModelInfo | None:
    """One model as huggingface_hub's ``ModelInfo`` parses it; None when the entry is not a
    model paircheck can name safely (no valid repo id, malformed fields). Files whose names
    are not safe are left out of ``siblings``."""
    from huggingface_hub.hf_api import ModelInfo

    if not isinstance(item, dict) or not valid_repo_id(item.get("id")):
        return None
    item = dict(item)
    siblings = item.get("siblings")
    if isinstance(siblings, list):
        item["siblings"] = [s for s in siblings if isinstance(s, dict) and valid_filename(s.get("rfilename"))]
    elif siblings is not None:
        return None
    try:
        return ModelInfo(**item)
    except (KeyError, TypeError, ValueError, AttributeError):
        return None
