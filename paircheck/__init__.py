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
FACE = ("DEFAULT_ENGINE", "DraftOptions", "FitOptions", "Measure", "RunPlan", "bench_compare", "bench_run",
        "bench_server", "check", "check_every_engine", "compare_drafts", "describe", "estimate", "explain",
        "fit_memory", "fit_pair", "gpus", "lint_command", "lint_exit", "lint_files", "lint_modelfile", "lint_python",
        "lint_words", "needs_draft", "pairs", "parse_override", "pick_device", "plan_run", "probe_drafts",
        "registry_choices", "rule_groups", "rules", "scan_drafts")


def __getattr__(name: str) -> Any:
    if name in FACE:
        from paircheck import api

        return getattr(api, name)
    raise AttributeError(f"module 'paircheck' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted((*globals(), *FACE))
