"""Engines: whose rule decides whether a pair works. One module per engine."""

from __future__ import annotations

from paircheck._engine.interface import Engine, Rule
from paircheck._engine.llamacpp import LlamaCppEngine


def engines() -> dict[str, Engine]:
    """Every engine by its --engine name, llama.cpp first (the default)."""
    from paircheck._engine import koboldcpp, lmstudio, ollama, sglang, tensorrt_llm, transformers, vllm

    found: list[Engine] = [LlamaCppEngine()]
    found += [m.ENGINE_OBJ for m in (lmstudio, vllm, transformers, sglang, koboldcpp, ollama, tensorrt_llm)]
    return {engine.name: engine for engine in found}


def resolve_method(engine: Engine, method: str | None) -> str | None:
    """The engine's own name for ``method`` (llama.cpp names are understood by all), or None."""
    resolve = getattr(engine, "resolve", None)
    if resolve is not None:
        return resolve(method)
    if method is None:
        return engine.default_method
    return method if method in engine.methods else None


def all_rules() -> list[Rule]:
    """Every engine's rules, then the registry's notes (for `paircheck explain`)."""
    from paircheck.preflight.codes import RULES as PREFLIGHT_RULES
    from paircheck.registry_consult import RULES as REGISTRY_RULES

    rules: list[Rule] = []
    seen: set[str] = set()
    for rule_set in [engine.rules for engine in engines().values()] + [PREFLIGHT_RULES, REGISTRY_RULES]:
        for rule in rule_set:
            if rule.code not in seen:
                seen.add(rule.code)
                rules.append(rule)
    return rules


def find_rule(code_or_name: str) -> Rule | None:
    wanted = code_or_name.strip().lower()
    for rule in all_rules():
        if rule.code.lower() == wanted or rule.name.lower() == wanted:
            return rule
    return None
