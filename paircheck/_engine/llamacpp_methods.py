"""llama.cpp's other speculative types: draft-eagle3, draft-mtp, draft-dflash/-dspark, ngram-*.

None of these runs the draft-simple vocab check (common/speculative.cpp). What they
need instead is metadata of the head and of the target: the head's architecture and
required keys, layer ids that exist in the target, hidden sizes that fit. The reference
version checks some of this at load time (a hard exit), some at init (a soft failure: the
server runs without speculation), some with GGML_ASSERT (the process aborts), and some not
at all (a failure at the first batch). Each check says which.
"""

from __future__ import annotations

from paircheck import constants as K
from paircheck import llamacpp_tables as T
from paircheck._engine.common import (
    arch_value,
    architecture,
    compare_texts,
    finding,
    llama_server_line,
    result,
    tensor_names,
)
from paircheck.findings import FAIL, PASS, SKIP, Finding, Report, Rule
from paircheck.model import GGUFArray, ModelDescription

ENGINE = "llama.cpp"
EAGLE3, MTP, DFLASH, DSPARK = "draft-eagle3", "draft-mtp", "draft-dflash", "draft-dspark"
NGRAM_METHODS = ("ngram-simple", "ngram-map-k", "ngram-map-k4v", "ngram-mod", "ngram-cache")
HEAD_METHODS = (EAGLE3, MTP, DFLASH, DSPARK)

# The flags that turn a draftless method on, for "no draft fits" suggestions.
NGRAM_FLAGS = {
    "ngram-mod": "--spec-type ngram-mod (or --spec-default: ngram-mod with n-match 24, n-min 48, n-max 64)",
    "ngram-simple": "--spec-type ngram-simple --spec-ngram-simple-size-n 12 --spec-ngram-simple-size-m 48",
    "ngram-map-k": "--spec-type ngram-map-k",
    "ngram-map-k4v": "--spec-type ngram-map-k4v",
    "ngram-cache": "--spec-type ngram-cache -lcs STATIC.bin (optional -lcd DYNAMIC.bin)",
}
def ngram_suggestion(report: Report) -> list[str]:
    """What to do when no draft fits: the draftless n-gram methods (prose, then the command).

    Nothing when the target itself does not load: no method can run on it, and the
    loadable finding's fix (resume or re-download) is the way forward.
    """
    if any(c.code == "LC001" and c.status == FAIL and c.details.get("side") == "target" for c in report.checks):
        return []
    return [
        "No draft needed: the n-gram methods draft from the prompt and the output so far, for example:",
        *llama_server_line(report.target, None, "--spec-type ngram-mod"),
    ]

HEAD_FIX = "Use the head published for this exact target model, converted with the same llama.cpp version."

