"""SGLang's rules, read from the released wheels on PyPI, 0.5.10 to 0.5.23.

What a draft goes through, in SGLang's order:

1. ``--speculative-algorithm`` is resolved from the draft's config
   (``_resolve_speculative_algorithm_alias``, server_args.py in 0.5.12, arg_groups/
   speculative_hook.py from 0.5.13): a Gemma 4 assistant under EAGLE or NEXTN is promoted
   to FROZEN_KV_MTP, under EAGLE3 it raises ValueError.
2. The draft worker builds its ``ModelConfig`` with ``is_draft_model=True``, and
   ``ModelConfig._config_draft_model`` rewrites ``architectures[0]`` of many families to
   their MTP/NextN class, for every algorithm, STANDALONE included: a Qwen3-MoE, Qwen3.5,
   DeepSeek-V3, GLM-4.5, MiMo or Nemotron-H "draft model" is loaded as an MTP module.
3. From 0.5.15, ``StandaloneWorkerV2._validate_vocab_compatibility`` compares the configs'
   padded ``vocab_size`` exactly (PR #23838). Its second check, the tokenizers' mappings,
   needs ``draft_tokenizer is not None``, but ``TpModelWorker.__init__`` (managers/
   tp_worker.py, 0.5.15 to 0.5.23) sets ``self.tokenizer = self.processor = None`` for a
   draft worker: the mapping check never runs, and a draft with other tokens and the same
   size starts and drafts other tokens.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from paircheck._engine.common import (
    EAGLE,
    EAGLE3,
    MODEL,
    MTP_HEAD,
    embedding_rows,
    kind_check,
    result,
)
from paircheck._engine.versions import VersionedEngine, VersionRange, ranges
from paircheck.findings import FAIL, PASS, RUNS_USELESS, SKIP, Finding, Report, Rule
from paircheck.model import ModelDescription

ENGINE = "sglang"

WHEEL = "sgl-project/sglang release {v} (PyPI wheel sglang-{v})"
CONFIG_PY = "python/sglang/srt/configs/model_config.py, ModelConfig._config_draft_model"
STANDALONE_PY = ("python/sglang/srt/speculative/standalone_worker_v2.py, "
                 "StandaloneWorkerV2._validate_vocab_compatibility (PR #23838)")
TP_WORKER_PY = "python/sglang/srt/managers/tp_worker.py, TpModelWorker.__init__"
HOOK_PY = "python/sglang/srt/arg_groups/speculative_hook.py, _resolve_speculative_algorithm_alias"


def _wheels(*versions: str) -> str:
    return " and ".join(WHEEL.format(v=v) for v in versions)


# Oldest first: (first release, where read, short citation, releases read). A boundary is
# a release where any of the tables below changed.
VERSIONS = ranges("SGLang", (
    (None, f"{_wheels('0.5.10')}: {CONFIG_PY}; no vocabulary check", "sglang 0.5.10 wheel", ("0.5.10",)),
    ("0.5.11", f"{_wheels('0.5.11')}: {CONFIG_PY} adds MiMoV2ForCausalLM and HYV3ForCausalLM",
     "sglang 0.5.11 wheel", ("0.5.11",)),
    ("0.5.12", f"{_wheels('0.5.12')}: {CONFIG_PY} adds DeepseekV32/DeepseekV4/InternS2Preview; server_args.py "
     "promotes a Gemma 4 assistant", "sglang 0.5.12 wheel", ("0.5.12",)),
    ("0.5.13", f"{_wheels('0.5.13', '0.5.14')}: {CONFIG_PY} adds Qwen3MoeForCausalLM, Step3p7, NemotronHPuzzle; "
     f"{HOOK_PY}", "sglang 0.5.13 and 0.5.14 wheels", ("0.5.13", "0.5.14")),
    ("0.5.15", f"{_wheels('0.5.15', '0.5.15.post1')}: {STANDALONE_PY}; {TP_WORKER_PY}",
     "sglang 0.5.15 wheel (PR #23838)", ("0.5.15", "0.5.15.post1")),
    ("0.5.16", f"{_wheels('0.5.16')}: {CONFIG_PY} adds Inkling, GlmMoeDsa's own NextN", "sglang 0.5.16 wheel",
     ("0.5.16",)),
    ("0.5.17", f"{_wheels('0.5.17')}: {CONFIG_PY} adds Qwen3_5ForCausalLM and Qwen3_5MoeForCausalLM",
     "sglang 0.5.17 wheel", ("0.5.17",)),
    ("0.5.18", f"{_wheels('0.5.18')}: {CONFIG_PY} adds InternS2Mobius", "sglang 0.5.18 wheel", ("0.5.18",)),
    ("0.5.19", f"{_wheels('0.5.19')}: {CONFIG_PY} adds dots3 and BailingMoeV3", "sglang 0.5.19 wheel", ("0.5.19",)),
    ("0.5.20", f"{_wheels('0.5.20')}: {CONFIG_PY} adds Glm5Next, Qwen4Exp, NemotronH Omni, HYV4",
     "sglang 0.5.20 wheel", ("0.5.20",)),
    ("0.5.21", f"{_wheels('0.5.21')}: {CONFIG_PY} adds GigaChat35", "sglang 0.5.21 wheel", ("0.5.21",)),
    ("0.5.22", f"{_wheels('0.5.22', '0.5.23')}: {CONFIG_PY} adds ExaoneMoeForCausalLM; {TP_WORKER_PY}; "
     f"{STANDALONE_PY}", "sglang 0.5.22 and 0.5.23 wheels", ("0.5.22", "0.5.23")),
))
NEWEST = VERSIONS[0]

# ModelConfig._config_draft_model: architectures[0] of a draft -> the class SGLang loads,
# with the first release read that rewrites it (None: already in 0.5.10, the oldest read)
# and, where a later release changed the target class, that release's.
REWRITES: Mapping[str, tuple[tuple[str | None, str], ...]] = {
    "DeepseekV3ForCausalLM": ((None, "DeepseekV3ForCausalLMNextN"),),
    "DeepseekV32ForCausalLM": (("0.5.12", "DeepseekV3ForCausalLMNextN"),),
    "DeepseekV4ForCausalLM": (("0.5.12", "DeepseekV4ForCausalLMNextN"),),
    "GlmMoeDsaForCausalLM": ((None, "DeepseekV3ForCausalLMNextN"), ("0.5.16", "GlmMoeDsaForCausalLMNextN")),
    "Glm4MoeForCausalLM": ((None, "Glm4MoeForCausalLMNextN"),),
    "Glm4MoeLiteForCausalLM": ((None, "Glm4MoeForCausalLMNextN"), ("0.5.13", "Glm4MoeLiteForCausalLMNextN")),
    "Glm5NextForConditionalGeneration": (("0.5.20", "Glm5NextForConditionalGenerationNextN"),),
    "GlmOcrForConditionalGeneration": ((None, "GlmOcrForConditionalGenerationNextN"),),
    "LongcatFlashForCausalLM": ((None, "LongcatFlashForCausalLMNextN"),),
    "MiMoForCausalLM": ((None, "MiMoMTP"),),
    "MiMoV2FlashForCausalLM": ((None, "MiMoV2MTP"),),
    "MiMoV2ForCausalLM": (("0.5.11", "MiMoV2MTP"),),
    "Step3p5ForCausalLM": ((None, "Step3p5MTP"),),
    "Step3p7ForConditionalGeneration": (("0.5.13", "Step3p5MTP"),),
    "InklingForConditionalGeneration": (("0.5.16", "InklingForConditionalGenerationMTP"),),
    "GigaChat35ForCausalLM": (("0.5.21", "GigaChat35ForCausalLMNextN"),),
    "BailingMoeForCausalLM": ((None, "BailingMoeForCausalLMNextN"),),
    "BailingMoeV2ForCausalLM": ((None, "BailingMoeForCausalLMNextN"),),
    "BailingMoeV2_5ForCausalLM": ((None, "BailingMoeForCausalLMNextN"),),
    "BailingMoeV3ForCausalLM": (("0.5.19", "BailingMoeForCausalLMNextN"),),
    "Ernie4_5_MoeForCausalLM": ((None, "Ernie4_5_MoeForCausalLMMTP"),),
    "Qwen3NextForCausalLM": ((None, "Qwen3NextForCausalLMMTP"),),
    "Qwen4ExpForConditionalGeneration": (("0.5.20", "Qwen4ExpForCausalLMMTP"),),
    "Qwen3MoeForCausalLM": (("0.5.13", "Qwen3MoeForCausalLMMTP"),),
    "Qwen3_5ForConditionalGeneration": ((None, "Qwen3_5ForCausalLMMTP"),),
    "Qwen3_5MoeForConditionalGeneration": ((None, "Qwen3_5ForCausalLMMTP"),),
    "Qwen3_5ForCausalLM": (("0.5.17", "Qwen3_5ForCausalLMMTP"),),
    "Qwen3_5MoeForCausalLM": (("0.5.17", "Qwen3_5ForCausalLMMTP"),),
    "InternS2PreviewForConditionalGeneration": (("0.5.12", "Qwen3_5ForCausalLMMTP"),),
    "InternS2MobiusForConditionalGeneration": (("0.5.18", "Qwen3_5ForCausalLMMTP"),),
    "ExaoneMoEForCausalLM": ((None, "ExaoneMoEForCausalLMMTP"),),
    "ExaoneMoeForCausalLM": (("0.5.22", "ExaoneMoEForCausalLMMTP"),),
    "NemotronHForCausalLM": ((None, "NemotronHForCausalLMMTP"),),
    "NemotronHPuzzleForCausalLM": (("0.5.13", "NemotronHForCausalLMMTP"),),
    "NemotronH_Omni_Reasoning_V3": (("0.5.20", "NemotronHForCausalLMMTP"),),
    "HYV3ForCausalLM": (("0.5.11", "HYV3ForCausalLMNextN"),),
    "HYV4ForCausalLM": (("0.5.20", "HYV4ForCausalLMNextN"),),
}
# isinstance(self.hf_text_config, Dots3Config) (model_type "dots3_note"), from 0.5.19.
DOTS3 = ("dots3_note", "0.5.19", "Dots3NoteForCausalLMNextN")
GEMMA4_ASSISTANTS = {"Gemma4AssistantForCausalLM": "0.5.12", "Gemma4UnifiedAssistantForCausalLM": "0.5.13"}

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
GEMMA4_EAGLE3_ERROR = ("Gemma4AssistantForCausalLM draft requires --speculative-algorithm NEXTN or EAGLE; EAGLE3 is "
                       "not supported for this draft architecture.")
DRAFT_TOKENIZER_LINE = "self.tokenizer = self.processor = None"

R_KIND = Rule(
    "SG001", "sglang_drafter_kind", "The draft fits the algorithm",
    "STANDALONE (--speculative-algorithm STANDALONE) loads the draft as its own model "
    "(StandaloneDraftWorker: own weights, own lm_head); EAGLE/EAGLE3 run a head that borrows the "
    "target's embedding and lm_head; EAGLE and NEXTN also run MTP drafters. A Gemma 4 assistant under EAGLE "
    "or NEXTN is promoted to FROZEN_KV_MTP ('promoting --speculative-algorithm ... to FROZEN_KV_MTP'), and "
    "under EAGLE3 raises ValueError: '" + GEMMA4_EAGLE3_ERROR + "' (from 0.5.12; Gemma4UnifiedAssistant from "
    "0.5.13). Source: " + _wheels("0.5.12", "0.5.23") + ", " + HOOK_PY + ".",
    "Choose the algorithm matching the drafter.",
)
R_SIZE = Rule(
    "SG002", "sglang_vocab_size", "Config vocab_size is equal (SGLang >= 0.5.15)",
    "StandaloneWorkerV2._validate_vocab_compatibility compares model_config.vocab_size of target and "
    "draft (the config's vocab_size, padding included) and raises ValueError: '" + SIZE_ERROR.format(t="...", d="...")
    + "'. Qwen2.5 7B+ (152064) with 0.5B-3B (151936) fails here although the tokenizer is the same. "
    "Source: " + _wheels("0.5.15", "0.5.23") + ", " + STANDALONE_PY + ". For a GGUF the rows are the "
    "token_embd tensor's.",
    "Use a draft with the same padded vocab_size, or SGLang < 0.5.15, or pad the draft's embedding and config.",
)
R_MAPPING = Rule(
    "SG003", "sglang_vocab_mapping", "The draft's tokens mean the target's (SGLang never checks)",
    "_validate_vocab_compatibility has a second check, target_tokenizer.get_vocab() != "
    "draft_tokenizer.get_vocab() raising '" + MAPPING_ERROR + "', but it runs only when 'draft_tokenizer is "
    "not None', and the draft worker never has one: " + TP_WORKER_PY + " sets '" + DRAFT_TOKENIZER_LINE
    + "' when 'skip_tokenizer_init or self.is_draft_worker' (0.5.15 to 0.5.23; 0.5.14 has no vocabulary check "
    "at all). So a draft of the same size with another tokenizer starts without any error, and every token it "
    "proposes means other text: almost nothing is accepted. paircheck compares the token texts itself. "
    "Source: " + _wheels("0.5.14", "0.5.15", "0.5.23") + ", " + TP_WORKER_PY + " and " + STANDALONE_PY + ".",
    "Use a draft of the same tokenizer family.",
    effect=RUNS_USELESS,
)
W_UNCHECKED = Rule(
    "SG101", "sglang_unchecked_vocab", "SGLang < 0.5.15 runs a mismatched draft silently (now SG003)",
    "Before PR #23838 (first released in 0.5.15) STANDALONE accepted any draft. paircheck no longer emits "
    "this warning: the same pair runs silently in every release read, because the tokenizer-mapping check "
    "added by PR #23838 never runs (SG003). Source: " + _wheels("0.5.14") + ".",
    "Use a draft of the same tokenizer family.",
    kind="warning",
)
R_REWRITE = Rule(
    "SG004", "sglang_draft_rewrite", "SGLang loads the draft as the model it is",
    "Every draft worker's ModelConfig runs _config_draft_model, whatever the algorithm (STANDALONE "
    "included), and it rewrites architectures[0] of these families to their MTP/NextN class: DeepSeek V3/"
    "V3.2/V4, GLM-4.5/4.5-Air/5-Next/OCR/MoE-DSA, MiMo and MiMoV2, Step 3.5/3.7, LongCat-Flash, Ling/Bailing, "
    "ERNIE 4.5 MoE, Qwen3-Next, Qwen3-MoE (from 0.5.13), Qwen3.5 (ForCausalLM from 0.5.17), Qwen4Exp, "
    "InternS2, EXAONE MoE, Nemotron-H, Hunyuan V3/V4, Inkling, GigaChat 3.5, dots3. Such a 'draft model' is "
    "loaded silently as the MTP module of its own checkpoint, not as the model: no error, and what drafts is "
    "not what you chose (for STANDALONE with an independent model of one of these families, use a family "
    "SGLang does not rewrite, or the target's own MTP with NEXTN). Source: "
    + _wheels(*(r.read[0] for r in reversed(VERSIONS))) + ", " + CONFIG_PY + ".",
    "Use a draft whose architecture SGLang does not rewrite, or run the family's MTP with "
    "--speculative-algorithm NEXTN.",
    effect=RUNS_USELESS,
)
RULES = (R_KIND, R_SIZE, R_MAPPING, W_UNCHECKED, R_REWRITE)


# standalone_worker_v2.py 'if target_vocab_size != draft_vocab_size:' (0.5.15 line 223; not in 0.5.14).
SIZE_CHECK_SINCE = "0.5.15"


def checks_vocab_size(version: VersionRange) -> bool:
    """Whether STANDALONE compares the configs' vocab_size at ``version`` (PR #23838)."""
    return version.reaches(SIZE_CHECK_SINCE)


