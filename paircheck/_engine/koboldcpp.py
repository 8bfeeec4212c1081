"""KoboldCpp's rules: its own token-count check, then its vendored llama.cpp's.

KoboldCpp never refuses to start over a draft: every failure below is a fallback. In
``speculative_decoding_setup`` a recurrent draft or a token count more than 256 apart
prints an error, frees the draft context and carries on; ``speculative_state_setup``
catches the vendored llama.cpp's exception ('Error: failed to initialize speculative
decoding state: %s'), frees the draft and returns false. The model then runs without a
draft: the verdict is "runs, without speculation".

Read from LostRuins/koboldcpp: gpttype_adapter.cpp (``speculative_decoding_setup`` and
``speculative_draft_type_from_model``; the stored version that has them, with ``draft_is_mtp``:
the code index gives no commit for it, and the one it lists for that path, 26fe21b of
2024-01-28, has no speculative code at all) and the vendored common/speculative.cpp at ad1eee0, which defines
``SPEC_VOCAB_MAX_SIZE_DIFFERENCE 256`` where upstream llama.cpp (and the pinned reference)
has 128. So token counts 129..256 apart with equal shared texts run in KoboldCpp (with a
warning) although llama-server refuses them. The MTP/DFlash/DSpark setup checks of that copy
(and the MTP-layers check of its src/llama-context.cpp at 2e04e65) were compared line by line
with the pinned llama.cpp's and are identical, so those drafters get the pinned rules.
"""

from __future__ import annotations

from paircheck._engine import llamacpp
from paircheck._engine import llamacpp_methods as M
from paircheck._engine.common import (
    DSPARK,
    EAGLE3,
    architecture,
    drafter_kind,
    finding,
    is_recurrent,
    result,
)
from paircheck._engine.versions import VersionedEngine, VersionRange
from paircheck.findings import FAIL, PASS, RUNS_WITHOUT_SPECULATION, Finding, Report, Rule
from paircheck.model import ModelDescription
from paircheck.vocab import LlamaVocab

ENGINE = "koboldcpp"
# Not "at 26fe21b": that 2024-01-28 commit's gpttype_adapter.cpp has no speculative code. The
# version read (with draft_is_mtp and the DFlash case) is stored without its commit.
ADAPTER = ("LostRuins/koboldcpp gpttype_adapter.cpp as stored in the code index with draft_is_mtp and the DFlash "
           "draft type (no commit recorded), speculative_decoding_setup, speculative_state_setup and "
           "speculative_draft_type_from_model")
VENDORED = "LostRuins/koboldcpp common/speculative.cpp at ad1eee0c5f36355d10020e37cf2946cf88dc6979"
VENDORED_CONTEXT = "LostRuins/koboldcpp src/llama-context.cpp at 2e04e6509d3ccf41c7b329c1b6cea5c18bd74c63"
ISSUE_2325 = ("LostRuins/koboldcpp issue #2325, 'Drafting does not work since v1.115 - \"draft model vocab type "
              "must match target model to use speculation (speculative implementation 'draft-simple')\"'")
V_STRICT = VersionRange("KoboldCpp", "1.115", None, f"{ADAPTER}; {VENDORED}",
                        cite="koboldcpp gpttype_adapter.cpp (stored, no commit), common/speculative.cpp at ad1eee0")
# Not read at a release: no source of a release before v1.115 is stored. The boundary is
# the one users reported (issue #2325); llama.cpp's own change is PR #22787 ("No longer
# support incompatible draft/target vocabs via replacements").
V_TRANSLATING = VersionRange(
    "KoboldCpp", None, "1.115",
    f"{ISSUE_2325}; before it the vendored llama.cpp translated between incompatible vocabularies "
    f"(ggml-org/llama.cpp PR #22787 removed that), so only the 256-count check of {ADAPTER} applied",
    cite="issue #2325 (no release before v1.115 read)")
VERSIONS = (V_STRICT, V_TRANSLATING)

KOBOLD_LIMIT = 256  # gpttype_adapter.cpp: if(diff <= 256) warn, else refuse
SPEC_VOCAB_MAX_SIZE_DIFFERENCE = 256  # vendored common/speculative.cpp (llama.cpp upstream: 128)

SIMPLE, MTP = "draft-simple", "draft-mtp"
TOO_DIFFERENT = ("Error: Draft model vocab of ({d}) is too different from base vocab of ({t}). Speculative "
                 "decoding cannot be used!")
MAY_MALFUNCTION = ("WARNING: Draft model vocab of ({d}) does not match base vocab of ({t}). Speculative decoding "
                   "may malfunction!")
RECURRENT = "Error: Speculative decoding cannot be used with Recurrent draft models!"
INCOMPATIBLE = "draft model vocab type must match target model to use speculation"
SETUP_FAILED = "Error: failed to initialize speculative decoding state: {what}"

