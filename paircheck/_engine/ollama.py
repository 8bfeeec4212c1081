"""Ollama's rules: the Modelfile ``DRAFT`` instruction, by release (ollama/ollama tags).

- before v0.23.1: no DRAFT instruction (parser/parser.go has none at v0.23.0);
- v0.23.1 to v0.24.0: DRAFT only with ``ollama create --experimental`` and a safetensors
  directory, run by the MLX runner (cmd/cmd.go resolveExperimentalDraftDir); no GGUF path;
- v0.30.0: a GGUF DRAFT runs on the GGML engine, always as llama-server ``--spec-type
  draft-mtp`` (llm/llama_server.go);
- v0.32.7: ``externalDraftType``: a ``dflash`` architecture gives draft-dflash, anything
  else draft-mtp. There is never a draft-simple path, so a classic small model is no DRAFT.
The MLX runner loads only registered draft architectures (x/mlxrunner/model/base/base.go
``NewDraft``: 'unsupported draft architecture: %s').
"""

from __future__ import annotations

from paircheck._engine import llamacpp_methods as M
from paircheck._engine.common import (
    DFLASH,
    DSPARK,
    MTP_HEAD,
    architecture,
    drafter_kind,
    result,
)
from paircheck._engine.versions import VersionedEngine, VersionRange
from paircheck.findings import FAIL, PASS, Finding, Report, Rule
from paircheck.model import ModelDescription

ENGINE = "ollama"
REPO = "ollama/ollama"
V_DFLASH = VersionRange("Ollama", "0.32.7", None,
                        f"{REPO} llm/llama_server.go externalDraftType and x/mlxrunner/model/base/base.go NewDraft "
                        "at tag v0.32.7 and at fb30760996871fa9460115c753afd2c60d4ab0f7",
                        cite="ollama v0.32.7 and fb30760")
V_MTP_ONLY = VersionRange("Ollama", "0.30.0", "0.32.7",
                          f"{REPO} llm/llama_server.go at tag v0.30.0 (--spec-type draft-mtp for any DRAFT) and "
                          "v0.32.6", cite="ollama v0.30.0 and v0.32.6")
V_MLX_ONLY = VersionRange("Ollama", "0.23.1", "0.30.0",
                          f"{REPO} cmd/cmd.go resolveExperimentalDraftDir at tags v0.23.1 and v0.24.0",
                          cite="ollama v0.23.1 and v0.24.0")
V_NONE = VersionRange("Ollama", None, "0.23.1", f"{REPO} parser/parser.go at tag v0.23.0 (no DRAFT)",
                      cite="ollama v0.23.0")
VERSIONS = (V_DFLASH, V_MTP_ONLY, V_MLX_ONLY, V_NONE)

# RegisterDraft calls (x/models/*) per release.
MLX_DRAFTS = {
    V_DFLASH: frozenset({"DFlashDraftModel", "DFlashLagunaForCausalLM", "MuseGlimmerAssistantModel",
                         "Gemma4AssistantForCausalLM", "Gemma4UnifiedAssistantForCausalLM", "gemma4_assistant",
                         "gemma4_unified_assistant"}),
    V_MTP_ONLY: frozenset({"Gemma4AssistantForCausalLM", "gemma4_assistant"}),
    V_MLX_ONLY: frozenset({"Gemma4AssistantForCausalLM", "gemma4_assistant"}),
}
UNSUPPORTED_ARCH = "unsupported draft architecture: {arch}"
_QWEN35_TYPES = {"qwen3_5": "qwen35", "qwen3_5_text": "qwen35", "qwen3_5_moe": "qwen35moe",
                 "qwen3_5_moe_text": "qwen35moe"}
QWEN35_BASE = "MTP draft safetensors require a qwen3.5 base model, got {arch!r}"
NO_GGUF = "DRAFT model references are not supported with --experimental yet: {ref}"

R_KIND = Rule(
    "OL001", "ollama_draft_kind", "The DRAFT is an MTP or DFlash drafter Ollama runs",
    "Ollama has no classic draft-model mode. From v0.30.0 a GGUF DRAFT runs on the GGML engine as "
    "llama-server --spec-type draft-mtp (v0.32.7 on: draft-dflash for a dflash architecture, "
    "externalDraftType), so a plain small model fails there like draft-mtp on a model without MTP layers. "
    "The MLX runner's NewDraft refuses unregistered architectures: '" + UNSUPPORTED_ARCH.format(arch="...")
    + "' (registered at v0.32.7: DFlashDraftModel, DFlashLagunaForCausalLM, MuseGlimmerAssistantModel, "
    "Gemma4AssistantForCausalLM, Gemma4UnifiedAssistantForCausalLM, gemma4_assistant, "
    "gemma4_unified_assistant; at v0.30.0 only the two Gemma 4 assistant names). v0.23.1 to v0.24.0 take "
    "a DRAFT only with --experimental and a safetensors directory; before v0.23.1 there is no DRAFT. "
    "From v0.30.0 a safetensors DRAFT given to plain ollama create is converted by ConvertQwen35MTPDraft "
    "(convert/convert_qwen3next.go), which takes Qwen3.5 MTP drafts only: '" + QWEN35_BASE.format(arch="...")
    + "'. "
    "Source: " + "; ".join(v.source for v in VERSIONS) + ".",
    "Use llama-server or LM Studio for a classic draft model; in Ollama use the model's MTP drafter (e.g. "
    "a Gemma 4 assistant) or a DFlash drafter, on a release that runs it.",
)
R_LAUNCH = Rule(
    "OL002", "ollama_llamacpp_method", "llama.cpp accepts the draft for the type Ollama launches",
    "The GGML engine starts llama-server with the spec type above; that type's llama.cpp requirements "
    "(MTP layers and row width, or DFlash keys and layer ids) then apply, judged with the pinned "
    "llama.cpp. Source: " + V_DFLASH.source + ".",
    "See the llama.cpp check named in the message (paircheck --method draft-mtp/draft-dflash).",
)
RULES = (R_KIND, R_LAUNCH)


