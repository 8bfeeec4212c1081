"""Findings about a launch command: what the launcher would refuse, what would silently not
speculate, and the pair check itself. Pure functions of a parsed command plus the model
descriptions read for it (``describe`` is passed in, so tests can use real files)."""

from __future__ import annotations

import os
import shlex
from collections.abc import Callable
from dataclasses import dataclass, field

from paircheck._engine.common import arch_value, tensor_names
from paircheck.errors import InputError
from paircheck.findings import Report
from paircheck.model import ModelDescription
from paircheck.outcome import (
    CRASH,
    DEFAULT_FAIL_ON,
    EXIT_ABORTS,
    EXIT_WARNED,
    FAIL_ON_LEVELS,
    SLOW,
    hurting_warnings,
    slow_warnings,
)
from paircheck.outcome import (
    WARNING as WARNING_LEVEL,
)
from paircheck.preflight import codes as C
from paircheck.preflight.codes import ERROR, INFO, WARNING, LintFinding, emit
from paircheck.preflight.llama_command import LlamaCommand

__all__ = [
    "ABORTS",
    "ERROR",
    "FAIL",
    "INFO",
    "OK",
    "UNCHECKED",
    "WARNED",
    "WARNING",
    "Describe",
    "LintFinding",
    "UnreachablePath",
    "LintResult",
    "lint_llama",
]

Describe = Callable[[str], ModelDescription]


class UnreachablePath(InputError):
    """A model named by a path this machine cannot open (inside a container, set at run time):
    raised by the describer of a launch file; the pair is not checked, which is not an error."""

OK, FAIL, UNCHECKED, ABORTS, WARNED = "ok", "not-ok", "not-checked", "aborts", "warned"
# Exit codes of the lint commands (README "Pre-flight for launch scripts"), the same table as
# the check's (paircheck.outcome): 0 and 1 as for a check, 2 bad input, 3 nothing (or not
# everything) was checked: never 0 for a check that did not happen; 4 a pair accepted at
# load that is predicted to abort at run time; 5 a warning --fail-on asks to fail on.
EXIT_OK, EXIT_FAIL, EXIT_ERROR, EXIT_UNCHECKED = 0, 1, 2, 3
EXIT_FOR = {OK: EXIT_OK, FAIL: EXIT_FAIL, UNCHECKED: EXIT_UNCHECKED, ABORTS: EXIT_ABORTS, WARNED: EXIT_WARNED}