R_KIND = Rule(
    "KC001", "koboldcpp_draft", "KoboldCpp can run the draft",
    "--draftmodel picks the draft type from the file (speculative_draft_type_from_model): a dflash "
    "architecture runs as DFlash (DSpark when it has dspark_markov_w1), a model with nextn (MTP) layers as "
    "MTP, anything else as a classic draft (draft-simple). A classic draft that is recurrent or hybrid is "
    "refused: '" + RECURRENT + "'. An EAGLE-3 head has no case there, so it would run as a classic draft, "
    "which it is not. --usemtp is only for the main model's own MTP layers. KoboldCpp does not stop: it frees "
    "the draft and runs without speculation. Source: " + ADAPTER + ".",
    "Use an attention-only draft of the same family, or an MTP/DFlash drafter file for this target.",
    effect=RUNS_WITHOUT_SPECULATION,
)
R_COUNT = Rule(
    "KC002", "koboldcpp_vocab_count", "Token counts within 256",
    "Once the draft context is created, speculative_decoding_setup runs one if/else chain: 'if(!draft_is_mtp && "
    "(llama_model_is_recurrent(draftmodel) || llama_model_is_hybrid(draftmodel)))' refuses a recurrent draft "
    "first (KC001), and only 'else if(draftvocab!=base_n_vocab)' compares llama_vocab_n_tokens of draft and "
    "main model: more than 256 apart is refused ('" + TOO_DIFFERENT.format(d="N", t="M") + "') unless "
    "--debugmode; up to 256 apart only warns ('" + MAY_MALFUNCTION.format(d="N", t="M") + "'). A recurrent "
    "draft never reaches the count check. Source: " + ADAPTER + ".",
    "Use a draft from the same tokenizer family.",
    effect=RUNS_WITHOUT_SPECULATION,
)
R_LLAMA = Rule(
    "KC003", "koboldcpp_llamacpp", "The vendored llama.cpp draft-simple check passes (tolerance 256)",
    "For a classic draft, common_speculative_impl_draft_simple runs the vendored "
    "common_speculative_are_compatible: vocab type, BOS and EOS as in llama.cpp, token counts at most "
    "SPEC_VOCAB_MAX_SIZE_DIFFERENCE = 256 apart (upstream llama.cpp: 128), and equal texts from id 5 over "
    "the shared range. Failure throws '" + INCOMPATIBLE + "' whatever the real reason; "
    "speculative_state_setup catches it, prints '" + SETUP_FAILED.format(what="...") + "' and KoboldCpp runs "
    "without the draft. Applies from v1.115 (" + ISSUE_2325 + "); before, the vendored llama.cpp translated "
    "between vocabularies. Source: " + VENDORED + "; " + ADAPTER + ".",
    "Use a draft from the same tokenizer family; `paircheck TARGET DRAFT` names the failing check.",
    effect=RUNS_WITHOUT_SPECULATION,
)
R_METHOD = Rule(
    "KC004", "koboldcpp_head_method", "The MTP/DFlash drafter fits the target",
    "An MTP, DFlash or DSpark drafter runs through the vendored llama.cpp's implementation of that type. "
    "Its checks were compared with the pinned llama.cpp's and are the same: the MTP row-width assert "
    "('MTP input row width must match the target h_nextn width'), DFlash's 'DFlash model has no "
    "target_layer_ids' and DSpark's confidence-head check (" + VENDORED + "), and the MTP-layers check "
    "of llama_init_from_model ('context type MTP requested but model doesn't contain MTP layers', "
    + VENDORED_CONTEXT + "). So paircheck applies the pinned llama.cpp's rules for these types. Not "
    "compared: the list of architectures with MTP-loading code (src/llama-model.cpp), taken from the "
    "pinned version. Source: " + ADAPTER + ".",
    "See the llama.cpp check named in the message (paircheck --method draft-mtp/draft-dflash).",
    effect=RUNS_WITHOUT_SPECULATION,
)
W_COUNT = Rule(
    "KC101", "koboldcpp_vocab_warning", "KoboldCpp will warn about the token counts",
    "Token counts differ by 1..256: KoboldCpp logs '" + MAY_MALFUNCTION.format(d="N", t="M") + "' and carries "
    "on; llama-server itself refuses more than 128. Source: " + ADAPTER + ".",
    "Usually nothing, if the texts of the shared ids are equal.",
    kind="warning",
)
RULES = (R_KIND, R_COUNT, R_LLAMA, R_METHOD, W_COUNT)


def count_verdict(n_target: int, n_draft: int) -> str:
    """gpttype_adapter.cpp's own check: "ok", "warn" (1..256 apart) or "refuse"."""
    diff = abs(n_target - n_draft)
    if diff == 0:
        return "ok"
    return "warn" if diff <= KOBOLD_LIMIT else "refuse"


def draft_type(desc: ModelDescription) -> str:
    """speculative_draft_type_from_model: dflash/dspark architecture, nextn layers, else draft-simple."""
    if architecture(desc) == "dflash":
        return M.DSPARK if drafter_kind(desc) == DSPARK else M.DFLASH
    nextn = desc.metadata.get(f"{architecture(desc)}.nextn_predict_layers")
    if isinstance(nextn, int) and not isinstance(nextn, bool) and nextn > 0:
        return MTP
    return SIMPLE


