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
from paircheck.speed.acceptance import Acceptance, Drafting
from paircheck.speed.model import MIN_GAIN, Prediction, Work, predict
from paircheck.speed.model_bytes import ON_GPU, read_weight_bytes
from paircheck.speed.roofline import FITTED, Constants, Shape, evaluation_ms, roofline_costs
from paircheck.weights import WeightBytes
from paircheck.workload import Workload

# Without a measured, documented or given acceptance: the middle of estimate's band, and the band.
ASSUMED_ACCEPTANCE = 0.7
BAND = (0.5, 0.6, 0.7, 0.8, 0.9)
# Draft lengths searched for the best (llama-server's --spec-draft-n-max; longer drafts rarely
# pay on a GPU), and the p-min values (--spec-draft-p-min), as the probe replays them.
K_SEARCH = tuple(range(1, 17))
P_SEARCH = (0.0, 0.5, 0.75, 0.9)
# Context assumed when none is given: the workload's default (a short prompt, nothing before it).
DEFAULT_CONTEXT = Workload().context_tokens
F16_BYTES = 2
GIB = 1 << 30


def kv_bytes_per_token(desc: ModelDescription) -> float:
    """Bytes of f16 K and V that one token of context adds and every decode reads again (the
    attention layers only; 0 when the model's hyperparameters cannot be read)."""
    from paircheck.fit.hparams import read_hparams
    from paircheck.fit.tensors import hparams_metadata

    try:
        meta = hparams_metadata(desc)
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
# The mixes of 2 and 3 bits (MOSTLY_Q2_K, Q3_K_S/M/L, IQ2_XXS, IQ2_XS, Q2_K_S, IQ3_XS, IQ3_XXS,
# IQ1_S, IQ3_S, IQ3_M, IQ2_S, IQ2_M, IQ1_M): their blocks unpack with more arithmetic a byte
# than the 4- to 6-bit K-quants'.
_LOW_BIT_FTYPES = {10, 11, 12, 13, 19, 20, 21, 22, 23, 24, 26, 27, 28, 29, 31}


def weights_kind_of_model(desc: ModelDescription) -> str:
    """``Shape.weights`` from a GGUF's general.file_type; a Hugging Face folder's safetensors
    are floats (F16/BF16); anything else counts as a K-quant mix."""
    if desc.origin.form != "gguf":  # safetensors, as Hugging Face lays a model out
        return "float"
    ftype = desc.metadata.get("general.file_type")
    return weights_kind_of_file_type(ftype if isinstance(ftype, int) else None)


def weights_kind_of_file_type(ftype: int | None) -> str:
    """``Shape.weights`` of a llama.h file type: floats, the legacy blocks, a K-quant mix of 2 or
    3 bits (with the i-quants of those sizes), or another K-quant mix."""
    if ftype in _FLOAT_FTYPES:
        return "float"
    if ftype in _LEGACY_FTYPES:
        return "legacy"
    if ftype in _LOW_BIT_FTYPES:
        return "k-low"
    return "k"


def shape_of(desc: ModelDescription, wb: WeightBytes) -> Shape:
    """What one evaluation of ``desc`` reads (see speed.roofline.Shape)."""
    experts = wb.expert_count or 0
    used = wb.expert_used_count or 0
    routed_per_token = wb.expert_bytes * used / experts if experts else 0.0
    return Shape(dense_bytes=wb.per_token - routed_per_token, expert_bytes=float(wb.expert_bytes),
                 experts=experts, experts_used=used, kv_bytes_per_token=kv_bytes_per_token(desc),
                 stored_bytes=float(wb.total), weights=weights_kind_of_model(desc),
                 bits_per_weight=8.0 * wb.per_token / wb.per_token_elements if wb.per_token_elements else 0.0)


@dataclass(frozen=True)
class LengthPoint:
    draft_max: int
    pair_tokens_per_s: float
    speedup: float
    p_min: float = 0.0


@dataclass(frozen=True)
class BandPoint:
    acceptance: float
    draft_max: int
    pair_tokens_per_s: float
    speedup: float
    p_min: float = 0.0


