"""Lint an Ollama Modelfile's draft settings (parser/parser.go, docs/modelfile.mdx at fb30760)."""

from __future__ import annotations

import os
import re
import shlex
from dataclasses import dataclass

from paircheck.errors import InputError
from paircheck.preflight import codes as C
from paircheck.preflight.codes import ERROR, INFO, WARNING, LintFinding, emit
from paircheck.preflight.lint import Describe, LintResult

COMMANDS = ("from", "license", "template", "system", "adapter", "draft", "renderer", "parser", "parameter",
            "message", "requires")
INVALID_COMMAND = ('command must be one of "from", "license", "template", "system", "adapter", "draft", '
                   '"renderer", "parser", "parameter", "message", or "requires"')
# Names blog posts use that Ollama does not have (there is no draft-model PARAMETER).
NOT_PARAMETERS = {"draft_model": "use a DRAFT line", "draft": "use a DRAFT line", "model_draft": "use a DRAFT line",
                  "draft_max": "use PARAMETER draft_num_predict", "n_draft": "use PARAMETER draft_num_predict",
                  "spec_type": "Ollama picks the type from the draft's architecture"}


@dataclass(frozen=True)
class Instruction:
    line: int
    name: str
    args: str


def parse_modelfile(text: str) -> tuple[list[Instruction], list[LintFinding]]:
    """Instructions with their line numbers; multi-line triple-quoted values are joined."""
    out: list[Instruction] = []
    problems: list[LintFinding] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        raw = lines[i].strip()
        start = i + 1
        i += 1
        if not raw or raw.startswith("#"):
            continue
        name, _, args = raw.partition(" ")
        if '"""' in args and args.count('"""') == 1:
            while i < len(lines) and '"""' not in lines[i]:
                args += "\n" + lines[i]
                i += 1
            if i < len(lines):
                args += "\n" + lines[i]
                i += 1
        if not re.fullmatch(r"[A-Za-z]+", name) or name.lower() not in COMMANDS:
            problems.append(emit(C.OM001, ERROR, f"(line {start}): {INVALID_COMMAND}",
                                 f"{name!r} is not a Modelfile instruction", line=start, instruction=name))
            continue
        out.append(Instruction(start, name.lower(), args.strip()))
    return out, problems


def _unquote(text: str) -> str:
    try:
        parts = shlex.split(text)
    except ValueError:
        return text
    return parts[0] if len(parts) == 1 else text


def lint_modelfile(text: str, base_dir: str, describe: Describe | None) -> LintResult:
    if "\0" in text:  # os.path.expanduser("~\0...") raises ValueError (found by fuzz/)
        raise InputError("Modelfile", "has a NUL byte: a Modelfile is text (was a binary file given?)")
    out = LintResult("Modelfile")
    instructions, problems = parse_modelfile(text)
    out.findings += problems
    add = out.findings.append
    froms = [ins for ins in instructions if ins.name == "from"]
    drafts = [ins for ins in instructions if ins.name == "draft"]
    if not froms:
        add(emit(C.OM002, ERROR, "no FROM line"))
    params: dict[str, Instruction] = {}
    for ins in instructions:
        if ins.name != "parameter":
            continue
        key, _, value = ins.args.partition(" ")
        params[key] = Instruction(ins.line, key, value.strip())
        if key in NOT_PARAMETERS:
            add(emit(C.OM003, ERROR, f"(line {ins.line}): unknown parameter '{key}' (Ollama has no such "
                     "parameter; guides that show it are wrong)", NOT_PARAMETERS[key], line=ins.line, parameter=key))
    dnp = params.get("draft_num_predict")
    if dnp is not None:
        if not re.fullmatch(r"\d+", dnp.args):
            add(emit(C.OM004, ERROR, f"(line {dnp.line}): draft_num_predict must be a non-negative integer, "
                     f"got {dnp.args!r}", line=dnp.line))
        elif int(dnp.args) == 0:
            add(emit(C.OM004, WARNING, f"(line {dnp.line}): draft_num_predict 0 turns speculative decoding off",
                     line=dnp.line))
    from_path = os.path.join(base_dir, os.path.expanduser(_unquote(froms[0].args))) if froms else None
    for ins in drafts:
        path = os.path.join(base_dir, os.path.expanduser(_unquote(ins.args)))
        if not os.path.exists(path):
            add(emit(C.OM005, ERROR, f"(line {ins.line}): DRAFT {ins.args!r} does not exist: DRAFT must be a "
                     "local path", "download the drafter first", line=ins.line))
            continue
        if from_path and os.path.exists(from_path) and os.path.samefile(path, from_path):
            add(emit(C.OM006, ERROR, f"DRAFT must not reference the same local path as FROM: {ins.args}",
                     line=ins.line))
            continue
        if from_path is None or not os.path.exists(from_path):
            add(emit(C.OM007, INFO, "FROM is not a local file: the pair was not checked (a remote FROM model "
                     "rejects DRAFT: 'DRAFT cannot be used with remote models')"))
            continue
        if describe is not None and os.path.isfile(path):
            from paircheck.pipeline import check_descriptions

            try:
                out.reports.append(check_descriptions(describe(from_path), describe(path), "ollama"))
            except InputError as exc:
                add(emit(C.OM008, WARNING, f"pair not checked: {exc}"))
        elif describe is not None:
            add(emit(C.OM008, WARNING, f"pair not checked: DRAFT {ins.args!r} is not a file", line=ins.line))
    if not drafts and dnp is not None:
        add(emit(C.OM009, INFO, "draft_num_predict without DRAFT only matters for a model with embedded MTP "
                 "tensors"))
    if not drafts:
        add(emit(C.OM010, INFO, "no DRAFT line: Ollama does not speculate with a draft model, so there is no pair "
                 "to check"))
    return out
