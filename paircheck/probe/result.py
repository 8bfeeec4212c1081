"""The probe's result file: JSON with a versioned shape, written atomically, read back.

Top level: ``schema_version``, ``kind`` ("paircheck-probe"), ``complete``, ``error``,
``target``, ``prompts`` (ids, kinds, texts), ``n_predict``, ``template`` ("applied" or
"raw"), ``sampling``, ``settings``, ``generations`` (the target's tokens: what was measured),
and ``drafts``. Each draft: ``path``, ``acceptance_rate``, ``best_draft_max``,
``modelled_speedup``, ``cost_ratio``, ``by_draft_max`` (one entry per draft length and
p_min: ``draft_max``, ``p_min``, ``passes``, ``drafted``, ``accepted``, ``accepted_per_pass``,
``tokens``, ``acceptance_rate``, ``modelled_speedup``), ``best``, ``kinds``,
``prompts_detail`` (the same per prompt), and ``traces`` (the draft's recorded guesses).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from paircheck.errors import InputError
from paircheck.probe.summary import DraftSummary, Row
from paircheck.result_file import read_json, write_json

SCHEMA_VERSION = 1
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
        "modelled_speedup": _num(row.modelled_speedup),
    }


def summary_to_dict(summary: DraftSummary) -> dict[str, Any]:
    return {
        "acceptance_rate": _num(summary.acceptance_rate),
        "agreed": summary.agreed,
        "compared": summary.compared,
        "best_draft_max": summary.best_draft_max,
        "modelled_speedup": _num(summary.modelled_speedup),
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


def write_result(path: Path, data: dict[str, Any]) -> None:
    """Whole or not at all: a reader never sees a half-written file."""
    write_json(path, data)


def load_result(path: str) -> dict[str, Any]:
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


def best_length(data: dict[str, Any], draft: str, where: str) -> tuple[int, str] | None:
    """The --spec-draft-n-max the probe measured best for ``draft`` (p-min 0), and how it knows."""
    entry = find_draft(data, draft, where)
    k = entry.get("best_draft_max")
    if not isinstance(k, int):
        return None
    row = next((r for r in entry["by_draft_max"] if r["draft_max"] == k and r["p_min"] == 0), None)
    per_pass = f", {row['accepted_per_pass']:.2f} accepted per target pass" if row else ""
    speed = entry.get("modelled_speedup")
    modelled = f", MODELLED speedup {speed:.2f}x" if isinstance(speed, (int, float)) else ""
    return k, f"The draft length {k} is the best one paircheck probe measured ({where}{per_pass}{modelled})."


def with_draft_length(steps: list[str], k: int) -> list[str]:
    """The launch lines with ``--spec-draft-n-max k`` added to every draft-simple line."""
    out = []
    for step in steps:
        if step.startswith("llama-server ") and "--spec-type draft-simple" in step and "--spec-draft-n-max" not in step:
            step = f"{step} --spec-draft-n-max {k}"
        out.append(step)
    return out
