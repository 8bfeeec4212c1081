"""``paircheck estimate --from probe.json``: the speed model on a probe's measured counts,
priced with the costs the probe measured on its machine (or, for a probe run with
``--no-calibrate``, the assumed ones from the weight bytes).

Here rather than in speed.estimate so that the probe depends on the speed model and not
the other way round (paircheck.speed knows nothing of probe results).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from paircheck.errors import InputError
from paircheck.model import ModelDescription
from paircheck.probe.result import costs_in, find_draft, load_probe_result
from paircheck.speed.estimate import Estimate, MeasuredPoint, add_size_warning, cost_of
from paircheck.speed.model import Costs, Prediction, Work, assumed_costs, predict
from paircheck.speed.model_bytes import GIVE_COST_RATIO, ON_GPU

if TYPE_CHECKING:
    from paircheck.hardware.device import Hardware


def _prediction(row: dict[str, Any], costs: Costs) -> Prediction | None:
    batches = row.get("batches")
    if not isinstance(batches, list) or not all(isinstance(b, (int, float)) for b in batches):
        return None
    work = Work(float(row["tokens"]), tuple(float(b) for b in batches), float(row.get("draft_decodes") or 0),
                float(row.get("generations") or 1))
    return predict(work, costs)


def works_at_p0(rows: list[dict[str, Any]]) -> dict[int, Work]:
    """The replayed work per draft length at p-min 0 (what a GPU prediction prices)."""
    out = {}
    for r in rows:
        batches = r.get("batches")
        if r.get("p_min") == 0 and isinstance(batches, list) and all(isinstance(b, (int, float)) for b in batches):
            out[int(r["draft_max"])] = Work(float(r["tokens"]), tuple(float(b) for b in batches),
                                            float(r.get("draft_decodes") or 0), float(r.get("generations") or 1))
    return out


def estimate_from_probe(
    target: ModelDescription, draft: ModelDescription, path: str, draft_max: int | None = None,
    cost_ratio: float | None = None, hardware: Hardware | None = None, hardware_basis: str = "table",
    context: int | None = None,
) -> Estimate:
    """Predict the speed on a probe's measured counts for this draft, for every draft length
    and p-min it replayed; the single-point fields are at ``draft_max`` (default: the fastest).
    With ``hardware``, ``predicted`` prices the same counts (p-min 0) at the roofline's costs
    for that device instead of the probe machine's."""
    data = load_probe_result(path)
    entry = find_draft(data, draft.location, path)
    costs = None if cost_ratio is not None else costs_in(data, data["drafts"].index(entry))
    t_bytes = d_bytes = None
    if costs is None:
        fix = GIVE_COST_RATIO if hardware is None else ON_GPU
        c, t_bytes, d_bytes, source = cost_of(target, draft, cost_ratio, fix)
        costs = assumed_costs(c)
    else:
        c, source = costs.draft_decode_ms / costs.target_decode_ms, "calibration"
    rows = [r for r in entry["by_draft_max"] if isinstance(r, dict) and isinstance(r.get("draft_max"), int)]
    priced = [(r, p) for r in rows if (p := _prediction(r, costs)) is not None]
    if not priced:
        raise InputError("--from", "the probe result has no counts for this draft")
    best_row, best = max(priced, key=lambda rp: (round(rp[1].speedup, 6), -rp[0]["p_min"], -rp[0]["draft_max"]))
    at_p0 = sorted(((r, p) for r, p in priced if r.get("p_min") == 0), key=lambda rp: rp[0]["draft_max"])
    points = [MeasuredPoint(r["draft_max"], r["tokens"] / r["passes"], r["drafted"] / r["passes"], p.speedup,
                            p.pair_tokens_per_s) for r, p in at_p0 if r.get("passes")]
    k = draft_max or best_row["draft_max"]
    p_min = 0.0 if draft_max else float(best_row["p_min"])
    at = next(((r, p) for r, p in priced if r["draft_max"] == k and r["p_min"] == p_min), None)
    if at is None:
        lengths = f"{min(r['draft_max'] for r in rows)}..{max(r['draft_max'] for r in rows)}"
        raise InputError("--draft-max", f"the probe measured draft lengths {lengths}")
    row, pred = at
    temp = (data.get("sampling") or {}).get("temperature") or 0
    note = (f"{path}: measured on llama-server ({'greedy' if not temp else f'temperature {temp:g}'}, "
            f"{len(data.get('prompts', []))} prompts x {data.get('n_predict')} tokens, template "
            f"{data.get('template')}), started {data.get('started_at')}")
    result = Estimate(
        c, source, k, entry.get("acceptance_rate"), "probe", row["tokens"] / row["passes"], pred.speedup,
        best_row["draft_max"], best.speedup, acceptance_basis="measured", acceptance_note=note, measured=points,
        costs_basis=costs.basis, target_tokens_per_s=pred.target_tokens_per_s, pair_tokens_per_s=pred.pair_tokens_per_s,
        best_p_min=float(best_row["p_min"]),
    )
    if costs.basis == "measured":
        calib = data.get("calibration") or {}
        result.costs_note = (f"costs measured on the probe's machine by llama-server "
                             f"{(calib.get('server') or {}).get('build_info') or ''}, {calib.get('measured_at')}")
    result.target_bytes, result.draft_bytes = t_bytes, d_bytes
    if t_bytes is not None:
        add_size_warning(result, target, draft, t_bytes, d_bytes)
    if hardware is not None:
        from paircheck.speed.on_gpu import DEFAULT_CONTEXT, for_models

        result.predicted = for_models(
            target, draft, hardware, hardware_basis, entry.get("acceptance_rate"), "measured", note,
            DEFAULT_CONTEXT if context is None else context, draft_max, works_at_p0(rows), t_bytes, d_bytes)
    return result
