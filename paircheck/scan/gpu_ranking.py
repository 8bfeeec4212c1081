"""``scan --gpu``: every usable draft's tokens/s predicted on one device, and the ranking by it.

The same prediction as ``estimate --gpu`` (``speed.on_gpu.predict_speed``, the one function
every speed answer comes from), at each draft's fastest setting, from the acceptance a probe
measured for it (``scan --probe``) or else the assumed reference acceptance, said as such;
the pair's weights and KV caches are held to the device's memory, and a pair that does not fit
ranks after those that do.
"""

from __future__ import annotations

from paircheck.hardware.device import Hardware
from paircheck.scan.result import REFERENCE_ACCEPTANCE, CandidateResult, ScanResult
from paircheck.speed.acceptance import Acceptance
from paircheck.speed.on_gpu import GIB, predict_speed, shape_of
from paircheck.speed.roofline import Shape
from paircheck.weights import description_weight_bytes
from paircheck.workload import Workload


def predict_candidates(result: ScanResult, hardware: Hardware, basis: str, note: str,
                       workload: Workload | None = None) -> ScanResult:
    """``result`` with each usable candidate's prediction on ``hardware``, ranked by it."""
    w = workload or Workload()
    wb = description_weight_bytes(result.target)
    device: dict[str, object] = {
        "gpu": {"name": hardware.name, "bandwidth_gbs": hardware.bandwidth_gbs, "memory_gib": hardware.memory_gib,
                "source": hardware.source},
        "hardware_basis": basis, "note": note, "context": w.context_tokens, "workload": w.to_dict(),
        "target_tokens_per_s": None,
    }
    result.device = device
    if wb is None:
        device["problem"] = "the target has no tensor infos here (a vocab-only file, or one shard of several)"
        return result
    target = shape_of(result.target, wb)
    if hardware.memory_gib is not None:
        depth = (w.context_tokens + w.n_predict) * w.parallel
        device["target_fits"] = target.memory_bytes(depth) <= hardware.memory_gib * GIB
    for c in result.candidates:
        _predict(c, target, hardware, basis, w, device)
    result.candidates.sort(key=CandidateResult.sort_key)
    return result


def _predict(c: CandidateResult, target: Shape, hardware: Hardware, basis: str, w: Workload,
             device: dict[str, object]) -> None:
    if not c.usable or c.shape is None:
        return
    v = c.shape
    draft = Shape(float(v["dense_bytes"]), float(v["expert_bytes"]), int(v["experts"]), int(v["experts_used"]),
                  float(v["kv_bytes_per_token"]), float(v["stored_bytes"]), str(v.get("weights", "k")),
                  float(v.get("bits_per_weight", 0.0)))
    measured = c.measured_acceptance is not None
    acceptance = c.measured_acceptance if c.measured_acceptance is not None else REFERENCE_ACCEPTANCE
    pred = predict_speed(hardware, basis, target, draft,
                         Acceptance(acceptance, basis="measured" if measured else "assumed"), workload=w)
    c.gpu_tokens_per_s, c.gpu_speedup, c.gpu_draft_max = pred.pair_tokens_per_s, pred.speedup, pred.draft_max
    c.gpu_p_min = pred.p_min
    c.gpu_fits = pred.fits
    c.gpu_acceptance_basis = "measured" if measured else "assumed"
    device["target_tokens_per_s"] = pred.target_tokens_per_s
