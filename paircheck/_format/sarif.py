"""``paircheck lint --format sarif``: SARIF 2.1.0 (OASIS), the format code-scanning tools read
(GitHub's upload-sarif, GitLab, VS Code's SARIF viewer).

One run; ``tool.driver.rules`` holds one rule per paircheck code that a result names, with
``paircheck explain``'s text as its help; each result points at the file, line and column of
the word it is about. Levels: error (fail), warning (warn), note (info). tests/preflight/
test_lint_formats.py validates the output against the official 2.1.0 JSON schema.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from paircheck._format.interface import Format
from paircheck._format.lint_places import LEVELS, placed_findings
from paircheck.version import __version__

if TYPE_CHECKING:
    from paircheck.findings import Rule
    from paircheck.preflight.lint_files import FilesLintResult

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


def _rule(code: str, rule: Rule | None) -> dict[str, Any]:
    if rule is None:
        return {"id": code}
    help_text = f"{rule.explanation}\n\nFix: {rule.fix}" + (f"\n\nSource: {rule.source}" if rule.source else "")
    return {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": rule.title},
        "fullDescription": {"text": rule.explanation},
        "help": {"text": help_text},
        "properties": {"kind": rule.kind},
    }


def sarif_log(result: FilesLintResult, pair_check: bool, fail_on: str) -> dict[str, Any]:
    from paircheck.catalog import find_rule
    from paircheck.preflight.lint import EXIT_FOR

    rules: list[dict[str, Any]] = []
    index: dict[str, int] = {}
    results: list[dict[str, Any]] = []
    for command in result.commands:
        for placed in placed_findings(command):
            f = placed.finding
            if f.code not in index:
                index[f.code] = len(rules)
                rules.append(_rule(f.code, find_rule(f.code)))
            text = (f"{placed.about}: " if placed.about else "") + f.message + (f" (fix: {f.fix})" if f.fix else "")
            results.append({
                "ruleId": f.code,
                "ruleIndex": index[f.code],
                "level": LEVELS.get(f.status, "note"),
                "message": {"text": text},
                "locations": [{
                    "physicalLocation": {
                        "artifactLocation": {"uri": placed.file},
                        "region": {"startLine": placed.line, "startColumn": placed.column},
                    },
                    "message": {"text": command.command.where},
                }],
            })
    status = result.status(pair_check, fail_on)
    return {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "paircheck", "version": __version__, "rules": rules}},
            "results": results,
            "invocations": [{"executionSuccessful": True, "exitCode": EXIT_FOR[status],
                             "properties": {"status": status, "fail_on": fail_on}}],
        }],
    }


FORMAT = Format("sarif", {
    "FilesLintResult": lambda result, options: json.dumps(sarif_log(result, options.pair_check, options.fail_on),
                                                          indent=2, ensure_ascii=False),
})