@dataclass
class GpuPrediction:
    """Predicted on ``hardware`` for ``workload``: the target alone, and the pair at
    ``draft_max`` and ``p_min`` (the fastest setting unless one was given). Tokens per second
    are over all ``workload.parallel`` requests together (``per_request_*``: one request's).
    ``acceptance_basis``: ``measured`` (a probe), ``documented`` (the registry or a published
    point), ``given`` (the command line) or ``assumed``; ``acceptance`` is the per-token rate
    the work was priced at, ``reported`` the figure as it was read, with its setting."""

    hardware: Hardware
    hardware_basis: str  # "table", "given" (--bandwidth) or "detected" (nvidia-smi...)
    context: int  # tokens of context a reply starts from (the workload's)
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
    # (the expected work at the acceptance, speed.acceptance's model of drafting).
    work_basis: str = "iid"
    p_min: float = 0.0
    workload: Workload = field(default_factory=Workload)
    reported: Acceptance | None = None

    @property
    def faster(self) -> bool:
        return self.speedup >= MIN_GAIN

    @property
    def per_request_target_tokens_per_s(self) -> float:
        return self.target_tokens_per_s / self.workload.parallel

    @property
    def per_request_pair_tokens_per_s(self) -> float:
        return self.pair_tokens_per_s / self.workload.parallel

    @property
    def memory_needed_gib(self) -> float | None:
        """Both models' weights and KV caches for every request at its deepest (None without
        the shapes)."""
        if self.target_shape is None or self.draft_shape is None:
            return None
        w = self.workload
        deepest = w.context_tokens + w.n_predict
        kv = (self.target_shape.kv_bytes_per_token + self.draft_shape.kv_bytes_per_token) * deepest * w.parallel
        return (self.target_shape.stored_bytes + self.draft_shape.stored_bytes + kv) / GIB

    @property
    def fits(self) -> bool | None:
        need, have = self.memory_needed_gib, self.hardware.memory_gib
        return None if need is None or have is None else need <= have

    def to_dict(self) -> dict[str, object]:
        """The documented ``predicted`` object of ``estimate --gpu --json``."""
        return {
            "gpu": self.hardware_dict(),
            "hardware_basis": self.hardware_basis,
            "backend": self.hardware.backend or None,
            "context": self.context,
            "workload": self.workload.to_dict(),
            "target_tokens_per_s": round(self.target_tokens_per_s, 2),
            "pair_tokens_per_s": round(self.pair_tokens_per_s, 2),
            "speedup": round(self.speedup, 3),
            "per_request_target_tokens_per_s": round(self.per_request_target_tokens_per_s, 2),
            "per_request_pair_tokens_per_s": round(self.per_request_pair_tokens_per_s, 2),
            "draft_max": self.draft_max,
            "p_min": self.p_min,
            "acceptance": None if self.acceptance is None else round(self.acceptance, 4),
            "acceptance_basis": self.acceptance_basis,
            "acceptance_note": self.acceptance_note,
            "acceptance_reported": None if self.reported is None else self.reported.to_dict(),
            "costs_basis": "roofline",
            "work_basis": self.work_basis,
            "memory_needed_gib": None if self.memory_needed_gib is None else round(self.memory_needed_gib, 2),
            "fits": self.fits,
            "by_draft_max": [{"draft_max": p.draft_max, "p_min": p.p_min, "pair_tokens_per_s": round(
                p.pair_tokens_per_s, 2), "speedup": round(p.speedup, 3)} for p in self.by_length],
            "band": [{"acceptance": b.acceptance, "draft_max": b.draft_max, "p_min": b.p_min,
                      "pair_tokens_per_s": round(b.pair_tokens_per_s, 2), "speedup": round(b.speedup, 3)}
                     for b in self.band],
        }

    def hardware_dict(self) -> dict[str, object]:
        hw = self.hardware
        return {"name": hw.name, "bandwidth_gbs": hw.bandwidth_gbs, "memory_gib": hw.memory_gib, "source": hw.source}


Setting = tuple[int, float]  # (draft max, p-min)


def mean_depth(w: Workload) -> float:
    """The context an average decode of the reply reads: what was there when the reply
    started, and half the reply."""
    return w.context_tokens + w.n_predict / 2


def _parallel(work: Work, target: Shape, draft: Shape, hw: Hardware, w: Workload, c: Constants
              ) -> Prediction | None:
    """``work`` (one request's) done by ``w.parallel`` requests in step, on llama-server's
    loop: each round the target verifies every request's draft in one batch, the draft
    re-evaluates that batch, and the draft's decodes run for all requests at once (the pinned
    ``draft_simple::draft`` batches the sequences still drafting). The requests are taken to
    draft alike (the mean batch and decodes per round); tokens/s are over all of them."""
    n, depth = w.parallel, mean_depth(w)
    rounds = work.rounds
    decodes = max(0.0, work.tokens - work.generations)
    if rounds <= 0 or decodes <= 0:
        return None
    batch = work.batch_tokens / rounds  # one request's tokens per target batch
    steps = work.draft_decodes / rounds
    round_ms = (evaluation_ms(target, hw, n * batch, depth, c, n) + evaluation_ms(draft, hw, n * batch, depth, c, n)
                + steps * evaluation_ms(draft, hw, n, depth, c, n) + c.round_ms)
    pair = rounds * round_ms
    alone = decodes * evaluation_ms(target, hw, n, depth, c, n)
    tokens = n * work.tokens
    return Prediction(alone / pair, tokens * 1000.0 / alone, tokens * 1000.0 / pair)


