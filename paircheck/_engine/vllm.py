"""vLLM's rules (ecosystem.md section 4; vllm/config/speculative.py at 002e77c).

draft_model compares ``get_vocab_size()`` of both configs: embedding rows, not tokens,
exactly. So Qwen2.5-14B (152064 rows) with Qwen2.5-0.5B (151936) is refused although the
tokenizer is the same and llama.cpp accepts the pair. vLLM builds the draft with the
target's tokenizer, so a draft from another tokenizer with equal rows is not refused: it
just proposes other tokens.
"""

from __future__ import annotations

from paircheck._engine.common import (
    DFLASH,
    DSPARK,
    EAGLE,
    EAGLE3,
    MODEL,
    MTP_HEAD,
    TableEngine,
    architecture,
    compare_texts,
    drafter_kind,
    finding,
    kind_check,
    result,
    rows_detail,
)
from paircheck.findings import FAIL, PASS, SKIP, Finding, Report, Rule
from paircheck.model import ModelDescription

ENGINE = "vllm"
VERSION = ("vLLM V1 (SpeculativeConfig at 002e77c); draft_model needs vLLM > 0.10.0, and some releases "
           "(0.13) need \"method\": \"draft_model\" given explicitly")
SAME_VOCAB_ERROR = ("Target and draft model should have the same vocabulary size. Target model vocab_size={t}. "
                    "Draft model vocab_size={d}. Using models with different tokenizers can cause out-of-bounds "
                    "errors during speculative decoding.")

R_KIND = Rule(
    "VL001", "vllm_drafter_kind", "The draft is what the method runs",
    "method draft_model runs an independent small model; eagle/eagle3/dflash/dspark run a head "
    "trained for the target; mtp runs MTP layers. vLLM picks the method from the draft's name "
    "when 'method' is omitted (eagle3, eagle-, dflash, dspark in the name), so a head whose name "
    "lacks the word is run as a plain draft model.",
    "Give \"method\" explicitly in --speculative-config, matching the drafter.",
)
R_ROWS = Rule(
    "VL002", "vllm_vocab_size", "Embedding rows are equal",
    "draft_model compares the config vocab_size (embedding rows) of target and draft, exactly. "
    "Padding differences count: Qwen2.5 7B+ has 152064 rows, 0.5B-3B have 151936. Failure: "
    "'Target and draft model should have the same vocabulary size. ...'. Older V0 engines "
    "failed with a bare assert. For a GGUF the rows are the token_embd tensor's.",
    "Use a draft with the same padded size, or set \"use_heterogeneous_vocab\": true (method "
    "draft_model, greedy draft sampling), or pad the draft's embedding and config.",
)
R_TOKENS = Rule(
    "VL003", "vllm_same_tokenizer", "The draft uses the target's tokens",
    "vLLM loads the draft with the target's tokenizer. If the draft's token table differs, it "
    "runs without any error but proposes ids that mean other text, so almost nothing is accepted.",
    "Use a draft of the same tokenizer family, or \"use_heterogeneous_vocab\": true.",
)
R_MTP = Rule(
    "VL004", "vllm_mtp", "MTP has MTP layers to run",
    "method mtp uses the target's own MTP layers (no 'model') or an MTP checkpoint; the target "
    "must be of a family vLLM runs MTP for ('MTP only works for model families that support MTP "
    "in vLLM'). Gemma 4 assistants must run as mtp, not draft_model.",
    "Use a target with MTP weights, or another method.",
)
R_DRAFTLESS = Rule(
    "VL005", "vllm_draftless", "ngram and suffix need no draft",
    "ngram (prompt lookup, prompt_lookup_min/max) and suffix (needs arctic-inference) have no "
    "pairing constraint.",
    "Nothing to fix.",
)
W_VERIFIER = Rule(
    "VL101", "vllm_head_target", "vLLM does not check that a head fits the target",
    "vLLM wraps EAGLE heads without checking that they were trained for this target; its own "
    "docs pair a Llama-3.1 head with a Llama-3 target. A head for another model loads and "
    "accepts little.",
    "Use the head published for this exact target.",
    kind="warning",
)
W_NAME = Rule(
    "VL102", "vllm_method_by_name", "vLLM would not detect this head from its name",
    "Without an explicit method vLLM detects eagle3/eagle/dflash/dspark from the draft's name; "
    "this head's name lacks the word, so vLLM would treat it as a draft_model.",
    "Pass \"method\" explicitly.",
    kind="warning",
)
RULES = (R_KIND, R_ROWS, R_TOKENS, R_MTP, R_DRAFTLESS, W_VERIFIER, W_NAME)

HEAD_METHODS = {"eagle": (EAGLE,), "eagle3": (EAGLE3,), "dflash": (DFLASH,), "dspark": (DSPARK,)}


