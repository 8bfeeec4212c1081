"""Build Hugging Face model folders from the token data of real GGUF vocab files.

The Hub is not reachable from CI, so the tokenizer.json of Qwen2 (byte-level BPE) is
rebuilt from ggml-vocab-qwen2.gguf: its texts and merges are the HF ones (the converter
copies them verbatim), and the pre-tokenizer is Qwen2's published one. paircheck's
verdict on two such folders must equal its verdict on the GGUFs converted from them.
"""

from __future__ import annotations

import json
import struct
from pathlib import Path
from typing import Any

from paircheck._source.gguf_file import KEEP_ARRAYS
from paircheck._source.gguf_reader import FileSource, read_metadata

QWEN2_SPLIT = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)


def _gguf_tokens_and_merges(gguf: Path) -> tuple[list[str], list[int], list[str]]:
    with open(gguf, "rb") as handle:
        meta, _ = read_metadata(
            FileSource(gguf, handle), KEEP_ARRAYS | {"tokenizer.ggml.merges", "tokenizer.ggml.token_type"}
        )
    tokens = [t.decode("utf-8") for t in meta.get("tokenizer.ggml.tokens").values]
    types = meta.get("tokenizer.ggml.token_type").values
    merges = [m.decode("utf-8") for m in meta.get("tokenizer.ggml.merges").values]
    return tokens, types, merges


def _gguf_chat_template(gguf: Path) -> str | None:
    with open(gguf, "rb") as handle:
        meta, _ = read_metadata(FileSource(gguf, handle))
    value = meta.get("tokenizer.chat_template")
    return value if isinstance(value, str) else None


def build_qwen2_folder(gguf: Path, out: Path, vocab_size: int, name: str = "Qwen2.5-0.5B-Instruct",
                       chat_template: bool = True) -> Path:
    """A Qwen2-style folder: base vocab + special added tokens, config vocab_size as given, and
    the GGUF's chat template in tokenizer_config.json (where the converter took it from)
    unless ``chat_template`` is False (a base model's folder)."""
    tokens, types, merges = _gguf_tokens_and_merges(gguf)
    template = _gguf_chat_template(gguf) if chat_template else None
    vocab = {t: i for i, t in enumerate(tokens) if types[i] == 1}
    added = [
        {
            "id": i,
            "content": t,
            "single_word": False,
            "lstrip": False,
            "rstrip": False,
            "normalized": False,
            "special": True,
        }
        for i, t in enumerate(tokens)
        if types[i] == 3
    ]
    tokenizer = {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": added,
        "normalizer": {"type": "NFC"},
        "pre_tokenizer": {
            "type": "Sequence",
            "pretokenizers": [
                {"type": "Split", "pattern": {"Regex": QWEN2_SPLIT}, "behavior": "Isolated", "invert": False},
                {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False},
            ],
        },
        "post_processor": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False},
        "decoder": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False},
        "model": {
            "type": "BPE",
            "dropout": None,
            "unk_token": None,
            "continuing_subword_prefix": "",
            "end_of_word_suffix": "",
            "fuse_unk": False,
            "byte_fallback": False,
            "ignore_merges": False,
            "vocab": vocab,
            "merges": merges,
        },
    }
    out.mkdir(parents=True, exist_ok=True)
    (out / "tokenizer.json").write_text(json.dumps(tokenizer, ensure_ascii=False), encoding="utf-8")
    (out / "tokenizer_config.json").write_text(
        json.dumps(
            {
                "add_prefix_space": False,
                "added_tokens_decoder": {str(a["id"]): {k: v for k, v in a.items() if k != "id"} for a in added},
                "bos_token": None,
                "eos_token": "<|endoftext|>",
                "pad_token": "<|endoftext|>",
                "errors": "replace",
                "model_max_length": 32768,
                "tokenizer_class": "Qwen2Tokenizer",
                **({"chat_template": template} if template else {}),
            }
        ),
        encoding="utf-8",
    )
    (out / "config.json").write_text(
        json.dumps(
            {
                "architectures": ["Qwen2ForCausalLM"],
                "model_type": "qwen2",
                "bos_token_id": 151643,
                "eos_token_id": 151643,
                "vocab_size": vocab_size,
                "_name_or_path": name,
            }
        ),
        encoding="utf-8",
    )
    return out


# --- SentencePiece (llama), WordPiece (bert) and Unigram (t5) folders -----------------