R_E_ARCH = Rule(
    "LC010", "eagle3_architecture", "The draft is an EAGLE-3 head",
    "--spec-type draft-eagle3 needs a draft whose general.architecture is eagle3. With any "
    "other draft the EAGLE-3 setup throws 'draft model is not eagle3 (expected 3 extract "
    "layers, got N)'; llama-server logs it and runs without speculation (a soft failure).",
    "Use an EAGLE-3 head converted with convert_hf_to_gguf.py --target-model-dir TARGET_DIR, "
    "or --spec-type draft-simple for an ordinary draft model.",
)
R_E_LAYERS = Rule(
    "LC011", "eagle3_target_layers", "The head names exactly 3 target layers",
    "eagle3.target_layers must be an INT32/UINT32 array of exactly 3 layer ids. Missing: the "
    "draft fails to load ('EAGLE3 model requires 'extract_layers' in GGUF metadata'); another "
    "length: 'EAGLE3 requires exactly 3 entries in 'extract_layers''. Both stop llama-server.",
    "Reconvert the head with a current convert_hf_to_gguf.py.",
)
R_E_KEYS = Rule(
    "LC012", "eagle3_keys", "The head has its required keys",
    "eagle3.target_hidden_size (UINT32) and eagle3.attention.layer_norm_rms_epsilon are read "
    "when the head loads; a missing key fails the load ('key not found in model: ...').",
    "Reconvert the head with a current convert_hf_to_gguf.py.",
)
R_E_RANGE = Rule(
    "LC013", "eagle3_layer_range", "The head's layer ids exist in the target",
    "Each EAGLE-3 target layer id must be at most the target's n_layer (block_count minus "
    "nextn_predict_layers). A larger id is a process abort: 'EAGLE3: target layer id %d "
    "exceeds target n_layer %d'. A head trained for a deeper model fails here.",
    HEAD_FIX,
)
R_E_HIDDEN = Rule(
    "LC014", "eagle3_hidden_size", "The head was trained for the target's hidden size",
    "eagle3.target_hidden_size must equal the target's embedding_length: the head reads 3 x "
    "the target's hidden states per token. llama.cpp does not check it at startup, so a head "
    "for another model size fails on the first batch instead.",
    HEAD_FIX,
)
R_D_ARCH = Rule(
    "LC020", "dflash_architecture", "The draft is a DFlash/DSpark head",
    "--spec-type draft-dflash/draft-dspark need a draft with general.architecture dflash. "
    "Another draft has no target layer ids, and the setup asserts: 'DFlash model has no "
    "target_layer_ids' (the process aborts).",
    "Use a DFlash/DSpark head made for this target, or --spec-type draft-simple for an "
    "ordinary draft model.",
)
R_D_KEYS = Rule(
    "LC021", "dflash_keys", "The head has its required keys",
    "dflash.target_layers (a non-empty array) and dflash.attention.layer_norm_rms_epsilon "
    "are required at load ('DFlash model requires 'target_layers' in GGUF metadata'); "
    "dflash.hidden_activation, when present, must be silu, gelu or gelu_pytorch_tanh "
    "('unsupported DFlash hidden activation: ...'). A head with selector_hidden.weight "
    "(DFlash2) also needs its conv/selector keys.",
    "Reconvert the head with a current convert_hf_to_gguf.py.",
)
R_D_RANGE = Rule(
    "LC022", "dflash_layer_range", "The head's layer ids exist in the target",
    "Each dflash.target_layers id must be at most the target's n_layer; otherwise "
    "GGML_ASSERT(lid <= n_layer) aborts the process.",
    HEAD_FIX,
)
R_D_WIDTH = Rule(
    "LC023", "dflash_width", "Head and target have the same hidden size",
    "The head's input width is len(target_layers) x its own embedding_length, the features "
    "it receives are len(target_layers) x the target's. Nothing checks this at startup; a "
    "mismatch fails at the first batch.",
    HEAD_FIX,
)
R_D_SPARK = Rule(
    "LC024", "dspark_head", "A DSpark draft has its Markov head",
    "DSpark is a DFlash head plus the tensor markov_w1.weight (llama.cpp auto-detects "
    "draft-dspark from it). A plain DFlash file run as draft-dspark lacks it.",
    "Use --spec-type draft-dflash for a DFlash head, or download the DSpark variant.",
)
R_M_LAYERS = Rule(
    "LC030", "mtp_layers", "The model the MTP context is built on has MTP layers",
    "draft-mtp builds its context on the draft file (-md) or, without one, on the target. "
    "That model needs <arch>.nextn_predict_layers > 0, else llama.cpp logs 'context type MTP "
    "requested but model doesn't contain MTP layers' and llama-server exits with 'failed to "
    "create MTP context'. The same check refuses a model whose router_layer >= 0 ('router_layer >= 0 "
    "means n_layer_nextn is repurposed for a router layer, not real MTP', src/llama-context.cpp): "
    "graniteswitch sets router_layer and n_layer_nextn = 1 at load (src/models/granite-switch.cpp), "
    "whatever its nextn_predict_layers key says. Only some architectures have MTP-loading code at all.",
    "Use a GGUF converted with its MTP layers (not --no-mtp), or the model's MTP sidecar "
    "with -md; otherwise use another method.",
)
R_M_WIDTH = Rule(
    "LC031", "mtp_width", "The MTP head's row width matches the target",
    "For an MTP head given with -md, n_embd_out of head and target (embedding_length_out, "
    "else embedding_length) must be equal: 'MTP input row width must match the target "
    "h_nextn width' is a GGML_ASSERT, so a mismatch aborts the process.",
    HEAD_FIX,
)
R_M_ASSIST = Rule(
    "LC032", "gemma4_assistant", "A Gemma 4 assistant carries the target hidden size",
    "A gemma4-assistant draft must store embedding_length_out different from "
    "embedding_length; otherwise it fails to load ('Gemma 4 assistant requires "
    "embedding_length_out to carry the target hidden size').",
    "Reconvert the assistant with a current convert_hf_to_gguf.py.",
)
R_NGRAM = Rule(
    "LC040", "ngram_draftless", "N-gram methods need no draft",
    "ngram-simple, ngram-map-k, ngram-map-k4v, ngram-mod and ngram-cache draft from the "
    "tokens seen so far; nothing in any GGUF matters. ngram-cache reads -lcs/-lcd files (an "
    "unreadable one aborts the process). A draft given with -md is loaded but unused unless "
    "a draft-* type is also listed.",
    "Nothing to fix.",
)
W_HEAD_VOCAB = Rule(
    "LW110", "head_vocab", "The head's vocabulary does not cover the target's",
    "The reference version runs no vocab check for heads. A head's token list differing from "
    "the target's means it was made for another tokenizer: its proposals are other tokens. "
    "Newer upstream code refuses EAGLE-3/MTP drafts with fewer tokens than the target ('the "
    "draft vocab (N tokens) is smaller than the target's (M)').",
    HEAD_FIX,
    kind="warning",
)
W_OTHER_MODEL = Rule(
    "LW111", "head_for_other_model", "The head declares a different base model",
    "Heads are trained on one target's hidden states. The head's general.base_model entries "
    "name none of the target's name, base name or repository.",
    HEAD_FIX,
    kind="warning",
)