def validate_vocab_compatibility(
    target_vocab_size: int, draft_vocab_size: int,
    target_vocab: Sequence[bytes] | None, draft_vocab: Sequence[bytes] | None,
) -> str | None:
    """SGLang's StandaloneWorkerV2._validate_vocab_compatibility (0.5.15): the ValueError text, or None.

    A vocabulary is the token texts in id order (what get_vocab() maps, inverted); None
    stands for a tokenizer that is absent or has no get_vocab(), which skips the mapping check.
    In a real draft worker the draft's is always None (see ``draft_tokenizer``).
    """
    if target_vocab_size != draft_vocab_size:
        return SIZE_ERROR.format(t=target_vocab_size, d=draft_vocab_size)
    if target_vocab is not None and draft_vocab is not None and list(target_vocab) != list(draft_vocab):
        return MAPPING_ERROR
    return None


def draft_tokenizer(version: VersionRange, draft_vocab: Sequence[bytes] | None) -> Sequence[bytes] | None:
    """The draft worker's tokenizer as TpModelWorker leaves it: None from 0.5.15 ('if
    skip_tokenizer_init or self.is_draft_worker: self.tokenizer = self.processor = None')."""
    return None if version.reaches("0.5.15") else draft_vocab


def draft_architecture(architectures: Sequence[str], model_type: str, version: VersionRange) -> str | None:
    """The class _config_draft_model loads for this draft at ``version``, when it rewrites it."""
    if model_type == DOTS3[0] and version.reaches(DOTS3[1]):
        return DOTS3[2]
    if not architectures:
        return None
    steps = REWRITES.get(architectures[0], ())
    rewritten = None
    for since, to in steps:
        if since is None or version.reaches(since):
            rewritten = to
    return rewritten