@dataclass
class LintResult:
    launcher: str
    findings: list[LintFinding] = field(default_factory=list)
    reports: list[Report] = field(default_factory=list)
    # The command with every mechanically fixable error fixed (argv), when there is one.
    corrected: list[str] | None = None
    # (given, used): options in ``corrected`` that are paircheck's guess (the nearest real
    # option by name), not a documented replacement; always shown with the line.
    guessed: list[tuple[str, str]] = field(default_factory=list)
    # The llama.cpp program whose --help the flags were checked against (its path, and its
    # --version answer when it gives one); None: the pinned option table alone.
    build: str | None = None

    def status(self, pair_check: bool = True, fail_on: str = DEFAULT_FAIL_ON) -> str:
        """FAIL (an error or an incompatible pair), ABORTS (a pair accepted at load that is
        predicted to abort at run time), UNCHECKED (something was not checked), WARNED (a
        warning ``fail_on`` asks to fail on), or OK. The levels are paircheck.outcome's.

        ``pair_check=False`` (lint-cmd --no-check) does not count the pair as unchecked when
        the only reason is that the models were not read, as asked."""
        level = FAIL_ON_LEVELS.index(fail_on)
        if any(f.status == ERROR for f in self.findings) or not all(r.compatible for r in self.reports):
            return FAIL
        if level >= FAIL_ON_LEVELS.index(CRASH) and any(r.run_time_aborts for r in self.reports):
            return ABORTS
        skipped = C.UNCHECKED if pair_check else C.UNCHECKED - C.PAIR_UNCHECKED
        if any(f.code in skipped for f in self.findings):
            return UNCHECKED
        strict = level >= FAIL_ON_LEVELS.index(WARNING_LEVEL)
        if strict and any(r.unknowns for r in self.reports):
            return UNCHECKED
        if level >= FAIL_ON_LEVELS.index(SLOW) and any(slow_warnings(r) for r in self.reports):
            return WARNED
        hurts = any(hurting_warnings(r) for r in self.reports) or any(f.status == WARNING for f in self.findings)
        if strict and hurts:
            return WARNED
        return OK

    @property
    def ok(self) -> bool:
        return self.status() == OK

    @property
    def unchecked(self) -> list[LintFinding]:
        return [f for f in self.findings if f.code in C.UNCHECKED]


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
        rule = {"invalid": C.PF001, "removed": C.PF002, "missing_value": C.PF003}.get(err.kind, C.PF004)
        details: dict[str, object] = {"argument": err.flag}
        if err.suggestions:
            details["did_you_mean"] = list(err.suggestions)
        # A removed option's message is llama.cpp's own text and already ends with its hint:
        # no fix line repeating it.
        add(emit(rule, ERROR, err.message, err.hint or None, **details))
    for flag in dict.fromkeys(cmd.repeated):
        add(emit(C.PF005, WARNING, f"{flag} is given more than once: llama.cpp logs DEPRECATED and keeps only the "
                 "last value", "give it once (comma-separate lists)", argument=flag))
    for env, flag in cmd.env_overridden:
        add(emit(C.PF006, INFO, f"{env} is set but {flag} on the command line wins", variable=env, argument=flag))

    has_draft = bool(cmd.draft or cmd.draft_hf)
    types = cmd.requested_types
    target_desc = draft_desc = None
    # -hf / -hfd: paircheck reads a Hub GGUF itself (metadata only, by range requests).
    hub_target = cmd.model_hf if cmd.model_hf and not cmd.model else None
    hub_draft = cmd.draft_hf if cmd.draft_hf and not cmd.draft else None
    unread: list[tuple[str, str]] = []  # (repo, why it was not read)
    if describe is not None:
        target_desc = _read(describe, cmd.model, "target", add, cmd.program)
        draft_desc = _read(describe, cmd.draft, "draft", add, cmd.program) if cmd.draft else None
        if hub_target:
            target_desc = _read_hub(describe, _hub_spec(hub_target, cmd.get("-hff")), unread)
        if hub_draft:
            draft_desc = _read_hub(describe, hub_draft, unread)
    else:
        unread += [(r, "not read (--no-check)") for r in (hub_target, hub_draft) if r]
    if not cmd.model and not cmd.model_hf and cmd.example != "SERVER":
        add(emit(C.PF007, ERROR, "error: --model is required"))
    if not has_draft and not types and cmd.example != "LOOKUP":  # llama-lookup always drafts n-grams
        add(emit(C.PF008, INFO, f"{cmd.program} is given no draft model and no --spec-type: it runs without "
                 "speculative decoding, so there is no pair to check"))

    if has_draft and cmd.types_default:
        inferred: list[str] = []
        if draft_desc is not None and cmd.draft and os.path.exists(cmd.draft):
            inferred, abort = infer_types_from_gguf(draft_desc)
            if abort:
                add(emit(C.PF012, ERROR, abort, "give --spec-type explicitly"))
        if inferred:
            types = inferred
            add(emit(C.PF013, INFO, f"no --spec-type: llama.cpp detects {inferred[0]} from the draft's metadata",
                     spec_type=inferred[0]))
        elif cmd.draft_hf and not cmd.draft:
            add(emit(C.PF010, WARNING, "a draft repo (-hfd) without --spec-type: only an MTP/DFlash/EAGLE-3 sidecar "
                     "in the repo turns speculation on; a plain draft is downloaded and never used",
                     "add --spec-type draft-simple"))
        else:
            add(emit(C.PF010, ERROR, f"a draft model is given without --spec-type: {cmd.program} loads it and never "
                     "speculates, without any warning (the default type list is 'none')",
                     "add --spec-type draft-simple"))
    for t in types:
        if t in ("draft-simple", "draft-eagle3", "draft-dflash", "draft-dspark") and not has_draft:
            effect = ("throws 'draft-simple requires a draft context' and runs without speculation" if
                      t == "draft-simple" else "is silently skipped")
            add(emit(C.PF011, ERROR, f"--spec-type {t} without a draft model: it {effect}",
                     "add -md DRAFT.gguf (or -hfd REPO)", spec_type=t))
    if "ngram-cache" in types and not cmd.get("-lcs") and not cmd.get("-lcd"):
        add(emit(C.PF014, INFO, "ngram-cache without -lcs/-lcd starts from an empty cache"))
    if "draft-simple" in types and any(t.startswith("ngram") for t in types):
        add(emit(C.PF015, INFO, "all types are set up together: if the draft is refused, the n-gram types are lost "
                 "too (no speculation at all)"))
    if unread:
        why = "; ".join(f"{repo}: {reason}" for repo, reason in unread)
        add(emit(C.PF020, INFO, f"a model given as a Hugging Face repo could not be read from the Hub ({why}); the "
                 "pair was not checked", repos=[r for r, _ in unread]))

    out.corrected = _corrected(cmd, out)
    out.guessed = list(cmd.guesses) if out.corrected else []

    if target_desc is not None:
        from paircheck.pipeline import check_descriptions

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
        for report in out.reports:
            report.next_steps = [_in_line_terms(step, cmd, target_desc, draft_desc) for step in report.next_steps]
    return out


