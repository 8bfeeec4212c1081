"""The GGUF key names and value type ids that paircheck reads.

These mirror ``gguf.Keys`` and ``gguf.GGUFValueType`` from the gguf package. They are
copied here because ``import gguf`` loads numpy and costs about 100 ms, a third of
paircheck's time budget; ``tests/test_gguf_keys.py`` checks this table against the
package so the two cannot drift apart.
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