def tokenizer_vocab(desc: ModelDescription) -> Sequence[bytes] | None:
    """The texts get_vocab() would map: len(tokenizer) ids for a Hugging Face folder (the
    converted token list is padded beyond them), every token of a GGUF."""
    texts = desc.vocab.texts
    if not texts:
        return None
    if desc.hf is not None and desc.hf.tokenizer_len is not None:
        return texts[: desc.hf.tokenizer_len]
    return texts


def _config(desc: ModelDescription) -> tuple[tuple[str, ...], str]:
    if desc.hf is None:
        return (), ""
    model_type = (desc.config or {}).get("model_type")
    return tuple(desc.hf.architectures), str(model_type or desc.hf.model_type or "")


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


def _mapping_check(target: ModelDescription, draft: ModelDescription, version: VersionRange) -> Finding:
    tv, dv = tokenizer_vocab(target), tokenizer_vocab(draft)
    if tv is None or dv is None:
        return result(R_MAPPING, SKIP, "not checked: a side has no token texts")
    # SGLang itself never compares them: from 0.5.15 the draft worker's tokenizer is None
    # (draft_tokenizer), and 0.5.14 has no check. paircheck compares the texts instead.
    if list(tv) == list(dv):
        return result(R_MAPPING, PASS, f"{len(tv)} tokens map to the same ids", compared=len(tv))
    starts = "SGLang starts without an error (its mapping check never runs: the draft worker has no tokenizer)" \
        if version.reaches("0.5.15") else "this SGLang has no vocabulary check and starts without an error"
    if len(tv) != len(dv):
        return result(R_MAPPING, FAIL, f"the tokenizers have {len(tv)} and {len(dv)} tokens; {starts}")
    first = next(i for i, (a, b) in enumerate(zip(tv, dv, strict=True)) if a != b)
    return result(R_MAPPING, FAIL, f"token {first} differs: target {tv[first]!r}, draft {dv[first]!r}; {starts} "
                  "and drafts other tokens", first_id=first)


