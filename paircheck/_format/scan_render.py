"""How a scan (``paircheck scan``, ``paircheck T D1 D2 ...``) is rendered, as text and as JSON.

Text: a verdict line, the ranked table, then a ready ``llama-server`` line for the best
usable draft (real paths, shell-quoted, never wrapped). JSON: the names the README
documents (``target``, ``candidates``, ``unreadable``, ``cache``), schema_version 3.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Callable
from types import ModuleType
from typing import TYPE_CHECKING, Any, cast

from paircheck._format.interface import RenderOptions
from paircheck._format.json_side import describe_side
from paircheck._format.text_base import row_ranges, simple_table, wrap
from paircheck._format.text_report import next_lines
from paircheck.scan.result import NO_TENSORS, REFERENCE_ACCEPTANCE, CandidateResult, ScanResult
from paircheck.sizes import format_size

if TYPE_CHECKING:
    from paircheck.scan.hub_scan import HubScanResult


def _hub(result: ScanResult) -> HubScanResult | None:
    """The result as a `scan --hub` result, or None. Known by its ``hub`` field rather than by
    isinstance, so that rendering a scan of this machine loads none of the Hub's code."""
    return cast("HubScanResult", result) if hasattr(result, "hub") else None


def _hub_render() -> ModuleType:
    from paircheck._format import hub_scan_render

    return hub_scan_render

# 3: a candidate's verdict may be "aborts" (accepted at load, predicted to abort: not usable);
# 2: the target object is the check's schema 2 side; modelled speedup and memory.
SCAN_SCHEMA_VERSION = 3
_MIN_LABEL = 16


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
    if c.measured_speedup is not None:
        return f"{c.measured_speedup:.2f}x*"  # * acceptance measured by the probe
    return f"{c.modelled_speedup:.2f}x" if c.modelled_speedup is not None else "-"


def _gpu_speed(c: CandidateResult) -> str:
    if c.gpu_tokens_per_s is None:
        return "-"
    mark = "*" if c.gpu_acceptance_basis == "measured" else ""
    return f"{c.gpu_tokens_per_s:.0f}{'!' if c.gpu_fits is False else ''}{mark}"


def _memory(c: CandidateResult) -> str:
    return format_size(c.memory_bytes) if c.memory_bytes is not None else "-"


def _home_short(path: str) -> str:
    home = os.path.expanduser("~")
    return "~" + path[len(home):] if home not in ("", "/") and path.startswith(home + os.sep) else path


def _label(c: CandidateResult) -> str:
    """What a person recognises: Ollama's name:tag, a Hub repo and its file, else the path."""
    if c.where == "ollama" and c.name:
        return f"{c.name} (ollama)"
    if c.where in ("hub", "registry"):
        return c.name or c.location  # from the Hub: REPO:QUANT as llama.cpp's -hf spells it
    if c.name:
        return f"{c.name}: {os.path.basename(c.location)}"
    return _home_short(c.location)


def wrap_name(text: str, width: int) -> str:
    """A name or path over as many lines as it needs, broken after "/", "-" or a space (never
    cut off, so two rows that differ only at the end are still told apart)."""
    pieces = re.findall(r"[^/\- ]*(?:[/\- ]|$)", text)
    lines = [""]
    for piece in (p for p in pieces if p):
        while len(piece) > width:  # a piece longer than the column: split it where it must
            room = width - len(lines[-1])
            if room <= 0:
                lines.append("")
                room = width
            lines[-1] += piece[:room]
            piece = piece[room:]
        if len(lines[-1]) + len(piece.rstrip()) > width and lines[-1]:
            lines.append("")
        lines[-1] += piece
    return "\n".join(line.rstrip() for line in lines)


def _shown_path(path: str) -> str:
    """A path for a command printed to paste: relative to the current folder when inside it."""
    try:
        rel = os.path.relpath(path)
    except ValueError:  # another drive (Windows)
        return path
    return rel if not rel.startswith(os.pardir) and os.path.isabs(path) else path


