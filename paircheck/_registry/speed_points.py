"""Published speed measurements of speculative decoding with a draft model: the points the
GPU speed prediction is held to (``registry/speed/points.toml``, schema in registry/README.md,
"Speed points"). Loading and validation only; ``paircheck.speed.points`` predicts them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from paircheck._registry.schema import RegistryError

SCHEMA_VERSION = 1
OFFLOADS = ("full", "partial", "cpu")
ACCEPTANCE_KINDS = ("accepted/drafted", "draft share of output", "")
DRAFT_MAX_BASES = ("stated", "engine default", "")


@dataclass(frozen=True)
class Side:
    name: str
    params_b: float
    quant: str
    active_params_b: float = 0.0  # 0: dense (all parameters read per token)
    experts: int = 0
    experts_used: int = 0
    file_gib: float = 0.0
    # The model's published architecture in paircheck.speed.architectures ("Qwen2.5-72B"): its
    # tensors at ``quant`` are what the point is predicted on; "" for none (parameters x bits).
    arch: str = ""

    @property
    def moe(self) -> bool:
        return 0 < self.active_params_b < self.params_b


@dataclass(frozen=True)
class SpeedPoint:
    id: str
    url: str
    quote: str
    hardware: str
    gpu: str  # a row of registry/hardware/gpus.toml, "" for none
    gpu_count: int
    offload: str
    engine: str
    target: Side
    draft: Side
    draft_max: int  # 0: not known
    draft_max_basis: str
    acceptance: float  # 0: not given
    acceptance_kind: str
    target_tokens_per_s: float
    pair_tokens_per_s: float
    settings: str
    engine_version: str = ""
    ctx: int = 0
    p_min: float = 0.0
    draft_min: int = 0
    acceptance_quote: str = ""
    prompt: str = ""
    # How a figure not printed in the quote was computed from it (a TPOT in ms, a rounded
    # figure read off a chart); empty when both tokens/s are in the quote as given.
    derivation: str = ""
    # Why the point is predicted and shown but not fitted to nor counted in the goal (a path
    # of the engine the model does not price, such as vocabulary translation); "" for none.
    held_out: str = ""
    # The workload: tokens in the context when the replies started (0: a short prompt), and the
    # reply length (0: not stated; the workload's default is used).
    context_tokens: int = 0
    n_predict: int = 0

    @property
    def speedup(self) -> float:
        return self.pair_tokens_per_s / self.target_tokens_per_s

    @property
    def single_device(self) -> bool:
        return self.gpu_count == 1 and self.offload == "full" and bool(self.gpu)


def _side(raw: Any, where: str, problems: list[str]) -> Side | None:
    if not isinstance(raw, dict):
        problems.append(f"{where}: must be a table")
        return None
    try:
        side = Side(str(raw["name"]), float(raw["params_b"]), str(raw["quant"]),
                    float(raw.get("active_params_b", 0.0)), int(raw.get("experts", 0)),
                    int(raw.get("experts_used", 0)), float(raw.get("file_gib", 0.0)), str(raw.get("arch", "")))
    except (KeyError, TypeError, ValueError) as exc:
        problems.append(f"{where}: {exc.__class__.__name__} {exc}")
        return None
    if not side.params_b > 0:
        problems.append(f"{where}: params_b must be > 0")
    return side


def parse_points(raw: Mapping[str, Any], where: str) -> tuple[SpeedPoint, ...]:
    problems = [] if raw.get("schema_version") == SCHEMA_VERSION else [f"{where}: schema_version must be 1"]
    points: list[SpeedPoint] = []
    seen: set[str] = set()
    for i, item in enumerate(raw.get("point") or []):
        label = f"{where}: point {i + 1}"
        if not isinstance(item, dict):
            problems.append(f"{label}: not a table")
            continue
        label = f"{where}: point {item.get('id', i + 1)}"
        target, draft = _side(item.get("target"), f"{label}: target", problems), _side(item.get("draft"),
                                                                                       f"{label}: draft", problems)
        try:
            point = SpeedPoint(
                id=str(item["id"]), url=str(item["url"]), quote=str(item["quote"]), hardware=str(item["hardware"]),
                gpu=str(item["gpu"]), gpu_count=int(item["gpu_count"]), offload=str(item["offload"]),
                engine=str(item["engine"]), target=target or Side("", 1, ""), draft=draft or Side("", 1, ""),
                draft_max=int(item["draft_max"]), draft_max_basis=str(item.get("draft_max_basis", "")),
                acceptance=float(item["acceptance"]), acceptance_kind=str(item.get("acceptance_kind", "")),
                target_tokens_per_s=float(item["target_tokens_per_s"]),
                pair_tokens_per_s=float(item["pair_tokens_per_s"]), settings=str(item["settings"]),
                engine_version=str(item.get("engine_version", "")), ctx=int(item.get("ctx", 0)),
                p_min=float(item.get("p_min", 0.0)), draft_min=int(item.get("draft_min", 0)),
                acceptance_quote=str(item.get("acceptance_quote", "")), prompt=str(item.get("prompt", "")),
                derivation=str(item.get("derivation", "")), held_out=str(item.get("held_out", "")),
                context_tokens=int(item.get("context_tokens", 0)), n_predict=int(item.get("n_predict", 0)),
            )
        except (KeyError, TypeError, ValueError) as exc:
            problems.append(f"{label}: {exc.__class__.__name__} {exc}")
            continue
        if point.id in seen:
            problems.append(f"{label}: id used twice")
        seen.add(point.id)
        if not point.url.startswith("https://"):
            problems.append(f"{label}: url must be an https:// address")
        if not point.quote.strip():
            problems.append(f"{label}: quote is empty")
        if point.offload not in OFFLOADS:
            problems.append(f"{label}: offload must be one of {', '.join(OFFLOADS)}")
        if point.acceptance_kind not in ACCEPTANCE_KINDS or (point.acceptance > 0) != bool(point.acceptance_kind):
            problems.append(f"{label}: an acceptance needs its kind ({', '.join(k for k in ACCEPTANCE_KINDS if k)})")
        if point.draft_max_basis not in DRAFT_MAX_BASES or (point.draft_max > 0) != bool(point.draft_max_basis):
            problems.append(f"{label}: a draft_max needs its basis (stated or engine default)")
        if not 0.0 <= point.p_min < 1.0:
            problems.append(f"{label}: p_min must be at least 0 and below 1")
        if not 0.0 <= point.acceptance <= 1.0:
            problems.append(f"{label}: acceptance must be a fraction from 0 to 1")
        if point.acceptance > 0 and not point.acceptance_quote.strip():
            problems.append(f"{label}: an acceptance needs its acceptance_quote")
        if point.draft_min < 0 or (point.draft_max > 0 and point.draft_min > point.draft_max):
            problems.append(f"{label}: draft_min must be from 0 to draft_max")
        if point.n_predict < 0 or point.context_tokens < 0 or point.ctx < 0:
            problems.append(f"{label}: ctx, context_tokens and n_predict must not be negative")
        if not (point.target_tokens_per_s > 0 and point.pair_tokens_per_s > 0):
            problems.append(f"{label}: both tokens/s must be > 0")
        for name in ("target_tokens_per_s", "pair_tokens_per_s"):
            if point.derivation:
                break
            if f"{item[name]:g}" not in point.quote.replace(",", "") and f"{item[name]}" not in point.quote:
                problems.append(f"{label}: {name} {item[name]} is not in the quote (say how it was computed: "
                                "derivation)")
        points.append(point)
    if not points:
        problems.append(f"{where}: no [[point]]")
    if problems:
        raise RegistryError(where, "; ".join(problems))
    return tuple(points)


def points_path() -> Path:
    from paircheck._registry.where import default_registry_dir

    return default_registry_dir() / "speed" / "points.toml"


def load_points(path: Path | None = None) -> tuple[SpeedPoint, ...]:
    from paircheck._registry.toml_file import read_toml

    path = path or points_path()
    return parse_points(read_toml(path, "the speed points"), str(path))
