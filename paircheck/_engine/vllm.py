"""vLLM's rules, read from vllm/config/speculative.py in the released wheels on PyPI.

``SpeculativeConfig.__post_init__`` builds the draft's ModelConfig with
``hf_overrides=SpeculativeConfig.hf_config_override``, which rewrites some model types to
MTP types (qwen3_5 -> qwen3_5_mtp, deepseek_v3 -> deepseek_mtp, ...), then detects the
method from the draft even when ``method`` was given as draft_model: names containing
eagle-/eagle3/dflash/dspark, DFlash/DSpark architectures, then ``hf_config.model_type in
MTPModelTypes`` gives "mtp". Only what is left runs as a draft model, and only then are the
vocab sizes compared (``verify_equal_vocab_size_if_draft_model``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from paircheck._engine.common import (
    DFLASH,
    DSPARK,
    EAGLE,
    EAGLE3,
    MODEL,
    MTP_HEAD,
    architecture,
    compare_texts,
    drafter_kind,
    embedding_rows,
    finding,
    kind_check,
    result,
)
from paircheck._engine.versions import VersionedEngine, VersionRange
from paircheck.findings import FAIL, PASS, SKIP, Finding, Report, Rule
from paircheck.model import ModelDescription

ENGINE = "vllm"

SOURCE = "vllm-project/vllm release 0.33.0 (PyPI wheel, commit g4ba787ec9), vllm/config/speculative.py"
V_DEFAULT = VersionRange(
    "vLLM", "0.17.0", None,
    SOURCE + " (0.17.0 is the first wheel read that defaults \"method\" to draft_model and rewrites qwen3_5; "
    "'dflash' name detection appears in 0.20.0)",
    cite="vllm 0.33.0 wheel",
)
V_EXPLICIT = VersionRange(
    "vLLM", "0.15.0", "0.17.0",
    "vllm 0.15.0 and 0.16.0 wheels, vllm/config/speculative.py: draft_model exists but must be given as "
    "\"method\" (else 'Unsupported speculative method: 'None''); no qwen3_5 rewrite, no dflash/dspark",
    cite="vllm 0.15.0 and 0.16.0 wheels",
)
V_NO_DRAFT_MODEL = VersionRange(
    "vLLM", None, "0.15.0",
    "vllm 0.10.0, 0.11.0, 0.12.0, 0.13.0 and 0.14.0 wheels (vllm/config.py, then vllm/config/speculative.py): "
    "a draft that is no EAGLE/Medusa/MLP/MTP checkpoint raises NotImplementedError",
    cite="vllm 0.10.0 to 0.14.0 wheels",
)
VERSIONS = (V_DEFAULT, V_EXPLICIT, V_NO_DRAFT_MODEL)

SAME_VOCAB_ERROR = ("Target and draft model should have the same vocabulary size. Target model vocab_size={t}. "
                    "Draft model vocab_size={d}. Using models with different tokenizers can cause out-of-bounds "
                    "errors during speculative decoding.")
UNSUPPORTED_ERROR = "Unsupported speculative method: '{method}'"
NO_DRAFT_MODEL_ERROR = ("Speculative decoding with draft model is not supported yet. Please consider using other "
                        "speculative decoding methods such as ngram, medusa, eagle, or mtp.")

# MTPModelTypes at 0.33.0.
MTP_MODEL_TYPES = frozenset({
    "deepseek_mtp", "dots3_note_mtp", "mimo_mtp", "mimo_v2_mtp", "glm4_moe_mtp", "glm4_moe_lite_mtp",
    "glm_ocr_mtp", "ernie_mtp", "nemotron_h_mtp", "exaone_moe_mtp", "exaone4_5_mtp", "qwen3_next_mtp",
    "qwen4_exp_mtp", "qwen3_5_mtp", "longcat_flash_mtp", "bailing_hybrid_v3_mtp", "minimax_m3_mtp",
    "bailing_hybrid_mtp", "mtp", "kimi_k3_mtp", "pangu_ultra_moe_mtp", "step3p5_mtp", "step5_mtp", "hy_v3_mtp",
    "hy_v4_mtp", "gemma4_mtp", "inkling_mtp", "glm5_next_mtp",
})
# hf_config_override at 0.33.0: model_type rewrites that need nothing but the config, and the
# config key holding the MTP layer count (n_predict); None where vLLM defaults it to 1.
_BY_MODEL_TYPE: Mapping[str, tuple[str, str | None]] = {
    "deepseek_v3": ("deepseek_mtp", "num_nextn_predict_layers"),
    "deepseek_v32": ("deepseek_mtp", "num_nextn_predict_layers"),
    "glm_moe_dsa": ("deepseek_mtp", "num_nextn_predict_layers"),
    "deepseek_v4": ("deepseek_mtp", "num_nextn_predict_layers"),
    "deepseek_v41": ("deepseek_mtp", "num_nextn_predict_layers"),
    "deepseek_mtp": ("deepseek_mtp", "num_nextn_predict_layers"),
    "dots3_note": ("dots3_note_mtp", None),
    "pangu_ultra_moe": ("pangu_ultra_moe_mtp", "num_nextn_predict_layers"),
    "kimi_k3": ("kimi_k3_mtp", "num_nextn_predict_layers"),
    "ernie4_5_moe": ("ernie_mtp", "num_nextn_predict_layers"),
    "qwen3_next": ("qwen3_next_mtp", "num_nextn_predict_layers"),
    "qwen4_exp": ("qwen4_exp_mtp", "mtp_num_hidden_layers"),
    "qwen4_exp_text": ("qwen4_exp_mtp", "mtp_num_hidden_layers"),
    "exaone_moe": ("exaone_moe_mtp", "num_nextn_predict_layers"),
    "qwen3_5": ("qwen3_5_mtp", "mtp_num_hidden_layers"),
    "qwen3_5_moe": ("qwen3_5_mtp", "mtp_num_hidden_layers"),
    "qwen3_5_text": ("qwen3_5_mtp", "mtp_num_hidden_layers"),
    "qwen3_5_moe_text": ("qwen3_5_mtp", "mtp_num_hidden_layers"),
    "longcat_flash": ("longcat_flash_mtp", None),
    "step3p5": ("step3p5_mtp", None),
    "step3p7": ("step3p5_mtp", None),
    "step5": ("step5_mtp", None),
    "step5_vl": ("step5_mtp", None),
    "hy_v3": ("hy_v3_mtp", "num_nextn_predict_layers"),
    "hy_v4": ("hy_v4_mtp", "num_nextn_predict_layers"),
    "bailing_hybrid": ("bailing_hybrid_mtp", "num_nextn_predict_layers"),
    "gemma4_assistant": ("gemma4_mtp", None),
    "gemma4_unified_assistant": ("gemma4_mtp", None),
}
_BY_ARCHITECTURE: Mapping[str, tuple[str, str | None]] = {
    "MiMoForCausalLM": ("mimo_mtp", "num_nextn_predict_layers"),
    "Glm4MoeForCausalLM": ("glm4_moe_mtp", "num_nextn_predict_layers"),
    "Glm4MoeLiteForCausalLM": ("glm4_moe_lite_mtp", "num_nextn_predict_layers"),
    "GlmOcrForConditionalGeneration": ("glm_ocr_mtp", "num_nextn_predict_layers"),
    "BailingMoeV3ForCausalLM": ("bailing_hybrid_v3_mtp", "num_nextn_predict_layers"),
    "BailingMoeV2_5ForCausalLM": ("bailing_hybrid_mtp", "num_nextn_predict_layers"),
}
# The same at 0.15.0/0.16.0.
MTP_MODEL_TYPES_015 = frozenset({
    "deepseek_mtp", "mimo_mtp", "glm4_moe_mtp", "glm4_moe_lite_mtp", "ernie_mtp", "exaone_moe_mtp",
    "qwen3_next_mtp", "longcat_flash_mtp", "mtp", "pangu_ultra_moe_mtp",
})
_REWRITES_015 = frozenset({"deepseek_v3", "deepseek_v32", "deepseek_mtp", "pangu_ultra_moe", "ernie4_5_moe",
                           "qwen3_next", "exaone_moe", "longcat_flash", "MiMoForCausalLM", "Glm4MoeForCausalLM",
                           "Glm4MoeLiteForCausalLM"})
_DSPARK_ARCHITECTURES = frozenset({"Qwen3DSparkModel", "Qwen3OmniDSparkModel", "MuseSparkDSparkModel",
                                   "Gemma4DSparkModel"})

R_KIND = Rule(
    "VL001", "vllm_drafter_kind", "vLLM runs the draft with the method asked for",
    "SpeculativeConfig.__post_init__ detects the method from the draft even when \"method\": "
    "\"draft_model\" is given: 'eagle-' in the name gives eagle, 'eagle3' eagle3, 'dflash' (or "
    "MuseGlimmerAssistantModel) dflash, 'dspark' (or a DSpark architecture) dspark, and a model_type in "
    "MTPModelTypes after hf_config_override gives mtp; hf_config_override rewrites qwen3_5/qwen3_5_text/"
    "qwen3_5_moe, deepseek_v3, qwen3_next, Glm4MoeForCausalLM, MiMo and ERNIE 4.5 MoE configs to their MTP "
    "types. So a Qwen3.5 draft given as draft_model runs as MTP (only its MTP layers are loaded). A method "
    "the draft does not fit ends in NotImplementedError: '" + UNSUPPORTED_ERROR.format(method="...") + "'. "
    "Source: " + SOURCE + ".",
    "Give the method that matches the drafter; for a classic draft model use one whose model_type vLLM "
    "does not rewrite to an MTP type.",
)
R_ROWS = Rule(
    "VL002", "vllm_vocab_size", "Embedding rows are equal",
    "For method draft_model, verify_equal_vocab_size_if_draft_model compares get_vocab_size() (the "
    "config's vocab_size, padding included) of target and draft exactly and raises ValueError: '"
    + SAME_VOCAB_ERROR.format(t="...", d="...") + "'. Qwen2.5 7B+ has 152064 rows, 0.5B-3B have 151936. "
    "Skipped with \"use_heterogeneous_vocab\": true (draft_model only, greedy draft sampling). For a GGUF "
    "the rows are the token_embd tensor's. Source: " + SOURCE + ".",
    "Use a draft with the same padded size, or set \"use_heterogeneous_vocab\": true (method "
    "draft_model, greedy draft sampling), or pad the draft's embedding and config.",
)
R_TOKENS = Rule(
    "VL003", "vllm_same_tokenizer", "The draft uses the target's tokens",
    "Without use_heterogeneous_vocab the draft's ModelConfig gets tokenizer=target_model_config.tokenizer. "
    "If the draft's token table differs, vLLM runs without any error but the draft "
    "proposes ids that mean other text, so almost nothing is accepted. This is paircheck's judgement of "
    "usefulness: vLLM itself prints nothing. Source: " + SOURCE + ".",
    "Use a draft of the same tokenizer family, or \"use_heterogeneous_vocab\": true.",
)
R_MTP = Rule(
    "VL004", "vllm_mtp", "MTP has MTP layers to run",
    "method mtp without a model uses the target itself: its config goes through hf_config_override and "
    "its model_type must then be in MTPModelTypes, otherwise NotImplementedError: '"
    + UNSUPPORTED_ERROR.format(method="mtp") + "'. The MTP layer count is the config's "
    "num_nextn_predict_layers (mtp_num_hidden_layers for Qwen3.5, in text_config too); paircheck refuses "
    "0, since there are no MTP weights to load. For a GGUF, {arch}.nextn_predict_layers. "
    "Source: " + SOURCE + ".",
    "Use a target whose family vLLM runs MTP for, with MTP weights, or another method.",
)
R_DRAFTLESS = Rule(
    "VL005", "vllm_draftless", "ngram and suffix need no draft",
    "ngram (prompt lookup, prompt_lookup_min/max) and suffix (needs arctic-inference: 'Arctic Inference "
    "is required for suffix decoding.') have no pairing constraint. Source: " + SOURCE + ".",
    "Nothing to fix.",
)
R_NO_DRAFT_MODEL = Rule(
    "VL006", "vllm_draft_model_unsupported", "This vLLM has no draft_model method",
    "Up to 0.14.0 a draft that is no EAGLE/Medusa/MLP-speculator/MTP checkpoint raises "
    "NotImplementedError: '" + NO_DRAFT_MODEL_ERROR + "'. Source: " + V_NO_DRAFT_MODEL.source + "; "
    "0.15.0 adds draft_model.",
    "Use vLLM >= 0.15.0, or another method.",
)
W_VERIFIER = Rule(
    "VL101", "vllm_head_target", "vLLM does not check that a head fits the target",
    "vLLM wraps EAGLE heads (EAGLEConfig) without checking that they were trained for this target; a head "
    "for another model loads and accepts little. Source: " + SOURCE + ".",
    "Use the head published for this exact target.",
    kind="warning",
)
W_NAME = Rule(
    "VL102", "vllm_method_by_name", "vLLM would not detect this head from its name",
    "Without an explicit method, 0.33.0 defaults to draft_model and detects eagle/eagle3/dflash/dspark "
    "only from the name or a DFlash/DSpark architecture; this head's name lacks the word, so vLLM would "
    "treat it as a draft model. Source: " + SOURCE + ".",
    "Pass \"method\" explicitly.",
    kind="warning",
)
RULES = (R_KIND, R_ROWS, R_TOKENS, R_MTP, R_DRAFTLESS, R_NO_DRAFT_MODEL, W_VERIFIER, W_NAME)

HEAD_METHODS = {"eagle": (EAGLE,), "eagle3": (EAGLE3,), "dflash": (DFLASH,), "dspark": (DSPARK,)}


# --- pure mirrors of SpeculativeConfig (0.33.0) ------------------------------------------

def mtp_model_type(model_type: str, architectures: Sequence[str], newest: bool = True) -> str:
    """hf_config.model_type after hf_config_override, for the rewrites that need only the config
    (``newest``: 0.33.0's table, else 0.15.0's)."""
    if not newest:
        arch = architectures[0] if architectures else ""
        if model_type not in _REWRITES_015 and arch not in _REWRITES_015:
            return model_type
    if model_type in _BY_MODEL_TYPE:
        return _BY_MODEL_TYPE[model_type][0]
    if architectures and architectures[0] in _BY_ARCHITECTURE:
        return _BY_ARCHITECTURE[architectures[0]][0]
    if "exaone4_5" in model_type:
        return "exaone4_5_mtp"
    return model_type


def detect_method(requested: str, model_name: str, model_type: str, architectures: Sequence[str],
                  newest: bool = True) -> str | None:
    """The method vLLM runs once a draft model is given (``model_type`` after hf_config_override),
    or None where it raises NotImplementedError("Unsupported speculative method: ...").
    ``newest``: 0.33.0's detection, else 0.15.0's (eagle names and MTP types only)."""
    if requested in ("eagle", "eagle3", "dflash", "dspark"):
        return requested
    name = model_name.lower()
    if "eagle-" in name:
        return "eagle"
    if "eagle3" in name:
        return "eagle3"
    if not newest:
        if model_type in MTP_MODEL_TYPES_015:
            return "mtp"
        return "draft_model" if requested == "draft_model" else None
    if "dflash" in name or "MuseGlimmerAssistantModel" in architectures:
        return "dflash"
    if ("dspark" in name or _DSPARK_ARCHITECTURES & set(architectures)
            or ("DSparkDraftModel" in architectures and model_type == "qwen3")):
        return "dspark"
    if model_type in MTP_MODEL_TYPES:
        return "mtp"
    if requested == "draft_model":
        return "draft_model"
    return None


# --- reading the descriptions ------------------------------------------------------------

def hf_config(desc: ModelDescription) -> dict[str, Any] | None:
    """config.json of a Hugging Face folder or repo, or None for a GGUF."""
    if desc.hf is None:
        return None
    config = desc.hf.extra.get("config")
    return config if isinstance(config, dict) else None


def _model_name(desc: ModelDescription) -> str:
    """What vLLM sees as draft_model_config.model: the path or repo id given."""
    return " ".join(x for x in (desc.location, desc.identity.repo or "") if x)


def _config_type(desc: ModelDescription) -> tuple[str, tuple[str, ...]]:
    config = hf_config(desc) or {}
    model_type = config.get("model_type") if isinstance(config.get("model_type"), str) else None
    if model_type is None and desc.hf is not None:
        model_type = desc.hf.model_type
    archs = tuple(a for a in config.get("architectures") or () if isinstance(a, str))
    return model_type or "", archs or (desc.hf.architectures if desc.hf is not None else ())


def mtp_layers(desc: ModelDescription) -> tuple[int | None, str]:
    """MTP layer count and where it came from; None when the files do not say."""
    config = hf_config(desc)
    if config is None:
        nextn = desc.metadata.get(f"{architecture(desc)}.nextn_predict_layers")
        if isinstance(nextn, int) and not isinstance(nextn, bool):
            return nextn, f"{architecture(desc)}.nextn_predict_layers"
        if drafter_kind(desc) == MTP_HEAD:
            return 1, "an MTP head"
        return None, "no nextn_predict_layers key"
    model_type, archs = _config_type(desc)
    entry = _BY_MODEL_TYPE.get(model_type) or (_BY_ARCHITECTURE.get(archs[0]) if archs else None)
    if entry is not None and entry[1] is None:
        return 1, f"vLLM's default for {model_type or archs[0]} (1)"
    keys = [entry[1]] if entry is not None and entry[1] else ["num_nextn_predict_layers", "mtp_num_hidden_layers"]
    nested = config.get("text_config")
    text: dict[str, Any] = nested if isinstance(nested, dict) else {}
    for key in keys:
        for where, holder in (("config.json", config), ("config.json text_config", text)):
            value = holder.get(key)
            if isinstance(value, int) and not isinstance(value, bool):
                return value, f"{where} {key}"
    return None, f"config.json has no {' or '.join(keys)}"


def runs_as(desc: ModelDescription, requested: str, version: VersionRange = V_DEFAULT) -> str | None:
    """detect_method applied to a description (GGUF: name and head kind only)."""
    newest = version is V_DEFAULT
    model_type, archs = _config_type(desc)
    after = mtp_model_type(model_type, archs, newest) if hf_config(desc) is not None else model_type
    if hf_config(desc) is None and drafter_kind(desc) == MTP_HEAD:
        after = "mtp"
    return detect_method(requested, _model_name(desc), after, archs, newest)


# --- checks ------------------------------------------------------------------------------

def rows_check(rule: Rule, target: ModelDescription, draft: ModelDescription, error: str | None) -> Finding:
    t, d = embedding_rows(target), embedding_rows(draft)
    details = {"target": t.value, "draft": d.value, "target_source": t.source, "draft_source": d.source}
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
            warnings: Sequence[Finding | None] = (), says: str | None = None) -> Report:
    report = Report(ENGINE, method, target, draft, checks, [w for w in warnings if w is not None])
    first = report.first_failure
    if first is not None and first.name == "vllm_vocab_size":
        report.engine_says = SAME_VOCAB_ERROR.format(t=first.details["target"], d=first.details["draft"])
    elif first is not None:
        report.engine_says = says
    if report.compatible:
        model = "DRAFT" if method != "mtp" else "(omit for the target's own MTP layers)"
        report.next_steps.append(
            f"vllm serve TARGET --speculative-config '{{\"method\": \"{method}\", \"model\": \"{model}\", "
            "\"num_speculative_tokens\": 4}'")
    return report


def draft_model(target: ModelDescription, draft: ModelDescription, method: str, version: VersionRange) -> Report:
    detected = runs_as(draft, "draft_model", version)
    if version is V_NO_DRAFT_MODEL and detected == "draft_model":
        check = result(R_NO_DRAFT_MODEL, FAIL, "this vLLM has no draft_model method: 'Speculative decoding with "
                       "draft model is not supported yet...'")
        return _report(method, target, draft, [check], says=NO_DRAFT_MODEL_ERROR)
    if detected != "draft_model":
        what = {"mtp": "MTP (it loads only the draft's MTP layers, as if they were the target's)"}.get(
            str(detected), str(detected))
        model_type, archs = _config_type(draft)
        after = mtp_model_type(model_type, archs, version is V_DEFAULT)
        why = (f"model_type {model_type!r} becomes {after!r} in hf_config_override"
               if detected == "mtp" and hf_config(draft) is not None else "detected from the draft's name or kind")
        check = result(R_KIND, FAIL, f"vLLM does not run this draft as draft_model but as {what}: {why}",
                       runs_as=detected)
        return _report(method, target, draft, [check])
    checks = [
        kind_check(R_KIND, draft, (MODEL,), "draft_model runs it as a standalone model, which a head is not;",
                   "use its own method"),
        rows_check(R_ROWS, target, draft, SAME_VOCAB_ERROR),
        tokens_check(R_TOKENS, target, draft, "vLLM runs, but the draft's proposals are other tokens"),
    ]
    return _report(method, target, draft, checks)


def _name_detects(draft: ModelDescription, method: str, version: VersionRange) -> bool:
    return runs_as(draft, "draft_model", version) == method


def head(target: ModelDescription, draft: ModelDescription, method: str, version: VersionRange) -> Report:
    checks = [kind_check(R_KIND, draft, HEAD_METHODS[method], f"method {method} needs a {method} head;",
                         "use method draft_model for an independent model")]
    warnings: list[Finding | None] = []
    if checks[0].status == PASS:
        warnings.append(finding(W_VERIFIER, "vLLM will not check that this head was trained for the target"))
        if not _name_detects(draft, method, version):
            warnings.append(finding(W_NAME, f"the name {draft.location!r} lacks {method!r}: without "
                                    f"\"method\": \"{method}\" vLLM runs it as a draft_model"))
    return _report(method, target, draft, checks, warnings)


def mtp(target: ModelDescription, draft: ModelDescription, method: str, version: VersionRange) -> Report:
    same = bool(target.resolved_path) and target.resolved_path == draft.resolved_path
    base = target if same else draft
    who = "the target" if same else "the draft"
    checks: list[Finding] = []
    detected = runs_as(base, "mtp", version) if hf_config(base) is not None else None
    count, where = mtp_layers(base)
    if hf_config(base) is not None and detected != "mtp":
        model_type = _config_type(base)[0]
        checks.append(result(R_MTP, FAIL, f"{who}'s model_type {model_type or '?'!r} is not one vLLM runs MTP for: "
                             f"'{UNSUPPORTED_ERROR.format(method='mtp')}'", runs_as=detected))
        return _report(method, target, draft, checks, says=UNSUPPORTED_ERROR.format(method="mtp"))
    if count is None:
        status = SKIP if hf_config(base) is not None else FAIL
        checks.append(result(R_MTP, status, f"{who} declares no MTP layers ({where})"))
    elif count > 0:
        checks.append(result(R_MTP, PASS, f"{who} has {count} MTP layer{'s' if count != 1 else ''} ({where})",
                             layers=count))
    else:
        checks.append(result(R_MTP, FAIL, f"{who} has no MTP layers ({where} = 0)", layers=count))
    return _report(method, target, draft, checks)


def draftless(target: ModelDescription, draft: ModelDescription, method: str, version: VersionRange) -> Report:
    return _report(method, target, draft, [result(R_DRAFTLESS, PASS, f"{method} needs no draft model")])


ENGINE_OBJ = VersionedEngine(
    name=ENGINE,
    methods=("draft_model", "eagle", "eagle3", "dflash", "dspark", "mtp", "ngram", "suffix"),
    default_method="draft_model",
    rules=RULES,
    functions={"draft_model": draft_model, "eagle": head, "eagle3": head, "dflash": head, "dspark": head,
               "mtp": mtp, "ngram": draftless, "suffix": draftless},
    versions=VERSIONS,
    aliases={"draft-simple": "draft_model", "draft-eagle3": "eagle3", "draft-mtp": "mtp", "draft-dflash": "dflash",
             "draft-dspark": "dspark", "ngram-simple": "ngram", "ngram-map-k": "ngram", "ngram-map-k4v": "ngram",
             "ngram-mod": "ngram", "ngram-cache": "ngram"},
)
