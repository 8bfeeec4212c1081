"""docs/rules.md is generated from the rule catalog and current (issue 49, item 4): every code
paircheck can print is written once, where its rule is declared, and the docs link to the page
instead of restating the codes."""

from __future__ import annotations

import re
from pathlib import Path

from paircheck.catalog import all_rules, rule_groups
from paircheck.cli.rules_doc import render_rules_doc, rules_doc_path

DOCS = Path(__file__).resolve().parents[1] / "docs"


def test_the_page_is_what_the_catalog_generates() -> None:
    assert rules_doc_path().read_text() == render_rules_doc(), \
        "docs/rules.md is stale: run python -m paircheck.cli.rules_doc"


def test_every_rule_has_one_section_with_its_explanation_and_fix() -> None:
    page = render_rules_doc()
    headings = re.findall(r"^### ([A-Z]+[0-9]+)$", page, flags=re.M)
    codes = [r.code for r in all_rules()]
    assert headings == codes and len(set(codes)) == len(codes)
    for rule in all_rules():
        section = page.split(f"### {rule.code}\n", 1)[1].split("\n### ", 1)[0]
        assert rule.explanation in section and f"Fix: {rule.fix}" in section, rule.code
        # a table row links to the section
        assert f"| [{rule.code}](#{rule.code.lower()}) | {rule.name} | {rule.kind} |" in page


def test_groups_hold_each_code_once_llama_cpp_first() -> None:
    groups = rule_groups()
    assert groups[0][0] == "Engine: llama.cpp" and groups[0][1][0].code == "LC001"
    flat = [r.code for _, rules in groups for r in rules]
    assert flat == [r.code for r in all_rules()]


def test_the_check_docs_link_to_the_page_instead_of_a_table_of_codes() -> None:
    check = (DOCS / "check.md").read_text()
    assert "(rules.md)" in check and "(rules.md)" in (DOCS / "engines.md").read_text()
    # no hand-written table of rule codes left in the check's page
    assert not re.search(r"^\| (LC|LW|PW)\d{3} \|", check, flags=re.M)