def launch_line(result: ScanResult, relative: bool = False) -> str | None:
    """``llama-server -m TARGET -md BEST --spec-type draft-simple`` when both are GGUF files;
    ``relative``: paths inside the current folder as relative ones (for people; JSON keeps
    them whole)."""
    best = result.best_for_llamacpp
    hub = _hub(result)
    if hub is not None:
        return _hub_render().candidate_launch(hub, best)  # Hub files are fetched by `hf download` in place
    target = result.target.resolved_path or result.target.location
    if best is None or os.path.isdir(best.location) or os.path.isdir(target):
        return None  # llama-server loads GGUF files, not Hugging Face folders
    draft = best.location
    if relative:
        target, draft = _shown_path(target), _shown_path(draft)
    if best.probed_slower or best.gpu_slower:
        return shlex.join(["llama-server", "-m", target])  # no draft is predicted faster: run without one
    line = ["llama-server", "-m", target, "-md", draft, "--spec-type", "draft-simple"]
    if best.gpu_draft_max is not None:
        line += ["--spec-draft-n-max", str(best.gpu_draft_max)]  # the fastest setting on the named GPU
        if best.gpu_p_min:
            line += ["--spec-draft-p-min", f"{best.gpu_p_min:g}"]
    elif best.measured_draft_max is not None:
        line += ["--spec-draft-n-max", str(best.measured_draft_max)]  # the probe's fastest setting
        if best.measured_p_min:
            line += ["--spec-draft-p-min", f"{best.measured_p_min:g}"]
    return shlex.join(line)


# Columns after the name, in order: (header, cell, legend). A column whose every cell is
# empty or "-" is not shown (its width would only say "nothing here").
_COLUMNS: tuple[tuple[str, Callable[[CandidateResult], str]], ...] = (
    ("fails", lambda c: c.first_failure or ""),
    ("known", _documented),
    ("cost", _ratio),
    ("MODELLED", _speedup),
    ("tok/s", _gpu_speed),
    ("memory", _memory),
)
_LEGEND = {
    "known": "known: the pair is documented in paircheck's registry (vocab: the draft is recognised only by its "
             "vocabulary fingerprint, which a family shares).",
    "cost": "cost: the draft's weight bytes read per token / the target's (lower is faster).",
    "MODELLED": f"MODELLED: the speedup Leviathan et al.'s model gives at an assumed acceptance of "
                f"{REFERENCE_ACCEPTANCE} with the best draft length, not a measurement (`paircheck bench run` "
                "measures).",
    "memory": "memory: target + draft as llama-server allocates them at the target's training context.",
    "tok/s": "tok/s: PREDICTED on the device named above at each draft's best draft length (from an assumed "
             f"acceptance of {REFERENCE_ACCEPTANCE} unless marked *), by paircheck.speed's roofline; !: the pair "
             "does not fit the device's memory.",
}
_WEIGHT_COLUMNS = ("cost", "MODELLED", "memory")


def _device_lines(result: ScanResult, width: int) -> list[str]:
    """With --gpu: what the target alone and the best draft are predicted to do on it."""
    from paircheck.speed.model import MIN_GAIN

    dev = result.device
    if dev is None:
        return []
    gpu = dev["gpu"]
    lines = wrap(f"device: {dev['note']}", width)
    alone = dev.get("target_tokens_per_s")
    if dev.get("problem"):
        return lines + wrap(f"no speed predicted on {gpu['name']}: {dev['problem']}", width)
    rated = [c for c in result.candidates if c.usable and c.gpu_speedup is not None]
    if not rated or alone is None:
        return lines + wrap(f"no speed predicted on {gpu['name']}: no usable draft has tensor infos", width)
    best = rated[0]
    if dev.get("target_fits") is False:
        return lines + wrap(
            f"the target alone does not fit the {gpu['memory_gib']:g} GiB of {gpu['name']} (weights and KV cache "
            f"at {dev['context']} tokens), with or without a draft: `paircheck fit` says what does; PREDICTED "
            f"{alone:.1f} tokens/s for it were it to fit", width)
    if best.gpu_speedup is None or best.gpu_speedup < MIN_GAIN or best.gpu_fits is False:
        return lines + wrap(
            f"no draft is predicted to help on this GPU: PREDICTED {alone:.1f} tokens/s for the target alone on "
            f"{gpu['name']}, the best draft {best.gpu_speedup:.2f}x"
            + (", and target + draft do not fit its memory" if best.gpu_fits is False else ""), width)
    return lines + wrap(
        f"PREDICTED on {gpu['name']}: {best.gpu_tokens_per_s:.1f} tokens/s with {_label(best)} at draft max "
        f"{best.gpu_draft_max}" + (f", p-min {best.gpu_p_min:g}" if best.gpu_p_min else "")
        + f", {best.gpu_speedup:.2f}x the target alone ({alone:.1f} tokens/s)", width)


