"""The calibration's serialized form has one home (probe.calibrate: each cost writes itself
with to_dict, and points_from / slot_steps_from read it back), and what the probe writes is
what every command that reads a probe result prices with (probe.result.costs_in)."""

from __future__ import annotations

from typing import Any

from paircheck.probe.calibrate import (
    Measured,
    ModelCosts,
    SpecRun,
    StreamCosts,
    calibrate_pair,
    points_from,
    slot_steps_from,
)
from paircheck.probe.result import costs_in
from paircheck.speed.model import Work


def _model(decode: float, per_token: float, slots: bool = False) -> ModelCosts:
    sizes = (1, 2, 5, 9, 17)
    batches = tuple((n, Measured.of([decode * 1.3 + per_token * n * k for k in (0.98, 1.0, 1.03)])) for n in sizes)
    samples = tuple((n, m.median) for n, m in batches)
    streams = (StreamCosts(2, batches, samples, Measured.of([decode * 1.6, decode * 1.7])),) if slots else ()
    return ModelCosts(Measured.of([decode * 0.97, decode, decode * 1.04]), batches, samples, streams)


def _runs() -> list[SpecRun]:
    # three runs of n rounds, each a batch of k + 1 tokens (Work.batches[k]), at times a cost
    # per round of 4 ms and 0.5 ms a token explain
    return [SpecRun(k, "code", 32, 32 * 10.0 + n * 4.0 + n * k * 0.5, n * k, n * k - 2, n * k, n * k - 2, True,
                    Work(32, (0.0,) * k + (float(n),), n * k)) for k, n in ((2, 16), (4, 9), (8, 5))]


def test_what_the_probe_writes_is_what_costs_in_reads() -> None:
    target, draft = _model(10.0, 0.8, slots=True), _model(1.5, 0.1, slots=True)
    calib = calibrate_pair(target, draft, _runs())
    data: dict[str, Any] = {"calibration": {
        "target": target.to_dict(), "drafts": [{"path": "d.gguf", **draft.to_dict(), **calib.to_dict()}],
        "depths": [{"context_tokens": 0, "target": target.to_dict(),
                    "drafts": [{"path": "d.gguf", **draft.to_dict()}]}],
    }}
    read = costs_in(data, 0)
    assert read is not None
    want = calib.costs
    assert read.target_decode_ms == round(want.target_decode_ms, 3) and read.draft_decode_ms == round(
        want.draft_decode_ms, 3)
    assert read.round_ms == round(want.round_ms, 4) and read.round_token_ms == round(want.round_token_ms, 4)
    assert read.target_batch_ms == tuple((n, round(ms, 3)) for n, ms in target.points)
    two = costs_in(data, 0, slots=2)
    assert two is not None and two != read  # two slots priced with the steps measured for two


def test_the_readers_refuse_what_the_writers_never_write() -> None:
    assert points_from([[1, 2.5], [17, 9]]) == ((1, 2.5), (17, 9.0))
    for bad in (None, "1,2", [[1]], [[1.5, 2.0]], [["1", 2.0]], [[1, "2"]]):
        assert points_from(bad) is None
    model = _model(10.0, 0.8, slots=True).to_dict()
    steps = slot_steps_from(model, 2)
    assert steps is not None and steps.decode_ms == model["streams"][0]["decode_ms"]
    assert slot_steps_from(model, 4) is None and slot_steps_from({"streams": "x"}, 2) is None
