"""TensorRT-LLM's rules (ecosystem.md section 6): DraftTarget has no validation at all.

The docs only ask for the same tokenizer, and a mismatch "regresses" performance instead of
failing, so paircheck's verdict here is about usefulness: a draft with other tokens is
refused because it cannot help.
"""

from __future__ import annotations

from paircheck._engine.common import EAGLE3, MODEL, TableEngine, finding, kind_check, result, rows_detail
from paircheck._engine.vllm import tokens_check
from paircheck.findings import Finding, Report, Rule
from paircheck.model import ModelDescription

ENGINE = "tensorrt-llm"
VERSION = "TensorRT-LLM (docs at 04c8822; PyTorch backend)"

R_KIND = Rule(
    "TR001", "trtllm_drafter_kind", "The draft fits the decoding config",
    "DraftTargetDecodingConfig runs an independent draft; Eagle3DecodingConfig an EAGLE-3 head "
    "(EAGLE v1/v2 checkpoints are incompatible); MTPDecodingConfig DeepSeek MTP layers.",
    "Choose the decoding_type matching the drafter.",
)
R_TOKENS = Rule(
    "TR002", "trtllm_same_tokenizer", "Draft and target were trained with the same tokenizer",
    "TensorRT-LLM does not validate the pair; with another tokenizer 'the acceptance rate is "
    "extremely low and performance is regressed'. It runs, slower than without a draft.",
    "Use a draft of the same tokenizer family.",
)
W_ROWS = Rule(
    "TR101", "trtllm_rows", "Embedding rows differ",
    "The older engine-build flow crashed when the draft's logits were narrower than the "
    "target's ('The expanded size of the tensor (128000) must match the existing size "
    "(128256)', PR #3615).",
    "Use the PyTorch backend flow or a draft with equal rows.",
    kind="warning",
)
RULES = (R_KIND, R_TOKENS, W_ROWS)


def draft_target(target: ModelDescription, draft: ModelDescription, method: str) -> Report:
    checks = [kind_check(R_KIND, draft, (MODEL,), "DraftTarget runs it as a standalone model;", "use Eagle3 or MTP"),
              tokens_check(R_TOKENS, target, draft, "TensorRT-LLM runs, but hardly any draft token is accepted")]
    t, d = rows_detail(target, draft)
    warnings: list[Finding] = []
    if t.value is not None and d.value is not None and t.value != d.value:
        warnings.append(finding(W_ROWS, f"rows {t.value} vs {d.value}: older engine-build flows crashed on this"))
    report = Report(ENGINE, method, target, draft, checks, warnings, engine_version=VERSION)
    if report.compatible:
        report.next_steps.append("trtllm-serve TARGET --config config.yaml with speculative_config: "
                                 "{decoding_type: DraftTarget, speculative_model: DRAFT, max_draft_len: 4}")
    return report


def eagle3(target: ModelDescription, draft: ModelDescription, method: str) -> Report:
    checks = [kind_check(R_KIND, draft, (EAGLE3,), "Eagle3 needs an EAGLE-3 head;", "use DraftTarget")]
    return Report(ENGINE, method, target, draft, checks, engine_version=VERSION)


def ngram(target: ModelDescription, draft: ModelDescription, method: str) -> Report:
    return Report(ENGINE, method, target, draft, [result(R_KIND, "pass", "NGram needs no draft")],
                  engine_version=VERSION)


ENGINE_OBJ = TableEngine(
    ENGINE, ("DraftTarget", "Eagle3", "NGram"), "DraftTarget", RULES,
    {"DraftTarget": draft_target, "Eagle3": eagle3, "NGram": ngram},
    {"draft-simple": "DraftTarget", "draft-eagle3": "Eagle3", "ngram-mod": "NGram", "ngram-simple": "NGram"},
)