RULES: tuple[Rule, ...] = (
    R_E_ARCH, R_E_LAYERS, R_E_KEYS, R_E_RANGE, R_E_HIDDEN, R_D_ARCH, R_D_KEYS, R_D_RANGE,
    R_D_WIDTH, R_D_SPARK, R_M_LAYERS, R_M_WIDTH, R_M_ASSIST, R_NGRAM, W_HEAD_VOCAB, W_OTHER_MODEL,
)

# Architectures with MTP-loading code in the reference version (src/llama-model.cpp: the
# architectures that load nextn/MTP layers).
MTP_ARCHITECTURES = frozenset({
    "deepseek2", "deepseek32", "deepseek4", "qwen3next", "qwen35", "qwen35moe", "step35",
    "glm5-next", "glm4moe", "glm4-moe", "glm-dsa", "bailingmoe3", "cohere2moe", "nemotron-h",
    "hy-v3", "mimo2", "gemma4-assistant",
})
# Architectures whose loader sets hparams.router_layer (so llama_init_from_model refuses an MTP
# context on them): src/models/granite-switch.cpp 'hparams.router_layer = (int32_t) n_real;'.
ROUTER_LAYER_ARCHITECTURES = frozenset({"graniteswitch"})
ACTIVATIONS = ("silu", "gelu", "gelu_pytorch_tanh")


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def target_n_layer(target: ModelDescription) -> int | None:
    """n_layer as the head code sees it: block_count minus the nextn (MTP) layers."""
    blocks = _int(arch_value(target, "block_count"))
    if blocks is None:
        return None
    return blocks - (_int(arch_value(target, "nextn_predict_layers")) or 0)


def _layer_ids(desc: ModelDescription, key: str) -> tuple[list[int] | None, int | None]:
    """(ids, element type) of an array key; ids None when absent or unreadable."""
    value = desc.metadata.get(key)
    if not isinstance(value, GGUFArray) or value.values is None:
        return None, getattr(value, "elem_type", None)
    return [int(v) for v in value.values], value.elem_type


def _check_range(rule: Rule, ids: list[int] | None, target: ModelDescription, abort_text: str) -> Finding:
    n_layer = target_n_layer(target)
    if ids is None:
        return result(rule, SKIP, "not checked: the head has no layer ids")
    if n_layer is None:
        return result(rule, SKIP, "not checked: the target has no <arch>.block_count")
    bad = [i for i in ids if i > n_layer]
    if bad:
        return result(rule, FAIL, f"layer id {bad[0]} > target n_layer {n_layer}: {abort_text % (bad[0], n_layer)} "
                      "(the process aborts)", layer_ids=ids, target_n_layer=n_layer, aborts=True)
    message = f"layer ids {ids} fit the target's {n_layer} layers"
    return result(rule, PASS, message, layer_ids=ids, target_n_layer=n_layer)