def _in_line_terms(step: str, cmd: LlamaCommand, target: ModelDescription,
                   draft: ModelDescription | None) -> str:
    """A llama-server line the check offers, in the terms of the line linted: its program and
    its model paths as written. A model read through a compose volume was described by its
    path on this machine, so the check's line mixed that path with the container's program."""
    from paircheck._engine.common import shell_path

    if not step.startswith("llama-server "):
        return step  # prose, or a command that runs here (paircheck scan): this machine's paths
    words = [shlex.quote(cmd.argv[0]), *step.split(" ")[1:]]
    for flag, desc, written in (("-m", target, cmd.model), ("-md", draft, cmd.draft)):
        if desc is None or not written:
            continue
        for i in range(len(words) - 1):
            if words[i] == flag and words[i + 1] == shell_path(desc):
                words[i + 1] = shlex.quote(written)
    return " ".join(words)


def _corrected(cmd: LlamaCommand, out: LintResult) -> list[str] | None:
    """The parser's corrected line, plus --spec-type draft-simple for a draft that would never be used."""
    needs_type = any(f.code == C.PF010.code and f.status == ERROR for f in out.findings)
    if cmd.errors and cmd.corrected is None:
        return None
    if not cmd.errors and not needs_type:
        return None
    words = list(cmd.corrected if cmd.corrected is not None else cmd.argv)
    if needs_type:
        words += ["--spec-type", "draft-simple"]
    from paircheck.preflight.llama_command import parse

    again = parse(words, {})
    return words if not again.errors else None  # only a line this llama.cpp accepts


def _hub_spec(repo: str, file: str | None) -> str:
    """-hf REPO[:QUANT] with -hff FILE as paircheck's Hub source names the file: REPO/FILE."""
    return f"{repo.split(':', 1)[0]}/{file}" if file else repo


def _read_hub(describe: Describe, spec: str, unread: list[tuple[str, str]]) -> ModelDescription | None:
    """A -hf / -hfd model read from the Hub as llama-server picks it; offline or unreachable,
    it is noted as not read (the pair is then not checked), never an error of the line."""
    try:
        return describe(spec)
    except InputError as exc:
        unread.append((spec, exc.message))
        return None


def _read(describe: Describe, path: str | None, side: str, add: Callable[[LintFinding], None],
          program: str = "llama-server") -> ModelDescription | None:
    if not path:
        return None
    try:
        return describe(path)
    except UnreachablePath as exc:
        add(emit(C.PF022, INFO, f"{side} {exc}: the pair was not checked", side=side, path=path))
        return None
    except InputError as exc:
        add(emit(C.PF021, ERROR, f"{side} {exc}: {program} would fail to load it", side=side, path=path))
        return None
