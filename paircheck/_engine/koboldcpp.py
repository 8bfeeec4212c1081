"""KoboldCpp's rules (ecosystem.md section 10): its own token-count check, then llama.cpp's.

Since v1.115 KoboldCpp uses llama.cpp's strict draft-simple check; before it, llama.cpp
translated between incompatible vocabularies, so the same pair ran (slowly) there.
"""

from __future__ import annotations

from paircheck._engine import llamacpp
from paircheck._engine.common import MODEL, TableEngine, finding, is_recurrent, kind_check, result
from paircheck.findings import FAIL, PASS, Finding, Report, Rule
from paircheck.model import ModelDescription

ENGINE = "koboldcpp"
VERSION = "KoboldCpp >= 1.115 (llama.cpp's strict draft-simple check; older builds translated vocabularies)"
KOBOLD_LIMIT = 256

R_KIND = Rule(
    "KC001", "koboldcpp_draft", "The draft is a non-recurrent model",
    "--draftmodel loads an independent draft fully offloaded; recurrent/hybrid drafts are "
    "refused: 'Speculative decoding cannot be used with Recurrent draft models!'. MTP drafting "
    "is a separate --usemtp option in recent builds.",
    "Use an attention-only draft of the same family.",
)
R_COUNT = Rule(
    "KC002", "koboldcpp_vocab_count", "Token counts within 256",
    "KoboldCpp compares the token counts before llama.cpp does: more than 256 apart is refused "
    "('... is too different from base vocab ... Speculative decoding cannot be used!') unless "
    "--debugmode; up to 256 apart only warns ('Draft model vocab of (N) does not match base "
    "vocab of (M). Speculative decoding may malfunction!').",
    "Use a draft from the same tokenizer family.",
)
R_LLAMA = Rule(
    "KC003", "koboldcpp_llamacpp", "llama.cpp's draft-simple check passes",
    "Then llama.cpp's common_speculative check runs; since v1.115 a failure ends in 'draft "
    "model vocab type must match target model to use speculation (speculative implementation "
    "'draft-simple')' whatever the real reason (issue #2325).",
    "Use a draft from the same tokenizer family; `paircheck TARGET DRAFT` names the failing check.",
)
W_COUNT = Rule(
    "KC101", "koboldcpp_vocab_warning", "KoboldCpp will warn about the token counts",
    "Token counts differ by at most 256: KoboldCpp logs 'Draft model vocab of (N) does not "
    "match base vocab of (M). Speculative decoding may malfunction!' and carries on.",
    "Usually nothing, if llama.cpp's check passes.",
    kind="warning",
)
RULES = (R_KIND, R_COUNT, R_LLAMA, W_COUNT)


def draft(target: ModelDescription, d: ModelDescription, method: str) -> Report:
    checks: list[Finding] = []
    if is_recurrent(d):
        checks.append(result(R_KIND, FAIL, "the draft is recurrent/hybrid: 'Speculative decoding cannot be used "
                             "with Recurrent draft models!'"))
    else:
        checks.append(kind_check(R_KIND, d, (MODEL,), "--draftmodel runs it as a standalone model;",
                                 "use --usemtp for MTP"))
    n_t, n_d = target.vocab.n_tokens, d.vocab.n_tokens
    warnings: list[Finding] = []
    diff = abs(n_t - n_d)
    if diff > KOBOLD_LIMIT:
        checks.append(result(R_COUNT, FAIL, f"token counts {n_t} vs {n_d} (difference {diff} > {KOBOLD_LIMIT})",
                             target=n_t, draft=n_d))
    else:
        checks.append(result(R_COUNT, PASS, f"token counts {n_t} vs {n_d} (difference {diff} <= {KOBOLD_LIMIT})"))
        if diff:
            warnings.append(finding(W_COUNT, f"'Draft model vocab of ({n_d}) does not match base vocab of ({n_t}). "
                                    "Speculative decoding may malfunction!'"))
    inner = llamacpp.run_checks(target.vocab, d.vocab, target, d)
    first = next((c for c in inner if c.status == FAIL), None)
    if first is None:
        checks.append(result(R_LLAMA, PASS, "llama.cpp's draft-simple checks pass"))
    else:
        checks.append(result(R_LLAMA, FAIL, f"{first.code} {first.name}: {first.message} (before v1.115 the pair "
                             "ran with vocab translation)", llamacpp_check=first.code))
    report = Report(ENGINE, method, target, d, checks, warnings, engine_version=VERSION)
    first_fail = report.first_failure
    if first_fail is not None:
        report.engine_says = {
            "koboldcpp_vocab_count": f"Draft model vocab of ({n_d}) is too different from base vocab of ({n_t}). "
            "Speculative decoding cannot be used!",
            "koboldcpp_llamacpp": "draft model vocab type must match target model to use speculation "
            "(speculative implementation 'draft-simple')",
        }.get(first_fail.name)
    if report.compatible:
        report.next_steps.append("koboldcpp --model TARGET --draftmodel DRAFT --draftamount 8")
    return report


ENGINE_OBJ = TableEngine(ENGINE, ("draft",), "draft", RULES, {"draft": draft}, {"draft-simple": "draft"})
