"""Hugging Face transformers assisted generation (ecosystem.md section 7).

The decision is made on ``config.get_text_config().vocab_size`` (embedding rows) alone:
equal rows take the same-tokenizer path, different rows demand Universal Assisted
Decoding (UAD: ``tokenizer`` and ``assistant_tokenizer``), even when the tokenizers are
the same and only the padding differs.
"""

from __future__ import annotations

from paircheck._engine.common import (
    MODEL,
    MTP_HEAD,
    TableEngine,
    compare_texts,
    finding,
    is_recurrent,
    kind_check,
    result,
    rows_detail,
)
from paircheck.findings import FAIL, PASS, SKIP, Finding, Report, Rule
from paircheck.model import ModelDescription

ENGINE = "transformers"
VERSION = "transformers >= 4.46 (UAD); sampling with UAD >= 4.50"

R_KIND = Rule(
    "TF001", "transformers_drafter_kind", "The assistant is a model transformers can run",
    "assistant_model must be a causal LM (or a Gemma 4 assistant model); EAGLE/DFlash heads "
    "are not assistant models in transformers.",
    "Use an independent small model as assistant_model.",
)
R_PATH = Rule(
    "TF002", "transformers_tokenizer_path", "Which assisted-generation path applies",
    "Equal config vocab_size: the same-tokenizer path (passing assistant_tokenizer is then an "
    "error). Different: Universal Assisted Decoding is required, else 'The main and assistant "
    "models have different tokenizers. Please provide `tokenizer` and `assistant_tokenizer` "
    "to `generate()`'. UAD exists from 4.46 (greedy) and 4.50 (sampling).",
    "Pass tokenizer= and assistant_tokenizer= to generate() (transformers >= 4.46).",
)
R_STATE = Rule(
    "TF003", "transformers_stateful", "The target is not stateful",
    "Assisted generation refuses stateful (recurrent) models: 'assisted generation is not "
    "supported with stateful models'.",
    "Use prompt_lookup_num_tokens instead, or an attention-only target.",
)
W_PADDED = Rule(
    "TF101", "transformers_padding_uad", "Same tokens, different padding: forced into UAD",
    "The tokenizers are identical but the embedding rows differ (padding), so transformers "
    "takes the UAD path anyway; issue #45307 reports it then crashing with AttributeError "
    "... map_input_embeddings.",
    "Pass tokenizer and assistant_tokenizer; if it crashes, use a draft with equal rows.",
    kind="warning",
)
RULES = (R_KIND, R_PATH, R_STATE, W_PADDED)


def assisted(target: ModelDescription, draft: ModelDescription, method: str) -> Report:
    checks = [kind_check(R_KIND, draft, (MODEL, MTP_HEAD), "transformers cannot run it as assistant_model;",
                         "use an independent model")]
    t, d = rows_detail(target, draft)
    warnings: list[Finding] = []
    if t.value is None or d.value is None:
        checks.append(result(R_PATH, SKIP, f"not checked: {(t if t.value is None else d).source}"))
    elif t.value == d.value:
        checks.append(result(R_PATH, PASS, f"{t.value} rows on both sides: the same-tokenizer path"))
    else:
        checks.append(result(R_PATH, PASS, f"rows {t.value} vs {d.value}: Universal Assisted Decoding required "
                             "(pass tokenizer and assistant_tokenizer; transformers >= 4.46)",
                             target=t.value, draft=d.value, uad=True))
        cmp = compare_texts(target, draft)
        if cmp is not None and cmp.first_difference is None:
            warnings.append(finding(W_PADDED, "identical token texts, only the padding differs: transformers still "
                                    "demands UAD (and crashed on this in #45307)"))
    if is_recurrent(target):
        checks.append(result(R_STATE, FAIL, "the target is a recurrent/stateful model"))
    else:
        checks.append(result(R_STATE, PASS, "the target is not stateful"))
    report = Report(ENGINE, method, target, draft, checks, warnings, engine_version=VERSION)
    first = report.first_failure
    if first is not None and first.name == "transformers_stateful":
        report.engine_says = "assisted generation is not supported with stateful models"
    if report.compatible:
        uad = any(c.details.get("uad") for c in checks)
        report.next_steps.append("model.generate(**inputs, assistant_model=draft"
                                 + (", tokenizer=tok, assistant_tokenizer=draft_tok)" if uad else ")"))
    return report


def prompt_lookup(target: ModelDescription, draft: ModelDescription, method: str) -> Report:
    checks = [result(R_KIND, PASS, "prompt lookup needs no assistant (prompt_lookup_num_tokens=N)")]
    return Report(ENGINE, method, target, draft, checks, engine_version=VERSION)


ENGINE_OBJ = TableEngine(
    ENGINE, ("assisted", "prompt_lookup"), "assisted", RULES,
    {"assisted": assisted, "prompt_lookup": prompt_lookup},
    {"draft-simple": "assisted", "draft-mtp": "assisted", **{m: "prompt_lookup" for m in (
        "ngram-simple", "ngram-map-k", "ngram-map-k4v", "ngram-mod", "ngram-cache")}},
)
