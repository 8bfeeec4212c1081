"""The report for people: a verdict line, a compact side-by-side table, the findings with
their fixes, and what to do next. Lines fit the terminal's width; commands are never
broken, so they can be pasted; colour only when asked for (a terminal without NO_COLOR).
"""

from __future__ import annotations

import os
import re
import shlex
import textwrap
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from paircheck._format.interface import RenderOptions
from paircheck.findings import ACCEPTED, FAIL, PASS, REFUSED, SKIP, WARN, Finding, Report
from paircheck.model import ModelDescription
from paircheck.textshow import show

# The other kinds of result are imported by the renderers that need them: a pair check
# loads no registry, bench, fit, pre-flight or scan code to print its report.
if TYPE_CHECKING:
    from paircheck._registry.entry import RegistryEntry
    from paircheck._registry.identity import ModelIdentity
    from paircheck.bench.compare import Comparison, Spread
    from paircheck.bench.estimate import Estimate
    from paircheck.fit.memory import ModelMemory
    from paircheck.fit.result import FitResult
    from paircheck.preflight.lint import LintResult
    from paircheck.scan import ScanResult

# ANSI SGR codes; used only when RenderOptions.color is set.
_COLORS = {"green": "32", "red": "31", "yellow": "33", "bold": "1", "dim": "2"}
# Lines that start with one of these are command lines: printed whole, never wrapped.
COMMANDS = ("llama-server", "llama-cli", "paircheck", "vllm", "ollama", "python", "huggingface-cli", "hf ")


def paint(text: str, color: str, options: RenderOptions) -> str:
    return f"\x1b[{_COLORS[color]}m{text}\x1b[0m" if options.color else text


def wrap(text: str, width: int, indent: str = "", hanging: str = "  ") -> list[str]:
    """Wrap prose at ``width``; never at hyphens, so flags such as ``--spec-type`` stay whole."""
    return textwrap.wrap(
        text,
        width,
        initial_indent=indent,
        subsequent_indent=indent + hanging,
        break_on_hyphens=False,
        break_long_words=False,
    ) or [indent.rstrip()]


def prose_or_command(text: str, width: int, indent: str = "") -> list[str]:
    """A command line stays on one line (to be pasted); anything else is wrapped."""
    if text.startswith(COMMANDS):
        return [indent + text]
    return wrap(text, width, indent)


# --- one engine ------------------------------------------------------------------------


def verdict_line(report: Report, options: RenderOptions) -> str:
    where = f"{report.engine} {report.method}"
    if report.verdict == REFUSED:
        first = report.first_failure
        assert first is not None
        return f"{paint('NOT COMPATIBLE', 'red', options)} for {where}: {first.message}"
    n = len(report.warnings)
    extra = f" ({n} warning{'s' if n != 1 else ''})" if n else ""
    if report.verdict == ACCEPTED:
        return f"{paint('COMPATIBLE', 'green', options)} for {where}{extra}"
    unknown = ", ".join(c.name for c in report.unknowns)
    return f"{paint('COMPATIBLE AS FAR AS CHECKED', 'yellow', options)} for {where}{extra}; unknown: {unknown}"


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


def _fingerprint(fp: object) -> str:
    return getattr(fp, "full", None) or "- (not loadable or no texts)"


