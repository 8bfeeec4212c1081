"""Names every layer shares: GGUF keys and enums, speculative methods, engines.

This module imports nothing of paircheck and is imported by everything, so each name
has one spelling, defined here.

The GGUF names mirror ``gguf.Keys``, ``gguf.GGUFValueType`` and ``gguf.TokenType`` from
the gguf package. They are copied because ``import gguf`` loads numpy and costs about
100 ms, a third of paircheck's time budget; ``tests/test_constants.py`` checks them
against the package so the two cannot drift apart.
"""

from __future__ import annotations

from enum import IntEnum


class ValueType(IntEnum):
    UINT8 = 0
    INT8 = 1
    UINT16 = 2
    INT16 = 3
    UINT32 = 4
    INT32 = 5
    FLOAT32 = 6
    BOOL = 7
    STRING = 8
    ARRAY = 9
    UINT64 = 10
    INT64 = 11
    FLOAT64 = 12


# struct format and byte size of each fixed-size value type.
SCALAR_FORMATS: dict[int, tuple[str, int]] = {
    ValueType.UINT8: ("B", 1),
    ValueType.INT8: ("b", 1),
    ValueType.UINT16: ("H", 2),
    ValueType.INT16: ("h", 2),
    ValueType.UINT32: ("I", 4),
    ValueType.INT32: ("i", 4),
    ValueType.FLOAT32: ("f", 4),
    ValueType.BOOL: ("?", 1),
    ValueType.UINT64: ("Q", 8),
    ValueType.INT64: ("q", 8),
    ValueType.FLOAT64: ("d", 8),
}

# The short type names llama.cpp prints in "wrong type i32 but expected type u32".
LLAMA_TYPE_NAMES: dict[int, str] = {
    ValueType.UINT8: "u8",
    ValueType.INT8: "i8",
    ValueType.UINT16: "u16",
    ValueType.INT16: "i16",
    ValueType.UINT32: "u32",
    ValueType.INT32: "i32",
    ValueType.FLOAT32: "f32",
    ValueType.BOOL: "bool",
    ValueType.STRING: "str",
    ValueType.ARRAY: "arr",
    ValueType.UINT64: "u64",
    ValueType.INT64: "i64",
    ValueType.FLOAT64: "f64",
}

# general.*
ARCHITECTURE = "general.architecture"
NAME = "general.name"
BASENAME = "general.basename"
SIZE_LABEL = "general.size_label"
FINETUNE = "general.finetune"
ORGANIZATION = "general.organization"
REPO_URL = "general.repo_url"
SOURCE_REPO_URL = "general.source.repo_url"
BASE_MODEL_COUNT = "general.base_model.count"
BASE_MODEL_NAME = "general.base_model.{id}.name"
BASE_MODEL_REPO_URL = "general.base_model.{id}.repo_url"
BASE_MODEL_ORGANIZATION = "general.base_model.{id}.organization"
FILE_TYPE = "general.file_type"

# tokenizer.ggml.*
TOKENIZER_MODEL = "tokenizer.ggml.model"
TOKENIZER_PRE = "tokenizer.ggml.pre"
TOKENS = "tokenizer.ggml.tokens"
TOKEN_TYPE = "tokenizer.ggml.token_type"
SCORES = "tokenizer.ggml.scores"
MERGES = "tokenizer.ggml.merges"
BOS_ID = "tokenizer.ggml.bos_token_id"
EOS_ID = "tokenizer.ggml.eos_token_id"
EOT_ID = "tokenizer.ggml.eot_token_id"
EOM_ID = "tokenizer.ggml.eom_token_id"
UNK_ID = "tokenizer.ggml.unknown_token_id"
SEP_ID = "tokenizer.ggml.seperator_token_id"  # sic: the spelling llama.cpp uses
PAD_ID = "tokenizer.ggml.padding_token_id"
MASK_ID = "tokenizer.ggml.mask_token_id"
FIM_PRE_ID = "tokenizer.ggml.fim_pre_token_id"
FIM_SUF_ID = "tokenizer.ggml.fim_suf_token_id"
FIM_MID_ID = "tokenizer.ggml.fim_mid_token_id"
FIM_PAD_ID = "tokenizer.ggml.fim_pad_token_id"
FIM_REP_ID = "tokenizer.ggml.fim_rep_token_id"
FIM_SEP_ID = "tokenizer.ggml.fim_sep_token_id"
PREFIX_ID = "tokenizer.ggml.prefix_token_id"
SUFFIX_ID = "tokenizer.ggml.suffix_token_id"
MIDDLE_ID = "tokenizer.ggml.middle_token_id"
ADD_BOS = "tokenizer.ggml.add_bos_token"
ADD_EOS = "tokenizer.ggml.add_eos_token"
CHAT_TEMPLATE = "tokenizer.chat_template"

