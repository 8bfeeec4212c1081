"""Generate docs/rules.md, every rule code paircheck prints, from the rule catalog.

``python -m paircheck.cli.rules_doc`` rewrites the file; tests/test_rules_doc.py fails when it
drifts from ``api.rule_groups`` (the catalog's), so the codes are written once, where each rule is
declared, and other docs link here instead of restating them.
"""

from __future__ import annotations

import sys
from pathlib import Path

from paircheck.api import rule_groups
from paircheck.atomic import write_text_atomic
from paircheck.findings import Rule


def rules_doc_path() -> Path:
    return Path(__file__).resolve().parents[2] / "docs" / "rules.md"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _anchor(rule: Rule) -> str:
    return rule.code.lower()


def render_rules_doc() -> str:
    """The page's exact text: per group a table (code, name, kind, what it does when it fails,
    title), then each rule's explanation, fix and source, as ``paircheck explain CODE`` prints."""
    groups = rule_groups()
    count = sum(len(rules) for _, rules in groups)
    lines = ["# Rules", "",
             "Generated from the rule catalog by `python -m paircheck.cli.rules_doc`; do not edit by hand "
             "(`tests/test_rules_doc.py` fails when it drifts). `paircheck explain CODE` prints the same "
             "for one rule.", "",
             f"{count} rules. Kind: `check` changes the verdict, `warning` and `note` do not. On failure: "
             "what the engine does when a check fails (`stops`: refuses to start; "
             "`runs_without_speculation`; `runs_useless`: speculates to no gain).", ""]
    for title, rules in groups:
        lines += [f"## {title}", "", "| code | name | kind | on failure | title |", "|---|---|---|---|---|"]
        lines += [f"| [{r.code}](#{_anchor(r)}) | {r.name} | {r.kind} | {r.effect if r.kind == 'check' else '-'} | "
                  f"{_cell(r.title)} |"
                  for r in rules]
        lines.append("")
        for r in rules:
            lines += [f"### {r.code}", "", f"**{r.name}**: {r.title}", "", r.explanation, "", f"Fix: {r.fix}", ""]
            if r.source:
                lines += [f"Source: {r.source}", ""]
    return "\n".join(lines).rstrip("\n") + "\n"


def main() -> int:
    try:
        write_text_atomic(rules_doc_path(), render_rules_doc())
    except OSError as exc:
        print(f"paircheck.cli.rules_doc: error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
