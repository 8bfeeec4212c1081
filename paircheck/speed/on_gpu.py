"""``estimate --gpu`` and ``scan --gpu``: tokens per second on a GPU that was not measured,
for the target alone and with a draft, at the best draft length.

The work comes from an acceptance (a probe's replayed counts, a documented measurement, a
given rate, or an assumed band, each said as such); the costs come from the roofline
(``speed.roofline``) for the named device; both go through the one speed model
(``speed.model.predict``). The models are read for what one evaluation reads: their weight
bytes per token (tensor infos), their routed experts, and their KV cache per token of context.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from paircheck.errors import InputError
from paircheck.hardware.device import Hardware
from paircheck.model import ModelDescription
from paircheck.speed.model import MIN_GAIN, Costs, Prediction, Work, expected_work, predict
from paircheck.speed.model_bytes import ON_GPU, read_weight_bytes
from paircheck.speed.roofline import FITTED, Constants, Shape, roofline_costs
from paircheck.weights import WeightBytes

# Without a measured, documented or given acceptance: the middle of estimate's band, and the band.
ASSUMED_ACCEPTANCE = 0.7
BAND = (0.5, 0.6, 0.7, 0.8, 0.9)
# Draft lengths searched for the best (llama-server's --spec-draft-n-max defaults to 16 in
# the server; longer drafts rarely pay on a GPU).
K_SEARCH = tuple(range(1, 17))
# Context assumed when none is given: a short chat (prompt and answer together).
DEFAULT_CONTEXT = 1024
F16_BYTES = 2
GIB = 1 << 30


def kv_bytes_per_token(desc: ModelDescription) -> float:
    """Bytes of f16 K and V that one token of context adds and every decode reads again (the
    attention layers only; 0 when the model's hyperparameters cannot be read)."""
    from paircheck.fit.hparams import read_hparams
    from paircheck.fit.tensors import with_tensor_infos

    try:
        meta = desc.metadata if desc.hf is None else with_tensor_infos(desc).metadata
        hp = read_hparams(meta)
    except (InputError, ValueError, TypeError):
        return 0.0
    per = 0
    for il in range(hp.n_layer):
        if not hp.is_recr[il]:
            per += hp.n_embd_k_gqa(il) + hp.n_embd_v_gqa(il)
    return float(per * F16_BYTES)


# llama.h's llama_ftype values (general.file_type) by how the weights are stored.
_FLOAT_FTYPES = {0, 1, 32}  # ALL_F32, MOSTLY_F16, MOSTLY_BF16
_LEGACY_FTYPES = {2, 3, 7, 8, 9}  # MOSTLY_Q4_0, Q4_1, Q8_0, Q5_0, Q5_1


def weights_kind(desc: ModelDescription) -> str:
    """``Shape.weights`` from a GGUF's general.file_type; a Hugging Face folder's safetensors
    are floats (F16/BF16); anything else counts as a K-quant mix."""
    if desc.hf is not None:
        return "float"
    ftype = desc.metadata.get("general.file_type")
    if isinstance(ftype, int):
        if ftype in _FLOAT_FTYPES:
            return "float"
        if ftype in _LEGACY_FTYPES:
            return "legacy"
    return "k"


def shape_of(desc: ModelDescription, wb: WeightBytes) -> Shape:
    """What one evaluation of ``desc`` reads (see speed.roofline.Shape)."""
    experts = wb.expert_count or 0
    used = wb.expert_used_count or 0
    routed_per_token = wb.expert_bytes * used / experts if experts else 0.0
    return Shape(dense_bytes=wb.per_token - routed_per_token, expert_bytes=float(wb.expert_bytes),
                 experts=experts, experts_used=used, kv_bytes_per_token=kv_bytes_per_token(desc),
                 stored_bytes=float(wb.total), weights=weights_kind(desc))


@dataclass(frozen=True)
class LengthPoint:
    draft_max: int
    pair_tokens_per_s: float
    speedup: float


@dataclass(frozen=True)
class BandPoint:
    acceptance: float
    draft_max: int
    pair_tokens_per_s: float
    speedup: float


@dataclass
class GpuPrediction:
    """Predicted on ``hardware``: the target alone, and the pair at ``draft_max`` (the best
    draft length unless one was given). ``acceptance_basis``: ``measured`` (a probe),
    ``documented`` (the registry), ``given`` (--acceptance) or ``assumed``."""

    hardware: Hardware
    hardware_basis: str  # "table", "given" (--bandwidth) or "detected" (nvidia-smi...)
    context: int
    acceptance: float | None
    acceptance_basis: str
    acceptance_note: str | None
    draft_max: int
    target_tokens_per_s: float
    pair_tokens_per_s: float
    speedup: float
    by_length: list[LengthPoint] = field(default_factory=list)
    band: list[BandPoint] = field(default_factory=list)
    target_shape: Shape | None = None
    draft_shape: Shape | None = None
    constants: Constants = FITTED
    # The work per draft length: "replayed" (a probe's counts, exact for its texts) or "iid"
    # (Leviathan et al.'s expected work at the acceptance).
    work_basis: str = "iid"

    @property
    def faster(self) -> bool:
        return self.speedup >= MIN_GAIN

    @property
    def memory_needed_gib(self) -> float | None:
        """Both models' weights and KV caches at the context (None without the shapes)."""
        if self.target_shape is None or self.draft_shape is None:
            return None
        return (self.target_shape.memory_bytes(self.context) + self.draft_shape.memory_bytes(self.context)) / GIB

    @property
    def fits(self) -> bool | None:
        need, have = self.memory_needed_gib, self.hardware.memory_gib
        return None if need is None or have is None else need <= have

    def to_dict(self) -> dict[str, object]:
        """The documented ``predicted`` object of ``estimate --gpu --json``."""
        return {
            "gpu": self.hardware_dict(),
            "hardware_basis": self.hardware_basis,
            "context": self.context,
            "target_tokens_per_s": round(self.target_tokens_per_s, 2),
            "pair_tokens_per_s": round(self.pair_tokens_per_s, 2),
            "speedup": round(self.speedup, 3),
            "draft_max": self.draft_max,
            "acceptance": self.acceptance,
            "acceptance_basis": self.acceptance_basis,
            "acceptance_note": self.acceptance_note,
            "costs_basis": "roofline",
            "work_basis": self.work_basis,
            "memory_needed_gib": None if self.memory_needed_gib is None else round(self.memory_needed_gib, 2),
            "fits": self.fits,
            "by_draft_max": [{"draft_max": p.draft_max, "pair_tokens_per_s": round(p.pair_tokens_per_s, 2),
                              "speedup": round(p.speedup, 3)} for p in self.by_length],
            "band": [{"acceptance": b.acceptance, "draft_max": b.draft_max,
                      "pair_tokens_per_s": round(b.pair_tokens_per_s, 2), "speedup": round(b.speedup, 3)}
                     for b in self.band],
        }

    def hardware_dict(self) -> dict[str, object]:
        hw = self.hardware
        return {"name": hw.name, "bandwidth_gbs": hw.bandwidth_gbs, "memory_gib": hw.memory_gib, "source": hw.source}


def _best(preds: dict[int, Prediction]) -> int:
    """The fastest draft length (the shortest on a tie, as the probe's recommendation)."""
    return max(preds, key=lambda k: (round(preds[k].speedup, 6), -k))


def predict_works(works: dict[int, Work], costs: Costs) -> dict[int, Prediction]:
    out = {}
    for k, w in works.items():
        p = predict(w, costs)
        if p is not None and p.pair_tokens_per_s is not None:
            out[k] = p
    return out


def predict_on(
    hardware: Hardware,
    hardware_basis: str,
    target: Shape,
    draft: Shape,
    acceptance: float | None,
    acceptance_basis: str,
    acceptance_note: str | None = None,
    draft_max: int | None = None,
    context: int = DEFAULT_CONTEXT,
    works: dict[int, Work] | None = None,
    constants: Constants = FITTED,
) -> GpuPrediction:
    """The prediction (pure). ``works``: measured work per draft length (a probe's replayed
    counts) instead of the i.i.d. work at ``acceptance``; without an acceptance the assumed
    one (``ASSUMED_ACCEPTANCE``) is used and the band is filled."""
    if hardware.bandwidth_gbs <= 0:
        raise InputError("--bandwidth", f"must be > 0, got {hardware.bandwidth_gbs:g}")
    if context < 0:
        raise InputError("--ctx", f"must be >= 0, got {context}")
    if draft_max is not None and draft_max < 1:
        raise InputError("--draft-max", f"must be >= 1, got {draft_max}")
    costs = roofline_costs(target, draft, hardware, context, constants)
    assumed = acceptance is None and works is None
    work_basis = "iid" if works is None else "replayed"
    a = ASSUMED_ACCEPTANCE if assumed else acceptance
    lengths = K_SEARCH if draft_max is None else tuple(sorted({*K_SEARCH, draft_max}))
    if works is None:
        assert a is not None
        works = {k: expected_work(a, k) for k in lengths}
    preds = predict_works(works, costs)
    if not preds:
        raise InputError("--from", "no draft length to predict")
    k = draft_max if draft_max is not None else _best(preds)
    if k not in preds:
        raise InputError("--draft-max", f"no counts for draft length {k} (have {min(preds)}..{max(preds)})")
    at = preds[k]
    band = []
    if assumed:
        for b in BAND:
            bp = predict_works({j: expected_work(b, j) for j in lengths}, costs)
            j = draft_max if draft_max is not None else _best(bp)
            band.append(BandPoint(b, j, bp[j].pair_tokens_per_s or 0.0, bp[j].speedup))
    assert at.target_tokens_per_s is not None and at.pair_tokens_per_s is not None
    return GpuPrediction(
        hardware, hardware_basis, context, a, "assumed" if assumed else acceptance_basis, acceptance_note, k,
        at.target_tokens_per_s, at.pair_tokens_per_s, at.speedup,
        by_length=[LengthPoint(j, p.pair_tokens_per_s or 0.0, p.speedup) for j, p in sorted(preds.items())],
        band=band, target_shape=target, draft_shape=draft, constants=constants, work_basis=work_basis,
    )


def shapes(target: ModelDescription, draft: ModelDescription, t_bytes: WeightBytes | None,
           d_bytes: WeightBytes | None) -> tuple[Shape, Shape]:
    """Both models' shapes, reading their tensor infos where the caller has not."""
    t_bytes = t_bytes or read_weight_bytes(target, ON_GPU)
    d_bytes = d_bytes or read_weight_bytes(draft, ON_GPU)
    return shape_of(target, t_bytes), shape_of(draft, d_bytes)


def for_models(target: ModelDescription, draft: ModelDescription, hardware: Hardware, hardware_basis: str,
               acceptance: float | None, acceptance_basis: str, acceptance_note: str | None = None,
               context: int = DEFAULT_CONTEXT, draft_max: int | None = None, works: dict[int, Work] | None = None,
               t_bytes: WeightBytes | None = None, d_bytes: WeightBytes | None = None) -> GpuPrediction:
    """Two models predicted on ``hardware``: an acceptance (and its basis: measured,
    documented, given; None: assumed) or a probe's ``works``, their shapes, the roofline costs."""
    t_shape, d_shape = shapes(target, draft, t_bytes, d_bytes)
    basis = acceptance_basis if acceptance is not None or works is not None else "assumed"
    return predict_on(hardware, hardware_basis, t_shape, d_shape, acceptance, basis, acceptance_note,
                      draft_max, context, works)