# {arch}.*
VOCAB_SIZE = "{arch}.vocab_size"
BLOCK_COUNT = "{arch}.block_count"
EMBEDDING_LENGTH = "{arch}.embedding_length"
CONTEXT_LENGTH = "{arch}.context_length"
NEXTN_PREDICT_LAYERS = "{arch}.nextn_predict_layers"

# Split GGUF files (gguf-split).
SPLIT_COUNT = "split.count"
SPLIT_NO = "split.no"
SPLIT_TENSORS_COUNT = "split.tensors.count"
ALIGNMENT = "general.alignment"
TOKEN_TYPE_COUNT = "tokenizer.ggml.token_type_count"
ADD_SEP = "tokenizer.ggml.add_sep_token"
CLS_ID = "tokenizer.ggml.cls_token_id"
ADD_SPACE_PREFIX = "tokenizer.ggml.add_space_prefix"
REMOVE_EXTRA_WHITESPACES = "tokenizer.ggml.remove_extra_whitespaces"
PRECOMPILED_CHARSMAP = "tokenizer.ggml.precompiled_charsmap"
SUPPRESS_TOKENS = "tokenizer.ggml.suppress_tokens"
NORMALIZER_LOWERCASE = "tokenizer.ggml.normalizer.lowercase"
NORMALIZER_STRIP_ACCENTS = "tokenizer.ggml.normalizer.strip_accents"
ADD_TOKEN = "tokenizer.ggml.add_{kind}_token"  # kind: bos, eos, sep, ...

# Speculative heads' own keys (llama.cpp's eagle3 and dflash architectures).
EAGLE3_TARGET_LAYERS = "eagle3.target_layers"
EAGLE3_TARGET_HIDDEN_SIZE = "eagle3.target_hidden_size"
EAGLE3_RMS_EPS = "eagle3.attention.layer_norm_rms_epsilon"
DFLASH_TARGET_LAYERS = "dflash.target_layers"
DFLASH_RMS_EPS = "dflash.attention.layer_norm_rms_epsilon"
DFLASH_HIDDEN_ACTIVATION = "dflash.hidden_activation"
DFLASH_CONV_KERNEL_SIZE = "dflash.conv_kernel_size"
DFLASH_CONV_GROUP_SIZE = "dflash.conv_group_size"
DFLASH_SELECTOR_RANK = "dflash.selector_rank"
DFLASH_SELECTOR_TOP_K = "dflash.selector_top_k"
DFLASH_BLOCK_SIZE = "dflash.block_size"


class TokenType(IntEnum):
    """gguf.TokenType: the per-token type stored in tokenizer.ggml.token_type."""

    NORMAL = 1
    UNKNOWN = 2
    CONTROL = 3
    USER_DEFINED = 4
    UNUSED = 5
    BYTE = 6


