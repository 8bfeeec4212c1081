"""``paircheck estimate --from probe.json``: the speed model on a probe's measured counts.

Here rather than in bench.estimate so that the probe depends on the speed model and not
the other way round (bench.estimate knows nothing of probe results).
"""

from __future__ import annotations

from paircheck.bench.estimate import Estimate, add_size_warning, cost_of, from_counts
from paircheck.model import ModelDescription
from paircheck.probe.result import find_draft, load_result


def estimate_from_probe(
    target: ModelDescription, draft: ModelDescription, path: str, draft_max: int | None = None,
    cost_ratio: float | None = None,
) -> Estimate:
    """Model the speedup on a probe's measured counts for this draft (p-min 0, the default)."""
    data = load_result(path)
    entry = find_draft(data, draft.location, path)
    rows = [(r["draft_max"], r["tokens"], r["passes"], r["drafted"]) for r in entry["by_draft_max"]
            if r.get("p_min") == 0]
    c, t_bytes, d_bytes, source = cost_of(target, draft, cost_ratio)
    temp = (data.get("sampling") or {}).get("temperature") or 0
    note = (f"{path}: measured on llama-server ({'greedy' if not temp else f'temperature {temp:g}'}, "
            f"{len(data.get('prompts', []))} prompts x {data.get('n_predict')} tokens, template "
            f"{data.get('template')}), started {data.get('started_at')}")
    result = from_counts(c, rows, draft_max, entry.get("acceptance_rate"), note, source)
    result.target_bytes, result.draft_bytes = t_bytes, d_bytes
    add_size_warning(result, target, draft, t_bytes, d_bytes)
    return result
