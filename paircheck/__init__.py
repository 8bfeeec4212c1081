"""paircheck: is this draft model usable with this target for speculative decoding?

Data flows one way: sources read a model into a ModelDescription, engine rules compare
two descriptions into a Report, and formats render the Report.

As a library, one function per command (``paircheck.api``), loaded on first use so that the
command line's start does not pay for them:

    import paircheck
    report = paircheck.check("target.gguf", "draft.gguf")
"""

from __future__ import annotations

from typing import Any

from paircheck.version import __version__ as __version__

# the public face (paircheck.api.__all__), named here so that `dir(paircheck)` and editors see it
FACE = ("DEFAULT_ENGINE", "check", "check_every_engine", "describe", "estimate", "explain", "fit_pair",
        "lint_command", "pairs", "rules", "scan_drafts")


def __getattr__(name: str) -> Any:
    if name in FACE:
        from paircheck import api

        return getattr(api, name)
    raise AttributeError(f"module 'paircheck' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted((*globals(), *FACE))
