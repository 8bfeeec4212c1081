"""``paircheck estimate``: the expected speedup of a pair, from a model, never a measurement.

The model is Leviathan et al., "Fast Inference from Transformers via Speculative
Decoding" (ICML 2023), section 3: with a per-token acceptance rate ``a`` and ``k``
drafted tokens per target pass,

* expected tokens per target pass ``E = (1 - a^(k+1)) / (1 - a)`` (``k + 1`` when ``a = 1``);
* speedup ``E / (k*c + 1)``, where ``c`` is the cost of one draft forward pass relative to
  one target pass.

Decoding one token is memory-bound on the hardware people run these models on, so ``c``
is taken as the ratio of the weight bytes each model reads per token: every tensor's
bytes from the GGUF tensor infos (shape times the quantization's bytes per block, from
gguf's ``GGML_QUANT_SIZES``), without the token embedding table (one row is read per
token) unless the output head is tied to it, and for a mixture of experts only the
``expert_used_count`` of ``expert_count`` experts. What the model ignores: the KV cache
(grows with context), prompt processing, the draft's own sampling, and batch effects.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from paircheck._engine.pair_size import same_file, size_finding
from paircheck.errors import InputError
from paircheck.findings import Finding, Rule
from paircheck.model import ModelDescription
from paircheck.speed.model import assumed_speedup, best_assumed, expected_tokens_per_round
from paircheck.speed.model_bytes import GIVE_COST_RATIO, ON_GPU, read_weight_bytes

if TYPE_CHECKING:
    from paircheck.hardware.device import Hardware
    from paircheck.speed.documented import DocumentedCheck
    from paircheck.speed.on_gpu import GpuPrediction
from paircheck.speed.acceptance import Acceptance
from paircheck.weights import WeightBytes
from paircheck.workload import Workload

# llama.cpp's default --spec-draft-n-max (common/common.h, common_params_speculative_draft::n_max = 3).
DEFAULT_DRAFT_MAX = 3
# Without a measured or given acceptance, the model is shown over this range.
BAND = (0.5, 0.6, 0.7, 0.8, 0.9)
# best_draft_max searches 1..this (llama.cpp drafts at most a few dozen tokens per pass).
K_SEARCH_MAX = 32

# --------------------------------------------------------------------------- cost ratio


# --------------------------------------------------------------------------- the formula
# The formulas live in paircheck.speed.model, the one speed model; these are its assumed-cost
# cases under the names estimate's callers and tests know.


FULL_ACCEPTANCE = Rule(
    "EW002", "full_acceptance",
    "An acceptance of 1.00 gives no best draft length: the longer ones are extrapolated",
    "Leviathan's formula at an acceptance of 1 accepts every drafted token, so each longer "
    "draft length looks faster, up to the longest searched: the 'best k' and its speedup are "
    "extrapolated, never measured. A measured 1.00 means the prompts measured never showed "
    "a rejection (a short run, or a draft that copies the target on them), not that a real "
    "draft never misses.",
    "Measure acceptance at the draft lengths you would use, on prompts like yours: `paircheck "
    "probe TARGET DRAFT` replays every length from 1 to 16.",
    kind="warning",
)
RULES = (FULL_ACCEPTANCE,)


def full_acceptance_warning(acceptance: float | None, draft_max: int, best: int | None) -> Finding | None:
    """The warning for an acceptance printed as 1.00 (see FULL_ACCEPTANCE), else None."""
    if acceptance is None or round(acceptance, 2) < 1.0:
        return None
    longest = f">={best}" if best is not None and best >= K_SEARCH_MAX else str(best)
    return FULL_ACCEPTANCE.warn(
        f"acceptance {acceptance:.2f}: every drafted token accepted, so the model has no best draft length; "
        f"the figures past draft max {draft_max} (best k {longest}) are extrapolated, not measured",
        acceptance=acceptance, draft_max=draft_max)


def expected_tokens_per_pass(acceptance: float, draft_max: int) -> float:
    """Leviathan et al. eq. (1): ``(1 - a^(k+1)) / (1 - a)``; ``k + 1`` at ``a = 1``."""
    return expected_tokens_per_round(acceptance, draft_max)


def modelled_speedup(acceptance: float, draft_max: int, cost_ratio: float, verify_growth: float = 0.0,
                     round_cost: float = 0.0) -> float:
    """Leviathan et al. theorem 3.8, ``E / (k*c + 1)``, when ``verify_growth`` and
    ``round_cost`` are 0 (``speed.model.assumed_costs``)."""
    return assumed_speedup(acceptance, draft_max, cost_ratio, verify_growth, round_cost)


def best_draft_max(acceptance: float, cost_ratio: float, k_max: int = K_SEARCH_MAX, verify_growth: float = 0.0,
                   round_cost: float = 0.0) -> int:
    """The ``k`` in 1..k_max with the highest modelled speedup (the smallest on ties)."""
    return best_assumed(acceptance, cost_ratio, verify_growth, round_cost, k_max)[0]


@dataclass(frozen=True)
class Point:
    acceptance: float
    expected_tokens_per_pass: float
    speedup: float
    best_draft_max: int
    best_speedup: float


def _point(acceptance: float, draft_max: int, cost_ratio: float, growth: float, round_cost: float) -> Point:
    best = best_draft_max(acceptance, cost_ratio, verify_growth=growth, round_cost=round_cost)
    return Point(
        acceptance=acceptance,
        expected_tokens_per_pass=expected_tokens_per_pass(acceptance, draft_max),
        speedup=modelled_speedup(acceptance, draft_max, cost_ratio, growth, round_cost),
        best_draft_max=best,
        best_speedup=modelled_speedup(acceptance, best, cost_ratio, growth, round_cost),
    )


@dataclass(frozen=True)
class MeasuredPoint:
    """One draft length of a probe: tokens and drafted tokens per target pass as measured
    (replayed from llama-server), and the speed the speed model predicts for them."""

    draft_max: int
    tokens_per_pass: float
    drafted_per_pass: float
    speedup: float
    tokens_per_s: float | None = None  # None when the costs were assumed (relative)


@dataclass
class Estimate:
    """The model's answer. ``acceptance`` is None when none was given: ``band`` then has
    one point per acceptance in BAND and the single-point fields are None.

    ``acceptance_basis`` says where the acceptance comes from: ``given`` (--acceptance),
    ``measured`` (a bench or probe result: ``acceptance_note`` says where and how),
    ``documented`` (a registry entry's measured number: the note cites it), or ``assumed``
    (the band). With a probe, ``measured`` holds its counts for every draft length and the
    single-point fields come from them instead of from Leviathan's i.i.d. formula.

    ``costs_basis`` says where the step costs come from: ``assumed`` (``cost_ratio``,
    ``verify_growth`` and ``round_cost``, relative to one target decode) or ``measured`` (the
    probe's calibration on its machine: then ``target_tokens_per_s`` and
    ``pair_tokens_per_s`` are predicted too).
    """

    cost_ratio: float
    cost_source: str  # "tensor-infos", "given" or "calibration"
    draft_max: int
    acceptance: float | None
    acceptance_source: str | None  # "given", "bench:<file>", or None
    expected_tokens_per_pass: float | None
    speedup: float | None
    best_draft_max: int | None
    best_speedup: float | None
    band: list[Point] = field(default_factory=list)
    target_bytes: WeightBytes | None = None
    draft_bytes: WeightBytes | None = None
    warnings: list[Finding] = field(default_factory=list)
    modelled: bool = True
    acceptance_basis: str = "assumed"
    acceptance_note: str | None = None
    measured: list[MeasuredPoint] = field(default_factory=list)
    # What the registry documents for this pair (speedups, acceptance), one cited line each.
    documented: list[str] = field(default_factory=list)
    costs_basis: str = "assumed"
    verify_growth: float = 0.0
    round_cost: float = 0.0
    costs_note: str | None = None
    target_tokens_per_s: float | None = None
    pair_tokens_per_s: float | None = None
    best_p_min: float = 0.0
    # On a named GPU (--gpu, --bandwidth, or the one detected): predicted tokens/s there.
    predicted: GpuPrediction | None = None
    device_note: str | None = None  # how the device was chosen (named, given, detected)
    # One prediction per workload of the grid (--context-tokens, --n-predict, --parallel); the
    # first is ``predicted``.
    workloads: list[GpuPrediction] = field(default_factory=list)
    # The acceptance as it was given or documented, with the setting it was measured at.
    reported: Acceptance | None = None
    # Each documented figure for the pair beside the model's own for its setup (speed.documented).
    checks: list[DocumentedCheck] = field(default_factory=list)
    # True when the relative costs were given (--verify-cost): a speedup without a device is
    # then a model of those costs; otherwise none is printed (it depends on the device).
    costs_given: bool = False


def estimate(
    cost_ratio: float,
    acceptance: float | None = None,
    draft_max: int = DEFAULT_DRAFT_MAX,
    acceptance_source: str | None = None,
    cost_source: str = "given",
    verify_growth: float = 0.0,
    round_cost: float = 0.0,
) -> Estimate:
    """The model for one cost ratio: one point for a given acceptance, else the band."""
    if not cost_ratio > 0:
        raise InputError("--cost-ratio", f"must be > 0, got {cost_ratio}")
    if draft_max < 1:
        raise InputError("--draft-max", f"must be >= 1, got {draft_max}")
    if acceptance is not None and not 0.0 <= acceptance <= 1.0:
        raise InputError("--acceptance", f"must be between 0 and 1, got {acceptance}")
    if verify_growth < 0 or round_cost < 0:
        raise InputError("--verify-cost" if verify_growth < 0 else "--round-cost", "must be >= 0")
    if acceptance is None:
        return Estimate(
            cost_ratio,
            cost_source,
            draft_max,
            None,
            None,
            None,
            None,
            None,
            None,
            band=[_point(a, draft_max, cost_ratio, verify_growth, round_cost) for a in BAND],
            verify_growth=verify_growth,
            round_cost=round_cost,
        )
    p = _point(acceptance, draft_max, cost_ratio, verify_growth, round_cost)
    full = full_acceptance_warning(acceptance, draft_max, p.best_draft_max)
    return Estimate(
        cost_ratio,
        cost_source,
        draft_max,
        acceptance,
        acceptance_source or "given",
        p.expected_tokens_per_pass,
        p.speedup,
        p.best_draft_max,
        p.best_speedup,
        acceptance_basis="given" if acceptance_source in (None, "given") else "measured",
        verify_growth=verify_growth,
        round_cost=round_cost,
        warnings=[] if full is None else [full],
    )


def cost_of(target: ModelDescription, draft: ModelDescription, cost_ratio: float | None, fix: str = GIVE_COST_RATIO
            ) -> tuple[float, WeightBytes | None, WeightBytes | None, str]:
    """``c`` (the given one, else draft/target weight bytes read per token), both models'
    weight bytes (None when given), and where ``c`` came from; ``fix`` says what to do when
    the bytes cannot be read."""
    if cost_ratio is not None:
        if not cost_ratio > 0:
            raise InputError("--cost-ratio", f"must be > 0, got {cost_ratio}")
        return cost_ratio, None, None, "given"
    t_bytes, d_bytes = read_weight_bytes(target, fix), read_weight_bytes(draft, fix)
    if t_bytes.per_token <= 0:
        raise InputError(target.location, "has no weight bytes to compare against")
    return d_bytes.per_token / t_bytes.per_token, t_bytes, d_bytes, "tensor-infos"


def add_size_warning(result: Estimate, target: ModelDescription, draft: ModelDescription,
                     t_bytes: WeightBytes | None, d_bytes: WeightBytes | None) -> None:
    finding = size_finding(
        t_bytes.per_token if t_bytes else None,
        d_bytes.per_token if d_bytes else None,
        same_file(target, draft),
    )
    if finding is not None:
        result.warnings.append(finding)


def acceptance_for_length(tokens_per_pass: float, draft_max: int) -> float:
    """The per-token acceptance ``a`` whose expected tokens per pass at ``draft_max`` is
    ``tokens_per_pass`` (Leviathan eq. 1 inverted, by bisection)."""
    lo, hi = 0.0, 1.0
    target = min(max(tokens_per_pass, 1.0), draft_max + 1.0)
    for _ in range(60):
        mid = (lo + hi) / 2
        if expected_tokens_per_pass(mid, draft_max) < target:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def documented_acceptance(target: ModelDescription, draft: ModelDescription) -> tuple[Acceptance | None, list[str]]:
    """What the registry documents for this exact pair (recognised by name, not by vocabulary
    alone): an acceptance as it was published, with the draft length it was measured at (an
    accepted/drafted rate, or an acceptance length), and every measured number as one cited
    line. A rate without its draft length cannot be turned into a per-token rate and is only
    listed."""
    from paircheck._registry.consult import file_vocab, find_documented, identities
    from paircheck._registry.load import load_registry
    from paircheck.speed.acceptance import PER_PASS, RATE
    from paircheck.speed.documented import measurement_line

    matches = [m for m in find_documented(load_registry(), identities(target), identities(draft),
                                          file_vocab(target), file_vocab(draft))
               if not m.by_vocabulary()]
    acceptance: Acceptance | None = None
    lines: list[str] = []
    for m in matches:
        e = m.entry
        for n in e.measured:
            lines.append(measurement_line(n, e))
            if acceptance is not None or not n.draft_max:
                continue
            if n.quantity == "acceptance_rate" and 0 < n.value <= 1:
                acceptance = Acceptance(n.value, RATE, n.draft_max, basis="documented", note=lines[-1])
            elif n.quantity == "accepted_per_pass" and n.value >= 1:
                acceptance = Acceptance(n.value, PER_PASS, n.draft_max, basis="documented", note=lines[-1])
    return acceptance, lines


def documented(target: ModelDescription, draft: ModelDescription) -> tuple[float | None, str | None, list[str]]:
    """What the registry documents for this exact pair (recognised by name, not by vocabulary
    alone): an acceptance to model with (a measured acceptance rate, or an acceptance length
    at a stated draft length, turned into ``a``), its citation, and every measured number
    as one cited line."""
    from paircheck._registry.consult import file_vocab, find_documented, identities
    from paircheck._registry.load import load_registry

    matches = [m for m in find_documented(load_registry(), identities(target), identities(draft),
                                          file_vocab(target), file_vocab(draft))
               if not m.by_vocabulary()]
    acceptance: float | None = None
    note: str | None = None
    lines: list[str] = []
    for m in matches:
        e = m.entry
        for n in e.measured:
            where = "; ".join(x for x in ((n.engine or "an engine the source does not name")
                                          + (f" {n.engine_version}" if n.engine_version else ""),
                                          n.hardware, n.target_quant and f"target {n.target_quant}",
                                          n.draft_quant and f"draft {n.draft_quant}",
                                          n.draft_max and f"draft max {n.draft_max}") if x)
            url = n.url or e.quote_url or e.source.url
            value = f"{n.value:g}" + (f"-{n.value_max:g}" if n.value_max is not None else "")
            lines.append(f"{n.quantity.replace('_', ' ')} {value} measured on {where} ({url})")
            if acceptance is None and n.quantity == "acceptance_rate" and 0 < n.value <= 1:
                acceptance, note = n.value, lines[-1]
            elif acceptance is None and n.quantity == "accepted_per_pass" and n.draft_max:
                acceptance = acceptance_for_length(n.value, n.draft_max)
                note = f"from {lines[-1]}: a = {acceptance:.2f} gives that length at draft max {n.draft_max}"
    return acceptance, note, lines


def estimate_pair(
    target: ModelDescription,
    draft: ModelDescription,
    acceptance: float | None = None,
    draft_max: int = DEFAULT_DRAFT_MAX,
    acceptance_source: str | None = None,
    cost_ratio: float | None = None,
    verify_growth: float = 0.0,
    round_cost: float = 0.0,
    hardware: Hardware | None = None,
    hardware_basis: str = "table",
    context: int | None = None,
    gpu_draft_max: int | None = None,
    *,
    reported: Acceptance | None = None,
    p_min: float | None = None,
    workloads: list[Workload] | None = None,
    draft_min: int | None = None,
    costs_given: bool = False,
) -> Estimate:
    """Read both models' tensor infos for ``c`` (unless given), then apply the model.

    The acceptance: ``reported`` (any kind, with the setting it was measured at), else
    ``acceptance`` (a per-token rate: given, or measured in a bench result), else one
    documented for this exact pair in the registry (cited), else the assumed band. With
    ``hardware``, ``predicted`` holds tokens/s on it (``speed.on_gpu.predict_speed``) for each
    workload of ``workloads`` (default: one request, ``context`` tokens of context) at
    ``gpu_draft_max`` and ``p_min`` (default: the fastest setting there), and ``checks`` each
    documented figure beside the model's own for its setup.
    """
    c, t_bytes, d_bytes, source = cost_of(target, draft, cost_ratio, GIVE_COST_RATIO if hardware is None else ON_GPU)
    docs: list[str] = []
    doc_acc, docs = documented_acceptance(target, draft)
    if reported is None and acceptance is not None:
        basis = "given" if acceptance_source in (None, "given") else "measured"
        reported = Acceptance(acceptance, basis=basis, note=acceptance_source)
    if reported is None and doc_acc is not None:
        reported, acceptance_source = doc_acc, "registry"
    per_token = reported.per_token if reported is not None else None
    result = estimate(c, per_token, draft_max, acceptance_source, source, verify_growth, round_cost)
    if reported is not None:
        result.acceptance_basis, result.acceptance_note = reported.basis, reported.note
    result.reported, result.costs_given = reported, costs_given
    result.documented = docs
    result.target_bytes, result.draft_bytes = t_bytes, d_bytes
    add_size_warning(result, target, draft, t_bytes, d_bytes)
    if hardware is not None:
        from paircheck.speed.on_gpu import predict_models

        grid = workloads or [Workload(context_tokens=context or 0)]
        for w in grid:
            result.workloads.append(predict_models(
                target, draft, hardware, hardware_basis, reported, gpu_draft_max, p_min, w, t_bytes=t_bytes,
                d_bytes=d_bytes, draft_min=draft_min))
        result.predicted = result.workloads[0]
    from paircheck.speed.documented import check_documented

    result.checks = check_documented(target, draft, t_bytes, d_bytes, reported)
    return result
