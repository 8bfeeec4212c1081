"""``paircheck lint --format sarif`` validates against the official SARIF 2.1.0 schema
(fixtures/sarif/) and says what the text says, at the same places; ``--format github`` writes
workflow commands the Actions runner turns into annotations on those lines."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from launch_files import REPO, launch_folder, place

from paircheck._format.github import escape_data, escape_property
from paircheck.catalog import find_rule

SCHEMA = REPO / "fixtures" / "sarif" / "sarif-schema-2.1.0.json"
# ::error file=F,line=L,col=C,title=T::MESSAGE (the runner's workflow-command syntax)
COMMAND = re.compile(r"^::(error|warning|notice) file=([^,]+),line=(\d+),col=(\d+),title=([^,:]+)::(.*)$")


def cli(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO), "COLUMNS": "80"}
    return subprocess.run([sys.executable, "-m", "paircheck", *args], capture_output=True, text=True, cwd=cwd,
                          env=env, timeout=300)


@pytest.mark.slow  # over 1.5 s here (docs/testing.md)
def test_sarif_is_valid_2_1_0_with_one_rule_per_code_and_explains_help(  # type: ignore[no-untyped-def]
        tmp_path: Path, real_vocab) -> None:
    import jsonschema

    folder = launch_folder(tmp_path, real_vocab, draft="llama-bpe")  # an incompatible pair too
    done = cli(["lint", "--format", "sarif", "."], folder)
    assert done.returncode == 1, done.stderr
    log = json.loads(done.stdout)
    schema = json.loads(SCHEMA.read_text())
    jsonschema.Draft4Validator.check_schema(schema)
    jsonschema.Draft4Validator(schema).validate(log)
    (run,) = log["runs"]
    rules, results = run["tool"]["driver"]["rules"], run["results"]
    assert len({r["id"] for r in rules}) == len(rules)
    for rule in rules:
        known = find_rule(rule["id"])
        assert known is not None and rule["fullDescription"]["text"] == known.explanation
        assert rule["help"]["text"].startswith(known.explanation) and known.fix in rule["help"]["text"]
    for result in results:
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
    compose = folder / "compose-bad" / "docker-compose.yml"
    pf001 = [r for r in results if r["ruleId"] == "PF001"
             and r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "compose-bad/docker-compose.yml"]
    region = pf001[0]["locations"][0]["physicalLocation"]["region"]
    assert (region["startLine"], region["startColumn"]) == place(compose, '"--draft-n-max"')
    assert pf001[0]["level"] == "error"
    # The pair check's own failure is a result too, at the draft's option.
    pair = [r for r in results if r["message"]["text"].startswith("llama.cpp draft-simple pair: ")
            and r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "compose-bad/docker-compose.yml"]
    assert pair and pair[0]["level"] == "error" and pair[0]["ruleId"] == "LC003"  # the first failure: an error
    assert (pair[0]["locations"][0]["physicalLocation"]["region"]["startLine"],
            pair[0]["locations"][0]["physicalLocation"]["region"]["startColumn"]) == place(compose, '"-md"')
    assert run["invocations"][0]["exitCode"] == 1


def test_github_annotations_on_the_offending_lines(tmp_path: Path, real_vocab) -> None:  # type: ignore[no-untyped-def]
    folder = launch_folder(tmp_path, real_vocab)
    done = cli(["lint", "--format", "github", "--no-check", "."], folder)
    assert done.returncode == 1, done.stderr
    *commands, last = done.stdout.rstrip("\n").split("\n")
    assert last.startswith("NOT OK: 7 launch commands in 7 launch files")
    parsed = [COMMAND.match(line) for line in commands]
    assert all(parsed), [c for c, m in zip(commands, parsed, strict=True) if not m]
    by_place = {(m.group(2), int(m.group(3)), int(m.group(4))): m for m in parsed if m}
    line, col = place(folder / "serve.sh", "--draft-min-accept-tokens")
    hit = by_place[("serve.sh", line, col)]
    assert hit.group(1) == "error" and hit.group(5) == "paircheck PF001 invalid_argument"
    line, col = place(folder / "serve.sh", "$EXTRA_ARGS")
    assert by_place[("serve.sh", line, col)].group(1) == "notice"  # an info finding
    line, col = place(folder / "compose-bad" / "docker-compose.yml", '"${DRAFT_MAX}"')
    assert by_place[("compose-bad/docker-compose.yml", line, col)].group(1) == "warning"


def test_workflow_command_escaping() -> None:
    # As @actions/core escapes them: data %, CR, LF; properties also ':' and ','.
    assert escape_data("50% done\nnext\r") == "50%25 done%0Anext%0D"
    assert escape_property("a,b: c%") == "a%2Cb%3A c%25"
