"""Every code paircheck can print is explained by `paircheck explain CODE`.

Codes are collected from the package's source (every string constant shaped like a code,
e.g. "LC005", "PF010"), not only from the catalog, so a finding created from a literal
without a declared Rule fails here.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from paircheck.catalog import all_rules, find_rule
from paircheck.cli import cli

PACKAGE = Path(__file__).resolve().parent.parent / "paircheck"
CODE = re.compile(r"^[A-Z]{2}\d{3}$")


def codes_in_source() -> set[str]:
    found: set[str] = set()
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and CODE.match(node.value):
                found.add(node.value)
    return found


@pytest.mark.slow  # over 1.5 s here (docs/testing.md)
def test_the_source_emits_codes() -> None:
    assert len(codes_in_source()) > 50  # the collector works (LC, LW, VL, SG, RG, PF, ...)


@pytest.mark.parametrize("code", sorted(codes_in_source()))
def test_every_code_is_explained(code: str) -> None:
    rule = find_rule(code)
    assert rule is not None, f"{code} can be printed but `paircheck explain {code}` knows no such rule"
    assert rule.title and rule.explanation and rule.fix


def test_codes_and_names_are_unique() -> None:
    rules = all_rules()
    assert len({r.code for r in rules}) == len(rules)


def test_explain_prints_title_explanation_and_fix() -> None:
    out = CliRunner().invoke(cli, ["explain", "LC005"])
    assert out.exit_code == 0
    rule = find_rule("LC005")
    assert rule is not None
    assert out.output.startswith(f"{rule.code} {rule.name}: {rule.title}")
    assert "Fix:" in out.output
    assert "128" in out.output  # the tolerance the rule is about


def test_explain_unknown_code_is_an_input_error() -> None:
    out = CliRunner().invoke(cli, ["explain", "ZZ999"])
    assert out.exit_code != 0
