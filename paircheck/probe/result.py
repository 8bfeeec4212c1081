"""The probe's result file: JSON with a versioned shape, written atomically, read back.

Top level: ``schema_version`` (2), ``kind`` ("paircheck-probe"), ``complete``, ``error``,
``target``, ``prompts`` (ids, kinds, texts), ``n_predict``, ``template`` ("applied" or
"raw"), ``sampling``, ``settings``, ``generations`` (the target's tokens: what was measured),
``calibration`` (what each step costs on this machine, see ``paircheck.probe.calibrate``; null
with ``--no-calibrate``), ``drafts`` and ``recommendation`` (``{"draft": PATH or null,
"draft_max": K, "p_min": P}``: null draft = run without one).

Each draft: ``path``, ``acceptance_rate``, ``best_draft_max``, ``predicted_speedup`` (at it,
p-min 0), ``predicted_best`` (``{draft_max, p_min, tokens_per_s, speedup}`` over every row, or
null), ``costs_basis`` ("measured", "assumed" or null), ``cost_ratio``, ``by_draft_max`` (one
entry per draft length and p_min: ``draft_max``, ``p_min``, ``passes``, ``drafted``,
``accepted``, ``accepted_per_pass``, ``tokens``, ``acceptance_rate``, ``batches`` (target
batches of 1, 2, ... tokens), ``draft_decodes``, ``predicted_tokens_per_s``,
``predicted_speedup``), ``best``, ``kinds``, ``prompts_detail`` (the same per prompt), and
``traces`` (the draft's recorded guesses).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from paircheck.errors import InputError
from paircheck.probe.calibrate import points_from, slot_steps_from
from paircheck.probe.replay import PromptTrace
from paircheck.probe.summary import DraftSummary, Row
from paircheck.result_file import read_json, write_json
from paircheck.speed.model import MIN_GAIN, Costs, for_slots
from paircheck.workload import Workload

SCHEMA_VERSION = 2
KIND = "paircheck-probe"


def _num(x: float | None, digits: int = 4) -> float | int | None:
    if x is None:
        return None
    return int(x) if float(x).is_integer() else round(x, digits)


def row_to_dict(row: Row) -> dict[str, Any]:
    return {
        "draft_max": row.draft_max,
        "p_min": row.p_min,
        "tokens": _num(row.tokens),
        "passes": _num(row.passes),
        "drafted": _num(row.drafted),
        "accepted": _num(row.accepted),
        "accepted_per_pass": _num(row.accepted_per_pass),
        "acceptance_rate": _num(row.acceptance_rate),
        "batches": [_num(b) for b in row.batches],
        "draft_decodes": _num(row.draft_decodes),
        "generations": row.generations,
        "predicted_tokens_per_s": _num(row.predicted_tokens_per_s, 3),
        "predicted_speedup": _num(row.predicted_speedup),
        "predicted_speedup_near_ties": _near_ties(row),
    }


def _near_ties(row: Row) -> list[float | int | None] | None:
    return None if row.near_tie_speedups is None else [_num(x) for x in row.near_tie_speedups]


def best_to_dict(row: Row | None) -> dict[str, Any] | None:
    if row is None or row.predicted is None:
        return None
    return {"draft_max": row.draft_max, "p_min": row.p_min,
            "tokens_per_s": _num(row.predicted.pair_tokens_per_s, 3), "speedup": _num(row.predicted.speedup)}


def summary_to_dict(summary: DraftSummary) -> dict[str, Any]:
    return {
        "acceptance_rate": _num(summary.acceptance_rate),
        "agreed": summary.agreed,
        "compared": summary.compared,
        "best_draft_max": summary.best_draft_max,
        "predicted_speedup": _num(summary.predicted_speedup),
        "predicted_best": best_to_dict(summary.best),
        "costs_basis": None if summary.costs is None else summary.costs.basis,
        "best": None if summary.best is None else row_to_dict(summary.best),
        "by_draft_max": [row_to_dict(r) for r in summary.rows],
        "kinds": [
            {"kind": k.kind, "acceptance_rate": _num(k.acceptance_rate), "best_draft_max": k.best_draft_max,
             "accepted_per_pass": _num(k.accepted_per_pass)}
            for k in summary.kinds
        ],
        "prompts_detail": [
            {"prompt_id": p.prompt_id, "kind": p.kind, "acceptance_rate": _num(p.acceptance_rate),
             "by_draft_max": [row_to_dict(r) for r in p.rows]}
            for p in summary.prompts
        ],
    }


def recommendation(summaries: list[tuple[DraftSummary, bool]]) -> dict[str, Any]:
    """The draft and setting to run: the fastest predicted of the drafts that do not abort
    (``(summary, aborts)`` pairs), if any is predicted faster than the target alone; else
    ``draft`` null, run without one."""
    best: Row | None = None
    path: str | None = None
    for summary, aborts in summaries:
        row = summary.recommended
        if row is None or aborts or row.predicted is None:
            continue
        if best is None or best.predicted is None or row.predicted.speedup > best.predicted.speedup:
            best, path = row, summary.path
    if best is None or best.predicted is None:
        return {"draft": None, "draft_max": None, "p_min": None, "tokens_per_s": None, "speedup": None}
    return {"draft": path, "draft_max": best.draft_max, "p_min": best.p_min,
            "tokens_per_s": _num(best.predicted.pair_tokens_per_s, 3), "speedup": _num(best.predicted.speedup)}


# The reply's positions in groups, short first: acceptance is read where a reply is (its
# start, its middle, deep into a long one), not only as one rate.
POSITION_EDGES = (1, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536)


def agreement_by_position(traces: Sequence[PromptTrace]) -> list[dict[str, Any]]:
    """Greedy agreement (the draft's top token is the target's) per group of reply positions,
    over every prompt: ``[{"from", "to", "agreed", "compared", "rate"}]`` (``to`` exclusive;
    position 0 comes from the prompt pass and is never drafted)."""
    out = []
    longest = max((len(t.target) for t in traces), default=0)
    for lo, hi in zip(POSITION_EDGES, POSITION_EDGES[1:], strict=False):
        if lo >= longest:
            break
        agreed = compared = 0
        for t in traces:
            for j in range(lo, min(hi, len(t.target))):
                compared += 1
                agreed += t.draft_top[j] == t.target[j]
        out.append({"from": lo, "to": min(hi, longest), "agreed": agreed, "compared": compared,
                    "rate": _num(agreed / compared) if compared else None})
    return out


def workload_to_dict(w: Workload, summaries: Sequence[DraftSummary], aborts: Sequence[bool],
                     forced_traces: Sequence[Sequence[PromptTrace]]) -> dict[str, Any]:
    """One grid point of ``workloads``: the target alone and each draft at every setting, per
    request and in aggregate over the ``parallel`` requests at once, and what to run."""
    slots = w.parallel
    target = next((r.predicted.target_tokens_per_s for s in summaries for r in s.rows
                   if r.predicted is not None and r.predicted.target_tokens_per_s is not None), None)

    def agg(x: float | None) -> float | int | None:
        return None if x is None else _num(x * slots, 3)

    drafts = []
    for summary, traces in zip(summaries, forced_traces, strict=True):
        rows = [{"draft_max": r.draft_max, "p_min": r.p_min, "acceptance_rate": _num(r.acceptance_rate),
                 "accepted_per_pass": _num(r.accepted_per_pass),
                 "predicted_tokens_per_s": agg(r.predicted_tokens_per_s),
                 "predicted_tokens_per_s_per_request": _num(r.predicted_tokens_per_s, 3),
                 "predicted_speedup": _num(r.predicted_speedup),
                 "predicted_speedup_near_ties": _near_ties(r)} for r in summary.rows]
        best = best_to_dict(summary.best)
        if best is not None:
            best["tokens_per_s_per_request"], best["tokens_per_s"] = best["tokens_per_s"], agg(best["tokens_per_s"])
        drafts.append({"path": summary.path, "acceptance_rate": _num(summary.acceptance_rate),
                       "agreement_by_position": agreement_by_position(traces), "predicted_best": best,
                       "by_draft_max": rows})
    rec = recommendation(list(zip(summaries, aborts, strict=True)))
    if rec["tokens_per_s"] is not None:
        rec["tokens_per_s_per_request"], rec["tokens_per_s"] = rec["tokens_per_s"], agg(rec["tokens_per_s"])
    return {**w.to_dict(), "target_tokens_per_s": agg(target), "target_tokens_per_s_per_request": _num(target, 3),
            "drafts": drafts, "recommendation": rec}


def costs_in(data: dict[str, Any], index: int, context_tokens: int | None = None, slots: int = 1) -> Costs | None:
    """The costs the probe's calibration measured for its ``index``-th draft with the target
    (None when it measured none, or not the cost per round); at ``context_tokens`` (one of the
    depths it calibrated, else None) and for ``slots`` requests at once, as ``probe`` itself
    priced that workload (the per-round costs fitted at the shallowest depth hold at every
    depth; speed.model.for_slots)."""
    calib = data.get("calibration")
    if not isinstance(calib, dict):
        return None
    target, drafts = calib.get("target"), calib.get("drafts")
    if not isinstance(target, dict) or not isinstance(drafts, list) or index >= len(drafts):
        return None
    draft = drafts[index]
    if not isinstance(draft, dict):
        return None
    # the target's decode as timed between the pair's runs, else its own generations'
    decode = draft.get("target_decode_ms", target.get("decode_ms"))
    values = [decode, draft.get("decode_ms"), draft.get("round_ms"), draft.get("round_token_ms")]
    t_batch, d_batch = points_from(target.get("batch_ms")), points_from(draft.get("batch_ms"))
    listed = calib.get("depths")
    depths: list[Any] = listed if isinstance(listed, list) else []
    shallowest = min((d.get("context_tokens", 0) for d in depths if isinstance(d, dict)), default=0)
    if context_tokens is not None and context_tokens != shallowest:
        at = next((d for d in depths if isinstance(d, dict) and d.get("context_tokens") == context_tokens), None)
        if at is None or not isinstance(at.get("target"), dict) or not isinstance(at.get("drafts"), list) \
                or index >= len(at["drafts"]) or not isinstance(at["drafts"][index], dict):
            return None
        target, draft = at["target"], at["drafts"][index]
        values[:2] = [target.get("decode_ms"), draft.get("decode_ms")]
        t_batch, d_batch = points_from(target.get("batch_ms")), points_from(draft.get("batch_ms"))
    if not all(isinstance(v, (int, float)) for v in values) or t_batch is None or d_batch is None:
        return None
    t, d, r0, r1 = (float(v) for v in values)  # type: ignore[arg-type]
    return for_slots(Costs(t, d, t_batch, d_batch, r0, r1, absolute=True, basis="measured"), slots,
                     target_steps=slot_steps_from(target, slots), draft_steps=slot_steps_from(draft, slots))


def write_result(path: Path, data: dict[str, Any]) -> None:
    """Whole or not at all: a reader never sees a half-written file."""
    write_json(path, data)


def load_probe_result(path: str) -> dict[str, Any]:
    """Read a probe result and check the fields other commands rely on."""
    data = read_json(path, KIND, SCHEMA_VERSION, "probe result")
    drafts = data.get("drafts")
    if not isinstance(drafts, list) or not all(isinstance(d, dict) and isinstance(d.get("path"), str) for d in drafts):
        raise InputError(path, '"drafts" is not a list of objects with a "path"')
    return data


def measured_drafts(data: dict[str, Any]) -> list[dict[str, Any]]:
    """The drafts whose measurement finished (a Ctrl-C'd file may end in a partial one)."""
    return [d for d in data["drafts"] if d.get("complete") and isinstance(d.get("by_draft_max"), list)]


def find_draft(data: dict[str, Any], draft: str, where: str) -> dict[str, Any]:
    """The measured entry for ``draft`` (by path, else by file name); one clear error otherwise."""
    done = measured_drafts(data)
    for key in (lambda d: d["path"] == draft, lambda d: Path(d["path"]).name == Path(draft).name):
        found = [d for d in done if key(d)]
        if len(found) == 1:
            return found[0]
    names = ", ".join(Path(d["path"]).name for d in done) or "none"
    raise InputError(where, f"has no finished measurement of {Path(draft).name} (it has: {names})")


@dataclass(frozen=True)
class ProbeAdvice:
    """What a probe result says to launch a draft with: ``draft_max`` and ``p_min``, or None
    (run without this draft), and a sentence saying how it knows."""

    draft_max: int | None
    p_min: float
    note: str


def advice_for(data: dict[str, Any], draft: str, where: str) -> ProbeAdvice | None:
    """The probe's advice for ``draft`` (None when it predicted nothing for it: no costs)."""
    entry = find_draft(data, draft, where)
    best = entry.get("predicted_best")
    if not isinstance(best, dict) or not isinstance(best.get("draft_max"), int):
        return None
    speed = best.get("speedup")
    if not isinstance(speed, (int, float)):
        return None
    k, p = best["draft_max"], float(best.get("p_min") or 0.0)
    tps = best.get("tokens_per_s")
    setting = f"--spec-draft-n-max {k}" + (f" --spec-draft-p-min {p:g}" if p else "")
    if entry.get("costs_basis") == "measured" and isinstance(tps, (int, float)):
        what = f"{tps:.1f} tokens/s, {speed:.2f}x the target alone, PREDICTED from costs measured on its machine"
    else:
        what = f"{speed:.2f}x the target alone, MODELLED from assumed costs"
    if speed < MIN_GAIN:
        return ProbeAdvice(None, 0.0, f"Run without this draft: the probe ({where}) predicts no setting of it "
                                      f"faster than the target alone (the best, {setting}, {what}).")
    return ProbeAdvice(k, p, f"{setting} is the fastest setting paircheck probe found ({where}: {what}).")


def prediction_for(data: dict[str, Any], draft: str, where: str, draft_max: int | None = None,
                   p_min: float = 0.0) -> dict[str, Any] | None:
    """What the probe predicted for ``draft`` at ``draft_max`` and ``p_min`` (default: its
    fastest setting), to print beside a measurement of the same setting; None when it
    predicted nothing for that setting."""
    entry = find_draft(data, draft, where)
    if draft_max is None:
        best = entry.get("predicted_best")
        if not isinstance(best, dict) or not isinstance(best.get("draft_max"), int):
            return None
        draft_max, p_min = best["draft_max"], float(best.get("p_min") or 0.0)
    row = next((r for r in entry.get("by_draft_max", []) if isinstance(r, dict) and r.get("draft_max") == draft_max
                and r.get("p_min") == p_min), None)
    if row is None or not isinstance(row.get("predicted_speedup"), (int, float)):
        return None
    return {"source": where, "basis": entry.get("costs_basis"), "draft_max": draft_max, "p_min": p_min,
            "tokens_per_s": row.get("predicted_tokens_per_s"), "speedup": row["predicted_speedup"]}


def without_draft(steps: list[str]) -> list[str]:
    """The launch lines with the draft and every speculative flag taken out (and the hints that
    only concern a launch with a draft)."""
    import shlex

    out = []
    for step in steps:
        if step.startswith("Without --spec-type"):
            continue
        if step.startswith("llama-server ") and "--spec-type" in step:
            words = shlex.split(step)
            kept: list[str] = []
            skip = False
            for w in words:
                if skip:
                    skip = False
                    continue
                if w in ("-md", "--model-draft", "--spec-type") or w.startswith("--spec-draft-"):
                    skip = "=" not in w
                    continue
                kept.append(w)
            step = shlex.join(kept)
        out.append(step)
    return out


def with_draft_length(steps: list[str], k: int, p_min: float = 0.0) -> list[str]:
    """The launch lines with ``--spec-draft-n-max k`` (and a p-min above 0) added to every
    draft-simple line."""
    out = []
    extra = f" --spec-draft-n-max {k}" + (f" --spec-draft-p-min {p_min:g}" if p_min else "")
    for step in steps:
        if step.startswith("llama-server ") and "--spec-type draft-simple" in step and "--spec-draft-n-max" not in step:
            step = f"{step}{extra}"
        out.append(step)
    return out