_STORE_NAMES = {"huggingface": "the Hugging Face cache", "lmstudio": "LM Studio", "llama.cpp": "llama.cpp's cache",
                "ollama": "Ollama's store"}


def _searched_lines(result: ScanResult, width: int) -> list[str]:
    """Where the scan looked: the folders by path, the stores by name (`scan --help` gives
    their paths), the ones not on this machine apart, so "0 candidates" says where."""
    if result.places is None:
        return []
    looked: list[str] = []
    missing: list[str] = []
    for place in result.places:
        if place.where in _STORE_NAMES:
            name = _STORE_NAMES[place.where]
            if place.exists and name not in looked:
                looked.append(name)
            if name in missing and place.exists:
                missing.remove(name)
            elif not place.exists and name not in looked and name not in missing:
                missing.append(name)
        else:
            shown = _home_short(place.path) + (f" ({place.where})" if place.where != "given" else "")
            (looked if place.exists else missing).append(shown)
    said = "searched here: " + (", ".join(looked) if looked else "nothing" if missing else
                           "nothing (--no-default-dirs, and no folder given)")
    gone = f"not on this machine: {', '.join(missing)}" if missing else ""
    if all(len(place) <= width // 2 for place in looked):
        return wrap(said + (f"; {gone}" if gone else ""), width)
    # long paths: a folder per line, whole, so that each can be copied (a wrapped one cannot)
    return ["searched here:", *(f"  {place}" for place in looked), *(wrap(gone, width) if gone else [])]


def render_scan_text(result: ScanResult, options: RenderOptions) -> str:
    n_usable = len(result.usable)
    head = (f"{n_usable} usable draft{'s' if n_usable != 1 else ''} for {result.target.display_name} "
            f"({result.engine}) among {len(result.candidates)} candidate{'s' if len(result.candidates) != 1 else ''}")
    unchecked = result.unchecked
    if unchecked and not n_usable:
        # "0 usable" would read as "none works" for drafts that were never read.
        hub = _hub(result)
        why = hub.hub.offline if hub is not None and hub.hub is not None else None
        if why is not None:
            why = " (offline)" if why.startswith("offline") else " (the Hub could not be reached)"
        head += f"; {len(unchecked)} not checked{why or ''}"
    lines = [*wrap(head, options.width), *_device_lines(result, options.width),
             *(_hub_render().head_lines(_hub(result), options) if _hub(result) is not None else []),
             *_searched_lines(result, options.width), ""]
    if result.candidates:
        every = result.engine == "all"
        # With --engine all the failing code is llama.cpp's (the first engine's).
        columns: list[tuple[str, Callable[[CandidateResult], str]]] = [
            ("engines" if every else "usable", _accepted_by if every else _usable_word)]
        # On a named GPU its predicted tokens/s replace the device-free MODELLED ratio.
        on_gpu = any(c.gpu_tokens_per_s is not None for c in result.candidates)
        columns += [(h, f) for h, f in _COLUMNS
                    if any(f(c) not in ("", "-") for c in result.candidates) and not (on_gpu and h == "MODELLED")]
        cells = [[f(c) for _, f in columns] for c in result.candidates]
        number = len(str(len(result.candidates)))
        fixed = sum(max(len(h), *(len(row[i]) for row in cells)) for i, (h, _) in enumerate(columns))
        # Two spaces between columns: "#", the name, and the short ones.
        room = max(_MIN_LABEL, options.width - max(1, number) - fixed - 2 * (len(columns) + 1))
        rows = [(str(i), wrap_name(_label(c), room), *row)
                for i, (c, row) in enumerate(zip(result.candidates, cells, strict=True), 1)]
        lines.append(simple_table(("#", "draft", *(h for h, _ in columns)), rows))
        lines.append("")
        shown = [h for h, _ in columns]
        legend = " ".join(_LEGEND[h] for h in shown if h in _LEGEND)
        if legend:
            lines += wrap(legend, options.width)
        if any(c.measured_speedup is not None for c in result.candidates):
            lines += wrap(f"*: acceptance MEASURED on llama-server by paircheck probe ({result.probe_file}), speed "
                          "PREDICTED from the costs it measured on this machine at the fastest setting (the launch "
                          "line's --spec-draft-n-max).", options.width)
        hidden = [h for h in _WEIGHT_COLUMNS if h not in shown and not (on_gpu and h == "MODELLED")]
        if hidden and len(unchecked) == len(result.candidates):
            lines += wrap(f"{', '.join(hidden)}: not shown, no candidate was read.", options.width)
        elif hidden:
            lines += wrap(f"{', '.join(hidden)}: not shown, no candidate has tensor infos (vocab-only files have no "
                          "weights to model speed or memory from).", options.width)
        elif any(c.modelled_speedup is None or c.memory_bytes is None for c in result.candidates):
            lines += wrap(NO_TENSORS, options.width)
        if not n_usable and any(c.checks_passed is not None for c in result.candidates):
            checks = "llama.cpp's" if result.engine == "all" else f"{result.engine}'s"
            lines += wrap(f"None usable; the nearest first: accepted at load before refused, then the more of "
                          f"{checks} checks passed (in its order), then the larger share of the target's token "
                          "texts in the draft's vocabulary.", options.width)
        reasons = [(i, c) for i, c in enumerate(result.candidates, 1) if c.reason or c.size_warning]
        if reasons:
            lines += ["", "why:"]
            # One line per distinct reason, with every row it holds for: 35 candidates refused
            # for the same reason were 35 copies of one line.
            grouped: dict[str, list[int]] = {}
            for i, c in reasons:
                if c.reason:  # a reason without a code: not checked (needs access, documented only)
                    text = f"{c.first_failure}: {c.reason}" if c.first_failure else c.reason
                else:
                    text = f"warning: {c.size_warning}"
                if every and c.first_failure and c.engines:
                    text = f"{next(iter(c.engines))}: {text}"  # the first engine's failure
                grouped.setdefault(text, []).append(i)
            for text, rows_of in grouped.items():
                label = row_ranges(rows_of)
                lines += wrap(f"{label:>3}  {text}", options.width,
                              hanging=" " * (max(3, len(label)) + 2))
    else:
        lines.append("no candidate models found")
    if result.skipped_same_model:
        lines += ["", *wrap("left out, the target itself or a copy of it (the same file, or the same size "
                            "and the same metadata and tensors):", options.width)]
        lines += [f"  {_home_short(path)}" for path in result.skipped_same_model]  # whole, never wrapped
    if result.unreadable:
        lines += ["", "unreadable (left out):"]
        for u in result.unreadable:
            lines.append(f"  {_home_short(u.location)}")  # a path: whole on its line, never wrapped
            lines += wrap(u.error, options.width, indent="    ", hanging="  ")
    if _hub(result) is not None:
        lines += _hub_render().sections(_hub(result), options)
    line = launch_line(result, relative=True)
    best = result.best_for_llamacpp
    if line and best is not None and best.gpu_slower and result.device is not None:
        why = ("target + draft do not fit its memory" if best.gpu_fits is False else
               "no draft is predicted faster than the target alone there")
        lines += ["", *wrap(f"RUN WITHOUT A DRAFT on {result.device['gpu']['name']}: {why} (the best, {_label(best)}, "
                            f"{best.gpu_speedup:.2f}x):", options.width), line]
    elif line and best is not None and best.probed_slower:
        lines += ["", *wrap("RUN WITHOUT A DRAFT: paircheck probe predicts no probed draft faster than the target "
                            f"alone on this machine (the best, {_label(best)}, {best.measured_speedup:.2f}x):",
                            options.width), line]
    elif line:
        lines += ["", "best draft for llama.cpp, ready to run:", line]  # a command: never wrapped
    lines += next_lines(result.next_steps, options)  # no usable draft: the check's draftless way
    return "\n".join(lines)


def scan_to_dict(result: ScanResult) -> dict[str, Any]:
    doc = {
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
                "measured_acceptance": c.measured_acceptance,
                "measured_draft_max": c.measured_draft_max,
                "measured_speedup": c.measured_speedup,
                "measured_p_min": c.measured_p_min,
                "predicted_tokens_per_s": c.predicted_tokens_per_s,
                "gpu_tokens_per_s": None if c.gpu_tokens_per_s is None else round(c.gpu_tokens_per_s, 2),
                "gpu_speedup": None if c.gpu_speedup is None else round(c.gpu_speedup, 3),
                "gpu_draft_max": c.gpu_draft_max, "gpu_p_min": c.gpu_p_min,
                "gpu_fits": c.gpu_fits,
                "gpu_acceptance_basis": c.gpu_acceptance_basis,
                "checks_passed": c.checks_passed,
                "shared_texts": c.shared_texts,
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
        "next_steps": list(result.next_steps),
        "probe": result.probe_file,
        "device": result.device,
    }
    if _hub(result) is not None:
        _hub_render().json_fields(doc, _hub(result))  # repo, file, download, access; requests
    return doc
