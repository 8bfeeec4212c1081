"""SGLang's rules: STANDALONE (an independent draft model), EAGLE3 heads, NGRAM.

Read from the released wheels on PyPI (sglang/srt/speculative/standalone_worker_v2.py):
0.5.14 has no vocabulary check at all; 0.5.15 (2026-07-10, the first release after PR
#23838 was merged on 2026-06-29) calls ``_validate_vocab_compatibility`` in
``StandaloneWorkerV2.__init__``. It compares ``model_config.vocab_size`` (the config's
padded ``vocab_size``, ``hf_text_config.vocab_size`` in configs/model_config.py) exactly,
then the tokenizers' ``get_vocab()``. So Qwen2.5-14B (152064) with Qwen2.5-0.5B (151936)
is refused from 0.5.15 although the tokenizer is the same.
"""

from __future__ import annotations

from collections.abc import Sequence

from paircheck._engine.common import (
    EAGLE,
    EAGLE3,
    MODEL,
    embedding_rows,
    finding,
    kind_check,
    result,
)
from paircheck._engine.versions import VersionedEngine, VersionRange
from paircheck.findings import FAIL, PASS, SKIP, Finding, Report, Rule
from paircheck.model import ModelDescription

ENGINE = "sglang"

WHEEL_SOURCE = ("sgl-project/sglang release 0.5.15 (PyPI wheel sglang-0.5.15), "
                "python/sglang/srt/speculative/standalone_worker_v2.py, "
                "StandaloneWorkerV2._validate_vocab_compatibility (PR #23838, merged 2026-06-29)")
V_VALIDATED = VersionRange("SGLang", "0.5.15", None, WHEEL_SOURCE, cite="sglang 0.5.15 wheel (PR #23838)")
V_UNCHECKED = VersionRange(
    "SGLang", None, "0.5.15",
    "sglang 0.5.14 wheel (python/sglang/srt/speculative/standalone_worker_v2.py has no vocabulary "
    "check; PR #23838: 'Previously, SGLang silently accepted any draft model with no error or warning.')",
    cite="sglang 0.5.14 wheel",
)
VERSIONS = (V_VALIDATED, V_UNCHECKED)

SIZE_ERROR = (
    "STANDALONE speculative decoding requires the draft model to share the same vocabulary as the target "
    "model, but got target vocab_size={t} and draft vocab_size={d}. Use a draft model with a matching "
    "vocabulary, or a speculative algorithm that supports heterogeneous vocabularies."
)
MAPPING_ERROR = (
    "STANDALONE speculative decoding requires the draft model to share the same vocabulary as the target "
    "model, but the two tokenizers have different token-to-id mappings even though their vocab sizes match. "
    "Use a draft model with a matching vocabulary, or a speculative algorithm that supports heterogeneous "
    "vocabularies."
)

R_KIND = Rule(
    "SG001", "sglang_drafter_kind", "The draft fits the algorithm",
    "STANDALONE (--speculative-algorithm STANDALONE) loads the draft as its own model "
    "(StandaloneDraftWorker: own weights, own lm_head); EAGLE/EAGLE3 run a head that borrows the "
    "target's embedding and lm_head. Source: " + WHEEL_SOURCE + ".",
    "Choose the algorithm matching the drafter.",
)
R_SIZE = Rule(
    "SG002", "sglang_vocab_size", "Config vocab_size is equal (SGLang >= 0.5.15)",
    "StandaloneWorkerV2._validate_vocab_compatibility compares model_config.vocab_size of target and "
    "draft (the config's vocab_size, padding included) and raises ValueError: '" + SIZE_ERROR.format(t="...", d="...")
    + "'. Qwen2.5 7B+ (152064) with 0.5B-3B (151936) fails here although the tokenizer is the same. "
    "Source: " + WHEEL_SOURCE + ". For a GGUF the rows are the token_embd tensor's.",
    "Use a draft with the same padded vocab_size, or SGLang < 0.5.15, or pad the draft's embedding and config.",
)
R_MAPPING = Rule(
    "SG003", "sglang_vocab_mapping", "Tokenizers map tokens to the same ids (SGLang >= 0.5.15)",
    "After the size, _validate_vocab_compatibility compares target_tokenizer.get_vocab() with "
    "draft_tokenizer.get_vocab() (all tokens, added ones included) and raises: '" + MAPPING_ERROR + "'. "
    "Skipped by SGLang when a tokenizer is absent (--skip-tokenizer-init) or has no get_vocab() "
    "(TiktokenTokenizer). Source: " + WHEEL_SOURCE + ".",
    "Use a draft of the same tokenizer family.",
)
W_UNCHECKED = Rule(
    "SG101", "sglang_unchecked_vocab", "SGLang < 0.5.15 runs a mismatched draft silently",
    "Before PR #23838 (first released in 0.5.15) STANDALONE accepted any draft: with another "
    "vocabulary the draft's ids mean other text, so every accepted draft token is wrong (PR #23838's "
    "demo: gemma-2-9b with tiny_starcoder_py). Source: " + V_UNCHECKED.source + ".",
    "Use a draft of the same tokenizer family.",
    kind="warning",
)
RULES = (R_KIND, R_SIZE, R_MAPPING, W_UNCHECKED)