def price(work: Work, target: Shape, draft: Shape, hw: Hardware, w: Workload, c: Constants = FITTED
          ) -> Prediction | None:
    """What ``work`` takes on ``hw`` for the workload: one request through the speed model
    (``speed.model.predict`` on the roofline's costs), several in step (``_parallel``)."""
    if w.parallel > 1:
        return _parallel(work, target, draft, hw, w, c)
    batches = len(work.batches) + 1
    return predict(work, roofline_costs(target, draft, hw, mean_depth(w), c, max_batch=max(batches, 2)))


def _best(preds: dict[Setting, Prediction]) -> Setting:
    """The fastest setting (on a tie the shorter draft, then the lower p-min, as the probe's
    recommendation)."""
    return max(preds, key=lambda s: (round(preds[s].speedup, 6), -s[0], -s[1]))


def predict_works(works: dict[Setting, Work], target: Shape, draft: Shape, hw: Hardware, w: Workload,
                  c: Constants = FITTED) -> dict[Setting, Prediction]:
    out = {}
    for s, work in works.items():
        p = price(work, target, draft, hw, w, c)
        if p is not None and p.pair_tokens_per_s is not None:
            out[s] = p
    return out


def _iid_works(drafting: Drafting, lengths: tuple[int, ...], p_mins: tuple[float, ...], n_min: int
               ) -> dict[Setting, Work]:
    return {(k, p): drafting.work(k, p, n_min) for k in lengths for p in p_mins}


def predict_speed(
    hardware: Hardware,
    hardware_basis: str,
    target: Shape,
    draft: Shape,
    acceptance: Acceptance | None = None,
    draft_max: int | None = None,
    p_min: float | None = None,
    workload: Workload | None = None,
    works: dict[Setting, Work] | None = None,
    constants: Constants = FITTED,
    draft_min: int | None = None,
) -> GpuPrediction:
    """The one speed answer on a device (pure): ``estimate``, ``scan``, the published points
    and the documented figures all come here.

    The work comes from a probe's replayed counts (``works``, per draft length and p-min),
    else from ``acceptance`` (any kind, converted at the setting it was measured at by
    ``speed.acceptance``), else from the assumed per-token rate (and the band is filled). It is
    priced for ``workload`` (context depth, reply length, requests at once) by the roofline,
    at ``draft_max`` and ``p_min`` when given, else at the fastest of draft lengths 1..16 and
    p-min 0, 0.5, 0.75, 0.9 (as the probe searches). ``draft_min`` (llama-server's
    --spec-draft-n-min) defaults to the acceptance's."""
    w = workload or Workload()
    if hardware.bandwidth_gbs <= 0:
        raise InputError("--bandwidth", f"must be > 0, got {hardware.bandwidth_gbs:g}")
    if draft_max is not None and draft_max < 1:
        raise InputError("--draft-max", f"must be >= 1, got {draft_max}")
    if p_min is not None and not 0.0 <= p_min < 1.0:
        raise InputError("--p-min", f"must be at least 0 and below 1, got {p_min:g}")
    assumed = acceptance is None and works is None
    if assumed:
        acceptance = Acceptance(ASSUMED_ACCEPTANCE, basis="assumed")
    n_min = draft_min if draft_min is not None else acceptance.draft_min if acceptance is not None else 0
    lengths = K_SEARCH if draft_max is None else (draft_max,)
    p_mins = P_SEARCH if p_min is None else (p_min,)
    if works is None:
        assert acceptance is not None
        works = _iid_works(acceptance.drafting, lengths, p_mins, n_min)
        work_basis = "iid"
    else:
        works = {s: wk for s, wk in works.items() if s[0] in lengths and s[1] in p_mins}
        work_basis = "replayed"
    preds = predict_works(works, target, draft, hardware, w, constants)
    if not preds:
        have = sorted(works) if works else []
        raise InputError("--draft-max" if draft_max is not None else "--from",
                         "no counts for that setting" + (f" (have {have[0]}..{have[-1]})" if have else ""))
    best = _best(preds)
    at = preds[best]
    band = []
    if assumed:
        for b in BAND:
            bp = predict_works(_iid_works(Drafting(b), lengths, p_mins, n_min), target, draft, hardware, w, constants)
            j = _best(bp)
            band.append(BandPoint(b, j[0], bp[j].pair_tokens_per_s or 0.0, bp[j].speedup, j[1]))
    assert at.target_tokens_per_s is not None and at.pair_tokens_per_s is not None
    basis = "measured" if work_basis == "replayed" else acceptance.basis if acceptance is not None else "assumed"
    per_token = acceptance.per_token if acceptance is not None else None
    return GpuPrediction(
        hardware, hardware_basis, w.context_tokens, per_token, basis,
        acceptance.note if acceptance is not None else None, best[0],
        at.target_tokens_per_s, at.pair_tokens_per_s, at.speedup,
        by_length=[LengthPoint(s[0], p.pair_tokens_per_s or 0.0, p.speedup, s[1])
                   for s, p in sorted(preds.items()) if s[1] == best[1]],
        band=band, target_shape=target, draft_shape=draft, constants=constants, work_basis=work_basis,
        p_min=best[1], workload=w, reported=None if assumed else acceptance,
    )