def _warn_vocab(target: ModelDescription, draft: ModelDescription) -> Finding | None:
    if not draft.vocab.texts:
        return None
    cmp = compare_texts(target, draft)
    n_t, n_d = target.vocab.n_tokens, draft.vocab.n_tokens
    if cmp is not None and cmp.first_difference is not None:
        return finding(W_HEAD_VOCAB, f"token {cmp.first_difference} differs: target {cmp.target_text}, head "
                       f"{cmp.draft_text}: the head was made for another tokenizer",
                       first_id=cmp.first_difference)
    if n_d < n_t:
        return finding(W_HEAD_VOCAB, f"the head has {n_d} tokens, the target {n_t}: target tokens past "
                       f"{n_d - 1} cannot be mirrored", target=n_t, draft=n_d)
    return None


def _norm(text: str) -> str:
    return "".join(ch for ch in text.lower() if ch.isalnum())


def _warn_other_model(target: ModelDescription, draft: ModelDescription) -> Finding | None:
    bases = [b for b in draft.identity.base_models if b]
    ident = target.identity
    names = [_norm(x) for x in (ident.name, ident.basename, ident.repo) if x]
    if not bases or not names:
        return None
    if any(n and (n in _norm(b) or _norm(b).endswith(n)) for b in bases for n in names):
        return None
    return finding(W_OTHER_MODEL, f"the head was made for {', '.join(bases[:2])}; the target is "
                   f"{ident.name or ident.basename or ident.repo}", head_base_models=bases)


def _report(method: str, target: ModelDescription, draft: ModelDescription, checks: list[Finding],
            warnings: list[Finding | None], says: dict[str, str], next_steps: list[str]) -> Report:
    report = Report(ENGINE, method, target, draft, checks, [w for w in warnings if w is not None],
                    engine_version=T.REFERENCE_VERSION)
    first = report.first_failure
    if first is not None:
        report.engine_says = says.get(first.name)
        report.next_steps += ngram_suggestion(report)
    else:
        report.next_steps += next_steps
    return report


def evaluate_eagle3(target: ModelDescription, draft: ModelDescription) -> Report:
    checks: list[Finding] = []
    arch = architecture(draft)
    ids, elem = _layer_ids(draft, K.EAGLE3_TARGET_LAYERS)
    if arch != "eagle3":
        checks.append(result(R_E_ARCH, FAIL, f"the draft's architecture is {arch or 'missing'!r}, not eagle3",
                             architecture=arch))
        for rule in (R_E_LAYERS, R_E_KEYS, R_E_RANGE, R_E_HIDDEN):
            checks.append(result(rule, SKIP, "not checked: the draft is not an EAGLE-3 head"))
    else:
        checks.append(result(R_E_ARCH, PASS, "the draft is an EAGLE-3 head"))
        if ids is None:
            checks.append(result(R_E_LAYERS, FAIL, "eagle3.target_layers is missing: 'EAGLE3 model requires "
                                 "'extract_layers' in GGUF metadata' (the draft fails to load)"))
        elif len(ids) != 3:
            checks.append(result(R_E_LAYERS, FAIL, f"{len(ids)} target layers: 'EAGLE3 requires exactly 3 entries "
                                 "in 'extract_layers'' (the draft fails to load)", layer_ids=ids))
        else:
            checks.append(result(R_E_LAYERS, PASS, f"target layers {ids}", layer_ids=ids, elem_type=elem))
        hidden = _int(draft.metadata.get(K.EAGLE3_TARGET_HIDDEN_SIZE))
        missing = [k for k in (K.EAGLE3_TARGET_HIDDEN_SIZE, K.EAGLE3_RMS_EPS)
                   if draft.metadata.get(k) is None]
        if missing:
            checks.append(result(R_E_KEYS, FAIL, f"key not found in model: {missing[0]} (the draft fails to load)",
                                 missing=missing))
        else:
            checks.append(result(R_E_KEYS, PASS, "required keys present"))
        checks.append(_check_range(R_E_RANGE, ids, target, "EAGLE3: target layer id %d exceeds target n_layer %d"))
        t_embd = _int(arch_value(target, "embedding_length"))
        if hidden is None or t_embd is None:
            checks.append(result(R_E_HIDDEN, SKIP, "not checked: a hidden size is missing"))
        elif hidden != t_embd:
            checks.append(result(R_E_HIDDEN, FAIL, f"the head was trained for hidden size {hidden}, the target has "
                                 f"{t_embd}: it fails at the first batch", head=hidden, target=t_embd))
        else:
            checks.append(result(R_E_HIDDEN, PASS, f"hidden size {hidden} on both sides"))
    says = {
        "eagle3_architecture": f"draft model is not eagle3 (expected 3 extract layers, got {len(ids or [])}); "
        "then it runs without speculation",
        "eagle3_target_layers": "error loading model hyperparameters: EAGLE3 ... 'extract_layers' ...",
        "eagle3_keys": "error loading model hyperparameters: key not found in model: ...",
        "eagle3_layer_range": "GGML_ABORT: EAGLE3: target layer id ... exceeds target n_layer ...",
    }
    return _report(EAGLE3, target, draft, checks, [_warn_vocab(target, draft), _warn_other_model(target, draft)],
                   says, [*llama_server_line(target, draft, "--spec-type draft-eagle3"),
                          "EAGLE-3 is never auto-detected: --spec-type is required."])


