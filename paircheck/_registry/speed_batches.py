"""Published decode speeds at batch size 1 and above for the same model on the same device
(``registry/speed/batches.toml``, schema in registry/README.md, "Batched decode costs"): what
verifying a draft's tokens costs on each backend class. Loading and validation only; nothing
in paircheck predicts from them yet.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from paircheck._registry.schema import RegistryError

SCHEMA_VERSION = 1
BACKENDS = ("cuda", "metal", "rocm", "vulkan", "cpu")
# What a row's number is: the tokens/s over the whole batch (llama-batched-bench's S_TG,
# llama-bench's pp N), the milliseconds one evaluation of the batch took, or the batch's
# throughput as a multiple of batch 1's (a source that publishes only the ratio).
UNITS = ("tokens/s", "ms", "ratio to batch 1")
_FIELDS = {"id", "url", "quote", "hardware", "gpu", "backend", "engine", "engine_version", "model", "unit",
           "measure", "rows", "settings"}
_MODEL_FIELDS = {"name", "params_b", "quant", "active_params_b"}


@dataclass(frozen=True)
class BatchModel:
    name: str
    params_b: float  # 0: the source does not say
    quant: str
    active_params_b: float = 0.0  # 0: dense, or not stated

    @property
    def moe(self) -> bool:
        return 0 < self.active_params_b < self.params_b


@dataclass(frozen=True)
class BatchRow:
    batch: int
    value: float


@dataclass(frozen=True)
class BatchCurve:
    id: str
    url: str
    quote: str
    hardware: str
    gpu: str  # a row of registry/hardware/gpus.toml, "" when the source names no device in it
    backend: str
    engine: str
    engine_version: str
    model: BatchModel
    unit: str
    measure: str  # which column or test the rows are (S_TG of llama-batched-bench, pp N, ...)
    rows: tuple[BatchRow, ...]
    settings: str

    def at(self, batch: int) -> float | None:
        return next((r.value for r in self.rows if r.batch == batch), None)


def _number_in_quote(value: float, quote: str) -> bool:
    text = quote.replace(",", "")
    return any(form in text for form in {f"{value:g}", f"{value}", f"{value:.2f}", f"{value:.1f}"})


def _model(raw: Any, label: str, problems: list[str]) -> BatchModel:
    if not isinstance(raw, Mapping):
        problems.append(f"{label}: model must be a table")
        return BatchModel("", 0.0, "")
    for key in sorted(set(raw) - _MODEL_FIELDS):
        problems.append(f"{label}: model has an unknown field {key!r}")
    name, quant = raw.get("name"), raw.get("quant")
    params, active = raw.get("params_b"), raw.get("active_params_b", 0.0)
    if not isinstance(name, str) or not name.strip():
        problems.append(f"{label}: model.name must be a non-empty string")
    if not isinstance(quant, str) or not quant.strip():
        problems.append(f"{label}: model.quant must be a non-empty string (say 'not stated')")
    if isinstance(params, bool) or not isinstance(params, (int, float)) or params < 0:
        problems.append(f"{label}: model.params_b must be a number >= 0 (0: not stated)")
        params = 0.0
    if isinstance(active, bool) or not isinstance(active, (int, float)) or active < 0:
        problems.append(f"{label}: model.active_params_b must be a number >= 0")
        active = 0.0
    elif active and params and active > params:
        problems.append(f"{label}: model.active_params_b must not exceed params_b")
    return BatchModel(str(name or ""), float(params), str(quant or ""), float(active))


def _rows(raw: Any, unit: str, quote: str, label: str, problems: list[str]) -> tuple[BatchRow, ...]:
    if not isinstance(raw, list) or not raw:
        problems.append(f"{label}: rows must be a non-empty list of [batch size, value]")
        return ()
    rows: list[BatchRow] = []
    malformed = False
    for i, row in enumerate(raw, 1):
        if (not isinstance(row, list) or len(row) != 2 or isinstance(row[0], bool) or not isinstance(row[0], int)
                or isinstance(row[1], bool) or not isinstance(row[1], (int, float))):
            problems.append(f"{label}: row {i} must be [batch size (an integer), value (a number)]")
            malformed = True
            continue
        batch, value = row
        if batch < 1:
            problems.append(f"{label}: row {i}: batch size must be >= 1")
            malformed = True
        if not value > 0:
            problems.append(f"{label}: row {i}: value must be > 0")
        if value > 0 and quote.strip() and not _number_in_quote(value, quote):  # an empty quote is its own error
            problems.append(f"{label}: row {i}: {value:g} is not in the quote (copy the figure as published)")
        rows.append(BatchRow(batch, float(value)))
    if malformed:  # the set of batch sizes is not known; each bad row has its message
        return tuple(rows)
    batches = [r.batch for r in rows]
    if batches != sorted(set(batches)):
        problems.append(f"{label}: rows must be in increasing batch size, each once")
        return tuple(rows)
    if rows and unit != "ratio to batch 1":
        if 1 not in batches:
            problems.append(f"{label}: rows need batch size 1 (the cost a verification batch is compared with)")
        if max(batches) <= 1:
            problems.append(f"{label}: rows need a batch size above 1 as well")
    if rows and unit == "ratio to batch 1" and 1 in batches:
        problems.append(f"{label}: a ratio to batch 1 has no row for batch size 1 (it is 1 by definition)")
    return tuple(rows)


def parse_batches(raw: Mapping[str, Any], where: str) -> tuple[BatchCurve, ...]:
    problems: list[str] = []
    if raw.get("schema_version") != SCHEMA_VERSION:
        problems.append(f"{where}: schema_version must be {SCHEMA_VERSION}")
    for key in sorted(set(raw) - {"schema_version", "batch"}):
        problems.append(f"{where}: unknown top-level key {key!r}")
    items = raw.get("batch")
    if not isinstance(items, list) or not items:
        problems.append(f"{where}: no [[batch]]")
        items = []
    curves: list[BatchCurve] = []
    seen: set[str] = set()
    for i, item in enumerate(items, 1):
        if not isinstance(item, Mapping):
            problems.append(f"{where}: batch {i}: not a table")
            continue
        label = f"{where}: batch {item.get('id', i)}"
        for key in sorted(set(item) - _FIELDS):
            problems.append(f"{label}: unknown field {key!r}")
        text: dict[str, str] = {}
        for key in ("id", "url", "quote", "hardware", "gpu", "backend", "engine", "engine_version", "unit",
                    "measure", "settings"):
            value = item.get(key)
            if not isinstance(value, str):
                problems.append(f"{label}: {key} must be a string")
                value = ""
            text[key] = value
        for key in ("id", "url", "quote", "hardware", "engine", "measure"):
            if isinstance(item.get(key), str) and not text[key].strip():
                problems.append(f"{label}: {key} is empty")
        if text["id"] in seen:
            problems.append(f"{label}: id used twice")
        seen.add(text["id"])
        if text["url"] and not text["url"].startswith("https://"):
            problems.append(f"{label}: url must be an https:// address")
        if "\n" in text["quote"]:
            problems.append(f"{label}: quote must be one line (cells joined with ' | ', cuts marked ' ... ')")
        if text["backend"] not in BACKENDS:
            problems.append(f"{label}: backend must be one of {', '.join(BACKENDS)}")
        if text["unit"] not in UNITS:
            problems.append(f"{label}: unit must be one of {', '.join(UNITS)}")
        model = _model(item.get("model"), label, problems)
        rows = _rows(item.get("rows"), text["unit"], text["quote"], label, problems)
        curves.append(BatchCurve(
            id=text["id"], url=text["url"], quote=text["quote"], hardware=text["hardware"], gpu=text["gpu"],
            backend=text["backend"], engine=text["engine"], engine_version=text["engine_version"], model=model,
            unit=text["unit"], measure=text["measure"], rows=rows, settings=text["settings"]))
    if problems:
        raise RegistryError(where, "; ".join(problems))
    return tuple(curves)


def batches_path() -> Path:
    from paircheck._registry.where import default_registry_dir

    return default_registry_dir() / "speed" / "batches.toml"


def load_batches(path: Path | None = None) -> tuple[BatchCurve, ...]:
    from paircheck._registry.toml_file import read_toml

    path = path or batches_path()
    return parse_batches(read_toml(path, "the batched decode costs"), str(path))
