"""Documented speeds reconciled with the model: every speed the registry documents for a pair,
beside what ``speed.on_gpu.predict_speed`` predicts for that figure's own setup (its device,
its quantizations, its draft length and p-min, its acceptance when documented), and the
difference. A figure the model misses by more than ``FLAG`` is flagged, with what differs,
so that it is never a second, unexplained answer beside the prediction.

The setup is read from the figure: the device is the GPU table's row its hardware names
(none: not predicted); the models are the user's files re-sized to the figure's
quantizations (the weights' bytes scaled by the bits per weight of each), or, without files
(``paircheck pairs``), the sizes the names state; the acceptance is the one documented for
the same pair and device, else the model's figure is a range over the assumed per-token
acceptance 0.5..0.9 and the acceptance the figure would need is said.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from paircheck._registry.identity import ModelIdentity
from paircheck.hardware.table import Gpu, key
from paircheck.model import ModelDescription
from paircheck.speed.acceptance import RATE, Acceptance
from paircheck.speed.on_gpu import BAND, GpuPrediction, predict_speed, shape_of
from paircheck.speed.roofline import Shape
from paircheck.weights import WeightBytes

# A documented figure the model misses by more than this is flagged (issue 48).
FLAG = 0.25
SPEEDS = ("speedup", "tokens_per_second", "baseline_tokens_per_second")
# The highest per-token acceptance the needed acceptance is searched to.
TOP = 0.99


def gpu_in_text(text: str | None, gpus: Sequence[Gpu]) -> Gpu | None:
    """The GPU table's row a free-text hardware description names ("RTX 3090 24GB, Ryzen
    7600X, 32GB RAM"): the longest name or alias found in it, None when there is none or
    it names more than one device ("2x RTX 4090" is one device twice: None too)."""
    if not text:
        return None
    if re.search(r"\b\d+\s*x\s*\w|\bdual\b|\btwo\b|multi", text, re.I):
        return None
    said = key(text)
    best: tuple[int, Gpu] | None = None
    for g in gpus:
        for spelling in (g.name, *g.aliases):
            k = key(spelling)
            if len(k) >= 4 and re.search(r"[a-z]", k) and k in said and (best is None or len(k) > best[0]):
                best = (len(k), g)
    return best[1] if best else None


def at_quant(shape: Shape, params: float, quant: str | None) -> Shape:
    """``shape`` as the same model stored at ``quant`` (its bytes scaled by the bits per
    weight of each way of storing it); unchanged when ``quant`` names no size."""
    from paircheck.speed.points import bits_per_weight, weights_kind_of_quant

    if not quant or params <= 0:
        return shape
    bpw = bits_per_weight(quant)
    if bpw is None or shape.stored_bytes <= 0:
        return shape
    scale = bpw / (shape.stored_bytes * 8 / params)
    return replace(shape, dense_bytes=shape.dense_bytes * scale, expert_bytes=shape.expert_bytes * scale,
                   stored_bytes=shape.stored_bytes * scale, weights=weights_kind_of_quant(quant))


@dataclass(frozen=True)
class DocumentedCheck:
    """One documented figure and the model's own for its setup. ``predicted`` is the model's
    figure (the low end of a range when the acceptance is not documented, ``predicted_max``
    its high end); ``needed`` the per-token acceptance the figure would need (None: reached
    in the range, or not reached by any); ``why_not`` why there is no prediction."""

    line: str
    quantity: str
    value: float
    device: str | None
    setup: str
    predicted: float | None = None
    predicted_max: float | None = None
    needed: float | None = None
    reachable: bool = True
    why_not: str | None = None
    differs: str = ""
    group: str = ""  # the source, engine, hardware and quantizations the figure shares with others
    label: str = ""  # the figure alone: "speedup 2.86x", "137.5 tokens/s"

    @property
    def model_said(self) -> str:
        """The model's figure: one value, or a range with the acceptance it spans."""
        if self.predicted is None:
            return "-"
        fmt = (lambda v: f"{v:.2f}x") if self.quantity == "speedup" else (lambda v: f"{v:.1f}")
        if self.predicted_max is None:
            return fmt(self.predicted)
        return f"{fmt(self.predicted)}..{fmt(self.predicted_max)} (a {BAND[0]:g}..{BAND[-1]:g})"

    @property
    def difference(self) -> float | None:
        """The model's figure over the documented one, minus 1 (to the nearer end of a range;
        0 inside it)."""
        if self.predicted is None:
            return None
        hi = self.predicted if self.predicted_max is None else self.predicted_max
        if self.predicted <= self.value <= hi:
            return 0.0
        nearest = self.predicted if self.value < self.predicted else hi
        return nearest / self.value - 1.0

    @property
    def flagged(self) -> bool:
        d = self.difference
        return d is not None and abs(d) > FLAG

    def said(self) -> str:
        """The model's figure and the difference, in words."""
        if self.predicted is None:
            return f"not predicted: {self.why_not}"
        unit = "x" if self.quantity == "speedup" else " tokens/s"
        fmt = (lambda v: f"{v:.2f}x") if self.quantity == "speedup" else (lambda v: f"{v:.1f} tokens/s")
        figure = fmt(self.predicted) if self.predicted_max is None else (
            f"{fmt(self.predicted)}..{fmt(self.predicted_max)}".replace(f"{unit}..", ".."))
        d = self.difference
        gap = "within its range" if d == 0 and self.predicted_max is not None else f"{d:+.0%}"
        out = f"model {figure} for {self.setup} ({gap})"
        if self.predicted_max is not None and self.value > self.predicted_max:
            out += (f"; it would need per-token acceptance {self.needed:.2f}" if self.needed is not None else
                    f"; not reached at any per-token acceptance up to {TOP:g}")
        if self.flagged:
            out = "OFF BY MORE THAN 25%: " + out + (f"; what differs: {self.differs}" if self.differs else "")
        return out

    def to_dict(self) -> dict[str, object]:
        d = self.difference
        return {"documented": self.line, "quantity": self.quantity, "value": self.value, "device": self.device,
                "setup": self.setup, "predicted": _r(self.predicted), "predicted_max": _r(self.predicted_max),
                "needed_acceptance": _r(self.needed), "difference": _r(d), "flagged": self.flagged,
                "why_not": self.why_not, "differs": self.differs or None}