def evaluate_dflash(target: ModelDescription, draft: ModelDescription, method: str = DFLASH) -> Report:
    checks: list[Finding] = []
    arch = architecture(draft)
    ids, _ = _layer_ids(draft, K.DFLASH_TARGET_LAYERS)
    rules_after = (R_D_KEYS, R_D_RANGE, R_D_WIDTH) + ((R_D_SPARK,) if method == DSPARK else ())
    if arch != "dflash":
        checks.append(result(R_D_ARCH, FAIL, f"the draft's architecture is {arch or 'missing'!r}, not dflash: "
                             "'DFlash model has no target_layer_ids' (the process aborts)", architecture=arch))
        checks += [result(rule, SKIP, "not checked: the draft is not a DFlash head") for rule in rules_after]
    else:
        checks.append(result(R_D_ARCH, PASS, "the draft is a DFlash head"))
        problems = []
        if not ids:
            problems.append("DFlash model requires 'target_layers' in GGUF metadata")
        if draft.metadata.get(K.DFLASH_RMS_EPS) is None:
            problems.append("key not found in model: dflash.attention.layer_norm_rms_epsilon")
        act = draft.metadata.get(K.DFLASH_HIDDEN_ACTIVATION)
        if act is not None and act not in ACTIVATIONS:
            problems.append(f"unsupported DFlash hidden activation: {act}")
        names = tensor_names(draft)
        selector_keys = (K.DFLASH_CONV_KERNEL_SIZE, K.DFLASH_CONV_GROUP_SIZE, K.DFLASH_SELECTOR_RANK,
                         K.DFLASH_SELECTOR_TOP_K)
        if names is not None and "selector_hidden.weight" in names and any(
                draft.metadata.get(k) is None for k in selector_keys):
            problems.append("DFlash2 model is missing conv/selector metadata")
        checks.append(result(R_D_KEYS, FAIL, problems[0] + " (the draft fails to load)", problems=problems)
                      if problems else result(R_D_KEYS, PASS, "required keys present"))
        checks.append(_check_range(R_D_RANGE, ids or None, target, "GGML_ASSERT(lid <= n_layer): %d > %d"))
        d_embd, t_embd = _int(arch_value(draft, "embedding_length")), _int(arch_value(target, "embedding_length"))
        checks.append(_check_width(R_D_WIDTH, d_embd, t_embd, "hidden size", "it fails at the first batch"))
        if method == DSPARK:
            if names is None:
                checks.append(result(R_D_SPARK, SKIP, "not checked: tensor infos were not read"))
            elif "markov_w1.weight" in names:
                checks.append(result(R_D_SPARK, PASS, "markov_w1.weight present"))
            else:
                checks.append(result(R_D_SPARK, FAIL, "no markov_w1.weight: this is a DFlash head, not DSpark"))
    says = {"dflash_architecture": "GGML_ASSERT: DFlash model has no target_layer_ids",
            "dflash_keys": "error loading model hyperparameters: ...",
            "dflash_layer_range": "GGML_ASSERT(lid <= n_layer)"}
    block = draft.metadata.get(K.DFLASH_BLOCK_SIZE)
    step = [*llama_server_line(target, draft, f"--spec-type {method}"),
            f"The type is auto-detected from the head when --spec-type is not given; n-max is clamped to the "
            f"trained block size ({block or 16})."]
    return _report(method, target, draft, checks, [_warn_vocab(target, draft), _warn_other_model(target, draft)],
                   says, step)


def _check_width(rule: Rule, head: int | None, target: int | None, what: str, failure: str) -> Finding:
    """A head's width must equal the target's; nothing checks it at startup."""
    if head is None or target is None:
        return result(rule, SKIP, "not checked: an embedding_length is missing")
    if head != target:
        return result(rule, FAIL, f"head {what} {head}, target {target}: {failure}", head=head, target=target)
    return result(rule, PASS, f"{what} {head} on both sides")


