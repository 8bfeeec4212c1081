"""A pair check for people: the verdict line, a side-by-side table of both models, the
checks and warnings with their fixes, and what to run next; and the one-row-per-engine
matrix of ``--engine all``."""

from __future__ import annotations

import os
import textwrap
from collections.abc import Iterable

from paircheck._format.interface import RenderOptions
from paircheck._format.text_base import cell, middle_cut, paint, prose_or_command, simple_table, wrap
from paircheck.findings import (
    ABORTS,
    ACCEPTED,
    FAIL,
    PASS,
    REFUSED,
    RUNS_USELESS,
    RUNS_WITHOUT_SPECULATION,
    SKIP,
    WARN,
    Finding,
    Report,
)
from paircheck.model import ModelDescription
from paircheck.token_display import show

# The verdict words, by Report.verdict, with their colour.
VERDICT_WORDS = {
    ACCEPTED: ("COMPATIBLE", "green"),
    REFUSED: ("NOT COMPATIBLE", "red"),
    ABORTS: ("ABORTS AT RUN TIME", "red"),
}
UNKNOWN_WORD = ("COMPATIBLE AS FAR AS CHECKED", "yellow")


def verdict_line(report: Report) -> tuple[str, str, str]:
    """(word, colour, whole line): the line without colour, so it wraps at its true width."""
    where = f"{report.engine} {report.method}"
    word, color = VERDICT_WORDS.get(report.verdict, UNKNOWN_WORD)
    if report.verdict == REFUSED:
        first = report.first_failure
        assert first is not None
        # Not every refusal is an error: an engine may start and run without speculation, or
        # start while the draft proposes other tokens. The verdict word says which.
        word = {RUNS_WITHOUT_SPECULATION: "RUNS, WITHOUT SPECULATION",
                RUNS_USELESS: "NOT COMPATIBLE (starts, drafts other tokens)"}.get(first.effect, word)
        cause = report.different_tokenizers
        if cause is not None:
            # The cause before the engine's first failing check, which stays the rule named.
            said = (f"different tokenizers ({cause.details['differing']} of {cause.details['compared']} compared "
                    f"ids differ); {report.engine}'s first failing check, {first.code} {first.name}: {first.message}")
            return word, color, f"{word} for {where}: {said}"
        return word, color, f"{word} for {where}: {first.message}"
    n = len(report.warnings)
    extra = f" ({n} warning{'s' if n != 1 else ''})" if n else ""
    if report.verdict == ABORTS:
        # Accepted at load; what paircheck predicts happens next is the verdict.
        abort = report.run_time_aborts[0]
        said = abort.details.get("abort") or abort.message
        return word, color, f"{word} for {where}{extra}: {said} ({abort.code})"
    if report.verdict == ACCEPTED:
        # A verdict never says less than paircheck knows: a swapped pair is said in it.
        swap = next((w for w in report.warnings if w.details.get("swapped")), None)
        if swap is not None:
            extra += f"; but the two look swapped: the draft is larger than the target ({swap.code})"
        return word, color, f"{word} for {where}{extra}"
    unknown = ", ".join(c.name for c in report.unknowns)
    return word, color, f"{word} for {where}{extra}; unknown: {unknown}"


def verdict_lines(report: Report, options: RenderOptions) -> list[str]:
    """The verdict, wrapped at the width, the word painted after wrapping (colour codes
    take no columns)."""
    word, color, line = verdict_line(report)
    lines = wrap(line, options.width)
    lines[0] = paint(word, color, options) + lines[0][len(word):]
    return lines


def _special(desc: ModelDescription, token_id: int, added: bool) -> str:
    text = "none" if token_id < 0 else f"{token_id} {show(desc.vocab.text(token_id), 24)}"
    return f"{text}, {'added' if added else 'not added'}"


def _name(desc: ModelDescription) -> str:
    ident = desc.identity
    parts = [p for p in (ident.name or ident.basename, ident.size_label) if p]
    if ident.size_label and ident.name and ident.size_label in ident.name:
        parts = [ident.name]
    return " / ".join(parts) or "-"


