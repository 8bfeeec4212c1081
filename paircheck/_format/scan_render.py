"""How a scan (``paircheck scan``, ``paircheck T D1 D2 ...``) is rendered, as text and as JSON.

Text: a verdict line, the ranked table, then a ready ``llama-server`` line for the best
usable draft (real paths, shell-quoted, never wrapped). JSON: the names the README
documents (``target``, ``candidates``, ``unreadable``, ``cache``), schema_version 2.
"""

from __future__ import annotations

import os
import shlex
from typing import Any

from paircheck._format.interface import RenderOptions
from paircheck._format.json_format import describe_side
from paircheck._format.text import wrap
from paircheck.fit import format_size
from paircheck.scan import NO_TENSORS, REFERENCE_ACCEPTANCE, CandidateResult, ScanResult

SCAN_SCHEMA_VERSION = 2  # 2: the target object is the check's schema 2 side; modelled speedup and memory
# Each short column is as wide as its widest cell or its header plus tabulate's 2-space
# header padding, whichever is more (#: 3, usable: 8, fails: 7, known: 7, cost: 6,
# MODELLED: 10, memory: 9 for "123.4 GiB"), and columns are 2 spaces apart.
_FIXED = 3 + 8 + 7 + 7 + 6 + 10 + 9 + 7 * 2
_MIN_LABEL = 12


def _usable_word(c: CandidateResult) -> str:
    return {True: "yes", False: "no", None: "unknown"}[c.usable]


def _accepted_by(c: CandidateResult) -> str:
    names = c.accepted_by
    shown = f" ({names[0]})" if len(names) == 1 else ""
    return f"{len(names)}/{len(c.engines)}{shown}"


def _ratio(c: CandidateResult) -> str:
    return f"{c.cost_ratio:.2f}" if c.cost_ratio is not None else "-"


def _documented(c: CandidateResult) -> str:
    # "vocab": recognised only by a vocabulary fingerprint, which a family shares (see `paircheck T D`).
    return "" if not c.documented else ("vocab" if c.documented_by == "vocabulary" else "yes")


def _speedup(c: CandidateResult) -> str:
    return f"{c.modelled_speedup:.2f}x" if c.modelled_speedup is not None else "-"


def _memory(c: CandidateResult) -> str:
    return format_size(c.memory_bytes) if c.memory_bytes is not None else "-"


def _home_short(path: str) -> str:
    home = os.path.expanduser("~")
    return "~" + path[len(home):] if home not in ("", "/") and path.startswith(home + os.sep) else path


def _label(c: CandidateResult) -> str:
    """What a person recognises: Ollama's name:tag, a Hub repo and its file, else the path."""
    if c.where == "ollama" and c.name:
        return f"{c.name} (ollama)"
    if c.name:
        return f"{c.name}: {os.path.basename(c.location)}"
    return _home_short(c.location)


def _left_short(text: str, limit: int) -> str:
    return text if len(text) <= limit else "…" + text[len(text) - limit + 1:]


def launch_line(result: ScanResult) -> str | None:
    """``llama-server -m TARGET -md BEST --spec-type draft-simple`` when both are GGUF files."""
    best = result.best_for_llamacpp
    target = result.target.resolved_path or result.target.location
    if best is None or os.path.isdir(best.location) or os.path.isdir(target):
        return None  # llama-server loads GGUF files, not Hugging Face folders
    return shlex.join(["llama-server", "-m", target, "-md", best.location, "--spec-type", "draft-simple"])