def launched_method(draft: ModelDescription, version: VersionRange = V_DFLASH) -> str:
    """externalDraftType (v0.32.7) / the fixed draft-mtp of v0.30.0."""
    if version is V_DFLASH and architecture(draft) == "dflash":
        return M.DFLASH
    return M.MTP


def _qwen35_mtp_draft(target: ModelDescription, d: ModelDescription) -> str | None:
    """Why ConvertQwen35MTPDraft (convert/convert_qwen3next.go) would refuse, or None if it converts.

    It needs a qwen35/qwen35moe base without embedded MTP layers and a draft with mtp tensors;
    the tensors are not read here, so the draft config's mtp_num_hidden_layers stands for them.
    """
    from paircheck._engine.vllm import mtp_layers

    arch = architecture(target)
    if target.hf is not None:  # the GGUF architecture the converter writes for a Qwen3.5 folder
        arch = _QWEN35_TYPES.get(target.hf.model_type or "", arch)
    if arch not in ("qwen35", "qwen35moe"):
        return QWEN35_BASE.format(arch=arch or "?")
    embedded, _ = mtp_layers(target)
    if embedded:
        return "MTP draft safetensors require a base model without embedded MTP layers"
    count, _ = mtp_layers(d)
    if not count:
        return "MTP draft safetensors did not contain mtp tensors"
    return None


def _folder(target: ModelDescription, d: ModelDescription, method: str, version: VersionRange) -> Report:
    """A safetensors DRAFT: the MLX runner (ollama create --experimental) takes registered
    architectures; from v0.30.0 plain ollama create converts Qwen3.5 MTP drafts only."""
    assert d.hf is not None
    # NewDraft takes architectures[0], else model_type.
    arch = d.hf.architectures[0] if d.hf.architectures else (d.hf.model_type or "")
    mlx_ok = arch in MLX_DRAFTS[version]
    convert_refusal = _qwen35_mtp_draft(target, d) if version in (V_DFLASH, V_MTP_ONLY) else "no GGUF conversion"
    if mlx_ok:
        check = result(R_KIND, PASS, f"the MLX runner has draft architecture {arch} (ollama create --experimental)")
    elif convert_refusal is None:
        check = result(R_KIND, PASS, "ollama create converts it as a Qwen3.5 MTP draft (ConvertQwen35MTPDraft)")
    else:
        check = result(R_KIND, FAIL, f"'{UNSUPPORTED_ARCH.format(arch=arch or '?')}' on the MLX runner; "
                       f"plain ollama create: '{convert_refusal}'", architecture=arch)
    report = Report(ENGINE, method, target, d, [check])
    if check.status == FAIL:
        report.engine_says = UNSUPPORTED_ARCH.format(arch=arch or "?")
    return report


def draft(target: ModelDescription, d: ModelDescription, method: str, version: VersionRange) -> Report:
    if version is V_NONE:
        check = result(R_KIND, FAIL, "this Ollama has no DRAFT instruction (added in v0.23.1)")
        return Report(ENGINE, method, target, d, [check])
    if d.hf is not None:  # a Hugging Face folder (safetensors), not a GGUF
        return _folder(target, d, method, version)
    if version is V_MLX_ONLY:
        check = result(R_KIND, FAIL, "a GGUF DRAFT needs Ollama >= 0.30.0; this release takes a DRAFT only as a "
                       "safetensors directory with ollama create --experimental")
        report = Report(ENGINE, method, target, d, [check])
        report.engine_says = NO_GGUF.format(ref=d.location)
        return report
    kind = drafter_kind(d)
    spec = launched_method(d, version)
    inner = M.evaluate_method(target, d, spec)
    checks: list[Finding] = []
    if kind in (MTP_HEAD, DFLASH, DSPARK) or (spec == M.MTP and inner.compatible):
        checks.append(result(R_KIND, PASS, f"the DRAFT is launched as --spec-type {spec}", spec_type=spec))
    else:
        checks.append(result(R_KIND, FAIL, f"the DRAFT ({architecture(d) or '?'}) is an independent model; Ollama "
                             f"would launch it as --spec-type {spec}, which needs MTP layers", spec_type=spec))
    first = inner.first_failure
    checks.append(result(R_LAUNCH, PASS, f"llama.cpp {spec} checks pass") if first is None else
                  result(R_LAUNCH, FAIL, f"{first.code} {first.name}: {first.message}", llamacpp_check=first.code))
    report = Report(ENGINE, method, target, d, checks)
    if first is not None:
        report.engine_says = inner.engine_says
    if report.compatible:
        report.next_steps.append("Modelfile: FROM TARGET / DRAFT ./drafter.gguf / PARAMETER draft_num_predict 3")
    return report


ENGINE_OBJ = VersionedEngine(ENGINE, ("draft",), "draft", RULES, {"draft": draft}, VERSIONS,
                             {"draft-simple": "draft", "draft-mtp": "draft", "draft-dflash": "draft"})