def _eog(desc: ModelDescription) -> str:
    v = desc.vocab
    others = sorted(i for i in v.eog_ids if i != v.eos_id)
    if not others:
        return "EOS only" if v.eos_id >= 0 else "-"
    shown = ", ".join(f"{i} {show(v.text(i), 16)}" for i in others[:2])
    return shown + (f" +{len(others) - 2}" if len(others) > 2 else "")


def _vocab_kind(desc: ModelDescription) -> str:
    v = desc.vocab
    pre = f", pre {v.pre}" if v.pre else ""
    return f"{v.vocab_type_name} ({v.tokenizer_model or '?'}{pre})"


def _fingerprint(fp: object, width: int) -> str:
    """The fingerprint, shortened from the end ("…") when its column is narrower: enough to
    tell two vocabularies apart at a glance, never wrapped in two; --json has it whole."""
    full = getattr(fp, "full", None)
    if not full:
        return "- (not loadable or no texts)"
    return full if len(full) <= width else full[: width - 1] + "…"




def _cell(label: str, text: str, width: int) -> str:
    # A file name is cut in the middle, never split over two lines ("...q4_k_m.ggu" / "f").
    return middle_cut(text, width) if label == "file" else cell(text, width)


def side_table(report: Report, options: RenderOptions) -> str:
    t, d = report.target, report.draft
    rows = [
        ("file", os.path.basename(t.resolved_path or t.location), os.path.basename(d.resolved_path or d.location)),
        ("architecture", t.identity.architecture or "-", d.identity.architecture or "-"),
        ("name / size", _name(t), _name(d)),
    ]
    if t.vocab.loadable or t.vocab.tokenizer_model or d.vocab.tokenizer_model:
        rows += [
            ("vocab (pre)", _vocab_kind(t), _vocab_kind(d)),
            ("tokens", str(t.vocab.n_tokens), str(d.vocab.n_tokens)),
            ("BOS", _special(t, t.vocab.bos_id, t.vocab.add_bos), _special(d, d.vocab.bos_id, d.vocab.add_bos)),
            ("EOS", _special(t, t.vocab.eos_id, t.vocab.add_eos), _special(d, d.vocab.eos_id, d.vocab.add_eos)),
            ("EOT / EOG", _eog(t), _eog(d)),
        ]
    fps = report.fingerprints
    label_width = max(len(label) for label, _, _ in [*rows, ("fingerprint", "", "")])
    # what each value column has, as computed below for the table
    gaps = 2 if report.draftless else 4
    width = max(12, (options.width - label_width - gaps) // (1 if report.draftless else 2))
    if fps.get("target") is not None or fps.get("draft") is not None:
        rows.append(("fingerprint", _fingerprint(fps.get("target"), width), _fingerprint(fps.get("draft"), width)))
    # Sized in terminal columns (text_base.cells), not characters: a token text with wide
    # characters (DeepSeek's '<｜begin▁of▁sentence｜>') keeps the columns in line.
    if report.draftless:  # no draft model: the target alone
        value_width = max(12, options.width - label_width - 2)
        alone = [(label, _cell(label, a, value_width)) for label, a, _ in rows]
        return simple_table(("", "target"), alone)
    # Two value columns share what is left after the label and the 2-space gaps.
    value_width = max(12, (options.width - label_width - 4) // 2)
    table = [(label, _cell(label, a, value_width), _cell(label, b, value_width)) for label, a, b in rows]
    return simple_table(("", "target", "draft"), table)


_LABELS = {PASS: ("pass", "green"), FAIL: ("FAIL", "red"), SKIP: ("skip", "yellow"), WARN: ("warn", "yellow")}
_ABORT_LABEL = ("abort", "red")


def _finding_lines(item: Finding, options: RenderOptions, fix_label: str, shown_fixes: set[str]) -> list[str]:
    aborts = item.status == WARN and item.details.get("aborts") is True
    label, color = _ABORT_LABEL if aborts else _LABELS.get(item.status, (item.status, "dim"))
    head = f"{item.code} {item.name}: {item.message}"
    if item.status in (PASS, FAIL, SKIP) or aborts:
        head = f"{label} {head}"
    lines = wrap(head, options.width, "  ", "    ")
    if options.color and (item.status in _LABELS or aborts) and lines[0].lstrip().startswith(label):
        lines[0] = lines[0].replace(label, paint(label, color, options), 1)
    if item.fix and item.fix not in shown_fixes:
        shown_fixes.add(item.fix)
        if item.fix.startswith("paircheck "):
            # A command to paste is never wrapped: on the label's line when it fits, else alone.
            one = f"       see: {item.fix}"
            lines += [one] if len(one) <= options.width else ["       see:", f"         {item.fix}"]
        else:
            lines += wrap(f"{fix_label}: {item.fix}", options.width, "       ", "  ")
    return lines


def notes_lines(report: Report, options: RenderOptions) -> list[str]:
    """Source notes, labelled by side; a note both sides share is printed once."""
    t_notes, d_notes = report.target.notes, [] if report.draftless else report.draft.notes
    lines: list[str] = []
    for note in dict.fromkeys(t_notes + d_notes):
        side = "both" if note in t_notes and note in d_notes else "target" if note in t_notes else "draft"
        lines += wrap(f"note ({side}): {note}", options.width)
    return lines


def next_lines(steps: Iterable[str], options: RenderOptions) -> list[str]:
    steps = list(steps)
    if not steps:
        return []
    lines = ["", "Next:"]
    for step in steps:
        lines += prose_or_command(step, options.width - 2, "  ")
    return lines


def render_report(report: Report, options: RenderOptions) -> str:
    lines = verdict_lines(report, options)
    if report.memory is not None:  # --ctx/--vram: one line on memory in the verdict area
        from paircheck._format.text_fit import memory_line, render_fit_table  # only then: fit's code

        lines += wrap(memory_line(report.memory), options.width)
    if report.engine_version:  # which release(s) of the engine this verdict holds for
        # Wrapped first, painted after: colour codes take no columns.
        lines += [paint(line, "dim", options) if options.color else line
                  for line in wrap(f"rules: {report.engine_version}", options.width, "  ", "  ")]
    lines += ["", side_table(report, options), ""]
    if report.memory is not None and options.verbose:
        lines += [render_fit_table(report.memory), ""]
    lines.append(f"Checks ({report.engine} order):")
    fixes: set[str] = set()
    for check in report.checks:
        if check.status != PASS or options.verbose:
            lines += _finding_lines(check, options, "fix", fixes)
    passed = [c.name for c in report.checks if c.status == PASS]
    if passed and not options.verbose:
        done = wrap(f"pass {', '.join(dict.fromkeys(passed))}", options.width, "  ")
        done[0] = done[0].replace("pass", paint("pass", "green", options), 1)
        lines += done
    if report.engine_says:
        lines += wrap(f"{report.engine} itself would say: {report.engine_says}", options.width, "  ")
    if report.warnings:
        said = ("the ones marked abort are why the verdict is ABORTS AT RUN TIME" if report.run_time_aborts
                else "the verdict stands")
        lines += ["", *wrap(f"Warnings ({said}; {report.engine} will not tell you these):", options.width)]
        for w in report.warnings:
            lines += _finding_lines(w, options, "what to do", fixes)
    if report.registry:
        lines += [
            "",
            *wrap(
                "Known pairs (paircheck's registry of documented pairs; the verdict above is the engine's):",
                options.width,
            ),
        ]
        for f in report.registry:
            lines += _finding_lines(f, options, "what to do", fixes)
    notes = notes_lines(report, options)
    if notes:
        lines += ["", *notes]
    lines += next_lines(report.next_steps, options)
    return "\n".join(lines)


# --- every engine (--engine all) -------------------------------------------------------

_OK = {ACCEPTED: ("yes", "green"), REFUSED: ("NO", "red"), ABORTS: ("abort", "red")}


def matrix_reason(report: Report) -> str:
    first = report.first_failure
    if first is not None:
        return f"{first.code} {first.message}"
    if report.run_time_aborts:
        abort = report.run_time_aborts[0]
        return f"{abort.code} {abort.details.get('abort') or abort.message}"
    unknown = report.unknowns
    if unknown:
        return f"{unknown[0].code} {unknown[0].message}"
    return "; ".join(c.message for c in report.checks[-1:])


def render_matrix(reports: list[Report], options: RenderOptions) -> str:
    accepted = [r.engine for r in reports if r.verdict == ACCEPTED]
    head = f"{len(accepted)} of {len(reports)} engines accept this pair"
    if reports:
        head += f" ({reports[0].target.display_name} + {reports[0].draft.display_name})"
    engine_width = max(len(r.engine) for r in reports) if reports else 8
    method_width = max(len(r.method) for r in reports) if reports else 8
    name_width = max(engine_width, method_width)
    # tabulate makes a column at least its header and two spaces wide: "ok" takes 4, not 3,
    # and the 80 columns were 81 for a matrix of "NO" and "yes" only; "off" is a word too.
    ok_width = max([len("ok") + 2, len("off")] + [len(_OK.get(r.verdict, ("yes?", ""))[0]) for r in reports])
    # engine | ok | reason | how it fails. An engine's own error text is long (a vLLM or SGLang
    # message runs to a dozen lines in a cell): the cell points to it, printed whole below.
    said: dict[str, list[str]] = {}
    fails_cells = []
    for r in reports:
        fails = "-" if r.compatible else ""
        if r.first_failure is not None and r.engine_says:
            engines = said.setdefault(r.engine_says, [])
            engines.append(r.engine)
            fails = f"its error [{list(said).index(r.engine_says) + 1}] below"
        if r.run_time_aborts:
            fails = "aborts at run time"
        if r.outcome == RUNS_USELESS and not r.engine_says:
            fails = "no error: it starts, and the draft proposes nothing useful"
        fails_cells.append(fails)
    rest = max(30, options.width - name_width - ok_width - 2 - 2 - 2)
    # tabulate makes a column at least its header and two spaces wide.
    fails_width = max(len("how it fails") + 2, min(max(map(len, fails_cells), default=0), 20, rest // 3))
    reason_width = max(20, rest - fails_width)
    rows = []
    for r, fails in zip(reports, fails_cells, strict=True):
        ok, color = _OK.get(r.verdict, ("yes?", "yellow"))
        if r.outcome == RUNS_WITHOUT_SPECULATION:
            ok = "off"
        rows.append(
            (
                f"{r.engine}\n{r.method}",
                paint(ok, color, options),
                cell(matrix_reason(r), reason_width),
                cell(fails, fails_width),
            )
        )
    from tabulate import tabulate

    table = tabulate(rows, headers=("engine", "ok", "reason", "how it fails"), tablefmt="simple", disable_numparse=True)
    lines = [*wrap(head, options.width), "", table, ""]
    if said:
        lines.append("Each engine's own error, as it prints it:")
        for n, (text, engines) in enumerate(said.items(), 1):
            lines += wrap(f"[{n}] {', '.join(engines)}: {text}", options.width, "  ", "    ")
        lines.append("")
    lines += wrap(
        "ok: yes = accepted, yes? = accepted on what could be checked (a value was unknown), abort = accepted at "
        "load, predicted to abort at run time, NO = refused, off = runs without speculation",
        options.width,
    )
    lines.append("Versions the verdicts are for:")
    for r in reports:
        lines += wrap(f"{r.engine}: {r.engine_version}", options.width, "  ", "  ")
    fixes = {r.first_failure.fix for r in reports if r.first_failure is not None and r.first_failure.fix}
    if fixes:
        lines += ["", "Fixes:"]
        for fix in sorted(fixes):
            lines += textwrap.wrap(fix, options.width, initial_indent="  - ", subsequent_indent="    ",
                                   break_on_hyphens=False, break_long_words=False)
    lines += [
        "",
        *wrap(
            "Details for one engine: paircheck --engine NAME TARGET DRAFT; a rule: paircheck explain CODE",
            options.width,
        ),
    ]
    return "\n".join(lines)
