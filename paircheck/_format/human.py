"""The report for people: a verdict line, a side-by-side table, findings, what to do."""

from __future__ import annotations

import os
from paircheck._format.wrap import wrap


from paircheck.model import ModelDescription
from paircheck.report import FAIL, PASS, Report
from paircheck.textshow import show

WIDTH = 100
VALUE_WIDTH = 40  # per side: label column + two of these fit in WIDTH


def _clip(text: str, width: int = VALUE_WIDTH) -> str:
    if len(text) <= width:
        return text
    keep = width - 3
    return text[: keep // 2] + "..." + text[len(text) - (keep - keep // 2) :]


def verdict_line(report: Report) -> str:
    where = f"{report.engine} {report.method}"
    if report.compatible:
        extra = f" ({len(report.warnings)} warning{'s' if len(report.warnings) != 1 else ''})" if report.warnings else ""
        return f"COMPATIBLE for {where}{extra}"
    first = report.first_failure
    assert first is not None
    return f"NOT COMPATIBLE for {where}: {first.message}"


def _special(desc: ModelDescription, token_id: int, added: bool) -> str:
    v = desc.vocab
    if token_id < 0:
        text = "none"
    else:
        text = f"{token_id} {show(v.text(token_id), 18)}"
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
    shown = ", ".join(f"{i} {show(v.text(i), 14)}" for i in others[:2])
    return shown + (f" +{len(others) - 2}" if len(others) > 2 else "")


def side_table(report: Report) -> str:
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
    if fps.get("target") is not None or fps.get("draft") is not None:
        rows.append(("fingerprint", _fingerprint(fps.get("target")), _fingerprint(fps.get("draft"))))
    rows = [(label, _clip(a), _clip(b)) for label, a, b in rows]
    from tabulate import tabulate  # imported when rendering, so `-q`/`--json` skip it

    return tabulate(rows, headers=("", "target", "draft"), tablefmt="simple", disable_numparse=True)


def _fingerprint(fp: object) -> str:
    full = getattr(fp, "full", None)
    return full or "- (not loadable or no texts)"


def _vocab_kind(desc: ModelDescription) -> str:
    v = desc.vocab
    model = v.tokenizer_model or "?"
    pre = f", pre {v.pre}" if v.pre else ""
    return f"{v.vocab_type_name} ({model}{pre})"


def _wrap(text: str, indent: str) -> list[str]:
    return wrap(text, WIDTH, initial_indent=indent, subsequent_indent=indent + "  ") or [indent]


def render_human(report: Report, verbose: bool = False) -> str:
    lines = [verdict_line(report)]
    if report.memory is not None:
        from paircheck.fit.render import memory_line, render_table

        lines.append(memory_line(report.memory))
    lines += ["", side_table(report), ""]
    if report.memory is not None and verbose:
        lines += [render_table(report.memory), ""]
    lines.append(f"Checks ({report.engine} order):")
    fixes_shown: set[str] = set()
    for check in report.checks:
        if check.status == PASS and not verbose:
            continue
        label = {PASS: "pass", FAIL: "FAIL"}.get(check.status, check.status)
        lines += _wrap(f"{label} {check.code} {check.name}: {check.message}", "  ")
        if check.fix and check.fix not in fixes_shown:
            fixes_shown.add(check.fix)
            lines += _wrap(f"fix: {check.fix}", "       ")
    passed = [c.name for c in report.checks if c.status == PASS]
    if passed and not verbose:
        lines += _wrap(f"pass {', '.join(dict.fromkeys(passed))}", "  ")
    if report.engine_says:
        lines += _wrap(f"{report.engine} itself would say: {report.engine_says}", "  ")
    if report.warnings:
        lines += ["", f"Warnings (the verdict stands; {report.engine} will not tell you these):"]
        for w in report.warnings:
            lines += _wrap(f"{w.code} {w.name}: {w.message}", "  ")
            if w.fix:
                lines += _wrap(f"what to do: {w.fix}", "       ")
    if report.registry:
        lines += ["", "Known pairs (paircheck's registry of documented pairs; the verdict above is the engine's):"]
        for f in report.registry:
            lines += _wrap(f"{f.code} {f.name}: {f.message}", "  ")
            if f.fix:
                lines += _wrap(f"see: {f.fix}" if f.fix.startswith("paircheck ") else f"what to do: {f.fix}", "       ")
    for note in report.target.notes + report.draft.notes:
        lines += _wrap(f"note: {note}", "")
    if report.next_steps:
        lines += [""] + [line for step in report.next_steps for line in _wrap(f"Next: {step}", "")]
    return "\n".join(lines)
