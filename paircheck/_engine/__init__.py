"""Engines: whose rule decides whether a pair works. One module per engine."""

from __future__ import annotations

import importlib

from paircheck._engine.interface import Engine
from paircheck.constants import canonical_method

# Every engine by its --engine name, llama.cpp first (the default): its module and the
# Engine there (an object, or a class to instantiate). Imported when asked for, so a check
# for one engine loads that engine's rules only.
ENGINES: dict[str, tuple[str, str]] = {
    "llama.cpp": ("paircheck._engine.llamacpp", "LlamaCppEngine"),
    "lmstudio": ("paircheck._engine.lmstudio", "ENGINE_OBJ"),
    "vllm": ("paircheck._engine.vllm", "ENGINE_OBJ"),
    "transformers": ("paircheck._engine.transformers", "ENGINE_OBJ"),
    "sglang": ("paircheck._engine.sglang", "ENGINE_OBJ"),
    "koboldcpp": ("paircheck._engine.koboldcpp", "ENGINE_OBJ"),
    "ollama": ("paircheck._engine.ollama", "ENGINE_OBJ"),
    "tensorrt-llm": ("paircheck._engine.tensorrt_llm", "ENGINE_OBJ"),
}


def engine_named(name: str) -> Engine:
    """The engine whose --engine name is ``name`` (KeyError for an unknown one)."""
    module, attr = ENGINES[name]
    found = getattr(importlib.import_module(module), attr)
    engine: Engine = found() if isinstance(found, type) else found
    return engine


def engines() -> dict[str, Engine]:
    """Every engine by its --engine name, llama.cpp first (the default)."""
    return {name: engine_named(name) for name in ENGINES}


def resolve_method(engine: Engine, method: str | None) -> str | None:
    """The engine's own name for ``method`` in any accepted spelling, or None."""
    if method is None:
        return engine.resolve(None)
    own = engine.resolve(method)
    if own is not None:
        return own
    canonical = canonical_method(method)
    return engine.resolve(canonical) if canonical is not None else None