# --- Speculative methods -------------------------------------------------------------
# One canonical spelling per method: llama.cpp's --spec-type name where llama.cpp has the
# method, else the name the registry uses. Engines map these to their own names.
DRAFT_SIMPLE = "draft-simple"  # an independent small model sharing the target's vocabulary
DRAFT_EAGLE3 = "draft-eagle3"
DRAFT_MTP = "draft-mtp"
DRAFT_DFLASH = "draft-dflash"
DRAFT_DSPARK = "draft-dspark"
NGRAM_SIMPLE = "ngram-simple"
NGRAM_MAP_K = "ngram-map-k"
NGRAM_MAP_K4V = "ngram-map-k4v"
NGRAM_MOD = "ngram-mod"
NGRAM_CACHE = "ngram-cache"
EAGLE = "eagle"  # EAGLE-1/2 heads (no llama.cpp spec type)
MEDUSA = "medusa"
MLP_SPECULATOR = "mlp-speculator"
NGRAM = "ngram"  # model-free drafting in general (vLLM's ngram, prompt lookup)
SUFFIX = "suffix"
CROSS_VOCAB = "cross-vocab"  # a draft with another tokenizer, bridged by the engine

LLAMACPP_HEAD_METHODS = (DRAFT_EAGLE3, DRAFT_MTP, DRAFT_DFLASH, DRAFT_DSPARK)
LLAMACPP_NGRAM_METHODS = (NGRAM_SIMPLE, NGRAM_MAP_K, NGRAM_MAP_K4V, NGRAM_MOD, NGRAM_CACHE)
METHODS = (
    DRAFT_SIMPLE, *LLAMACPP_HEAD_METHODS, *LLAMACPP_NGRAM_METHODS,
    EAGLE, MEDUSA, MLP_SPECULATOR, NGRAM, SUFFIX, CROSS_VOCAB,
)
# Methods whose drafter is a head trained for one target (not an independent model).
HEAD_METHODS = frozenset({DRAFT_EAGLE3, DRAFT_MTP, DRAFT_DFLASH, DRAFT_DSPARK, EAGLE, MEDUSA, MLP_SPECULATOR})
# Methods that need no draft model at all.
DRAFTLESS_METHODS = frozenset({*LLAMACPP_NGRAM_METHODS, NGRAM, SUFFIX})

# Other spellings people and engines use, after lower-casing and "_" -> "-".
_METHOD_ALIASES = {
    "draft-model": DRAFT_SIMPLE,  # the registry's and vLLM's (draft_model) name
    "draft": DRAFT_SIMPLE,  # LM Studio, KoboldCpp
    "drafttarget": DRAFT_SIMPLE,  # TensorRT-LLM's DraftTarget
    "standalone": DRAFT_SIMPLE,  # SGLang's STANDALONE
    "eagle3": DRAFT_EAGLE3,
    "eagle-3": DRAFT_EAGLE3,
    "mtp": DRAFT_MTP,
    "dflash": DRAFT_DFLASH,
    "dspark": DRAFT_DSPARK,
    "mlpspeculator": MLP_SPECULATOR,
    "prompt-lookup": NGRAM,
}


def canonical_method(name: str) -> str | None:
    """The canonical spelling of a method name in any of its accepted spellings, or None."""
    key = name.strip().lower().replace("_", "-")
    if key in METHODS:
        return key
    return _METHOD_ALIASES.get(key)


def method_spellings() -> list[str]:
    """Every spelling canonical_method accepts (for help texts and shell completion)."""
    return sorted({*METHODS, *_METHOD_ALIASES})


# --- Engines -------------------------------------------------------------------------
# Engines paircheck has rules for (``--engine``), llama.cpp first: it is the default.
LLAMACPP = "llama.cpp"
RULE_ENGINES = ("llama.cpp", "lmstudio", "vllm", "transformers", "sglang", "koboldcpp", "ollama", "tensorrt-llm")
# Engines the registry may name (documented pairs run on more engines than paircheck models).
KNOWN_ENGINES = (
    *RULE_ENGINES, "localai", "text-generation-webui", "tensorrt-edge-llm", "tgi", "mlc-llm", "mlx-lm",
    "exllama", "tabbyapi", "research",
)
_ENGINE_ALIASES = {
    "llamacpp": LLAMACPP,
    "llama-cpp": LLAMACPP,
    "llama-server": LLAMACPP,
    "lm-studio": "lmstudio",
    "trt-llm": "tensorrt-llm",
    "trtllm": "tensorrt-llm",
    "tensorrt-llm": "tensorrt-llm",
    "hf": "transformers",
    "kobold": "koboldcpp",
}