def _r(v: float | None) -> float | None:
    return None if v is None else round(v, 3)


@dataclass(frozen=True)
class Figure:
    """A documented figure with what the model needs of its setup."""

    line: str
    quantity: str
    value: float
    hardware: str | None
    target_quant: str | None
    draft_quant: str | None
    draft_max: int | None
    acceptance: Acceptance | None  # documented for the same pair and device
    group: str = ""
    label: str = ""


def _figure_value(pred: GpuPrediction, quantity: str) -> float:
    return {"speedup": pred.speedup, "tokens_per_second": pred.pair_tokens_per_s,
            "baseline_tokens_per_second": pred.target_tokens_per_s}[quantity]


def _needed(f: Figure, predict: object) -> float | None:
    """The per-token acceptance at which the figure is reached (None beyond ``TOP``)."""
    assert callable(predict)
    lo, hi = BAND[-1], TOP
    if _figure_value(predict(Acceptance(hi, basis="assumed")), f.quantity) < f.value:
        return None
    for _ in range(20):
        mid = (lo + hi) / 2
        if _figure_value(predict(Acceptance(mid, basis="assumed")), f.quantity) < f.value:
            lo = mid
        else:
            hi = mid
    return hi


def check_figure(f: Figure, target: Shape, draft: Shape, params: tuple[float, float], gpus: Sequence[Gpu],
                 base_names: str = "") -> DocumentedCheck:
    """The model's own figure for ``f``'s setup (see the module docstring)."""
    from paircheck.speed.points import hardware_of

    if base_names:
        f = replace(f, line=f"{f.line} [{base_names}]", group=f"{f.group}; {base_names}")
    gpu = gpu_in_text(f.hardware, gpus)
    if gpu is None:
        why = "the figure names no single device of the GPU table" if f.hardware else "the figure names no device"
        return DocumentedCheck(f.line, f.quantity, f.value, None, "", why_not=why, group=f.group, label=f.label)
    t, d = at_quant(target, params[0], f.target_quant), at_quant(draft, params[1], f.draft_quant)
    quants = ", ".join(x for x in (f.target_quant and f"target {f.target_quant}",
                                   f.draft_quant and f"draft {f.draft_quant}") if x) or "the files' quantizations"
    k = f"draft max {f.draft_max}" if f.draft_max else "the fastest draft max"
    hw = hardware_of(gpu)

    def predict(acc: Acceptance) -> GpuPrediction:
        return predict_speed(hw, "table", t, d, acc, f.draft_max)

    differs = ["the figure is for the base models' names (instruct or base not said)"] if base_names else []
    unsaid = [x for x, known in (("draft max", f.draft_max), ("p-min", False), ("acceptance", f.acceptance))
              if not known]
    if f.quantity == "baseline_tokens_per_second" or f.acceptance is not None:
        acc = f.acceptance or Acceptance(BAND[len(BAND) // 2], basis="assumed")
        value = _figure_value(predict(acc), f.quantity)
        said = f"{gpu.name}, {quants}" + ("" if f.quantity == "baseline_tokens_per_second" else
                                           f", {k}, {acc.said()} documented")
        check = DocumentedCheck(f.line, f.quantity, f.value, gpu.name, said, value, group=f.group, label=f.label)
        if check.flagged:
            differs.append(_why(check))
        return replace(check, differs="; ".join(differs))
    band = [_figure_value(predict(Acceptance(a, basis="assumed")), f.quantity) for a in BAND]
    said = f"{gpu.name} ({hw.backend}), {quants}, {k}, per-token acceptance {BAND[0]:g}..{BAND[-1]:g} ASSUMED"
    check = DocumentedCheck(f.line, f.quantity, f.value, gpu.name, said, min(band), max(band), group=f.group,
                            label=f.label)
    needed = _needed(f, predict) if f.value > max(band) else None
    check = replace(check, needed=needed, reachable=needed is not None or f.value <= max(band))
    if check.flagged:
        differs.append(f"the run's {', '.join(unsaid)} {'is' if len(unsaid) == 1 else 'are'} not documented")
        if not check.reachable:
            differs.append(f"with the verification cost the model gives {hw.backend or 'this device'}, no per-token "
                           f"acceptance up to {TOP:g} reaches the figure")
    return replace(check, differs="; ".join(differs))


def _why(check: DocumentedCheck) -> str:
    if check.quantity == "baseline_tokens_per_second":
        return "the target alone is priced at the roofline's fitted share of the device's bandwidth"
    return "the documented acceptance is turned into a per-token rate at its draft length (speed.acceptance)"


def figures_of(entries: Sequence[object], names_note: dict[str, str] | None = None) -> list[tuple[Figure, str]]:
    """Every speed the entries document, with the acceptance documented beside it (same device
    and draft length), and the note on how the entry was matched."""
    out: list[tuple[Figure, str]] = []
    for e in entries:
        measured = list(getattr(e, "measured", ()))
        for n in measured:
            if n.quantity not in SPEEDS:
                continue
            acc = next((Acceptance(m.value, RATE, m.draft_max, basis="documented", note=measurement_line(m, e))
                        for m in measured if m.quantity == "acceptance_rate" and m.draft_max and 0 < m.value <= 1
                        and m.hardware == n.hardware and (n.draft_max is None or m.draft_max == n.draft_max)), None)
            fig = Figure(measurement_line(n, e), n.quantity, n.value, n.hardware, n.target_quant, n.draft_quant,
                         n.draft_max, acc, _group(n, e), _label(n.quantity, n.value, n.value_max))
            out.append((fig, (names_note or {}).get(getattr(e, "id", ""), "")))
        # The target alone implied by a speedup and the tokens/s of the same run.
        for s in measured:
            if s.quantity != "speedup" or not s.value:
                continue
            tps = next((m for m in measured if m.quantity == "tokens_per_second" and m.hardware == s.hardware
                        and m.target_quant == s.target_quant and m.draft_quant == s.draft_quant), None)
            alone = any(m.quantity == "baseline_tokens_per_second" and m.hardware == s.hardware for m in measured)
            if tps is not None and not alone:
                line = (f"target alone {tps.value / s.value:.1f} tokens/s implied ({tps.value:g} / {s.value:g}) on "
                        f"{s.hardware}")
                out.append((Figure(line, "baseline_tokens_per_second", tps.value / s.value, s.hardware,
                                   s.target_quant, s.draft_quant, None, None, _group(s, e),
                                   f"alone {tps.value / s.value:.1f} tokens/s (implied)"),
                            (names_note or {}).get(getattr(e, "id", ""), "")))
    return out


def measurement_line(n: Any, e: Any) -> str:
    """One documented number, cited: "speedup 2.86 measured on llama.cpp; RTX 3090 ...; (url)"."""
    where = "; ".join(x for x in ((n.engine or "an engine the source does not name")
                                  + (f" {n.engine_version}" if n.engine_version else ""),
                                  n.hardware, n.target_quant and f"target {n.target_quant}",
                                  n.draft_quant and f"draft {n.draft_quant}",
                                  n.draft_max and f"draft max {n.draft_max}") if x)
    url = n.url or e.quote_url or e.source.url
    value = f"{n.value:g}" + (f"-{n.value_max:g}" if n.value_max is not None else "")
    return f"{n.quantity.replace('_', ' ')} {value} measured on {where} ({url})"


def _group(n: object, e: object) -> str:
    """What figures of one run share: engine, hardware, quantizations, draft max, source."""
    line = measurement_line(n, e)
    return line[line.index(" measured on ") + len(" measured on "):]


def _label(quantity: str, value: float, value_max: float | None = None) -> str:
    v = f"{value:g}" + (f"-{value_max:g}" if value_max is not None else "")
    return {"speedup": f"speedup {v}x", "tokens_per_second": f"{v} tokens/s",
            "baseline_tokens_per_second": f"alone {v} tokens/s"}.get(quantity, f"{quantity} {v}")


def _params(desc: ModelDescription) -> float:
    tensors = desc.metadata.tensors or ()
    return float(sum(math.prod(t.shape) for t in tensors))


def base_identities(desc: ModelDescription) -> list[ModelIdentity]:
    """The model's identities without an instruction-tuning word ("Qwen2.5-14B-Instruct" ->
    "Qwen2.5-14B"): figures documented under the base name, by sources that do not say which."""
    from paircheck._registry.consult import identities

    out = []
    for ident in identities(desc):
        name = ident.name or ""
        base = re.sub(r"[-_ ](instruct|chat|it)\b.*$", "", name, flags=re.I)
        if base and base != name:
            out.append(ModelIdentity(name=base))
    return out


def check_documented(target: ModelDescription, draft: ModelDescription, t_bytes: WeightBytes | None,
                     d_bytes: WeightBytes | None, reported: Acceptance | None = None) -> list[DocumentedCheck]:
    """Each speed documented for this pair (by name; also under the models' base names, said
    so), beside the model's figure for its setup. Empty without the models' weight bytes."""
    if t_bytes is None or d_bytes is None:
        return []
    from paircheck._registry.consult import file_vocab, find_documented, identities
    from paircheck._registry.load import load_registry
    from paircheck.hardware.table import load_gpus

    registry = load_registry()
    t_ids, d_ids = list(identities(target)), list(identities(draft))
    exact = [m.entry for m in find_documented(registry, t_ids, d_ids, file_vocab(target), file_vocab(draft))
             if not m.by_vocabulary()]
    base = [m.entry for m in find_documented(registry, t_ids + base_identities(target), d_ids + base_identities(draft))
            if not m.by_vocabulary() and m.entry not in exact]
    if not any(f for e in exact + base for f in getattr(e, "measured", ()) if f.quantity in SPEEDS):
        return []
    names = {e.id: f"documented for {e.target.name} + {e.draft.name}, these models' base names" for e in base}
    gpus = load_gpus()
    t, d = shape_of(target, t_bytes), shape_of(draft, d_bytes)
    params = (_params(target), _params(draft))
    return [check_figure(f, t, d, params, gpus, how) for f, how in figures_of(exact + base, names)]
