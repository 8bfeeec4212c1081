"""The Hugging Face Hub settings paircheck honours, read from the environment when asked.

``HF_ENDPOINT``, ``HF_TOKEN`` (or the token file ``hf auth login`` writes), ``HF_HUB_OFFLINE``
and ``HF_HUB_CACHE`` / ``HF_HOME`` are read when called, not at import as huggingface_hub's
constants are, so they apply however paircheck is started. Shared by the Hub source and
by plain HTTP(S) reads (a URL on the Hub's own host gets the token, no other host does),
so it sits below both.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

DEFAULT_ENDPOINT = "https://huggingface.co"


def _env_true(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in ("1", "true", "yes", "on")


@dataclass(frozen=True)
class HubSettings:
    endpoint: str
    token: str | None
    offline: bool
    cache_dir: Path

    @classmethod
    def from_env(cls) -> HubSettings:
        home = os.environ.get("HF_HOME") or os.path.join(os.path.expanduser("~"), ".cache", "huggingface")
        cache = os.environ.get("HF_HUB_CACHE") or os.environ.get("HUGGINGFACE_HUB_CACHE") or os.path.join(home, "hub")
        token = os.environ.get("HF_TOKEN") or os.environ.get("HUGGING_FACE_HUB_TOKEN")
        if not token:
            token_file = Path(home) / "token"
            token = token_file.read_text().strip() if token_file.is_file() else None
        return cls(
            endpoint=(os.environ.get("HF_ENDPOINT") or DEFAULT_ENDPOINT).rstrip("/"),
            token=token or None,
            offline=_env_true("HF_HUB_OFFLINE") or _env_true("TRANSFORMERS_OFFLINE"),
            cache_dir=Path(cache),
        )

    def headers_for(self, url: str) -> dict[str, str]:
        """The Authorization header for ``url``: the token goes only to the Hub's own host."""
        if self.token and url.startswith(self.endpoint + "/"):
            return {"Authorization": f"Bearer {self.token}"}
        return {}
