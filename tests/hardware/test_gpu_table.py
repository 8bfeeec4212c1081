"""The GPU table (registry/hardware/gpus.toml): every row sourced, names matched forgivingly
and never to the wrong device, bad rows reported together."""

from __future__ import annotations

import pytest

from paircheck.errors import InputError
from paircheck.hardware.table import VENDORS, find_gpu, key, load_gpus, parse_table


def test_the_shipped_table_covers_what_people_run_and_cites_each_figure() -> None:
    rows = load_gpus()
    assert len(rows) >= 35
    assert {g.vendor for g in rows} == set(VENDORS)
    assert {g.kind for g in rows if g.vendor == "apple"} == {"unified"}
    for g in rows:
        assert g.source.startswith(("https://", "http://")) and g.quote.strip(), g.name
        quote = g.quote.replace(",", "")
        # A figure the quote does not print as given must say how it was derived.
        for figure in (g.bandwidth_gbs, g.memory_gib):
            assert f"{figure:g}" in quote or g.note, f"{g.name}: {figure:g} is neither in the quote nor explained"
        assert 50 <= g.bandwidth_gbs <= 10000 and 4 <= g.memory_gib <= 512, g.name


@pytest.mark.parametrize(("typed", "row"), [
    ("3090", "GeForce RTX 3090"),
    ("RTX 3090 Ti", "GeForce RTX 3090 Ti"),
    ("rtx-3090-ti", "GeForce RTX 3090 Ti"),
    ("NVIDIA GeForce RTX 4090", "GeForce RTX 4090"),  # as nvidia-smi names it
    ("m4 max", "Apple M4 Max (40-core GPU)"),
    ("M4 Max 32-core GPU", "Apple M4 Max (32-core GPU)"),
    ("Apple M2 Ultra", "Apple M2 Ultra"),  # as system_profiler names it
    ("NVIDIA A100-SXM4-80GB", "A100 80GB SXM"),
    ("NVIDIA H100 80GB HBM3", "H100 SXM"),
    ("Radeon RX 7900 XTX", "Radeon RX 7900 XTX"),
    ("Intel Arc A770 16GB", "Arc A770 16GB"),
])
def test_names_are_matched_forgivingly(typed: str, row: str) -> None:
    assert find_gpu(typed, load_gpus()).name == row


def test_a_prefix_is_never_a_match_and_a_near_miss_is_named() -> None:
    rows = load_gpus()
    assert find_gpu("3090", rows).name != find_gpu("3090 Ti", rows).name
    with pytest.raises(InputError) as err:
        find_gpu("RTX 3095", rows)
    assert "is not in the GPU table" in err.value.message and "did you mean" in err.value.message
    assert "--bandwidth" in err.value.message  # the way out for a device the table lacks
    with pytest.raises(InputError):
        find_gpu("  ", rows)


def test_every_problem_of_a_bad_table_is_reported_at_once() -> None:
    good = {"name": "X1", "vendor": "nvidia", "kind": "discrete", "memory_gib": 8, "bandwidth_gbs": 400,
            "source": "https://example.org/x1", "quote": "8 GB 400 GB/s"}
    rows = [good,
            {**good, "name": "X2", "aliases": ["X1"]},  # another row's name
            {**good, "name": "X3", "vendor": "3dfx"},
            {**good, "name": "X4", "bandwidth_gbs": -1},
            {**good, "name": "X5", "source": "ftp://x"},
            {**good, "name": "X6", "colour": "green"}]
    with pytest.raises(InputError) as err:
        parse_table({"schema_version": 1, "gpu": rows}, "gpus.toml")
    text = err.value.message
    for said in ("'X1' also names 'X1'", "vendor must be one of", "bandwidth_gbs must be a positive number",
                 "source must be a web address", "unknown keys colour"):
        assert said in text, said
    with pytest.raises(InputError, match="schema_version"):
        parse_table({"schema_version": 9, "gpu": [good]}, "gpus.toml")
    with pytest.raises(InputError, match="no \\[\\[gpu\\]\\] rows"):
        parse_table({"schema_version": 1}, "gpus.toml")


def test_key_drops_vendor_words_only() -> None:
    assert key("NVIDIA GeForce RTX 3090 Ti") == "rtx3090ti"
    assert key("Apple M4 Max") == "m4max"
    assert key("Tesla T4") == "t4" and key("T4") == "t4"


def test_the_rtx_4090_row_cites_a_page_about_the_4090() -> None:
    # Issue 50, item 9: it cited an article about the RTX 6000 Ada (48 GB, 960 GB/s) whose
    # table happened to have a 4090 column; the page cited now is the 4090's own.
    row = find_gpu("RTX 4090", load_gpus())
    assert "RTX-4090" in row.source and "6000" not in row.source, row.source
    assert "4090" in row.quote and "24 GB" in row.quote and "384" in row.quote
    assert "1008 GB/s = 21 Gbps x 384 bit / 8" in row.note  # the bandwidth the page does not print
