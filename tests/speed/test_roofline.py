"""The roofline's costs (paircheck.speed.roofline) and the GPU prediction built on them
(paircheck.speed.on_gpu): pure functions, checked against what the formulas say."""

from __future__ import annotations

import pytest

from paircheck.errors import InputError
from paircheck.hardware.device import Hardware
from paircheck.speed.model import expected_work, predict
from paircheck.speed.on_gpu import ASSUMED_ACCEPTANCE, BAND, predict_on
from paircheck.speed.roofline import FITTED, Constants, Shape, alone_ms, evaluation_ms, roofline_costs

GB = 1e9
GPU = Hardware("test", 1000.0, 24.0, "nvidia", "https://example.org")
PLAIN = Constants(efficiency={"nvidia": 0.5, "default": 0.5}, fixed_ms=1.0, growth=0.1, round_ms=2.0,
                  weights={"float": 1.0, "legacy": 1.0, "k": 1.0})


def test_a_decode_is_bytes_over_the_bandwidth_reached_plus_the_fixed_cost() -> None:
    s = Shape(dense_bytes=10 * GB, kv_bytes_per_token=1e6, weights="legacy")
    # 10 GB + 1 MB x 1000 tokens of context, at 50% of 1000 GB/s: 22 ms, plus 1 ms.
    assert evaluation_ms(s, GPU, 1, 1000, PLAIN) == pytest.approx(1.0 + 11e9 / 500e9 * 1000)
    twice = Hardware("x", 2000.0, None, "nvidia")
    assert evaluation_ms(s, twice, 1, 1000, PLAIN) - 1.0 == pytest.approx((evaluation_ms(s, GPU, 1, 1000, PLAIN) - 1)
                                                                          / 2)
    # A batch of b tokens: the memory time grows by growth x (b - 1).
    assert evaluation_ms(s, GPU, 5, 0, PLAIN) == pytest.approx(1.0 + 20.0 * 1.4)


def test_a_batch_grows_by_the_weights_count_and_by_backend() -> None:
    # growth_bits 1: an extra token's cost is set by the weights' count, so as a share of the
    # memory time (set by their bytes) it is twice as large at half the bits.
    c = Constants(efficiency={"default": 0.5}, fixed_ms=0.0, growth=0.1, growth_bits=1.0,
                  backend_growth={"cuda": 0.05})
    apple = Hardware("m", 1000.0, None, "apple")
    q8, q4, f16 = (Shape(dense_bytes=8.5 * GB, bits_per_weight=b, weights="legacy") for b in (8.5, 4.25, 17.0))
    extra = {b: evaluation_ms(s, apple, 2, 0, c) / evaluation_ms(s, apple, 1, 0, c) - 1 for b, s in
             (("q8", q8), ("q4", q4), ("f16", f16))}
    assert extra == pytest.approx({"q8": 0.1, "q4": 0.2, "f16": 0.05})
    assert c.growth_of("cuda", 8.5) == pytest.approx(0.05) and c.growth_of("metal", 8.5) == pytest.approx(0.1)
    assert c.growth_of("metal") == 0.1  # bits not known: Q8_0's
    assert Constants(growth=0.1).growth_of("metal", 4.25) == 0.1  # growth_bits 0: one growth for all


def test_the_two_and_three_bit_mixes_are_a_storage_kind_of_their_own() -> None:
    from paircheck.speed.on_gpu import weights_kind_of_file_type
    from paircheck.speed.points import weights_kind_of_quant

    assert [weights_kind_of_file_type(t) for t in (1, 7, 15, 18, 10, 12, 30)] == [
        "float", "legacy", "k", "k", "k-low", "k-low", "k"]
    assert [weights_kind_of_quant(q) for q in ("Q3_K_M", "UD-Q2_K_XL", "IQ3_XXS", "Q4_K_M", "IQ4_XS")] == [
        "k-low", "k-low", "k-low", "k", "k"]
    # Without a factor of its own a 2- or 3-bit mix is read as a K-quant.
    c = Constants(efficiency={"default": 0.8}, weights={"k": 0.9, "legacy": 1.0})
    assert c.efficiency_of("", "k-low") == pytest.approx(0.72)


def test_a_token_reads_its_weights_count_as_it_reads_their_bytes() -> None:
    from paircheck.weights import weight_bytes

    # Q8_0 (type 8): 34 bytes a block of 32; the embedding is one row, so not counted.
    wb = weight_bytes([("token_embd.weight", [64, 10], 8), ("output.weight", [64, 10], 8),
                       ("blk.0.ffn_up.weight", [64, 64], 8)])
    assert wb.per_token_elements == 64 * 10 + 64 * 64
    assert 8.0 * wb.per_token / wb.per_token_elements == pytest.approx(8.5)


