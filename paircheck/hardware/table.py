"""The GPU table: GPUs and unified-memory machines with their memory bandwidth and size,
each row with the vendor page (or spec database) it comes from. Data in
``registry/hardware/gpus.toml``; validated here and by tests/hardware/test_gpu_table.py.

Names are matched forgivingly, because users type "3090", "RTX 3090 Ti", "m4 max" or what
nvidia-smi prints ("NVIDIA GeForce RTX 4090"): case, spaces, dashes and vendor words do not
matter, and a name must match a row's name or alias whole, never a prefix (so "3090" is
never the 3090 Ti).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from paircheck.errors import InputError

if TYPE_CHECKING:
    from paircheck.hardware.detect import Detected

SCHEMA_VERSION = 1
VENDORS = ("nvidia", "amd", "apple", "intel")
KINDS = ("discrete", "unified")
# Words a user or a tool may add that name no particular GPU.
_NOISE = re.compile(r"\b(nvidia|geforce|amd|radeon|apple|intel|graphics|gpu|tesla|the|chip|card)\b")


@dataclass(frozen=True)
class Gpu:
    """One row of the table. ``bandwidth_gbs`` is the peak memory bandwidth in GB/s
    (decimal), ``memory_gib`` the memory as sold (for a unified-memory machine the largest
    configuration; ``memory_note`` says which others exist)."""

    name: str
    vendor: str
    kind: str
    memory_gib: float
    bandwidth_gbs: float
    source: str
    quote: str
    aliases: tuple[str, ...] = ()
    fp16_tflops: float = 0.0
    note: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "bandwidth_gbs": self.bandwidth_gbs, "memory_gib": self.memory_gib,
                "source": self.source, "vendor": self.vendor, "kind": self.kind}


def table_path() -> Path:
    from paircheck._registry.where import default_registry_dir

    return default_registry_dir() / "hardware" / "gpus.toml"


def key(name: str) -> str:
    """What two spellings of one GPU have in common: lower case, vendor words dropped,
    letters and digits only ("NVIDIA GeForce RTX 3090 Ti" -> "rtx3090ti")."""
    return re.sub(r"[^a-z0-9]", "", _NOISE.sub(" ", name.lower()))


def _problems(item: Mapping[str, Any], where: str) -> list[str]:
    out = []
    for name, kind in (("name", str), ("vendor", str), ("kind", str), ("source", str), ("quote", str)):
        if not isinstance(item.get(name), kind):
            out.append(f"{where}: {name} must be a string")
    for name in ("memory_gib", "bandwidth_gbs"):
        value = item.get(name)
        if not isinstance(value, (int, float)) or isinstance(value, bool) or not value > 0:
            out.append(f"{where}: {name} must be a positive number")
    if item.get("vendor") not in VENDORS:
        out.append(f"{where}: vendor must be one of {', '.join(VENDORS)}")
    if item.get("kind") not in KINDS:
        out.append(f"{where}: kind must be one of {', '.join(KINDS)}")
    aliases = item.get("aliases", [])
    if not isinstance(aliases, list) or not all(isinstance(a, str) for a in aliases):
        out.append(f"{where}: aliases must be a list of strings")
    if isinstance(item.get("source"), str) and not item["source"].startswith(("https://", "http://")):
        out.append(f"{where}: source must be a web address")
    unknown = set(item) - {"name", "vendor", "kind", "memory_gib", "bandwidth_gbs", "source", "quote", "aliases",
                           "fp16_tflops", "note"}
    if unknown:
        out.append(f"{where}: unknown keys {', '.join(sorted(unknown))}")
    return out


def parse_table(raw: Mapping[str, Any], where: str) -> tuple[Gpu, ...]:
    """The rows of a loaded gpus.toml; InputError naming every problem."""
    problems = [] if raw.get("schema_version") == SCHEMA_VERSION else [f"{where}: schema_version must be 1"]
    items = raw.get("gpu")
    if not isinstance(items, list) or not items:
        raise InputError(where, "no [[gpu]] rows")
    rows: list[Gpu] = []
    seen: dict[str, str] = {}
    for i, item in enumerate(items):
        label = f"{where}: gpu {i + 1} ({item.get('name', '?') if isinstance(item, dict) else '?'})"
        if not isinstance(item, dict):
            problems.append(f"{label}: not a table")
            continue
        found = _problems(item, label)
        if found:
            problems += found
            continue
        gpu = Gpu(item["name"], item["vendor"], item["kind"], float(item["memory_gib"]), float(item["bandwidth_gbs"]),
                  item["source"], item["quote"], tuple(item.get("aliases", ())), float(item.get("fp16_tflops", 0.0)),
                  str(item.get("note", "")))
        for spelling in (gpu.name, *gpu.aliases):
            k = key(spelling)
            if k in seen and seen[k] != gpu.name:
                problems.append(f"{label}: {spelling!r} also names {seen[k]!r}")
            seen[k] = gpu.name
        rows.append(gpu)
    if problems:
        raise InputError(where, "; ".join(problems))
    return tuple(rows)


def load_gpus(path: Path | None = None) -> tuple[Gpu, ...]:
    """The shipped table (or the one at ``path``)."""
    from paircheck._registry.toml_file import read_toml

    path = path or table_path()
    return parse_table(read_toml(path, "the GPU table"), str(path))


def find_gpu(name: str, gpus: Sequence[Gpu], where: str = "--gpu") -> Gpu:
    """The row ``name`` names (its name or an alias, spelled any way ``key`` forgives);
    InputError with the closest names when none does, under ``where``: the option or
    argument the user gave it as (``paircheck gpus NAME`` has no --gpu)."""
    wanted = key(name)
    if not wanted:
        raise InputError(where, f"{name!r} names no GPU; `paircheck gpus` lists the table")
    spellings = {key(s): g for g in gpus for s in (g.name, *g.aliases)}
    if wanted in spellings:
        return spellings[wanted]
    close = difflib.get_close_matches(wanted, list(spellings), n=3, cutoff=0.6)
    names = list(dict.fromkeys(spellings[c].name for c in close))
    hint = f"; did you mean {' or '.join(repr(n) for n in names)}?" if names else ""
    # --bandwidth and --vram stand in for --gpu only: `paircheck gpus NAME` has neither.
    other = "; --bandwidth and --vram give the numbers for any other" if where == "--gpu" else ""
    raise InputError(where, f"{name!r} is not in the GPU table{hint} (`paircheck gpus` lists it{other})")


@dataclass(frozen=True)
class GpuTable:
    """``paircheck gpus``: the rows shown (one when a NAME was given) and, with ``--detect``,
    what this machine's tools report."""

    rows: tuple[Gpu, ...]
    detected: Detected | None = None
    one: bool = False  # a NAME was asked for: its row in full
