"""The batched decode costs (registry/speed/batches.toml): the shipped file loads, names devices
of the GPU table, covers the backend classes it claims, and every malformed field is refused
with its own message."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from paircheck._registry.schema import RegistryError
from paircheck._registry.speed_batches import batches_path, load_batches, parse_batches
from paircheck.hardware.table import find_gpu, load_gpus


def test_the_shipped_file_loads_with_batch_1_and_above_per_curve() -> None:
    curves = load_batches()
    assert batches_path().name == "batches.toml"
    assert len(curves) >= 8
    gpus = load_gpus()
    for c in curves:
        if c.gpu:
            find_gpu(c.gpu, gpus)  # every named device is a row of the table
        if c.unit == "ratio to batch 1":
            assert all(r.batch > 1 for r in c.rows)
        else:
            assert c.at(1) is not None and max(r.batch for r in c.rows) > 1
    assert {c.backend for c in curves} >= {"cuda", "metal", "vulkan"}
    # The figures the notes rely on, as published.
    glm = next(c for c in curves if c.id == "cuda-iklamacpp-glm45air-iq1kt-ubatch1-8-moe")
    assert glm.model.moe and glm.at(1) == 169.98 and glm.at(2) == 111.52
    m4 = next(c for c in curves if c.id == "metal-m4-qwen38-27b-batch8-ratio")
    assert m4.at(8) == 1.22 and m4.at(1) is None


def _entry(**over: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "id": "x", "url": "https://example.org/x", "quote": "B 1: 50.5 t/s, B 4: 120.25 t/s",
        "hardware": "a 3090", "gpu": "GeForce RTX 3090", "backend": "cuda", "engine": "llama.cpp",
        "engine_version": "b1", "model": {"name": "M", "params_b": 8.0, "quant": "Q4_K_M"},
        "unit": "tokens/s", "measure": "S_TG", "rows": [[1, 50.5], [4, 120.25]], "settings": "",
    }
    base.update(over)
    return base


def _doc(*entries: dict[str, Any]) -> dict[str, Any]:
    return {"schema_version": 1, "batch": list(entries)}


def test_a_good_entry_loads() -> None:
    (c,) = parse_batches(_doc(_entry()), "b.toml")
    assert c.at(1) == 50.5 and c.at(4) == 120.25 and c.at(2) is None and not c.model.moe


def _without(key: str) -> dict[str, Any]:
    e = _entry()
    del e[key]
    return e


def _model(**over: Any) -> dict[str, Any]:
    m: dict[str, Any] = {"name": "M", "params_b": 8.0, "quant": "Q4_K_M"}
    m.update(over)
    return _entry(model=m)


CASES = [
    (_entry(url="http://example.org"), "batch x: url must be an https:// address"),
    (_entry(quote="a\nb 50.5 120.25"), "batch x: quote must be one line"),
    (_entry(quote=""), "batch x: quote is empty"),
    (_entry(backend="opencl"), "batch x: backend must be one of cuda, metal, rocm, vulkan, cpu"),
    (_entry(unit="tok/s"), "batch x: unit must be one of tokens/s, ms, ratio to batch 1"),
    (_entry(rows=[[1, 50.5], [4, 120.3]]), "batch x: row 2: 120.3 is not in the quote"),
    (_entry(rows=[[4, 120.25]]), "batch x: rows need batch size 1"),
    (_entry(rows=[[1, 50.5]]), "batch x: rows need a batch size above 1 as well"),
    (_entry(rows=[[4, 120.25], [1, 50.5]]), "batch x: rows must be in increasing batch size, each once"),
    (_entry(rows=[[1, 50.5], [1, 50.5]]), "batch x: rows must be in increasing batch size, each once"),
    (_entry(rows=[[1, 50.5], [4, "120.25"]]), "batch x: row 2 must be [batch size (an integer), value (a number)]"),
    (_entry(rows=[[1.0, 50.5], [4, 120.25]]), "batch x: row 1 must be [batch size (an integer)"),
    (_entry(rows=[[0, 50.5], [4, 120.25]]), "batch x: row 1: batch size must be >= 1"),
    (_entry(rows=[[1, 0], [4, 120.25]]), "batch x: row 1: value must be > 0"),
    (_entry(rows=[]), "batch x: rows must be a non-empty list"),
    (_entry(unit="ratio to batch 1", rows=[[1, 50.5], [4, 120.25]]),
     "batch x: a ratio to batch 1 has no row for batch size 1"),
    (_entry(model="M 8B"), "batch x: model must be a table"),
    (_model(name=""), "batch x: model.name must be a non-empty string"),
    (_model(quant=None), "batch x: model.quant must be a non-empty string"),
    (_model(params_b=-1), "batch x: model.params_b must be a number >= 0"),
    (_model(params_b=True), "batch x: model.params_b must be a number >= 0"),
    (_model(active_params_b=12.0), "batch x: model.active_params_b must not exceed params_b"),
    (_model(experts=8), "batch x: model has an unknown field 'experts'"),
    (_entry(note="typo"), "batch x: unknown field 'note'"),
    (_without("measure"), "batch x: measure must be a string"),
    (_entry(gpu=None), "batch x: gpu must be a string"),
    (_entry(engine=" "), "batch x: engine is empty"),
]


@pytest.mark.parametrize(("entry", "said"), CASES, ids=[said for _, said in CASES])
def test_each_malformed_field_is_refused_with_its_own_message(entry: dict[str, Any], said: str) -> None:
    with pytest.raises(RegistryError) as err:
        parse_batches(_doc(entry), "b.toml")
    assert said in err.value.message, err.value.message
    assert err.value.message.count(";") == 0, f"one problem planted, more reported: {err.value.message}"


def test_the_file_level_problems_are_named() -> None:
    for doc, said in [
        ({"schema_version": 2, "batch": [_entry()]}, "b.toml: schema_version must be 1"),
        ({"schema_version": 1}, "b.toml: no [[batch]]"),
        ({"schema_version": 1, "batch": [_entry()], "point": []}, "b.toml: unknown top-level key 'point'"),
        (_doc(_entry(), copy.deepcopy(_entry())), "b.toml: batch x: id used twice"),
        (_doc("not a table"), "b.toml: batch 1: not a table"),  # type: ignore[arg-type]
    ]:
        with pytest.raises(RegistryError) as err:
            parse_batches(doc, "b.toml")
        assert said in err.value.message, err.value.message


def test_the_shipped_file_is_packaged_with_the_points() -> None:
    # pyproject's package-data for paircheck._registry_data.speed takes *.toml; the loader reads
    # the same folder as the points, so an installed copy finds it where the points are.
    from paircheck._registry.speed_points import points_path

    assert batches_path().parent == points_path().parent
    assert batches_path().is_file()