def validate_vocab_compatibility(
    target_vocab_size: int, draft_vocab_size: int,
    target_vocab: Sequence[bytes] | None, draft_vocab: Sequence[bytes] | None,
) -> str | None:
    """SGLang's StandaloneWorkerV2._validate_vocab_compatibility (0.5.15): the ValueError text, or None.

    A vocabulary is the token texts in id order (what get_vocab() maps, inverted); None
    stands for a tokenizer that is absent or has no get_vocab(), which skips the mapping check.
    """
    if target_vocab_size != draft_vocab_size:
        return SIZE_ERROR.format(t=target_vocab_size, d=draft_vocab_size)
    if target_vocab is not None and draft_vocab is not None and list(target_vocab) != list(draft_vocab):
        return MAPPING_ERROR
    return None


def tokenizer_vocab(desc: ModelDescription) -> Sequence[bytes] | None:
    """The texts get_vocab() would map: len(tokenizer) ids for a Hugging Face folder (the
    converted token list is padded beyond them), every token of a GGUF."""
    texts = desc.vocab.texts
    if not texts:
        return None
    if desc.hf is not None and desc.hf.tokenizer_len is not None:
        return texts[: desc.hf.tokenizer_len]
    return texts


def _size_check(target: ModelDescription, draft: ModelDescription) -> Finding:
    t, d = embedding_rows(target), embedding_rows(draft)
    details = {"target": t.value, "draft": d.value, "target_source": t.source, "draft_source": d.source}
    if t.value is None or d.value is None:
        unknown = t if t.value is None else d
        return result(R_SIZE, SKIP, f"not checked: {'target' if t.value is None else 'draft'} {unknown.source}",
                      **details)
    says = validate_vocab_compatibility(t.value, d.value, None, None)
    if says is None:
        return result(R_SIZE, PASS, f"vocab_size {t.value} on both sides", **details)
    return result(R_SIZE, FAIL, f"vocab_size differs: target {t.value}, draft {d.value}", engine_says=says, **details)


def _mapping_check(target: ModelDescription, draft: ModelDescription) -> Finding:
    tv, dv = tokenizer_vocab(target), tokenizer_vocab(draft)
    if tv is None or dv is None:
        return result(R_MAPPING, SKIP, "not checked: a side has no token texts")
    if validate_vocab_compatibility(0, 0, tv, dv) is None:
        return result(R_MAPPING, PASS, f"{len(tv)} tokens map to the same ids", compared=len(tv))
    if len(tv) != len(dv):
        return result(R_MAPPING, FAIL, f"the tokenizers have {len(tv)} and {len(dv)} tokens", engine_says=MAPPING_ERROR)
    first = next(i for i, (a, b) in enumerate(zip(tv, dv)) if a != b)
    return result(R_MAPPING, FAIL, f"token {first} differs: target {tv[first]!r}, draft {dv[first]!r}",
                  first_id=first, engine_says=MAPPING_ERROR)


def standalone(target: ModelDescription, draft: ModelDescription, method: str, version: VersionRange) -> Report:
    checks = [kind_check(R_KIND, draft, (MODEL,), "STANDALONE runs it as a standalone model;", "use EAGLE3")]
    warnings: list[Finding] = []
    if version is V_VALIDATED:
        checks.append(_size_check(target, draft))
        # SGLang raises at the first failure; the mapping is only looked at when the sizes agree.
        if checks[-1].status != FAIL:
            checks.append(_mapping_check(target, draft))
    else:
        mapping = _mapping_check(target, draft)
        if mapping.status == FAIL:
            warnings.append(finding(W_UNCHECKED, f"{mapping.message}: this SGLang runs the pair without a check and "
                                    "the accepted draft tokens are wrong"))
    report = Report(ENGINE, method, target, draft, checks, warnings)
    first = report.first_failure
    if first is not None and "engine_says" in first.details:
        report.engine_says = str(first.details["engine_says"])
    if report.compatible:
        report.next_steps.append("python -m sglang.launch_server --model-path TARGET --speculative-algorithm "
                                 "STANDALONE --speculative-draft-model-path DRAFT")
    return report


def head(target: ModelDescription, draft: ModelDescription, method: str, version: VersionRange) -> Report:
    checks = [kind_check(R_KIND, draft, (EAGLE, EAGLE3), f"{method} needs an EAGLE head;", "use STANDALONE")]
    return Report(ENGINE, method, target, draft, checks)


def ngram(target: ModelDescription, draft: ModelDescription, method: str, version: VersionRange) -> Report:
    checks = [result(R_KIND, PASS, "NGRAM needs no draft (CUDA only)")]
    return Report(ENGINE, method, target, draft, checks)


ENGINE_OBJ = VersionedEngine(
    ENGINE, ("STANDALONE", "EAGLE3", "NGRAM"), "STANDALONE", RULES,
    {"STANDALONE": standalone, "EAGLE3": head, "NGRAM": ngram}, VERSIONS,
    {"draft-simple": "STANDALONE", "draft-eagle3": "EAGLE3", "ngram-mod": "NGRAM", "ngram-simple": "NGRAM"},
)
