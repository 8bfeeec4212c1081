"""Engines: whose rule decides whether a pair works. One module per engine."""

from __future__ import annotations

from paircheck._engine.interface import Engine, Rule
from paircheck._engine.llamacpp import LlamaCppEngine


def engines() -> dict[str, Engine]:
    """Every engine by its --engine name."""
    return {engine.name: engine for engine in (LlamaCppEngine(),)}


def all_rules() -> list[Rule]:
    rules: list[Rule] = []
    seen: set[str] = set()
    for engine in engines().values():
        for rule in engine.rules:
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
