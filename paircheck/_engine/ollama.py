"""Ollama's rules (ecosystem.md section 3; ollama main at fb30760, DRAFT since v0.23.1).

A Modelfile ``DRAFT`` must be an MTP or DFlash drafter. On the GGML engine (which runs
llama-server) a draft whose architecture is dflash is launched as ``--spec-type
draft-dflash`` and every other draft as ``draft-mtp``; there is no draft-simple path, so a
classic small model is not a usable DRAFT. The MLX engine loads registered draft
architectures only.
"""

from __future__ import annotations

from paircheck._engine import llamacpp_methods as M
from paircheck._engine.common import DFLASH, DSPARK, MTP_HEAD, TableEngine, architecture, drafter_kind, result
from paircheck.findings import FAIL, PASS, Finding, Report, Rule
from paircheck.model import ModelDescription

ENGINE = "ollama"
VERSION = "Ollama >= 0.23.1 (DRAFT instruction; snapshot fb30760, 2026-08)"
MLX_DRAFT_ARCHITECTURES = ("DFlashDraftModel", "DFlashLagunaForCausalLM", "MuseGlimmerAssistantModel")

R_KIND = Rule(
    "OL001", "ollama_draft_kind", "The DRAFT is an MTP or DFlash drafter",
    "Ollama has no classic draft-model mode. On the GGML engine a dflash DRAFT runs as "
    "llama.cpp draft-dflash and any other as draft-mtp, so a plain small model fails there "
    "like draft-mtp on a model without MTP layers. The MLX engine refuses other architectures: "
    "'unsupported draft architecture: ...'. There is no PARAMETER draft_model.",
    "Use llama-server or LM Studio for a classic draft model; in Ollama use the model's MTP "
    "drafter (e.g. a Gemma 4 assistant GGUF) or a DFlash drafter.",
)
R_LAUNCH = Rule(
    "OL002", "ollama_llamacpp_method", "llama.cpp accepts the draft for the type Ollama launches",
    "The GGML engine starts llama-server with the spec type above; that type's llama.cpp "
    "requirements (MTP layers and row width, or DFlash keys and layer ids) then apply.",
    "See the llama.cpp check named in the message (paircheck --method draft-mtp/draft-dflash).",
)
RULES = (R_KIND, R_LAUNCH)


def launched_method(draft: ModelDescription) -> str:
    return M.DFLASH if architecture(draft) == "dflash" else M.MTP


def draft(target: ModelDescription, d: ModelDescription, method: str) -> Report:
    kind = drafter_kind(d)
    checks: list[Finding] = []
    if d.hf is not None and d.source_kind != "gguf":
        ok = any(a in MLX_DRAFT_ARCHITECTURES or "Assistant" in a for a in d.hf.architectures)
        checks.append(result(R_KIND, PASS if ok else FAIL,
                             "a registered MLX draft architecture" if ok else
                             f"'unsupported draft architecture: {', '.join(d.hf.architectures) or '?'}'"))
        return Report(ENGINE, method, target, d, checks, engine_version=VERSION)
    spec = launched_method(d)
    inner = M.evaluate_method(target, d, spec)
    if kind in (MTP_HEAD, DFLASH, DSPARK) or (spec == M.MTP and inner.compatible):
        checks.append(result(R_KIND, PASS, f"the DRAFT is launched as --spec-type {spec}", spec_type=spec))
    else:
        checks.append(result(R_KIND, FAIL, f"the DRAFT ({architecture(d) or '?'}) is an independent model; Ollama "
                             f"would launch it as --spec-type {spec}, which needs MTP layers", spec_type=spec))
    first = inner.first_failure
    checks.append(result(R_LAUNCH, PASS, f"llama.cpp {spec} checks pass") if first is None else
                  result(R_LAUNCH, FAIL, f"{first.code} {first.name}: {first.message}", llamacpp_check=first.code))
    report = Report(ENGINE, method, target, d, checks, engine_version=VERSION)
    if first is not None:
        report.engine_says = inner.engine_says
    if report.compatible:
        report.next_steps.append("Modelfile: FROM TARGET / DRAFT ./drafter.gguf / PARAMETER draft_num_predict 3")
    return report


ENGINE_OBJ = TableEngine(ENGINE, ("draft",), "draft", RULES, {"draft": draft},
                         {"draft-simple": "draft", "draft-mtp": "draft", "draft-dflash": "draft"})