def render_scan_text(result: ScanResult, options: RenderOptions) -> str:
    from tabulate import tabulate  # imported when rendering, as the other text renderers do

    n_usable = len(result.usable)
    head = (f"{n_usable} usable draft{'s' if n_usable != 1 else ''} for {result.target.display_name} "
            f"({result.engine}) among {len(result.candidates)} candidate{'s' if len(result.candidates) != 1 else ''}")
    lines = [head, ""]
    if result.candidates:
        # Short columns only, so the table fits; each refusal's whole reason follows it.
        labels = [_label(c) for c in result.candidates]
        label_max = min(max(map(len, labels)), max(_MIN_LABEL, options.width - _FIXED))
        every = result.engine == "all"
        rows = [
            (i, _left_short(label, label_max), _accepted_by(c) if every else _usable_word(c), c.first_failure or "",
             _documented(c), _ratio(c), _speedup(c), _memory(c))
            for i, (c, label) in enumerate(zip(result.candidates, labels, strict=True), 1)
        ]
        # With --engine all the failing code is llama.cpp's (the first engine's).
        headers = ("#", "draft", "engines" if every else "usable", "fails", "known", "cost", "MODELLED",
                   "memory")
        lines.append(str(tabulate(rows, headers=headers, tablefmt="simple", disable_numparse=True)))
        lines.append("")
        lines += wrap("known: the pair is documented in paircheck's registry (vocab: the draft is recognised "
                      "only by its vocabulary fingerprint, which a family shares). "
                      "cost: the draft's weight bytes read per token / the target's (lower is faster). "
                      f"MODELLED: the speedup Leviathan et al.'s model gives at an assumed acceptance of "
                      f"{REFERENCE_ACCEPTANCE} with the best draft length, not a measurement (`paircheck bench run` "
                      "measures). memory: target + draft as llama-server allocates them at the target's "
                      "training context.", options.width)
        if any(c.modelled_speedup is None or c.memory_bytes is None for c in result.candidates):
            lines += wrap(NO_TENSORS, options.width)
        reasons = [(i, c) for i, c in enumerate(result.candidates, 1) if c.reason or c.size_warning]
        if reasons:
            lines += ["", "why:"]
            for i, c in reasons:
                text = f"{c.first_failure}: {c.reason}" if c.reason else f"warning: {c.size_warning}"
                if every and c.reason:
                    text = f"{next(iter(c.engines))}: {text}"  # the first engine's failure
                lines += wrap(f"{i:>3}  {text}", options.width, hanging="     ")
    else:
        lines.append("no candidate models found")
    if result.skipped_same_model:
        n = len(result.skipped_same_model)
        lines += ["", f"left out: {n} cop{'ies' if n > 1 else 'y'} of the target itself"]
    if result.unreadable:
        lines += ["", "unreadable (left out):"]
        for u in result.unreadable:
            lines.append(f"  {_home_short(u.location)}")  # a path: whole on its line, never wrapped
            lines += wrap(u.error, options.width, indent="    ", hanging="  ")
    line = launch_line(result)
    if line:
        lines += ["", "best draft for llama.cpp, ready to run:", line]  # a command: never wrapped
    return "\n".join(lines)


def scan_to_dict(result: ScanResult) -> dict[str, Any]:
    return {
        "schema_version": SCAN_SCHEMA_VERSION,
        "kind": "scan",
        "engine": result.engine,
        "target": describe_side(result.target),
        "candidates": [
            {
                "rank": i,
                "location": c.location,
                "name": c.name,
                "found_in": c.where,
                "source_kind": c.form,
                "usable": c.usable,
                "verdict": c.verdict,
                "first_failure": c.first_failure,
                "reason": c.reason,
                "documented": c.documented,
                "documented_by": c.documented_by,
                "file_bytes": c.file_bytes,
                "cost_ratio": c.cost_ratio,
                "size_warning": c.size_warning,
                "modelled_speedup": c.modelled_speedup,
                "modelled_draft_max": c.modelled_draft_max,
                "memory_bytes": c.memory_bytes,
                **({"engines": c.engines} if c.engines else {}),
            }
            for i, c in enumerate(result.candidates, 1)
        ],
        "unreadable": [{"location": u.location, "error": u.error} for u in result.unreadable],
        "same_as_target": list(result.skipped_same_model),
        "searched": list(result.searched),
        "cache": {"hits": result.cache_hits, "misses": result.cache_misses},
        "modelled_acceptance": REFERENCE_ACCEPTANCE,
        "launch": launch_line(result),
    }