def canonical_engine(name: str) -> str | None:
    """The canonical spelling of an engine name, or None when it is not known."""
    key = name.strip().lower().replace("_", "-")
    if key in KNOWN_ENGINES:
        return key
    return _ENGINE_ALIASES.get(key)


# --- ggml tensor types ------------------------------------------------------------------
# What the pinned ggml knows of tensor types (ggml/src/ggml.c type_traits, checked against
# libggml's ggml_type_name/ggml_blck_size/ggml_type_size by tests/_engine/test_loadable.py):
# type -> (name, elements per block, bytes per block). Removed types keep a block size of 0,
# which gguf_init_from_reader refuses.
GGML_TYPES: dict[int, tuple[str, int, int]] = {
    0: ("f32", 1, 4), 1: ("f16", 1, 2), 2: ("q4_0", 32, 18), 3: ("q4_1", 32, 20),
    4: ("DEPRECATED", 0, 0), 5: ("DEPRECATED", 0, 0), 6: ("q5_0", 32, 22), 7: ("q5_1", 32, 24),
    8: ("q8_0", 32, 34), 9: ("q8_1", 32, 36), 10: ("q2_K", 256, 84), 11: ("q3_K", 256, 110),
    12: ("q4_K", 256, 144), 13: ("q5_K", 256, 176), 14: ("q6_K", 256, 210), 15: ("q8_K", 256, 292),
    16: ("iq2_xxs", 256, 66), 17: ("iq2_xs", 256, 74), 18: ("iq3_xxs", 256, 98), 19: ("iq1_s", 256, 50),
    20: ("iq4_nl", 32, 18), 21: ("iq3_s", 256, 110), 22: ("iq2_s", 256, 82), 23: ("iq4_xs", 256, 136),
    24: ("i8", 1, 1), 25: ("i16", 1, 2), 26: ("i32", 1, 4), 27: ("i64", 1, 8), 28: ("f64", 1, 8),
    29: ("iq1_m", 256, 56), 30: ("bf16", 1, 2),
    31: ("TYPE_Q4_0_4_4 REMOVED, use Q4_0 with runtime repacking", 0, 0),
    32: ("TYPE_Q4_0_4_8 REMOVED, use Q4_0 with runtime repacking", 0, 0),
    33: ("TYPE_Q4_0_8_8 REMOVED, use Q4_0 with runtime repacking", 0, 0),
    34: ("tq1_0", 256, 54), 35: ("tq2_0", 256, 66),
    36: ("TYPE_IQ4_NL_4_4 REMOVED, use IQ4_NL with runtime repacking", 0, 0),
    37: ("TYPE_IQ4_NL_4_8 REMOVED, use IQ4_NL with runtime repacking", 0, 0),
    38: ("TYPE_IQ4_NL_8_8 REMOVED, use IQ4_NL with runtime repacking", 0, 0),
    39: ("mxfp4", 32, 17), 40: ("nvfp4", 64, 36), 41: ("q1_0", 128, 18), 42: ("q2_0", 64, 18),
}
GGML_TYPE_COUNT = 43

# An engine's answer for a pair (findings.Report.verdict), here at the bottom so that the exit
# codes (outcome.py) need not load the report classes. ABORTS: the engine accepts the pair
# when it loads, and paircheck predicts that the process aborts at run time (a warning whose
# details say ``aborts``, e.g. LW101: a real token one model has and the other lacks).
ACCEPTED, REFUSED, UNKNOWN, ABORTS = "accepted", "refused", "unknown", "aborts"
