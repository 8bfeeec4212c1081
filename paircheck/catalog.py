"""The one table of every rule code paircheck can print, for ``paircheck explain``.

Engines' rules, the registry's notes and the pre-flight lint codes are declared where
they are used; this module only gathers them. A test walks the package's source for
every code it can emit and checks that each one is here.
"""

from __future__ import annotations

from paircheck.findings import Rule


def all_rules() -> list[Rule]:
    """Every rule, each code once: engines (llama.cpp first), registry, pre-flight."""
    from paircheck._engine import engines
    from paircheck._engine.chat_template import RULES as TEMPLATE_RULES
    from paircheck._engine.pair_size import RULES as SIZE_RULES
    from paircheck._registry.consult import RULES as REGISTRY_RULES
    from paircheck._registry.lint import LINT_RULES
    from paircheck.bench.from_result import RULES as BENCH_RULES
    from paircheck.preflight.codes import RULES as PREFLIGHT_RULES
    from paircheck.speed.estimate import RULES as ESTIMATE_RULES

    rules: list[Rule] = []
    seen: set[str] = set()
    for rule_set in [*[engine.rules for engine in engines().values()], SIZE_RULES, TEMPLATE_RULES, REGISTRY_RULES,
                     LINT_RULES,
                     PREFLIGHT_RULES, ESTIMATE_RULES, BENCH_RULES]:
        for rule in rule_set:
            if rule.code not in seen:
                seen.add(rule.code)
                rules.append(rule)
    return rules


def find_rule(code_or_name: str) -> Rule | None:
    """The rule with this code (LC003) or name (bos), case-insensitive."""
    wanted = code_or_name.strip().lower()
    for rule in all_rules():
        if rule.code.lower() == wanted or rule.name.lower() == wanted:
            return rule
    return None