def check_size(t: LlamaVocab, d: LlamaVocab) -> Finding:
    diff = abs(t.n_tokens - d.n_tokens)
    details = {"target": t.n_tokens, "draft": d.n_tokens, "difference": diff,
               "max_difference": SPEC_VOCAB_MAX_SIZE_DIFFERENCE}
    if diff <= SPEC_VOCAB_MAX_SIZE_DIFFERENCE:
        return result(R_LLAMA, PASS, f"{t.n_tokens} vs {d.n_tokens} tokens (difference {diff} <= 256)", **details)
    return result(R_LLAMA, FAIL, f"token counts differ by {diff} (the vendored llama.cpp allows 256)", **details)


def are_compatible(t: LlamaVocab, d: LlamaVocab, target: ModelDescription | None = None,
                   draft: ModelDescription | None = None) -> Finding:
    """The vendored common_speculative_are_compatible: llama.cpp's checks with a 256 tolerance
    (after llama.cpp's loader, which also checks the tensor section of each file)."""
    for side, vocab, desc in (("target", t, target), ("draft", d, draft)):
        loaded = llamacpp.check_loadable(side, vocab, desc)
        if loaded.status == FAIL:
            return result(R_LLAMA, FAIL, loaded.message, llamacpp_check=loaded.code)
    for check in (llamacpp.check_vocab_type, llamacpp.check_bos, llamacpp.check_eos, check_size,
                  llamacpp.check_token_text):
        outcome = check(t, d)
        if outcome.status == FAIL:
            if outcome.code == R_LLAMA.code:
                return outcome
            return result(R_LLAMA, FAIL, f"{outcome.code} {outcome.name}: {outcome.message}",
                          llamacpp_check=outcome.code)
    return result(R_LLAMA, PASS, "the vendored llama.cpp checks pass (token counts within 256, texts equal from id 5)")


def draft(target: ModelDescription, d: ModelDescription, method: str, version: VersionRange) -> Report:
    kind = draft_type(d)
    checks: list[Finding] = []
    says: str | None = None
    if kind == SIMPLE and drafter_kind(d) == EAGLE3:
        checks.append(result(R_KIND, FAIL, "an EAGLE-3 head: KoboldCpp has no EAGLE-3 draft type and would run it "
                             "as a classic draft model, which it is not"))
    elif kind == SIMPLE and is_recurrent(d):
        checks.append(result(R_KIND, FAIL, f"the draft is recurrent/hybrid: '{RECURRENT}'"))
        says = RECURRENT
    else:
        shown = {SIMPLE: "a classic draft model (draft-simple)", MTP: "an MTP drafter (draft-mtp)",
                 M.DFLASH: "a DFlash drafter (draft-dflash)", M.DSPARK: "a DSpark drafter (draft-dspark)"}[kind]
        checks.append(result(R_KIND, PASS, f"--draftmodel runs it as {shown}", draft_type=kind))
    n_t, n_d = target.vocab.n_tokens, d.vocab.n_tokens
    warnings: list[Finding] = []
    verdict = count_verdict(n_t, n_d)
    if says == RECURRENT:  # 'else if(draftvocab!=base_n_vocab)': the count is never compared
        pass
    elif verdict == "refuse":
        checks.append(result(R_COUNT, FAIL, f"token counts {n_t} vs {n_d} (difference {abs(n_t - n_d)} > 256)",
                             target=n_t, draft=n_d))
        says = says or TOO_DIFFERENT.format(d=n_d, t=n_t)
    else:
        checks.append(result(R_COUNT, PASS, f"token counts {n_t} vs {n_d} (difference {abs(n_t - n_d)} <= 256)"))
        if verdict == "warn":
            warnings.append(finding(W_COUNT, f"KoboldCpp prints '{MAY_MALFUNCTION.format(d=n_d, t=n_t)}'"))
    if checks[0].status == PASS and kind == SIMPLE and version.reaches(V_STRICT.low or ""):
        checks.append(are_compatible(target.vocab, d.vocab, target, d))
        if checks[-1].status == FAIL:
            says = says or SETUP_FAILED.format(what=INCOMPATIBLE)
    elif checks[0].status == PASS and kind != SIMPLE:
        inner = M.evaluate_method(target, d, kind)
        first = inner.first_failure
        checks.append(result(R_METHOD, PASS, f"llama.cpp {kind} checks pass") if first is None else
                      result(R_METHOD, FAIL, f"{first.code} {first.name}: {first.message}", llamacpp_check=first.code))
        if first is not None:
            says = says or (SETUP_FAILED.format(what=inner.engine_says) if inner.engine_says else None)
    report = Report(ENGINE, method, target, d, checks, warnings)
    if report.first_failure is not None:
        report.engine_says = says
    if report.compatible:
        report.next_steps.append("koboldcpp --model TARGET --draftmodel DRAFT --draftamount 8")
    return report


ENGINE_OBJ = VersionedEngine(
    ENGINE, ("draft",), "draft", RULES, {"draft": draft}, VERSIONS,
    {"draft-simple": "draft", "draft-mtp": "draft", "draft-dflash": "draft", "draft-dspark": "draft"},
)
