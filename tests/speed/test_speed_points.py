"""The GPU speed prediction held to published measurements (registry/speed/points.toml): the
shipped constants are what the fit finds, and the errors per point meet the goal that
docs/estimate.md states, in the table it shows."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from paircheck._registry.schema import RegistryError
from paircheck._registry.speed_points import load_points, parse_points
from paircheck.hardware.table import find_gpu, load_gpus
from paircheck.speed.points import (
    GOAL,
    NEUTRAL,
    WORST,
    acceptance_per_token,
    bits_per_weight,
    counted,
    error_table,
    fit_constants,
    leave_one_out,
    loss,
    summary,
)
from paircheck.speed.roofline import FITTED

DOCS = Path(__file__).resolve().parents[2] / "docs" / "estimate.md"


@pytest.fixture(scope="module")
def data() -> tuple[tuple, tuple]:
    return load_points(), load_gpus()


def test_the_points_are_sourced_and_name_devices_of_the_table(data: tuple[tuple, tuple]) -> None:
    points, gpus = data
    assert len(points) >= 12
    both = [p for p in points if p.target_tokens_per_s > 0 and p.pair_tokens_per_s > 0]
    assert len(both) == len(points)
    for p in points:
        assert p.url.startswith("https://") and p.quote.strip()
        if p.gpu:
            find_gpu(p.gpu, gpus)  # every device is a row of the table
    assert len([p for p in points if p.single_device]) >= 12
    assert {find_gpu(p.gpu, gpus).vendor for p in points if p.gpu} >= {"nvidia", "apple", "amd"}


@pytest.mark.slow  # minutes: a fit for every point (benchmarks/roofline_fit.py prints the same)
def test_the_docs_state_the_leave_one_out_figures(data: tuple[tuple, tuple]) -> None:
    points, gpus = data
    loo = leave_one_out(points, gpus, NEUTRAL, sweeps=3)
    text = " ".join(DOCS.read_text().split())
    for line in summary(points, gpus, FITTED, results=loo).splitlines():
        assert line in text, f"docs/estimate.md should state the leave-one-out figure {line!r}"


@pytest.mark.slow  # over 1.5 s here (docs/testing.md)
def test_the_shipped_constants_are_what_the_fit_finds(data: tuple[tuple, tuple]) -> None:
    points, gpus = data
    refit = fit_constants(points, gpus, NEUTRAL, sweeps=5)
    # Not hand-tuned: the shipped constants are as good as a fit from a neutral start finds.
    assert loss(points, gpus, FITTED) <= loss(points, gpus, refit) * 1.02 + 1e-3
    for vendor in ("nvidia", "apple"):
        assert FITTED.efficiency_of(vendor) == pytest.approx(refit.efficiency_of(vendor), rel=0.03)
    assert FITTED.fixed_ms == pytest.approx(refit.fixed_ms, rel=0.05, abs=0.05)
    assert FITTED.growth == pytest.approx(refit.growth, rel=0.05, abs=0.01)


def test_the_errors_meet_the_goal(data: tuple[tuple, tuple]) -> None:
    points, gpus = data
    results = counted(points, gpus)
    target = [abs(r.target_error) for r in results]
    speedup = [abs(e) for r in results if (e := r.speedup_error) is not None]
    assert len(target) >= 30 and len(speedup) >= 20  # issue 48: at least 20 speedups held to
    for errors in (target, speedup):
        assert sum(e <= GOAL for e in errors) >= 0.75 * len(errors)  # most within 20%


def test_every_point_missed_by_more_than_40_percent_is_explained_in_the_docs(data: tuple[tuple, tuple]) -> None:
    # Issue 33's "none worse than 40%" no longer holds once points were added by a rule rather
    # than picked: each such miss must be named where the docs say why the model misses.
    points, gpus = data
    text = DOCS.read_text()
    misses = text[text.index("Where it misses, and why:"):text.index("## JSON names scripts can rely on")]
    worst = [r.point.id for r in counted(points, gpus)
             if abs(r.target_error) > WORST or abs(r.speedup_error or 0.0) > WORST]
    for point_id in worst:
        assert point_id in misses, f"{point_id} misses by more than {WORST:.0%}: say why in docs/estimate.md"


def test_the_speedup_points_give_an_acceptance_and_a_draft_length(data: tuple[tuple, tuple]) -> None:
    # Issue 48 item 5: at least 20 published speedups with the acceptance and draft length they
    # ran at, each predicted at its own setting; more than one vendor among them.
    points, gpus = data
    held = [r for r in counted(points, gpus) if r.speedup is not None]
    assert len(held) >= 20
    assert all(r.point.acceptance > 0 and r.point.draft_max > 0 for r in held)
    assert {r.gpu.vendor for r in held} >= {"nvidia", "apple"}


def test_the_docs_show_the_table_the_code_computes(data: tuple[tuple, tuple]) -> None:
    points, gpus = data
    text = DOCS.read_text()
    m = re.search(r"<!-- points-table -->\n(.*?)\n<!-- /points-table -->", text, re.S)
    assert m, "docs/estimate.md has no points table"
    assert m.group(1).strip() == error_table(points, gpus, FITTED).strip(), (
        "regenerate with: python benchmarks/roofline_fit.py --table")


@pytest.mark.parametrize(("quant", "bpw"), [
    ("Q8_0", 7.96 * 2**33 / 8.03e9), ("Q4_K_M", 4.58 * 2**33 / 8.03e9), ("UD-Q4_K_XL", 4.58 * 2**33 / 8.03e9),
    ("MLX 4-bit", 4.5), ("EXL2 4.25bpw", 4.25), ("BF16 (not stated)", 16.0), ("IQ4_XS", 4.25),
])
def test_bits_per_weight_come_from_llamacpps_own_table(quant: str, bpw: float) -> None:
    assert bits_per_weight(quant) == pytest.approx(bpw)
    assert bits_per_weight("not stated") is None


def test_acceptance_is_turned_into_a_per_token_rate_by_its_kind(data: tuple[tuple, tuple]) -> None:
    points, _ = data
    p = next(p for p in points if p.acceptance_kind == "accepted/drafted" and p.draft_max)
    a = acceptance_per_token(p, p.draft_max)
    assert a is not None and 0 < a < 1
    # E[accepted] / k at that a gives back the point's accepted/drafted.
    k = p.draft_max
    accepted = sum(a ** i for i in range(1, k + 1))
    assert accepted / k == pytest.approx(p.acceptance, rel=1e-6)


def _point(**over: object) -> dict[str, object]:
    base: dict[str, object] = {
        "id": "x", "url": "https://example.org/x", "quote": "alone 10 t/s, with the draft 20 t/s",
        "hardware": "a 3090", "gpu": "RTX 3090", "gpu_count": 1, "offload": "full", "engine": "llama.cpp",
        "target": {"name": "T", "params_b": 8.0, "quant": "Q4_K_M"},
        "draft": {"name": "D", "params_b": 0.5, "quant": "Q8_0"},
        "draft_max": 4, "draft_max_basis": "stated", "acceptance": 0.7, "acceptance_kind": "accepted/drafted",
        "target_tokens_per_s": 10.0, "pair_tokens_per_s": 20.0, "settings": "",
    }
    base.update(over)
    return base


def test_a_bad_point_is_refused_with_every_reason() -> None:
    assert parse_points({"schema_version": 1, "point": [_point(acceptance_quote="q")]}, "p.toml")[0].speedup == 2.0
    cases = [
        (_point(pair_tokens_per_s=25.0), "pair_tokens_per_s 25.0 is not in the quote"),
        (_point(acceptance_kind=""), "an acceptance needs its kind"),
        (_point(draft_max_basis=""), "a draft_max needs its basis"),
        (_point(url="http://x"), "url must be an https:// address"),
        (_point(offload="half"), "offload must be one of"),
        (_point(target={"name": "T", "quant": "Q4_K_M"}), "target: KeyError"),
        (_point(p_min=1.0, acceptance_quote="q"), "p_min must be at least 0 and below 1"),
        (_point(p_min=-0.1, acceptance_quote="q"), "p_min must be at least 0 and below 1"),
        (_point(acceptance=72.0, acceptance_quote="72%"), "acceptance must be a fraction from 0 to 1"),
        (_point(), "an acceptance needs its acceptance_quote"),
        (_point(draft_min=5, acceptance_quote="q"), "draft_min must be from 0 to draft_max"),
        (_point(n_predict=-1, acceptance_quote="q"), "must not be negative"),
    ]
    for item, said in cases:
        with pytest.raises(RegistryError) as err:
            parse_points({"schema_version": 1, "point": [item]}, "p.toml")
        assert said in err.value.message, (said, err.value.message)
    # A figure computed from the quote is allowed when the point says how.
    ok = _point(pair_tokens_per_s=25.0, derivation="1000 / 40 ms TPOT", acceptance_quote="q")
    assert parse_points({"schema_version": 1, "point": [ok]}, "p.toml")[0].pair_tokens_per_s == 25.0