def _rewrite_check(draft: ModelDescription, version: VersionRange) -> Finding | None:
    archs, model_type = _config(draft)
    loaded = draft_architecture(archs, model_type, version)
    if loaded is None:
        return None
    shown = archs[0] if archs else model_type
    return result(R_REWRITE, FAIL, f"SGLang loads this draft ({shown}) as {loaded}: ModelConfig._config_draft_model "
                  "rewrites it for every draft worker, so the draft's MTP module runs, not the model",
                  loaded_as=loaded)


def _report(method: str, target: ModelDescription, draft: ModelDescription, checks: list[Finding],
            says: str | None = None) -> Report:
    report = Report(ENGINE, method, target, draft, checks)
    first = report.first_failure
    if first is not None:
        report.engine_says = str(first.details.get("engine_says") or says or "") or None
    return report


def standalone(target: ModelDescription, draft: ModelDescription, method: str, version: VersionRange) -> Report:
    checks = [kind_check(R_KIND, draft, (MODEL,), "STANDALONE runs it as a standalone model;", "use EAGLE3")]
    # SGLang's order: the draft's ModelConfig (and its rewrite), then the vocabulary check.
    rewrite = _rewrite_check(draft, version)
    if rewrite is not None:
        checks.append(rewrite)
    if checks_vocab_size(version):
        checks.append(_size_check(target, draft))
        # SGLang raises at the first failure; the mapping only matters when the sizes agree.
        if checks[-1].status != FAIL:
            checks.append(_mapping_check(target, draft, version))
    else:
        checks.append(_mapping_check(target, draft, version))
    report = _report(method, target, draft, checks)
    if report.compatible:
        report.next_steps.append("python -m sglang.launch_server --model-path TARGET --speculative-algorithm "
                                 "STANDALONE --speculative-draft-model-path DRAFT")
    return report