def test_efficiency_is_per_vendor_and_storage_and_never_above_one() -> None:
    c = Constants(efficiency={"apple": 0.9, "default": 0.6}, weights={"float": 1.5, "k": 0.8, "legacy": 1.0})
    assert c.efficiency_of("apple", "k") == pytest.approx(0.72)
    assert c.efficiency_of("apple", "float") == 1.0  # capped: no kernel beats the bus
    assert c.efficiency_of("", "legacy") == 0.6  # a device given by --bandwidth only
    for vendor in ("nvidia", "apple", "amd", "intel", "default"):
        for kind in ("float", "legacy", "k"):
            assert 0.3 < FITTED.efficiency_of(vendor, kind) <= 1.0


def test_a_batch_on_a_mixture_of_experts_reads_the_experts_its_tokens_use() -> None:
    moe = Shape(dense_bytes=1 * GB, expert_bytes=16 * GB, experts=128, experts_used=8)
    assert moe.experts_read(1) == pytest.approx(8)
    assert moe.experts_read(2) == pytest.approx(128 * (1 - (120 / 128) ** 2))
    reads = [moe.experts_read(b) for b in range(1, 64)]
    assert reads == sorted(reads) and reads[-1] < 128
    assert moe.bytes_read(1, 0) == pytest.approx(1 * GB + 1 * GB)  # 8 of 128 experts
    dense = Shape(dense_bytes=2 * GB)
    # One token reads the same bytes; a batch of 8 reads far more on the MoE (that is why a MoE
    # target's verification is not almost free).
    assert dense.bytes_read(8, 0) == dense.bytes_read(1, 0)
    assert moe.bytes_read(8, 0) > 3 * moe.bytes_read(1, 0)


def test_the_costs_are_the_speed_models_own_and_the_prediction_is_its_predict() -> None:
    target, draft = Shape(dense_bytes=20 * GB, weights="k"), Shape(dense_bytes=1 * GB, weights="legacy")
    costs = roofline_costs(target, draft, GPU, 512, PLAIN)
    assert costs.absolute and costs.basis == "roofline"
    assert costs.target_decode_ms == alone_ms(target, GPU, 512, PLAIN)
    for b in (1, 2, 5, 17):
        assert costs.target_batch(b) == pytest.approx(evaluation_ms(target, GPU, b, 512, PLAIN))
        assert costs.draft_batch(b) == pytest.approx(evaluation_ms(draft, GPU, b, 512, PLAIN))
    pred = predict_on(GPU, "table", target, draft, 0.8, "given", draft_max=4, context=512, constants=PLAIN)
    expected = predict(expected_work(0.8, 4), costs)
    assert expected is not None
    assert pred.speedup == pytest.approx(expected.speedup) and pred.draft_max == 4
    # predicted_n / predicted_ms as llama-server counts them: 1000 tokens, 999 decodes.
    assert pred.target_tokens_per_s == pytest.approx(expected.target_tokens_per_s)
    assert pred.target_tokens_per_s == pytest.approx(1000 / costs.target_decode_ms, rel=2e-3)
    assert pred.pair_tokens_per_s == pytest.approx(expected.pair_tokens_per_s)


def test_the_best_draft_length_is_searched_and_an_assumed_acceptance_says_so() -> None:
    target, draft = Shape(dense_bytes=20 * GB), Shape(dense_bytes=0.5 * GB)
    pred = predict_on(GPU, "table", target, draft, None, "assumed", constants=PLAIN)
    assert pred.acceptance == ASSUMED_ACCEPTANCE and pred.acceptance_basis == "assumed"
    assert pred.speedup == max(p.speedup for p in pred.by_length)
    assert [b.acceptance for b in pred.band] == list(BAND)
    speeds = [b.speedup for b in pred.band]
    assert speeds == sorted(speeds)  # more acceptance, more speed
    # A draft nearly as heavy as the target helps nowhere: run without one.
    heavy = predict_on(GPU, "table", target, Shape(dense_bytes=15 * GB), 0.7, "given", constants=PLAIN)
    assert not heavy.faster and heavy.speedup < 1.0
    # Memory: both models' weights and KV caches against the device's.
    big = predict_on(GPU, "table", Shape(dense_bytes=20 * GB, stored_bytes=25 * 2**30), draft, 0.7, "given",
                     constants=PLAIN)
    assert big.fits is False and big.memory_needed_gib == pytest.approx(25.0)


@pytest.mark.parametrize(("kwargs", "where"), [
    ({"context": -1}, "--context-tokens"), ({"draft_max": 0}, "--draft-max"),
])
def test_bad_settings_are_input_errors(kwargs: dict[str, int], where: str) -> None:
    with pytest.raises(InputError) as err:
        predict_on(GPU, "table", Shape(dense_bytes=GB), Shape(dense_bytes=GB / 10), 0.7, "given", **kwargs)
    assert err.value.where == where
    with pytest.raises(InputError):
        predict_on(Hardware("x", 0.0, None), "given", Shape(dense_bytes=GB), Shape(dense_bytes=GB), 0.7, "given")
