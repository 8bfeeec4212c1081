"""TensorRT-LLM's rules: DraftTarget validates nothing about the pair.

tensorrt_llm/llmapi/llm_args.py (NVIDIA/TensorRT-LLM at 0004396, re-read; fcd3f31 before)
declares ``class DraftTargetDecodingConfig`` with ``decoding_type: Literal["Draft_Target"]``,
and its validator checks only ``max_draft_len > 0`` ('max_draft_len must be > 0 for
DraftTarget') and ``speculative_model`` ('speculative_model must be specified for
DraftTarget'); ``supports_backend`` allows "pytorch" and "_autodeploy". The speculative
config is a pydantic union discriminated by ``decoding_type``, so the YAML says
``decoding_type: Draft_Target`` (fcd3f31's ``from_dict`` table said "DraftTarget"). The docs
only ask for the same tokenizer, and a mismatch "regresses" performance instead of failing,
so paircheck's verdict here is about usefulness: a draft with other tokens cannot help.
PyPI's tensorrt-llm is a stub that downloads from NVIDIA's index, so no wheel was read.
"""

from __future__ import annotations

from paircheck._engine.common import (
    EAGLE3,
    MODEL,
    finding,
    kind_check,
    result,
    rows_detail,
)
from paircheck._engine.versions import VersionedEngine, VersionRange
from paircheck._engine.vllm import tokens_check
from paircheck.findings import RUNS_USELESS, Finding, Report, Rule
from paircheck.model import ModelDescription

ENGINE = "tensorrt-llm"
SOURCE = ("NVIDIA/TensorRT-LLM tensorrt_llm/llmapi/llm_args.py at 0004396720054fd8e205cbf616f21f0b57c6b412 "
          "(DraftTargetDecodingConfig.validate_draft_target_config, supports_backend; SpeculativeConfig union "
          "discriminated by decoding_type); earlier at fcd3f31682808ae56118ae43c1d7864a3a945e6f")
# TensorRT-LLM's releases are not on PyPI (the tensorrt-llm package there is a stub), so the
# rules are read at a commit, not keyed by release.
VERSIONS = (VersionRange("TensorRT-LLM", None, None, SOURCE + " (PyTorch and _autodeploy backends)",
                         cite="TensorRT-LLM llm_args.py at 0004396"),)
DECODING_TYPE = "Draft_Target"  # Literal["Draft_Target"] at 0004396

R_KIND = Rule(
    "TR001", "trtllm_drafter_kind", "The draft fits the decoding config",
    "DraftTargetDecodingConfig (decoding_type: Draft_Target) runs an independent draft; Eagle3DecodingConfig "
    "an EAGLE-3 head (EAGLE v1/v2 checkpoints are incompatible); MTPDecodingConfig MTP layers. For "
    "DraftTarget the config checks only 'max_draft_len must be > 0 for DraftTarget' and 'speculative_model "
    "must be specified for DraftTarget', and supports_backend returns 'backend == \"pytorch\" or backend == "
    "\"_autodeploy\"'. The union is discriminated by decoding_type, whose only DraftTarget spelling is "
    "Literal[\"Draft_Target\"]; DecodingBaseConfig declares '_decoding_type_alias' ('record decoding_type alias "
    "used during parsing (for warnings)'), but no alias table was found in llm_args.py, so paircheck writes "
    "Draft_Target and does not claim that the older 'DraftTarget' (fcd3f31's from_dict key) is still accepted. "
    "Source: " + SOURCE + ".",
    "Choose the decoding_type matching the drafter.",
)
R_TOKENS = Rule(
    "TR002", "trtllm_same_tokenizer", "Draft and target were trained with the same tokenizer",
    "TensorRT-LLM does not validate the pair (validate_speculative_config checks no vocabulary); with another "
    "tokenizer 'the acceptance rate is extremely low and performance is regressed' (docs). It runs, slower "
    "than without a draft: this check is paircheck's judgement of usefulness, not an engine error. "
    "Source: " + SOURCE + ".",
    "Use a draft of the same tokenizer family.",
    effect=RUNS_USELESS,
)
W_ROWS = Rule(
    "TR101", "trtllm_rows", "Embedding rows differ",
    "Issue #2789 (NVIDIA/TensorRT-LLM, TensorRT-LLM 0.17.0.post1, C++ session of the engine-build flow): "
    "Qwen2.5-14B with Qwen2.5-1.5B as draft/target engines crashed with 'Incompatible buffer sizes' "
    "(embedding rows 152064 vs 151936). Nothing in llm_args.py refuses the pair beforehand. "
    "Source: issue #2789 and " + SOURCE + ".",
    "Use the PyTorch backend flow, or a draft with equal rows.",
    kind="warning",
)
RULES = (R_KIND, R_TOKENS, W_ROWS)


def draft_target(target: ModelDescription, draft: ModelDescription, method: str, version: VersionRange) -> Report:
    checks = [kind_check(R_KIND, draft, (MODEL,), "DraftTarget runs it as a standalone model;", "use Eagle3 or MTP"),
              tokens_check(R_TOKENS, target, draft, "TensorRT-LLM runs, but hardly any draft token is accepted")]
    t, d = rows_detail(target, draft)
    warnings: list[Finding] = []
    if t.value is not None and d.value is not None and t.value != d.value:
        warnings.append(finding(W_ROWS, f"rows {t.value} vs {d.value}: the engine-build flow crashed on this "
                                "('Incompatible buffer sizes', issue #2789)"))
    report = Report(ENGINE, method, target, draft, checks, warnings)
    if report.compatible:
        report.next_steps.append("trtllm-serve TARGET --config config.yaml with speculative_config: "
                                 f"{{decoding_type: {DECODING_TYPE}, speculative_model: DRAFT, max_draft_len: 4}}")
    return report


def eagle3(target: ModelDescription, draft: ModelDescription, method: str, version: VersionRange) -> Report:
    checks = [kind_check(R_KIND, draft, (EAGLE3,), "Eagle3 needs an EAGLE-3 head;", "use DraftTarget")]
    return Report(ENGINE, method, target, draft, checks)


def ngram(target: ModelDescription, draft: ModelDescription, method: str, version: VersionRange) -> Report:
    return Report(ENGINE, method, target, draft, [result(R_KIND, "pass", "NGram needs no draft")])


ENGINE_OBJ = VersionedEngine(
    ENGINE, ("DraftTarget", "Eagle3", "NGram"), "DraftTarget", RULES,
    {"DraftTarget": draft_target, "Eagle3": eagle3, "NGram": ngram}, VERSIONS,
    {"draft-simple": "DraftTarget", "draft-eagle3": "Eagle3", "ngram-mod": "NGram", "ngram-simple": "NGram"},
)
