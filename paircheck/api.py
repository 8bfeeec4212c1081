"""The library entry points: describe one model, check a pair."""

from __future__ import annotations

from paircheck._engine import engines
from paircheck._source.resolve import describe as _describe
from paircheck.errors import InputError
from paircheck.model import ModelDescription
from paircheck.report import Report
from paircheck.vocab import Override

DEFAULT_ENGINE = "llama.cpp"


def describe(spec: str, overrides: dict[str, Override] | None = None) -> ModelDescription:
    """Read one model (path, folder, repo id or URL) into its normalized description."""
    return _describe(spec, overrides)


def check_descriptions(
    target: ModelDescription,
    draft: ModelDescription,
    engine: str = DEFAULT_ENGINE,
    method: str | None = None,
) -> Report:
    chosen = engines().get(engine)
    if chosen is None:
        raise InputError("--engine", f"unknown engine {engine!r} (known: {', '.join(engines())})")
    method = method or chosen.default_method
    if method not in chosen.methods:
        raise InputError("--method", f"{engine} has no method {method!r} (known: {', '.join(chosen.methods)})")
    return chosen.evaluate(target, draft, method)


def check_pair(
    target: str,
    draft: str,
    engine: str = DEFAULT_ENGINE,
    method: str | None = None,
    overrides: dict[str, Override] | None = None,
) -> Report:
    """Check TARGET and DRAFT for one engine and speculative method."""
    return check_descriptions(describe(target, overrides), describe(draft, overrides), engine, method)