def rows_check(rule: Rule, target: ModelDescription, draft: ModelDescription, error: str | None) -> Finding:
    t, d = rows_detail(target, draft)
    details = dict(target=t.value, draft=d.value, target_source=t.source, draft_source=d.source)
    if t.value is None or d.value is None:
        unknown = t if t.value is None else d
        side = "target" if t.value is None else "draft"
        return result(rule, SKIP, f"not checked: {side} {unknown.source}", **details)
    if t.value == d.value:
        return result(rule, PASS, f"{t.value} rows on both sides", **details)
    return result(rule, FAIL, f"embedding rows differ: target {t.value}, draft {d.value}"
                  + (f": '{error.format(t=t.value, d=d.value)[:70]}...'" if error else ""), **details)


def tokens_check(rule: Rule, target: ModelDescription, draft: ModelDescription, effect: str) -> Finding:
    cmp = compare_texts(target, draft)
    if cmp is None:
        return result(rule, SKIP, "not checked: a side has no token texts")
    if cmp.first_difference is None:
        return result(rule, PASS, f"{cmp.compared} token texts equal from id 0", compared=cmp.compared)
    return result(rule, FAIL, f"token {cmp.first_difference} differs: target {cmp.target_text}, draft "
                  f"{cmp.draft_text}; {effect}", first_id=cmp.first_difference)


def _report(method: str, target: ModelDescription, draft: ModelDescription, checks: list[Finding],
            warnings: list[Finding | None] = ()) -> Report:  # type: ignore[assignment]
    report = Report(ENGINE, method, target, draft, checks, [w for w in warnings if w is not None],
                    engine_version=VERSION)
    first = report.first_failure
    if first is not None and first.name == "vllm_vocab_size":
        report.engine_says = SAME_VOCAB_ERROR.format(t=first.details["target"], d=first.details["draft"])
    if report.compatible:
        model = "DRAFT" if method != "mtp" else "(omit for the target's own MTP layers)"
        report.next_steps.append(
            f"vllm serve TARGET --speculative-config '{{\"method\": \"{method}\", \"model\": \"{model}\", "
            "\"num_speculative_tokens\": 4}'")
    return report


def draft_model(target: ModelDescription, draft: ModelDescription, method: str) -> Report:
    checks = [
        kind_check(R_KIND, draft, (MODEL,), "draft_model runs it as a standalone model, which a head is not;",
                   "use its own method"),
        rows_check(R_ROWS, target, draft, SAME_VOCAB_ERROR),
        tokens_check(R_TOKENS, target, draft, "vLLM runs, but the draft's proposals are other tokens"),
    ]
    return _report(method, target, draft, checks)


def _name_detects(draft: ModelDescription, method: str) -> bool:
    name = " ".join(x for x in (draft.location, draft.identity.repo or "", draft.identity.name or "")).lower()
    needle = {"eagle": "eagle-", "eagle3": "eagle3"}.get(method, method)
    return needle in name


def head(target: ModelDescription, draft: ModelDescription, method: str) -> Report:
    checks = [kind_check(R_KIND, draft, HEAD_METHODS[method], f"method {method} needs a {method} head;",
                         "use method draft_model for an independent model")]
    warnings: list[Finding | None] = []
    if checks[0].status == PASS:
        warnings.append(finding(W_VERIFIER, "vLLM will not check that this head was trained for the target"))
        if not _name_detects(draft, method):
            warnings.append(finding(W_NAME, f"the name {draft.location!r} lacks {method!r}: without "
                                    f"\"method\": \"{method}\" vLLM runs it as a draft_model"))
    return _report(method, target, draft, checks, warnings)


def mtp(target: ModelDescription, draft: ModelDescription, method: str) -> Report:
    same = bool(target.resolved_path) and target.resolved_path == draft.resolved_path
    base = target if same else draft
    nextn = base.metadata.get(f"{architecture(base)}.nextn_predict_layers")
    hf_mtp = base.hf is not None and ("mtp" in (base.hf.model_type or "") or bool(base.hf.extra.get("num_nextn_predict_layers")))
    if drafter_kind(base) == MTP_HEAD or (isinstance(nextn, int) and nextn > 0) or hf_mtp:
        check = result(R_MTP, PASS, f"{'the target' if same else 'the draft'} has MTP layers")
    else:
        check = result(R_MTP, FAIL, f"{'the target' if same else 'the draft'} has no MTP layers: 'MTP only works "
                       "for model families that support MTP in vLLM'")
    return _report(method, target, draft, [check])


def draftless(target: ModelDescription, draft: ModelDescription, method: str) -> Report:
    return _report(method, target, draft, [result(R_DRAFTLESS, PASS, f"{method} needs no draft model")])


ENGINE_OBJ = TableEngine(
    name=ENGINE,
    methods=("draft_model", "eagle", "eagle3", "dflash", "dspark", "mtp", "ngram", "suffix"),
    default_method="draft_model",
    rules=RULES,
    functions={"draft_model": draft_model, "eagle": head, "eagle3": head, "dflash": head, "dspark": head,
               "mtp": mtp, "ngram": draftless, "suffix": draftless},
    aliases={"draft-simple": "draft_model", "draft-eagle3": "eagle3", "draft-mtp": "mtp", "draft-dflash": "dflash",
             "draft-dspark": "dspark", "ngram-simple": "ngram", "ngram-map-k": "ngram", "ngram-map-k4v": "ngram",
             "ngram-mod": "ngram", "ngram-cache": "ngram"},
)
