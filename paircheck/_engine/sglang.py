"""SGLang's rules (ecosystem.md section 5): STANDALONE is the classic small draft model.

Until April 2026 STANDALONE accepted any draft silently; PR #23838 added a vocabulary
validation whose exact tolerance was not visible in the sources read, so a pair that only
differs in embedding padding is reported as unknown rather than guessed.
"""

from __future__ import annotations

from paircheck._engine.common import EAGLE, EAGLE3, MODEL, TableEngine, compare_texts, kind_check, result, rows_detail
from paircheck.findings import FAIL, PASS, SKIP, Report, Rule
from paircheck.model import ModelDescription

ENGINE = "sglang"
VERSION = "SGLang after PR #23838 (2026-04, STANDALONE vocab validation); earlier releases accepted any draft"

R_KIND = Rule(
    "SG001", "sglang_drafter_kind", "The draft fits the algorithm",
    "STANDALONE (--speculative-algorithm STANDALONE) runs an independent draft model; EAGLE/"
    "EAGLE3/NEXTN run heads. STANDALONE does not support --enable-dp-attention.",
    "Choose the algorithm matching the drafter.",
)
R_VOCAB = Rule(
    "SG002", "sglang_vocab", "Draft and target vocabularies match",
    "Since PR #23838 STANDALONE validates the vocabulary (demo: gemma-2-9b with "
    "tiny_starcoder_py, 256000 vs 49152, refused). Before it, a mismatched draft ran silently "
    "and produced wrong tokens. Whether padding-only differences (151936 vs 152064) pass the "
    "new check is not known; the official example pairs Qwen2.5-7B with Qwen2.5-1.5B.",
    "Use a draft of the same tokenizer family.",
)
RULES = (R_KIND, R_VOCAB)


def standalone(target: ModelDescription, draft: ModelDescription, method: str) -> Report:
    checks = [kind_check(R_KIND, draft, (MODEL,), "STANDALONE runs it as a standalone model;", "use EAGLE3/NEXTN")]
    cmp = compare_texts(target, draft)
    t, d = rows_detail(target, draft)
    if cmp is not None and cmp.first_difference is not None:
        checks.append(result(R_VOCAB, FAIL, f"token {cmp.first_difference} differs: target {cmp.target_text}, "
                             f"draft {cmp.draft_text} (refused since 2026-04; silently wrong tokens before)"))
    elif cmp is None:
        checks.append(result(R_VOCAB, SKIP, "not checked: a side has no token texts"))
    elif t.value is not None and d.value is not None and t.value != d.value:
        checks.append(result(R_VOCAB, SKIP, f"same token texts, embedding rows {t.value} vs {d.value}: whether "
                             "SGLang's check tolerates padding is not known", target=t.value, draft=d.value))
    elif target.vocab.n_tokens != draft.vocab.n_tokens:
        checks.append(result(R_VOCAB, SKIP, f"same texts, token counts {target.vocab.n_tokens} vs "
                             f"{draft.vocab.n_tokens}: the check's tolerance is not known"))
    else:
        checks.append(result(R_VOCAB, PASS, f"{cmp.compared} identical tokens"))
    report = Report(ENGINE, method, target, draft, checks, engine_version=VERSION)
    if report.compatible:
        report.next_steps.append("python -m sglang.launch_server --model-path TARGET --speculative-algorithm "
                                 "STANDALONE --speculative-draft-model-path DRAFT")
    return report


def head(target: ModelDescription, draft: ModelDescription, method: str) -> Report:
    checks = [kind_check(R_KIND, draft, (EAGLE, EAGLE3), f"{method} needs an EAGLE head;", "use STANDALONE")]
    return Report(ENGINE, method, target, draft, checks, engine_version=VERSION)


def ngram(target: ModelDescription, draft: ModelDescription, method: str) -> Report:
    checks = [result(R_KIND, PASS, "NGRAM needs no draft (CUDA only)")]
    return Report(ENGINE, method, target, draft, checks, engine_version=VERSION)


ENGINE_OBJ = TableEngine(
    ENGINE, ("STANDALONE", "EAGLE3", "NGRAM"), "STANDALONE", RULES,
    {"STANDALONE": standalone, "EAGLE3": head, "NGRAM": ngram},
    {"draft-simple": "STANDALONE", "draft-eagle3": "EAGLE3", "ngram-mod": "NGRAM", "ngram-simple": "NGRAM"},
)
