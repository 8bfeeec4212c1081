"""Findings about a launch command: what the launcher would refuse, what would silently not
speculate, and the pair check itself. Pure functions of a parsed command plus the model
descriptions read for it (``describe`` is passed in, so tests can use real files)."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field

from paircheck._engine.common import arch_value, tensor_names
from paircheck.errors import InputError
from paircheck.findings import Report
from paircheck.model import ModelDescription
from paircheck.preflight.llama_server import LlamaCommand

ERROR, WARNING, INFO = "error", "warning", "info"
Describe = Callable[[str], ModelDescription]


@dataclass(frozen=True)
class LintFinding:
    code: str
    name: str
    severity: str  # error: the launch breaks or speculation silently never happens
    message: str
    fix: str = ""


@dataclass
class LintResult:
    launcher: str
    findings: list[LintFinding] = field(default_factory=list)
    reports: list[Report] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not any(f.severity == ERROR for f in self.findings) and all(r.compatible for r in self.reports)


DRAFT_TYPES = ("draft-simple", "draft-eagle3", "draft-mtp", "draft-dflash", "draft-dspark")


def infer_types_from_gguf(draft: ModelDescription) -> tuple[list[str], str | None]:
    """common_speculative_types_from_gguf: (types, abort message or None)."""
    arch = draft.identity.architecture or ""
    names = tensor_names(draft)
    if arch == "dflash":
        return (["draft-dspark"] if names is not None and "markov_w1.weight" in names else ["draft-dflash"]), None
    blocks = arch_value(draft, "block_count")
    if blocks is None or draft.metadata.type_of(f"{arch}.block_count") != 4:  # 4 = UINT32
        return [], (f"GGML_ASSERT in gguf_get_val_u32: the draft has no UINT32 {arch or '<arch>'}.block_count; "
                    "llama-server aborts while processing its arguments")
    if names is not None and f"blk.{blocks - 1}.nextn.eh_proj.weight" in names:
        return ["draft-mtp"], None
    return [], None


def lint_llama(cmd: LlamaCommand, describe: Describe | None) -> LintResult:
    out = LintResult(cmd.program)
    add = out.findings.append
    for err in cmd.errors:
        code = {"invalid": "PF001", "removed": "PF002", "missing_value": "PF003"}.get(err.kind, "PF004")
        add(LintFinding(code, err.kind, ERROR, err.message, err.hint))
    for flag in dict.fromkeys(cmd.repeated):
        add(LintFinding("PF005", "repeated", WARNING, f"{flag} is given more than once: llama.cpp logs DEPRECATED "
                        "and keeps only the last value", "give it once (comma-separate lists)"))
    for env, flag in cmd.env_overridden:
        add(LintFinding("PF006", "env_overridden", INFO, f"{env} is set but {flag} on the command line wins"))

    has_draft = bool(cmd.draft or cmd.draft_hf)
    types = cmd.requested_types
    target_desc = draft_desc = None
    if describe is not None:
        target_desc = _read(describe, cmd.model, "target", add)
        draft_desc = _read(describe, cmd.draft, "draft", add) if cmd.draft else None
    if not cmd.model and not cmd.model_hf and cmd.example != "SERVER":
        add(LintFinding("PF007", "no_model", ERROR, "error: --model is required"))

    if has_draft and cmd.types_default:
        inferred: list[str] = []
        if draft_desc is not None and cmd.draft and os.path.exists(cmd.draft):
            inferred, abort = infer_types_from_gguf(draft_desc)
            if abort:
                add(LintFinding("PF012", "type_detect_abort", ERROR, abort, "give --spec-type explicitly"))
        if inferred:
            types = inferred
            add(LintFinding("PF013", "type_detected", INFO, f"no --spec-type: llama.cpp detects {inferred[0]} from "
                            "the draft's metadata"))
        elif cmd.draft_hf and not cmd.draft:
            add(LintFinding("PF010", "draft_without_spec_type", WARNING,
                            "a draft repo (-hfd) without --spec-type: only an MTP/DFlash/EAGLE-3 sidecar in the repo "
                            "turns speculation on; a plain draft is downloaded and never used",
                            "add --spec-type draft-simple"))
        else:
            add(LintFinding("PF010", "draft_without_spec_type", ERROR,
                            "a draft model is given without --spec-type: llama-server loads it and never speculates, "
                            "without any warning (the default type list is 'none')",
                            "add --spec-type draft-simple"))
    for t in types:
        if t in ("draft-simple", "draft-eagle3", "draft-dflash", "draft-dspark") and not has_draft:
            effect = ("throws 'draft-simple requires a draft context' and runs without speculation" if
                      t == "draft-simple" else "is silently skipped")
            add(LintFinding("PF011", "type_needs_draft", ERROR, f"--spec-type {t} without a draft model: it {effect}",
                            "add -md DRAFT.gguf (or -hfd REPO)"))
    if "ngram-cache" in types and not cmd.get("-lcs") and not cmd.get("-lcd"):
        add(LintFinding("PF014", "ngram_cache_files", INFO, "ngram-cache without -lcs/-lcd starts from an empty cache"))
    if "draft-simple" in types and any(t.startswith("ngram") for t in types):
        add(LintFinding("PF015", "chained_types", INFO, "all types are set up together: if the draft is refused, "
                        "the n-gram types are lost too (no speculation at all)"))
    if (cmd.model_hf and not cmd.model) or (cmd.draft_hf and not cmd.draft):
        add(LintFinding("PF020", "remote_not_checked", INFO, "a model given as a Hugging Face repo is downloaded by "
                        "llama-server; the pair was not checked (use paircheck on the files)"))

    if target_desc is not None:
        from paircheck.api import check_descriptions

        for t in types:
            if t.startswith("ngram") or t == "none":
                continue
            if t == "draft-mtp" and draft_desc is None:
                out.reports.append(check_descriptions(target_desc, target_desc, "llama.cpp", t))
            elif draft_desc is not None:
                out.reports.append(check_descriptions(target_desc, draft_desc, "llama.cpp", t))
        if cmd.types_default and has_draft and draft_desc is not None and not out.reports:
            # Still say whether the draft would have worked once --spec-type is added.
            out.reports.append(check_descriptions(target_desc, draft_desc, "llama.cpp", "draft-simple"))
    return out


def _read(describe: Describe, path: str | None, side: str, add: Callable[[LintFinding], None]) -> ModelDescription | None:
    if not path:
        return None
    try:
        return describe(path)
    except InputError as exc:
        add(LintFinding("PF021", f"{side}_unreadable", ERROR, f"{side} {exc}: llama-server would fail to load it"))
        return None
