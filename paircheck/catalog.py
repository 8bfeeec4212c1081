"""The one table of every rule code paircheck can print, for ``paircheck explain``.

Engines' rules, the registry's notes and the pre-flight lint codes are declared where
they are used; this module only gathers them. A test walks the package's source for
every code it can emit and checks that each one is here.
"""

from __future__ import annotations

from paircheck.findings import Rule


def rule_groups() -> list[tuple[str, list[Rule]]]:
    """Every rule, each code once, by where it is declared: engines (llama.cpp first), the
    pair's size and chat template, the registry, pre-flight, estimate, bench."""
    from paircheck._engine import engines
    from paircheck._engine.chat_template import RULES as TEMPLATE_RULES
    from paircheck._engine.pair_size import RULES as SIZE_RULES
    from paircheck._registry.consult import RULES as REGISTRY_RULES
    from paircheck._registry.lint import LINT_RULES
    from paircheck.bench.from_result import RULES as BENCH_RULES
    from paircheck.preflight.codes import RULES as PREFLIGHT_RULES
    from paircheck.speed.estimate import RULES as ESTIMATE_RULES

    engine_sets = [(f"Engine: {name}", list(engine.rules)) for name, engine in engines().items()]
    sets: list[tuple[str, list[Rule]]] = [
            *engine_sets, ("The pair's sizes", list(SIZE_RULES)), ("Chat templates", list(TEMPLATE_RULES)),
            ("The registry of documented pairs", list(REGISTRY_RULES)), ("The registry's lint", list(LINT_RULES)),
            ("Pre-flight lint of launch commands", list(PREFLIGHT_RULES)), ("estimate", list(ESTIMATE_RULES)),
            ("bench results", list(BENCH_RULES))]
    groups: list[tuple[str, list[Rule]]] = []
    seen: set[str] = set()
    for title, rule_set in sets:
        fresh = [r for r in rule_set if r.code not in seen]
        seen.update(r.code for r in fresh)
        if fresh:
            groups.append((title, fresh))
    return groups


def all_rules() -> list[Rule]:
    """Every rule, each code once: engines (llama.cpp first), registry, pre-flight."""
    return [rule for _, rules in rule_groups() for rule in rules]


def find_rule(code_or_name: str) -> Rule | None:
    """The rule with this code (LC003) or name (bos), case-insensitive."""
    wanted = code_or_name.strip().lower()
    for rule in all_rules():
        if rule.code.lower() == wanted or rule.name.lower() == wanted:
            return rule
    return None