CONTROL = 3


def gguf_vocab(gguf: Path) -> tuple[list[bytes], list[float] | None, list[int]]:
    """Token texts (bytes), scores (None when absent) and token types of a GGUF."""
    keep = KEEP_ARRAYS | {"tokenizer.ggml.token_type", "tokenizer.ggml.scores"}
    with open(gguf, "rb") as handle:
        meta, _ = read_metadata(FileSource(gguf, handle), keep)
    scores = meta.get("tokenizer.ggml.scores")
    return (
        list(meta.get("tokenizer.ggml.tokens").values),
        list(scores.values) if scores is not None else None,
        list(meta.get("tokenizer.ggml.token_type").values),
    )


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _field(number: int, wire: int, payload: bytes | int) -> bytes:
    key = _varint(number << 3 | wire)
    if wire == 0:
        return key + _varint(int(payload))
    if wire == 5:
        return key + bytes(payload)  # type: ignore[arg-type]
    return key + _varint(len(payload)) + payload  # type: ignore[arg-type]


def sentencepiece_model(pieces: list[tuple[bytes, float, int]], model_type: int = 2) -> bytes:
    """A SentencePiece ``ModelProto``: pieces (field 1: piece, score, type), trainer_spec
    (field 2: model_type = field 3; 1 UNIGRAM, 2 BPE) and a normalizer_spec (field 3)."""
    out = bytearray()
    for piece, score, ptype in pieces:
        body = _field(1, 2, piece) + _field(2, 5, struct.pack("<f", score))
        if ptype != 1:  # NORMAL is the proto default
            body += _field(3, 0, ptype)
        out += _field(1, 2, body)
    trainer = _field(3, 0, model_type) + _field(7, 2, b"llama")
    if any(ptype == 6 for _, _, ptype in pieces):
        # byte_fallback (TrainerSpec field 35): sentencepiece refuses to load BYTE pieces
        # without it, as convert_hf_to_gguf.py's SentencePieceProcessor does (Llama 2 sets it).
        trainer += _field(35, 0, 1)
    out += _field(2, 2, trainer)
    out += _field(3, 2, _field(1, 2, b"identity") + _field(3, 0, 1))  # name, add_dummy_prefix
    return bytes(out)


def build_llama_spm_folder(
    gguf: Path,
    out: Path,
    vocab_size: int = 32000,
    added_tokens_json: dict[str, int] | None = None,
    added_tokens_decoder: dict[int, dict[str, Any]] | None = None,
) -> Path:
    """A Llama-2-style folder: ``tokenizer.model`` rebuilt from ggml-vocab-llama-spm.gguf
    (its texts, scores and types are the SentencePiece ones), no tokenizer.json."""
    texts, scores, types = gguf_vocab(gguf)
    assert scores is not None
    out.mkdir(parents=True, exist_ok=True)
    (out / "tokenizer.model").write_bytes(sentencepiece_model(list(zip(texts, scores, types, strict=True))))
    decoder = {
        0: {"content": "<unk>", "special": True},
        1: {"content": "<s>", "special": True},
        2: {"content": "</s>", "special": True},
        **(added_tokens_decoder or {}),
    }
    (out / "tokenizer_config.json").write_text(
        json.dumps(
            {
                "add_bos_token": True,
                "add_eos_token": False,
                "added_tokens_decoder": {
                    str(i): {"lstrip": False, "normalized": False, "rstrip": False, "single_word": False, **d}
                    for i, d in decoder.items()
                },
                "bos_token": "<s>",
                "eos_token": "</s>",
                "unk_token": "<unk>",
                "pad_token": None,
                "legacy": False,
                "tokenizer_class": "LlamaTokenizer",
            }
        ),
        encoding="utf-8",
    )
    if added_tokens_json is not None:
        (out / "added_tokens.json").write_text(json.dumps(added_tokens_json), encoding="utf-8")
    (out / "config.json").write_text(
        json.dumps(
            {
                "architectures": ["LlamaForCausalLM"],
                "model_type": "llama",
                "bos_token_id": 1,
                "eos_token_id": 2,
                "vocab_size": vocab_size,
            }
        ),
        encoding="utf-8",
    )
    return out


def _added(i: int, content: str) -> dict[str, Any]:
    return {
        "id": i,
        "content": content,
        "single_word": False,
        "lstrip": False,
        "rstrip": False,
        "normalized": False,
        "special": True,
    }


