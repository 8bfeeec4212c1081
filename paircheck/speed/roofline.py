"""Step costs on a GPU that was not measured: the roofline terms of the speed model.

Decoding is memory-bound on the GPUs people run local models on: one evaluation reads the
model's weights once (and the KV cache of the context so far), whatever the batch, until the
batch's arithmetic catches up. So an evaluation of ``b`` tokens takes

    fixed_ms + bytes_read(b) / (bandwidth * efficiency) * (1 + growth * (b - 1))

* ``bytes_read(b)``: the weights every token reads (attention, norms, shared experts, the
  output head; the token embedding is one row), plus, for a mixture of experts, the routed
  experts the ``b`` tokens use between them: with ``E`` experts and ``k`` per token picked
  independently, ``E * (1 - (1 - k/E)^b)`` of them (one token reads ``k``; a batch of 8 on a
  128-expert, top-8 model reads about 50, which is why verification is far cheaper per token
  on MoE targets only when the batch is small compared with ``E / k``), plus the KV cache.
* ``efficiency``: the share of the peak bandwidth an engine's decode kernels reach, per
  vendor; ``fixed_ms``: what an evaluation costs whatever its size (kernel launches,
  synchronisation, sampling); ``growth``: what each more token of a batch adds, as a share of
  the memory time, per backend class (CUDA, Metal, ROCm/Vulkan, CPU: how much of a small
  batch's arithmetic each hides behind the reads differs, ``registry/speed/batches.toml``);
  ``round_ms``: what one speculative round costs in llama-server beyond the evaluations.

``b`` tokens may come from several requests at once (llama-server's ``--parallel``): the
weights are read once for all of them, each request's KV cache once for its own tokens.

The constants are fitted to the published measurements in ``registry/speed/points.toml``
(``benchmarks/roofline_fit.py`` refits them and prints the leave-one-out errors); the docs
show the error per point. Pure functions, no I/O: ``speed.on_gpu`` reads the models.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from paircheck.hardware.device import Hardware
from paircheck.speed.model import Costs, Points

GB = 1e9


@dataclass(frozen=True)
class Shape:
    """What one model reads per evaluation, in bytes: ``dense_bytes`` whatever the tokens,
    ``expert_bytes`` all routed experts together (0 for a dense model), of which each token
    uses ``experts_used`` of ``experts``, and ``kv_bytes_per_token`` per token of context;
    ``stored_bytes`` is what the weights take in memory (for the memory check)."""

    dense_bytes: float
    expert_bytes: float = 0.0
    experts: int = 0
    experts_used: int = 0
    kv_bytes_per_token: float = 0.0
    stored_bytes: float = 0.0
    # How the weights are stored, which decides how close a decode kernel gets to the peak
    # bandwidth: "float" (F16, BF16, F32), "legacy" (Q4_0..Q8_0: one scale per block, cheap to
    # unpack), "k" (the K-quants, i-quants and mixes of them: more arithmetic per byte) or
    # "k-low" (the mixes of 2 and 3 bits, whose blocks take the most arithmetic a byte).
    weights: str = "k"
    # Bits per weight a token reads (0: not known). A batch's extra tokens cost arithmetic per
    # weight, its reads cost bytes: the fewer bits a weight, the more each extra token adds as
    # a share of the memory time (Constants.growth_bits).
    bits_per_weight: float = 0.0

    def memory_bytes(self, context: int) -> float:
        """Weights and the KV cache of ``context`` tokens (not llama.cpp's compute buffers:
        ``paircheck fit`` counts those)."""
        return self.stored_bytes + self.kv_bytes_per_token * max(context, 0)

    def experts_read(self, batch: float) -> float:
        """Routed experts a batch of ``batch`` tokens reads between them (expected, each token
        picking ``experts_used`` independently)."""
        if not self.experts or not self.experts_used:
            return 0.0
        e, k = self.experts, min(self.experts_used, self.experts)
        return e * (1.0 - (1.0 - k / e) ** max(batch, 1))

    def bytes_read(self, batch: float, context: float) -> float:
        experts = self.expert_bytes * self.experts_read(batch) / self.experts if self.experts else 0.0
        return self.dense_bytes + experts + self.kv_bytes_per_token * max(context, 0)


@dataclass(frozen=True)
class Constants:
    """The roofline's fitted constants (see the module docstring). ``growth`` is the default
    class's; ``backend_growth`` each backend class's that was fitted."""

    efficiency: dict[str, float] = field(default_factory=lambda: dict(EFFICIENCY))
    fixed_ms: float = 0.0
    growth: float = 0.0
    round_ms: float = 0.0
    # The share of a vendor's efficiency each way of storing weights reaches ("legacy" is 1).
    weights: dict[str, float] = field(default_factory=lambda: dict(WEIGHTS))
    backend_growth: dict[str, float] = field(default_factory=dict)
    # How ``growth`` scales with the bits a weight takes: ``growth x (8.5 / bits)^growth_bits``
    # (8.5: Q8_0). 0 is one growth for every file; 1 is an extra token's cost set by the
    # weights' count alone (its arithmetic), as a share of a memory time set by their bytes.
    growth_bits: float = 0.0

    def efficiency_of(self, vendor: str, weights: str = "legacy") -> float:
        """The share of the peak bandwidth reached (never more than all of it)."""
        factor = self.weights.get(weights, self.weights.get("k", 1.0) if weights == "k-low" else 1.0)
        return min(1.0, self.efficiency.get(vendor, self.efficiency["default"]) * factor)

    def growth_of(self, backend: str, bits_per_weight: float = 0.0) -> float:
        """What each more token of a batch adds on ``backend`` (a class of BACKENDS), for
        weights of ``bits_per_weight`` bits (0: not known, Q8_0's)."""
        g = self.backend_growth.get(backend, self.growth)
        if bits_per_weight > 0 and self.growth_bits:
            g *= (REFERENCE_BITS / bits_per_weight) ** self.growth_bits
        return g


# Fitted by benchmarks/roofline_fit.py to registry/speed/points.toml on 2026-12-07 (38 device
# speeds, 28 speedups; docs/estimate.md shows the error per point), rounded to 3 digits. AMD and
# Intel have no point that could be predicted, so they take the mean of the fitted vendors, as a
# device given only by --bandwidth does ("default"). growth_bits came out 1.05: an extra token
# of a batch costs what its weights' count says, whatever their bits (see Constants). CUDA's
# growth is its own (the NVIDIA points), 0.7 of the default class's, which the Apple points set;
# ROCm/Vulkan and CPU have no point and take the default. round_ms is not fitted (points.BOUNDS).
# tests/speed/test_speed_points.py fails when these are not what the fit finds.
EFFICIENCY: dict[str, float] = {"nvidia": 0.784, "apple": 0.867, "amd": 0.825, "intel": 0.825, "default": 0.825}
WEIGHTS: dict[str, float] = {"float": 1.28, "legacy": 1.0, "k": 0.948, "k-low": 0.615}
FITTED = Constants(fixed_ms=2.85, growth=0.191, round_ms=0.0, growth_bits=1.05, backend_growth={"cuda": 0.138})

# The bits per weight ``growth`` is stated at: Q8_0's (34 bytes a block of 32).
REFERENCE_BITS = 8.5

# Batches priced: one target batch per draft length up to this, plus one (the sampled token).
MAX_BATCH = 33


def evaluation_ms(shape: Shape, hw: Hardware, batch: float, context: float, c: Constants = FITTED,
                  requests: float = 1.0) -> float:
    """One evaluation of ``batch`` tokens from ``requests`` requests, each at ``context``
    tokens of context (the formula above: the weights read once, each request's KV cache)."""
    read = shape.bytes_read(batch, 0) + shape.kv_bytes_per_token * max(context, 0) * max(requests, 1.0)
    memory = read / (hw.bandwidth_gbs * GB * c.efficiency_of(hw.vendor, shape.weights)) * 1000.0
    return c.fixed_ms + memory * (1.0 + c.growth_of(hw.backend, shape.bits_per_weight) * (max(batch, 1) - 1))


def alone_ms(shape: Shape, hw: Hardware, context: float, c: Constants = FITTED) -> float:
    """One decode of the target alone."""
    return evaluation_ms(shape, hw, 1, context, c)


def roofline_costs(target: Shape, draft: Shape, hw: Hardware, context: float, c: Constants = FITTED,
                   max_batch: int = MAX_BATCH) -> Costs:
    """The speed model's costs on ``hw``: every target batch size and the draft's re-evaluation
    of it computed, one draft decode, and the fitted cost per round."""
    sizes = range(1, max_batch + 1)
    t_points: Points = tuple((b, evaluation_ms(target, hw, b, context, c)) for b in sizes)
    d_points: Points = tuple((b, evaluation_ms(draft, hw, b, context, c)) for b in sizes)
    return Costs(
        target_decode_ms=t_points[0][1],
        draft_decode_ms=d_points[0][1],
        target_batch_ms=t_points,
        draft_batch_ms=d_points,
        round_ms=c.round_ms,
        round_token_ms=0.0,
        absolute=True,
        basis="roofline",
    )