def _embd_out(desc: ModelDescription) -> int | None:
    return _int(arch_value(desc, "embedding_length_out")) or _int(arch_value(desc, "embedding_length"))


def same_model(a: ModelDescription, b: ModelDescription) -> bool:
    return bool(a.resolved_path) and a.resolved_path == b.resolved_path


def evaluate_mtp(target: ModelDescription, draft: ModelDescription) -> Report:
    """draft-mtp: DRAFT may be the target itself (no -md) or a separate MTP head file."""
    separate = not same_model(target, draft)
    base = draft if separate else target
    arch = architecture(base)
    nextn = _int(arch_value(base, "nextn_predict_layers")) or 0
    checks: list[Finding] = []
    who = "the draft" if separate else "the target"
    if arch == "gemma4-assistant":
        checks.append(result(R_M_LAYERS, PASS, f"{who} is a Gemma 4 assistant (an MTP drafter)"))
    elif arch in ROUTER_LAYER_ARCHITECTURES:
        checks.append(result(R_M_LAYERS, FAIL, f"{who} ({arch}) uses its one nextn layer as a router layer, "
                             "not MTP (router_layer >= 0): llama-server exits with 'failed to create MTP "
                             "context'", architecture=arch))
    elif nextn <= 0:
        checks.append(result(R_M_LAYERS, FAIL, f"{who} ({arch or '?'}) has no MTP layers "
                             f"({arch}.nextn_predict_layers is {nextn or 'absent'}): llama-server exits with "
                             "'failed to create MTP context'", architecture=arch, nextn_predict_layers=nextn))
    elif arch not in MTP_ARCHITECTURES:
        checks.append(result(R_M_LAYERS, FAIL, f"{who} declares {nextn} MTP layer(s), but architecture {arch!r} "
                             "has no MTP-loading code in this version", architecture=arch))
    else:
        checks.append(result(R_M_LAYERS, PASS, f"{who} has {nextn} MTP layer(s)", nextn_predict_layers=nextn))
    if separate:
        checks.append(_check_width(
            R_M_WIDTH, _embd_out(draft), _embd_out(target), "row width",
            "'MTP input row width must match the target h_nextn width' (the process aborts)",
        ))
    else:
        checks.append(result(R_M_WIDTH, PASS, "the MTP context is built on the target itself"))
    if arch == "gemma4-assistant":
        e, e_out = _int(arch_value(base, "embedding_length")), _int(arch_value(base, "embedding_length_out"))
        if e_out is None or e_out == e:
            checks.append(result(R_M_ASSIST, FAIL, "embedding_length_out is missing or equals embedding_length: "
                                 "'Gemma 4 assistant requires embedding_length_out to carry the target hidden size'"))
        else:
            checks.append(result(R_M_ASSIST, PASS, f"embedding_length_out {e_out} (target hidden size)"))
    says = {"mtp_layers": "context type MTP requested but model doesn't contain MTP layers; failed to create "
            "MTP context (the server exits)",
            "mtp_width": "GGML_ASSERT: MTP input row width must match the target h_nextn width"}
    step = (llama_server_line(target, draft, "--spec-type draft-mtp") if separate else
            [*llama_server_line(target, None, "--spec-type draft-mtp"),
             "No -md: the target's own MTP layers draft."])
    warnings = [_warn_vocab(target, draft), _warn_other_model(target, draft)] if separate else []
    return _report(MTP, target, draft, checks, warnings, says, step)


def evaluate_ngram(target: ModelDescription, draft: ModelDescription, method: str) -> Report:
    checks = [result(R_NGRAM, PASS, f"{method} needs no draft model and no metadata")]
    report = Report(ENGINE, method, target, draft, checks, engine_version=T.REFERENCE_VERSION)
    report.next_steps += llama_server_line(target, None, NGRAM_FLAGS[method])
    return report


def evaluate_method(target: ModelDescription, draft: ModelDescription, method: str) -> Report:
    if method == EAGLE3:
        return evaluate_eagle3(target, draft)
    if method in (DFLASH, DSPARK):
        return evaluate_dflash(target, draft, method)
    if method == MTP:
        return evaluate_mtp(target, draft)
    if method in NGRAM_METHODS:
        return evaluate_ngram(target, draft, method)
    raise ValueError(f"not a llama.cpp method handled here: {method}")