def build_bert_folder(gguf: Path, out: Path) -> Path:
    """A bge-small-en-v1.5-style folder from ggml-vocab-bert-bge.gguf.

    The GGUF holds phantom-space texts; the HF WordPiece vocab is recovered by undoing
    them: CONTROL and ``[...]`` texts verbatim (the converter that wrote this GGUF kept
    bracketed tokens), ``\\u2581x`` -> ``x``, anything else was a ``##`` continuation.
    """
    texts, _, types = gguf_vocab(gguf)
    vocab: dict[str, int] = {}
    special: dict[str, int] = {}
    for i, (raw, ttype) in enumerate(zip(texts, types, strict=True)):
        text = raw.decode("utf-8")
        if ttype == CONTROL:
            special[text] = i
        elif not (text.startswith("[") and text.endswith("]")):
            text = text[1:] if text.startswith("\u2581") else "##" + text
        vocab[text] = i
    assert len(vocab) == len(texts), "phantom-space texts did not map back one to one"
    cls_sep = {name: {"id": name, "ids": [special[name]], "tokens": [name]} for name in ("[CLS]", "[SEP]")}
    tokenizer = {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [_added(i, t) for t, i in sorted(special.items(), key=lambda kv: kv[1])],
        "normalizer": {
            "type": "BertNormalizer",
            "clean_text": True,
            "handle_chinese_chars": True,
            "strip_accents": None,
            "lowercase": True,
        },
        "pre_tokenizer": {"type": "BertPreTokenizer"},
        "post_processor": {
            "type": "TemplateProcessing",
            "single": [
                {"SpecialToken": {"id": "[CLS]", "type_id": 0}},
                {"Sequence": {"id": "A", "type_id": 0}},
                {"SpecialToken": {"id": "[SEP]", "type_id": 0}},
            ],
            "pair": [
                {"SpecialToken": {"id": "[CLS]", "type_id": 0}},
                {"Sequence": {"id": "A", "type_id": 0}},
                {"SpecialToken": {"id": "[SEP]", "type_id": 0}},
                {"Sequence": {"id": "B", "type_id": 1}},
                {"SpecialToken": {"id": "[SEP]", "type_id": 1}},
            ],
            "special_tokens": cls_sep,
        },
        "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": True},
        "model": {
            "type": "WordPiece",
            "unk_token": "[UNK]",
            "continuing_subword_prefix": "##",
            "max_input_chars_per_word": 100,
            "vocab": vocab,
        },
    }
    out.mkdir(parents=True, exist_ok=True)
    (out / "tokenizer.json").write_text(json.dumps(tokenizer, ensure_ascii=False), encoding="utf-8")
    (out / "tokenizer_config.json").write_text(
        json.dumps(
            {
                "clean_up_tokenization_spaces": True,
                "cls_token": "[CLS]",
                "do_basic_tokenize": True,
                "do_lower_case": True,
                "mask_token": "[MASK]",
                "model_max_length": 512,
                "never_split": None,
                "pad_token": "[PAD]",
                "sep_token": "[SEP]",
                "strip_accents": None,
                "tokenize_chinese_chars": True,
                "tokenizer_class": "BertTokenizer",
                "unk_token": "[UNK]",
            }
        ),
        encoding="utf-8",
    )
    (out / "config.json").write_text(
        json.dumps(
            {
                "architectures": ["BertModel"],
                "model_type": "bert",
                "vocab_size": len(texts),
                "pad_token_id": 0,
                "type_vocab_size": 2,
            }
        ),
        encoding="utf-8",
    )
    return out


