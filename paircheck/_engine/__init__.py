"""Engines: whose rule decides whether a pair works. One module per engine."""

from __future__ import annotations

from paircheck._engine.interface import Engine
from paircheck.constants import canonical_method


def engines() -> dict[str, Engine]:
    """Every engine by its --engine name, llama.cpp first (the default)."""
    from paircheck._engine import koboldcpp, lmstudio, ollama, sglang, tensorrt_llm, transformers, vllm
    from paircheck._engine.llamacpp import LlamaCppEngine

    found: list[Engine] = [LlamaCppEngine()]
    found += [m.ENGINE_OBJ for m in (lmstudio, vllm, transformers, sglang, koboldcpp, ollama, tensorrt_llm)]
    return {engine.name: engine for engine in found}


def resolve_method(engine: Engine, method: str | None) -> str | None:
    """The engine's own name for ``method`` in any accepted spelling, or None."""
    if method is None:
        return engine.resolve(None)
    own = engine.resolve(method)
    if own is not None:
        return own
    canonical = canonical_method(method)
    return engine.resolve(canonical) if canonical is not None else None