def _cell(text: str, width: int, hyphens: bool = False) -> str:
    """A table cell wrapped onto several lines: long values are never cut. Model names
    may break after a hyphen; other values (flags, token texts) never do."""
    return "\n".join(textwrap.wrap(text, width, break_on_hyphens=hyphens, break_long_words=True)) or "-"


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
    if fps.get("target") is not None or fps.get("draft") is not None:
        rows.append(("fingerprint", _fingerprint(fps.get("target")), _fingerprint(fps.get("draft"))))
    label_width = max(len(label) for label, _, _ in rows)
    from tabulate import tabulate  # imported when rendering, so `-q`/`--json` skip it

    if report.draftless:  # no draft model: the target alone
        value_width = max(12, options.width - label_width - 2)
        alone = [(label, _cell(a, value_width)) for label, a, _ in rows]
        return str(tabulate(alone, headers=("", "target"), tablefmt="simple", disable_numparse=True))
    # Two value columns share what is left after the label and tabulate's 2-space gaps.
    value_width = max(12, (options.width - label_width - 4) // 2)
    cells = [(label, _cell(a, value_width), _cell(b, value_width)) for label, a, b in rows]
    return str(tabulate(cells, headers=("", "target", "draft"), tablefmt="simple", disable_numparse=True))


_LABELS = {PASS: ("pass", "green"), FAIL: ("FAIL", "red"), SKIP: ("skip", "yellow"), WARN: ("warn", "yellow")}


def _finding_lines(item: Finding, options: RenderOptions, fix_label: str, shown_fixes: set[str]) -> list[str]:
    label, color = _LABELS.get(item.status, (item.status, "dim"))
    head = f"{item.code} {item.name}: {item.message}"
    if item.status in (PASS, FAIL, SKIP):
        head = f"{label} {head}"
    lines = wrap(head, options.width, "  ", "    ")
    if options.color and item.status in _LABELS and lines[0].lstrip().startswith(label):
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
    lines = wrap(verdict_line(report, options), options.width)
    if report.memory is not None:  # --ctx/--vram: one line on memory in the verdict area
        lines += wrap(memory_line(report.memory), options.width)
    if report.engine_version:  # which release(s) of the engine this verdict holds for
        lines += wrap(paint(f"rules: {report.engine_version}", "dim", options), options.width, "  ", "  ")
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
        lines += wrap(f"{paint('pass', 'green', options)} {', '.join(dict.fromkeys(passed))}", options.width, "  ")
    if report.engine_says:
        lines += wrap(f"{report.engine} itself would say: {report.engine_says}", options.width, "  ")
    if report.warnings:
        lines += ["", *wrap(f"Warnings (the verdict stands; {report.engine} will not tell you these):", options.width)]
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

_OK = {ACCEPTED: ("yes", "green"), REFUSED: ("NO", "red")}


def matrix_reason(report: Report) -> str:
    first = report.first_failure
    if first is not None:
        return f"{first.code} {first.message}"
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
    # engine | ok | reason | how it fails: the two text columns share what is left.
    rest = max(30, options.width - name_width - 4 - 2 - 2 - 2)
    reason_width = max(20, rest * 3 // 5)
    fails_width = max(12, rest - reason_width)
    rows = []
    for r in reports:
        fails = r.engine_says if r.first_failure is not None and r.engine_says else ("-" if r.compatible else "")
        ok, color = _OK.get(r.verdict, ("yes?", "yellow"))
        rows.append(
            (
                f"{r.engine}\n{r.method}",
                paint(ok, color, options),
                _cell(matrix_reason(r), reason_width),
                _cell(fails, fails_width),
            )
        )
    from tabulate import tabulate

    table = tabulate(rows, headers=("engine", "ok", "reason", "how it fails"), tablefmt="simple", disable_numparse=True)
    lines = [*wrap(head, options.width), "", table, ""]
    lines += wrap(
        "ok: yes = accepted, yes? = accepted on what could be checked (a value was unknown), NO = refused",
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


# --- documented pairs (paircheck pairs) ----------------------------------------------

# Short source kinds keep the terminal table narrow; json/csv/markdown use the full enum.
SOURCE_KIND_SHORT = {"official-docs": "docs", "model-card": "card"}


def render_pairs_table(entries: Sequence[RegistryEntry], options: RenderOptions) -> str:
    """One row per pair. Names wrap inside their column instead of being cut, so two drafts
    of one family (Coder 0.5B and 1.5B) never look alike; every engine is shown."""
    from paircheck._registry.entry import engines_label, evidence_label

    headers = ("target", "draft", "method", "evidence", "engines", "source")
    rows = [
        (
            e.target.name,
            e.draft.name,
            e.method,
            evidence_label(e, with_figure=False),
            engines_label(e, sep=", "),
            SOURCE_KIND_SHORT.get(e.source.kind, e.source.kind),
        )
        for e in entries
    ]
    fixed = [max([len(headers[i])] + [len(r[i]) for r in rows]) for i in (2, 3, 5)]
    from tabulate import tabulate

    # Names and engines share what the short columns leave; tabulate pads a little beyond
    # the text, so measure the rendered table and give less room until it fits.
    room = max(36, options.width - sum(fixed) - 2 * (len(headers) - 1))
    longest = max([len(r[0]) for r in rows] + [len(r[1]) for r in rows])
    while True:
        # Whole names when they fit (rows must stay tellable apart); engines wrap at ", ".
        names = max(12, min(longest, (room - 12) // 2))
        engines = max(10, room - 2 * names)
        cells = [
            (_cell(a, names, True), _cell(b, names, True), c, d, _cell(e, engines), f) for a, b, c, d, e, f in rows
        ]
        text = str(tabulate(cells, headers=headers, tablefmt="simple", disable_numparse=True))
        if max(len(line) for line in text.splitlines()) <= options.width:
            return text
        if room <= 36:  # six columns cannot fit: one block per pair instead of a table
            return "\n".join(_pair_block(row, options) for row in rows)
        room -= 1


def _pair_block(row: tuple[str, ...], options: RenderOptions) -> str:
    target, draft, method, evidence, engines, source = row
    return "\n".join([*wrap(f"{target} + {draft}", options.width, "", "    "),
                      *wrap(f"{method}, {evidence}, {engines} ({source})", options.width, "  ", "  ")])


def render_pairs_details(entries: Sequence[RegistryEntry], options: RenderOptions) -> list[str]:
    """Per entry: what the source shows (never "works" for a suggestion), its quote, caveats."""
    from paircheck._registry.entry import evidence_text

    lines: list[str] = []
    for e in entries:
        lines += wrap(f"{e.target.name} + {e.draft.name} ({e.method}): {evidence_text(e)}", options.width, "", "    ")
        lines += wrap(f'"{e.quote}"', options.width, "  ", "   ")
        for caveat in e.caveats:
            lines += wrap(f"caveat: {caveat}", options.width, "  ", "    ")
        # A URL cannot be wrapped; on a line of its own it still copies cleanly.
        lines += ["  source:", f"    {e.source.url}"]
    return lines


def render_pairs(entries: Sequence[RegistryEntry], query: ModelIdentity | None, options: RenderOptions) -> str:
    if not entries:
        return f"no documented drafts for {query.display()}" if query else "no documented pairs match the filters"
    lines = [f"Documented drafts for {query.display()}:"] if query is not None else []
    lines.append(render_pairs_table(entries, options))
    if query is not None:  # one target's drafts are few: say what each source shows
        lines += ["", *render_pairs_details(entries, options)]
    lines += [
        "",
        *wrap(
            f"{len(entries)} pair(s). Evidence: measured, ran = a source shows the pair running; recommended, "
            "computed = nothing shown running; fails = documented failing; !engine = documented to fail there. "
            "--format json adds quotes, caveats and notes.",
            options.width,
        ),
    ]
    return "\n".join(lines)


# --- measured speed (paircheck bench) and the speed model (paircheck estimate) -------------


def _spread(s: Spread | None, digits: int = 0) -> str:
    if s is None:
        return "-"
    return f"{s.median:.{digits}f} ({s.min:.{digits}f}-{s.max:.{digits}f})"


def _x(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}x"


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.1%}"


def _verdict(comp: Comparison) -> str:
    if comp.speedup is not None:
        word = "faster" if comp.speedup > 1.0 else "slower" if comp.speedup < 1.0 else "no change"
        acc = f", acceptance {_pct(comp.acceptance_rate)}" if comp.acceptance_rate is not None else ""
        return (f"MEASURED: {comp.draft_label} is {comp.speedup:.2f}x the speed of {comp.baseline_label} ({word}) "
                f"on equal work{acc}")
    if comp.time_ratio is not None:
        return (
            f"MEASURED: outputs differ, so no speedup on equal work; time ratio "
            f"{comp.baseline_label}/{comp.draft_label} = {comp.time_ratio:.2f}"
        )
    return "MEASURED: nothing comparable (no complete run over the same prompts on both sides)"


def render_comparison(comp: Comparison, markdown: bool = False) -> str:
    from tabulate import tabulate

    headers = (
        "prompt",
        f"{comp.baseline_label} ms",
        f"{comp.draft_label} ms",
        f"{comp.baseline_label} tok/s",
        f"{comp.draft_label} tok/s",
        "speedup",
        "accept",
        "acc/pass",
        "same output",
    )
    rows = []
    for p in comp.prompts:
        same = "yes" if p.outputs_equal else (f"no, at char {p.difference.position}" if p.difference else "no")
        rows.append(
            (
                p.prompt_id,
                _spread(p.baseline_ms),
                _spread(p.draft_ms),
                _spread(p.baseline_tokens_per_second, 1),
                _spread(p.draft_tokens_per_second, 1),
                _x(p.speedup),
                _pct(p.acceptance_rate),
                "-" if p.accepted_per_pass is None else f"{p.accepted_per_pass:.2f}",
                same,
            )
        )
    rows.append(
        (
            "all prompts",
            _spread(comp.baseline_run_ms),
            _spread(comp.draft_run_ms),
            _spread(comp.baseline_tokens_per_second, 1),
            _spread(comp.draft_tokens_per_second, 1),
            _x(comp.speedup),
            _pct(comp.acceptance_rate),
            "-" if comp.accepted_per_pass is None else f"{comp.accepted_per_pass:.2f}",
            "yes" if comp.outputs_equal else "no",
        )
    )
    lines = [_verdict(comp), ""]
    lines.append(tabulate(rows, headers=headers, tablefmt="github" if markdown else "simple", disable_numparse=True))
    lines.append("")
    lines.append(
        "ms and tok/s: median (min-max) over the measured runs; speedup: median client time "
        "baseline/draft, only where outputs are equal; accept: draft_n_accepted/draft_n."
    )
    for p in comp.prompts:
        d = p.difference
        if d is not None:
            lines.append(
                f"- prompt {p.prompt_id}: outputs differ at char {d.position} "
                f"(baseline {d.baseline_chars} chars/{d.baseline_tokens} tokens, draft {d.draft_chars} chars/"
                f"{d.draft_tokens} tokens): baseline {d.baseline_excerpt!r}, draft {d.draft_excerpt!r}"
            )
    for w in comp.warnings:
        lines.append(f"{'- ' if markdown else ''}warning: {w}")
    for n in comp.notes:
        lines.append(f"{'- ' if markdown else ''}note: {n}")
    return "\n".join(lines)


def render_bench_result(result: dict[str, Any]) -> str:
    """Per prompt: median client time and decode tokens per second, and drafting if any."""
    from tabulate import tabulate

    from paircheck.bench.compare import Spread, acceptance_rates, draft_counts, tokens_per_second
    from paircheck.bench.measure import NOT_MEASURED

    rows = []
    for prompt in result["prompts"]:
        reqs = [r for r in result["requests"] if r["prompt_id"] == prompt["id"]]
        ms = Spread.of([r["client_ms"] for r in reqs])
        tps = Spread.of([t for t in map(tokens_per_second, reqs) if t is not None])
        drafted, accepted, predicted, _ = draft_counts(reqs)
        rate, _ = acceptance_rates(drafted, accepted, predicted)
        rows.append(
            (
                prompt["id"],
                len(reqs),
                "-" if ms is None else f"{ms.median:.0f} ({ms.min:.0f}-{ms.max:.0f})",
                "-" if tps is None else f"{tps.median:.1f}",
                "-" if rate is None else f"{rate:.1%}",
            )
        )
    table = tabulate(
        rows, headers=("prompt", "runs", "client ms", "tok/s", "accept"), tablefmt="simple", disable_numparse=True
    )
    raw = (
        "through the server's chat template" if result["settings"]["chat_template"] else "raw, without a chat template"
    )
    return f"{table}\nnote: prompts sent {raw}; not measured: {', '.join(NOT_MEASURED)}"


def render_estimate(est: Estimate) -> str:
    from tabulate import tabulate

    from paircheck.bench.estimate import K_SEARCH_MAX

    def best(k: int | None) -> str:  # at the search limit the best k is that or more
        return "-" if k is None else f">={k}" if k >= K_SEARCH_MAX else str(k)

    lines = []
    if est.acceptance is not None:
        assert est.speedup is not None and est.expected_tokens_per_pass is not None
        lines.append(
            f"MODELLED (not measured): speedup {est.speedup:.2f}x at acceptance {est.acceptance:.2f}, "
            f"draft max {est.draft_max}, cost ratio {est.cost_ratio:.3f}"
        )
        rows = [
            (
                f"{est.acceptance:.2f}",
                f"{est.expected_tokens_per_pass:.2f}",
                f"{est.speedup:.2f}x",
                best(est.best_draft_max),
                f"{est.best_speedup:.2f}x",
            )
        ]
    else:
        lo, hi = est.band[0], est.band[-1]
        lines.append(
            f"MODELLED (not measured): speedup {lo.speedup:.2f}x..{hi.speedup:.2f}x for acceptance "
            f"{lo.acceptance:.1f}..{hi.acceptance:.1f}, draft max {est.draft_max}, cost ratio {est.cost_ratio:.3f}"
        )
        rows = [
            (
                f"{p.acceptance:.2f}",
                f"{p.expected_tokens_per_pass:.2f}",
                f"{p.speedup:.2f}x",
                best(p.best_draft_max),
                f"{p.best_speedup:.2f}x",
            )
            for p in est.band
        ]
    lines.append("")
    lines.append(
        tabulate(
            rows,
            headers=("acceptance", "tokens/pass", "speedup", "best k", "speedup at best k"),
            tablefmt="simple",
            disable_numparse=True,
        )
    )
    lines.append("")
    if est.target_bytes and est.draft_bytes:
        lines.append(
            f"cost ratio c = draft/target weight bytes read per token = "
            f"{est.draft_bytes.per_token:,} / {est.target_bytes.per_token:,}"
        )
    else:
        lines.append(f"cost ratio c = {est.cost_ratio} (given)")
    if est.acceptance_source and est.acceptance_source.startswith("bench:"):
        lines.append(f"acceptance from {est.acceptance_source[6:]} (draft_n_accepted / draft_n)")
    for w in est.warnings:
        lines.append(f"warning {w.code} {w.name}: {w.message}")
    lines.append(
        "model: Leviathan et al. 2023, E = (1 - a^(k+1)) / (1 - a), speedup = E / (k*c + 1); decoding "
        "assumed memory-bound; ignores the KV cache, prompt processing and batching. "
        "`paircheck bench run` measures instead."
    )
    return "\n".join(lines)


# --- pre-flight lint (paircheck run, lint-cmd, lint-py, lint-modelfile) -------------------


def shell_lines(argv: list[str], width: int) -> list[str]:
    """A command as shell lines of at most ``width`` columns, joined by backslash-newline, so
    the wrapped text still pastes as one command."""
    words: list[str] = []
    for word in argv:  # an option and its value stay on one line
        quoted = shlex.quote(word)
        if words and words[-1].startswith("-") and " " not in words[-1] and not word.startswith("-"):
            words[-1] += " " + quoted
        else:
            words.append(quoted)
    lines: list[str] = []
    current = "  "
    for word in words:
        if current.strip() and len(current) + 1 + len(word) + 2 > width:
            lines.append(current + " \\")
            current = "      " + word
        else:
            current = f"{current} {word}" if current.strip() else current + word
    return lines + [current]


def pasteable(step: str, report: Report) -> str:
    """A "Next:" command with the real paths in place of TARGET and DRAFT, shell-quoted."""
    target = report.target.resolved_path or report.target.location
    draft = report.draft.resolved_path or report.draft.location
    step = re.sub(r"\bTARGET\b", lambda _: shlex.quote(target), step)
    return re.sub(r"\bDRAFT\b", lambda _: shlex.quote(draft), step)


def headline(result: LintResult, pair_check: bool = True) -> str:
    from paircheck.preflight.codes import ERROR
    from paircheck.preflight.lint import FAIL as LINT_FAIL
    from paircheck.preflight.lint import UNCHECKED

    status = result.status(pair_check)
    errors = sum(f.status == ERROR for f in result.findings)
    bad_pairs = [r for r in result.reports if not r.compatible]
    if status == LINT_FAIL:
        parts = ([f"{errors} error{'s' if errors != 1 else ''}"] if errors else []) + (
            [f"{len(bad_pairs)} incompatible pair{'s' if len(bad_pairs) != 1 else ''}"] if bad_pairs else []
        )
        return f"NOT OK: {result.launcher}: " + ", ".join(parts)
    if status == UNCHECKED:
        first = result.unchecked[0]
        return f"NOT CHECKED: {result.launcher}: {first.message}"
    checked = (
        f"{len(result.reports)} pair{'s' if len(result.reports) != 1 else ''} checked"
        if result.reports
        else ("flags checked, pair not read (--no-check)" if not pair_check else "flags checked")
    )
    return f"OK: {result.launcher}: {checked}"


def render_lint(result: LintResult, pair_check: bool, options: RenderOptions) -> str:
    from paircheck.preflight.codes import SEVERITY_WORD

    lines = wrap(headline(result, pair_check), options.width)
    if result.reports:
        rows = []
        for r in result.reports:
            first = r.first_failure
            reason = f"{first.code} {first.message}" if first else "; ".join(c.message for c in r.checks[-1:])
            rows.append((r.method, "yes" if r.compatible else "NO", _cell(reason, max(30, options.width - 30))))
        from tabulate import tabulate

        lines += ["", tabulate(rows, headers=("pair check", "ok", "reason"), tablefmt="simple", disable_numparse=True)]
    if result.findings:
        lines += ["", "Findings:"]
        for f in result.findings:
            word = SEVERITY_WORD.get(f.status, f.status)
            lines += wrap(f"{word} {f.code} {f.name}: {f.message}", options.width, "  ", "  ")
            if f.fix:
                lines += wrap(f"fix: {f.fix}", options.width, "    ", "  ")
    if result.corrected:
        lines += ["", "Corrected command (flags only; the pair check above still applies):"]
        lines += shell_lines(result.corrected, options.width)
    for r in result.reports:
        first = r.first_failure
        if first is not None and first.fix:
            lines += wrap(f"{r.method} fix: {first.fix}", options.width, "  ", "  ")
        for w in r.warnings:
            lines += wrap(f"warning {w.code} {w.name}: {w.message}", options.width, "  ", "  ")
        if not r.compatible and r.next_steps:
            lines += [
                "  Next:",
                *(
                    line
                    for step in r.next_steps
                    for line in prose_or_command(pasteable(step, r), options.width - 4, "    ")
                ),
            ]
    return "\n".join(lines)


# --- memory (paircheck fit, and the check with --ctx/--vram) -------------------------------


def memory_line(result: FitResult) -> str:
    """The one line for the verdict area (also used by the pair check)."""
    from paircheck.fit.sizes import format_size

    who = "target + draft" if result.draft else "target"
    ctx = f"-c {result.target.n_ctx}"
    need = format_size(result.total_device_bytes)
    if result.vram_bytes is None:
        return f"memory: {who} at {ctx} need {need} on the device, {format_size(result.total_host_bytes)} on the host"
    verdict = "fits" if result.fits else "does not fit"
    margin = result.margin_bytes or 0
    spare = f"{format_size(margin)} to spare" if margin >= 0 else f"{format_size(-margin)} short"
    line = f"memory: {who} at {ctx} {verdict} in {format_size(result.vram_bytes)}: need {need} ({spare})"
    if not result.fits and result.max_ctx_that_fits:
        line += f"; -c {result.max_ctx_that_fits} fits"
    return line


def _cells(mem: ModelMemory | None) -> list[tuple[int, int]]:
    if mem is None:
        return []
    return [
        (mem.weights_device, mem.weights_host),
        (mem.kv_device, mem.kv_host),
        (mem.compute_device, mem.compute_host),
        (mem.device_bytes, mem.host_bytes),
    ]


def render_fit_table(result: FitResult) -> str:
    """MiB per part, target and draft, device and host."""
    parts = ("weights", "KV cache + state", "compute (est.)", "total")
    headers = ["MiB", "target device", "target host"]
    if result.draft:
        headers += ["draft device", "draft host"]
    rows = []
    t, d = _cells(result.target), _cells(result.draft)
    for i, part in enumerate(parts):
        row = [part, f"{t[i][0] / 2**20:,.0f}", f"{t[i][1] / 2**20:,.0f}"]
        if d:
            row += [f"{d[i][0] / 2**20:,.0f}", f"{d[i][1] / 2**20:,.0f}"]
        rows.append(row)
    from tabulate import tabulate

    align = ("left",) + ("right",) * (len(headers) - 1)
    return str(tabulate(rows, headers=headers, tablefmt="simple", disable_numparse=True, colalign=align))


def _describe_side(mem: ModelMemory) -> str:
    where = f"{mem.layers_on_device}/{mem.n_layer} layers{' + output' if mem.output_on_device else ''} on the device"
    unified = " (unified KV)" if mem.kv_unified and mem.n_seq_max > 1 else ""
    seqs = f"{mem.n_seq_max} sequence{'s' if mem.n_seq_max > 1 else ''}{unified}"
    return f"{mem.name} ({mem.arch}): -c {mem.n_ctx}, {seqs}, {where}"


def render_fit(result: FitResult, options: RenderOptions) -> str:
    lines = [*wrap(memory_line(result), options.width), ""]
    lines.append(render_fit_table(result))
    lines.append("")
    for mem in (result.target, result.draft):
        if mem is not None:
            lines.append(_describe_side(mem))
            lines += [f"  note: {n}" for n in mem.notes]
    if result.vram_bytes is not None:
        best = result.max_ctx_that_fits
        limit = result.ctx_search_limit or 0
        capped = " (the model's training context: searched no further)" if best and best >= limit else ""
        lines.append(f"largest context that fits: {best or 'none'}{capped}")
    for advice in result.advice:
        lines.append(f"  - {advice}")
    return "\n".join(lines)


class TextFormat:
    name = "text"

    def fit(self, result: FitResult, options: RenderOptions) -> str:
        return render_fit(result, options)

    def scan(self, result: ScanResult, options: RenderOptions) -> str:
        from paircheck._format.scan_render import render_scan_text

        return render_scan_text(result, options)

    def lint(self, result: LintResult, pair_check: bool, options: RenderOptions) -> str:
        return render_lint(result, pair_check, options)

    def comparison(self, comp: Comparison, options: RenderOptions) -> str:
        return render_comparison(comp)

    def estimate(self, est: Estimate, options: RenderOptions) -> str:
        return render_estimate(est)

    def pairs(self, entries: Sequence[RegistryEntry], query: ModelIdentity | None, options: RenderOptions) -> str:
        return render_pairs(entries, query, options)

    def report(self, report: Report, options: RenderOptions) -> str:
        return render_report(report, options)

    def matrix(self, reports: list[Report], options: RenderOptions) -> str:
        return render_matrix(reports, options)