def build_xlmr_unigram_folder(gguf: Path, out: Path) -> Path:
    """An XLM-RoBERTa-style folder (tokenizer.json Unigram, no sentencepiece.bpe.model)
    from ggml-vocab-nomic-bert-moe.gguf: ids 0..250001 are the HF vocab (``<mask>`` last),
    the rest of the GGUF is the converter's padding."""
    texts, scores, types = gguf_vocab(gguf)
    assert scores is not None
    n_hf = texts.index(b"<mask>") + 1
    vocab = [[t.decode("utf-8"), 0.0 if types[i] == CONTROL else float(scores[i])] for i, t in enumerate(texts[:n_hf])]
    special = {"<s>": 0, "<pad>": 1, "</s>": 2, "<unk>": 3, "<mask>": n_hf - 1}
    tokenizer = {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [_added(i, t) for t, i in special.items()],
        "normalizer": {
            "type": "Sequence",
            "normalizers": [{"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": " "}],
        },
        "pre_tokenizer": {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always", "split": True},
        "post_processor": {
            "type": "RobertaProcessing",
            "sep": ["</s>", 2],
            "cls": ["<s>", 0],
            "trim_offsets": True,
            "add_prefix_space": True,
        },
        "decoder": {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always", "split": True},
        "model": {"type": "Unigram", "unk_id": 3, "vocab": vocab, "byte_fallback": False},
    }
    out.mkdir(parents=True, exist_ok=True)
    (out / "tokenizer.json").write_text(json.dumps(tokenizer, ensure_ascii=False), encoding="utf-8")
    (out / "tokenizer_config.json").write_text(
        json.dumps(
            {
                "bos_token": "<s>",
                "cls_token": "<s>",
                "eos_token": "</s>",
                "mask_token": "<mask>",
                "pad_token": "<pad>",
                "sep_token": "</s>",
                "unk_token": "<unk>",
                "model_max_length": 512,
                "tokenizer_class": "XLMRobertaTokenizer",
            }
        ),
        encoding="utf-8",
    )
    (out / "config.json").write_text(
        json.dumps(
            {
                "architectures": ["NomicBertModel"],
                "model_type": "nomic_bert",
                "vocab_size": len(texts),
                "bos_token_id": 0,
                "eos_token_id": 2,
                "pad_token_id": 1,
            }
        ),
        encoding="utf-8",
    )
    return out


def bpe_tokenizer_json(
    gguf: Path, pre_tokenizer: dict[str, Any] | None, normalizer: dict[str, Any] | None = None
) -> str:
    """A byte-level BPE tokenizer.json from a GGUF's texts and merges, with the given
    pre-tokenizer and normalizer: CONTROL/USER_DEFINED tokens become added tokens."""
    tokens, types, merges = _gguf_tokens_and_merges(gguf)
    return json.dumps(
        {
            "version": "1.0",
            "truncation": None,
            "padding": None,
            "added_tokens": [
                dict(_added(i, t), special=types[i] == CONTROL) for i, t in enumerate(tokens) if types[i] in (3, 4)
            ],
            "normalizer": normalizer,
            "pre_tokenizer": pre_tokenizer,
            "post_processor": {
                "type": "ByteLevel",
                "add_prefix_space": False,
                "trim_offsets": False,
                "use_regex": False,
            },
            "decoder": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False},
            "model": {
                "type": "BPE",
                "dropout": None,
                "unk_token": None,
                "continuing_subword_prefix": "",
                "end_of_word_suffix": "",
                "fuse_unk": False,
                "byte_fallback": False,
                "ignore_merges": False,
                "vocab": {t: i for i, t in enumerate(tokens) if types[i] not in (3, 4)},
                "merges": merges,
            },
        },
        ensure_ascii=False,
    )


# --- Folders for the converter differential test (tests/_source/test_converter_oracle.py) ---

LLAMA3_SPLIT = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}"
    r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)


def split_byte_level(regex: str) -> dict[str, Any]:
    """The pre-tokenizer of Llama 3 / Qwen2-style tokenizer.json: a regex split, then ByteLevel."""
    return {
        "type": "Sequence",
        "pretokenizers": [
            {"type": "Split", "pattern": {"Regex": regex}, "behavior": "Isolated", "invert": False},
            {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False},
        ],
    }


def build_bpe_folder(
    gguf: Path,
    out: Path,
    pre_tokenizer: dict[str, Any] | None,
    tokenizer_config: dict[str, Any],
    normalizer: dict[str, Any] | None = None,
) -> Path:
    """A byte-level BPE folder (tokenizer.json from :func:`bpe_tokenizer_json`), the given
    tokenizer_config.json and a placeholder config.json (see :func:`write_config`)."""
    out.mkdir(parents=True, exist_ok=True)
    (out / "tokenizer.json").write_text(bpe_tokenizer_json(gguf, pre_tokenizer, normalizer), encoding="utf-8")
    (out / "tokenizer_config.json").write_text(json.dumps(tokenizer_config), encoding="utf-8")
    (out / "config.json").write_text(json.dumps({}), encoding="utf-8")
    return out


def write_config(folder: Path, config: dict[str, Any]) -> Path:
    """Replace config.json: the same tokenizer files under another architecture."""
    (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
    return folder
