"""What ``paircheck scan --hub`` adds to a scan's text and JSON.

Text: one line under the verdict saying what the Hub search cost (or why it was not made),
the calls that failed, the candidates over the read budget, and for each usable draft from
the Hub the command that downloads exactly the file judged and the launch line. JSON: per
candidate ``repo``, ``file``, ``download`` and ``access``; at the top ``requests``; calls
that failed, candidates not read and an offline Hub are entries of ``unreadable``.
"""

from __future__ import annotations

import os
import shlex
from typing import Any

from paircheck._format.interface import RenderOptions
from paircheck._format.text_base import wrap
from paircheck.constants import LLAMACPP
from paircheck.findings import ACCEPTED
from paircheck.scan.hub_candidates import GGUF_ENGINES
from paircheck.scan.hub_scan import HubReport, HubScanResult
from paircheck.scan.result import CandidateResult

MAX_OTHERS = 4  # other quantizations named in the text (the rest counted)


def _files_of(repo: str, files: tuple[str, ...]) -> str:
    """A shell word that is the local path of a Hub file once downloaded: ``hf download``
    prints the path (the snapshot folder for several files) and downloads nothing twice."""
    command = shlex.join(["hf", "download", repo, *files, "--quiet"])
    return f'"$({command})"' + ("/" + shlex.quote(files[0]) if len(files) > 1 else "")


def _target_word(result: HubScanResult) -> str | None:
    hub = result.hub
    if hub is not None and hub.target_files is not None:
        return _files_of(*hub.target_files)
    path = result.target.resolved_path
    if path and "://" not in path and os.path.isfile(path):
        return shlex.quote(path)
    return None  # a Hugging Face folder or repo: llama-server loads GGUF files


def _draft_word(result: HubScanResult, c: CandidateResult) -> str | None:
    hub = result.hub
    facts = hub.facts.get(c.location) if hub is not None else None
    if c.where == "hub" and facts is not None and facts.file:
        return _files_of(facts.repo or "", facts.shards or (facts.file,))
    if c.where not in ("hub", "registry") and os.path.isfile(c.location):
        return shlex.quote(c.location)
    return None


def llamacpp_accepts(result: HubScanResult, c: CandidateResult) -> bool:
    if c.engines:
        return c.engines.get(LLAMACPP) == ACCEPTED
    return result.engine == LLAMACPP and c.usable is True


def candidate_launch(result: HubScanResult, c: CandidateResult | None) -> str | None:
    """``llama-server -m TARGET -md DRAFT --spec-type METHOD`` for a draft llama.cpp accepts,
    with Hub files fetched by ``hf download`` in place; None when either side is not a GGUF."""
    if c is None or not llamacpp_accepts(result, c):
        return None
    target, draft = _target_word(result), _draft_word(result, c)
    if target is None or draft is None:
        return None
    if c.probed_slower or c.gpu_slower:
        return f"llama-server -m {target}"  # no draft is predicted faster: run without one
    method = result.hub.method if result.hub is not None else "draft-simple"
    # The fastest draft length on the named GPU, else a local draft's measured by `scan --probe`,
    # as the plain scan's line says.
    k = c.gpu_draft_max if c.gpu_draft_max is not None else c.measured_draft_max
    p = c.gpu_p_min if c.gpu_draft_max is not None else c.measured_p_min
    n_max = f" --spec-draft-n-max {k}" if k is not None else ""
    n_max += f" --spec-draft-p-min {p:g}" if k is not None and p else ""
    return f"llama-server -m {target} -md {draft} --spec-type {method}{n_max}"


def head_lines(result: HubScanResult, options: RenderOptions) -> list[str]:
    """The line under the verdict: what the Hub search cost, or why there was none."""
    hub = result.hub
    if hub is None:
        return []
    if hub.offline is not None:
        return wrap(f"{hub.offline}: the registry's documented drafts and this machine's models only",
                    options.width, hanging="  ")
    more = f", {len(hub.not_read)} more not read (--hub-reads {hub.budget.reads})" if hub.not_read else ""
    cached = f" ({hub.cached} from the cache)" if hub.cached else ""
    judged = hub.reads + hub.cached
    text = (f"Hub: {judged} candidate{'s' if judged != 1 else ''} judged from their headers"
            f"{cached}{more}; {hub.api_calls} API call{'s' if hub.api_calls != 1 else ''} (at most "
            f"{hub.budget.calls}), {hub.requests} request{'s' if hub.requests != 1 else ''} in all")
    return wrap(text, options.width, hanging="  ")


def sections(result: HubScanResult, options: RenderOptions) -> list[str]:
    """After the table and reasons: failed calls, what was not read, and how to get each usable
    draft from the Hub."""
    hub = result.hub
    if hub is None:
        return []
    lines: list[str] = []
    if hub.notes:
        lines += ["", "Hub search:"]
        for note in hub.notes:
            lines += wrap(note, options.width, indent="  ", hanging="    ")
    if hub.not_read:
        names = [getattr(hub.facts.get(spec), "label", None) or spec for spec in hub.not_read]
        lines += ["", *wrap(f"not read (the budget of {hub.budget.reads} reads is spent; --hub-reads raises it): "
                            + ", ".join(names), options.width, hanging="  ")]
    ranked = [(i, c) for i, c in enumerate(result.candidates, 1) if c.where == "hub" and c.usable]
    if ranked:
        lines += ["", "get a draft from the Hub (the file judged, then the launch line):"]
        gguf_engine = result.engine in GGUF_ENGINES
        for i, c in ranked:
            facts = hub.facts.get(c.location)
            if facts is None or facts.download is None:
                continue
            if facts.others:
                shown = ", ".join(facts.others[:MAX_OTHERS]) + (", ..." if len(facts.others) > MAX_OTHERS else "")
                note = f" ({len(facts.others)} other quantizations, same vocabulary: {shown})"
            elif not facts.file and gguf_engine:
                note = " (a Hugging Face model: llama.cpp needs it converted by convert_hf_to_gguf.py)"
            else:
                note = ""
            lines += wrap(f"{i:>3}  {c.name or c.location}{note}", options.width, hanging="     ")
            lines.append(facts.download)  # commands: never wrapped, so they can be pasted
            launch = candidate_launch(result, c)
            if launch:
                lines.append(launch)
    return lines


def json_fields(doc: dict[str, Any], result: HubScanResult) -> None:
    """Add ``repo``, ``file``, ``download`` and ``access`` to every candidate and ``requests`` at
    the top; the Hub's failed calls, unread candidates and an offline Hub go to ``unreadable``."""
    hub: HubReport | None = result.hub
    if hub is None:
        return
    for row in doc["candidates"]:
        facts = hub.facts.get(row["location"])
        if facts is not None:
            row.update(repo=facts.repo, file=facts.file, download=facts.download, access=facts.access)
        elif row["found_in"] == "huggingface" and row["name"]:
            is_file = os.path.isfile(row["location"])
            row.update(repo=row["name"], file=os.path.basename(row["location"]) if is_file else None,
                       download=None, access=None)
        else:
            row.update(repo=None, file=None, download=None, access=None)
    extra = [{"location": hub.endpoint, "error": hub.offline}] if hub.offline else []
    extra += [{"location": hub.endpoint, "error": note} for note in hub.notes]
    extra += [{"location": spec, "error": f"not read: the budget of {hub.budget.reads} reads is spent "
                                           "(--hub-reads raises it)"} for spec in hub.not_read]
    doc["unreadable"] = [*doc["unreadable"], *extra]
    doc["requests"] = hub.requests