def _gemma4_assistant(draft: ModelDescription, version: VersionRange) -> str | None:
    archs, _ = _config(draft)
    for arch in archs:
        since = GEMMA4_ASSISTANTS.get(arch)
        if since is not None and version.reaches(since):
            return arch
    return None


def head(target: ModelDescription, draft: ModelDescription, method: str, version: VersionRange) -> Report:
    gemma = _gemma4_assistant(draft, version)
    if gemma is not None and method == "EAGLE3":
        check = result(R_KIND, FAIL, f"a Gemma 4 assistant ({gemma}) under EAGLE3 raises ValueError",
                       engine_says=GEMMA4_EAGLE3_ERROR)
        return _report(method, target, draft, [check])
    if gemma is not None:
        check = result(R_KIND, PASS, f"a Gemma 4 assistant: SGLang promotes {method} to FROZEN_KV_MTP",
                       runs_as="FROZEN_KV_MTP")
        return _report(method, target, draft, [check])
    allowed = (EAGLE3,) if method == "EAGLE3" else (EAGLE, EAGLE3, MTP_HEAD)
    needs = "an EAGLE-3 head" if method == "EAGLE3" else "an EAGLE or MTP head"
    checks = [kind_check(R_KIND, draft, allowed, f"{method} needs {needs};", "use STANDALONE")]
    return _report(method, target, draft, checks)


def ngram(target: ModelDescription, draft: ModelDescription, method: str, version: VersionRange) -> Report:
    checks = [result(R_KIND, PASS, "NGRAM needs no draft (CUDA only)")]
    return Report(ENGINE, method, target, draft, checks)


ENGINE_OBJ = VersionedEngine(
    ENGINE, ("STANDALONE", "EAGLE", "EAGLE3", "NEXTN", "NGRAM"), "STANDALONE", RULES,
    {"STANDALONE": standalone, "EAGLE": head, "EAGLE3": head, "NEXTN": head, "NGRAM": ngram}, VERSIONS,
    {"draft-simple": "STANDALONE", "draft-eagle3": "EAGLE3", "draft-mtp": "NEXTN", "ngram-mod": "NGRAM",
     "ngram-simple": "NGRAM"},
)