def shapes(target: ModelDescription, draft: ModelDescription, t_bytes: WeightBytes | None,
           d_bytes: WeightBytes | None) -> tuple[Shape, Shape]:
    """Both models' shapes, reading their tensor infos where the caller has not."""
    t_bytes = t_bytes or read_weight_bytes(target, ON_GPU)
    d_bytes = d_bytes or read_weight_bytes(draft, ON_GPU)
    return shape_of(target, t_bytes), shape_of(draft, d_bytes)


def predict_models(target: ModelDescription, draft: ModelDescription, hardware: Hardware, hardware_basis: str,
               acceptance: Acceptance | None, draft_max: int | None = None, p_min: float | None = None,
               workload: Workload | None = None, works: dict[Setting, Work] | None = None,
               t_bytes: WeightBytes | None = None, d_bytes: WeightBytes | None = None,
               draft_min: int | None = None) -> GpuPrediction:
    """Two models predicted on ``hardware`` (``predict_speed`` on their shapes)."""
    t_shape, d_shape = shapes(target, draft, t_bytes, d_bytes)
    return predict_speed(hardware, hardware_basis, t_shape, d_shape, acceptance, draft_max, p_min, workload, works,
                         draft_min=draft_min)


# --------------------------------------------------------------------------- the earlier calls
# Kept for callers that give a per-token rate as a float (the probe's estimate path, the
# tests): each is predict_speed with that rate said as per-token.


def _per_token(acceptance: float | None, basis: str, note: str | None) -> Acceptance | None:
    return None if acceptance is None else Acceptance(acceptance, basis=basis, note=note)


def predict_on(hardware: Hardware, hardware_basis: str, target: Shape, draft: Shape, acceptance: float | None,
               acceptance_basis: str, acceptance_note: str | None = None, draft_max: int | None = None,
               context: int = DEFAULT_CONTEXT, works: dict[int, Work] | None = None,
               constants: Constants = FITTED, p_min: float | None = None) -> GpuPrediction:
    """``predict_speed`` with a per-token ``acceptance`` (None: assumed) and ``context`` tokens
    of context read by every decode; a probe's ``works`` are its counts at p-min 0."""
    if context < 0:
        raise InputError("--context-tokens", f"must be >= 0, got {context}")
    w = Workload(context_tokens=context, n_predict=0)
    replayed = None if works is None else {(k, 0.0): wk for k, wk in works.items()}
    return predict_speed(hardware, hardware_basis, target, draft, _per_token(acceptance, acceptance_basis,
                                                                              acceptance_note),
                         draft_max, 0.0 if replayed is not None else p_min, w, replayed, constants)


def for_models(target: ModelDescription, draft: ModelDescription, hardware: Hardware, hardware_basis: str,
               acceptance: float | None, acceptance_basis: str, acceptance_note: str | None = None,
               context: int = DEFAULT_CONTEXT, draft_max: int | None = None, works: dict[int, Work] | None = None,
               t_bytes: WeightBytes | None = None, d_bytes: WeightBytes | None = None) -> GpuPrediction:
    """``predict_on`` for two models, reading their shapes."""
    t_shape, d_shape = shapes(target, draft, t_bytes, d_bytes)
    return predict_on(hardware, hardware_basis, t_shape, d_shape, acceptance, acceptance_basis, acceptance_note,
                      draft_max, context, works)
