"""Build Hugging Face model folders from the token data of real GGUF vocab files.

The Hub is not reachable from CI, so the tokenizer.json of Qwen2 (byte-level BPE) is
rebuilt from ggml-vocab-qwen2.gguf: its texts and merges are the HF ones (the converter
copies them verbatim), and the pre-tokenizer is Qwen2's published one. paircheck's
verdict on two such folders must equal its verdict on the GGUFs converted from them.
"""

from __future__ import annotations

import json
from pathlib import Path

from paircheck._source.gguf_file import KEEP_ARRAYS
from paircheck._source.gguf_reader import FileSource, read_metadata

QWEN2_SPLIT = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)


def _gguf_tokens_and_merges(gguf: Path) -> tuple[list[str], list[int], list[str]]:
    with open(gguf, "rb") as handle:
        meta, _ = read_metadata(FileSource(gguf, handle), KEEP_ARRAYS | {"tokenizer.ggml.merges", "tokenizer.ggml.token_type"})
    tokens = [t.decode("utf-8") for t in meta.get("tokenizer.ggml.tokens").values]
    types = meta.get("tokenizer.ggml.token_type").values
    merges = [m.decode("utf-8") for m in meta.get("tokenizer.ggml.merges").values]
    return tokens, types, merges


def build_qwen2_folder(gguf: Path, out: Path, vocab_size: int, name: str = "Qwen2.5-0.5B-Instruct") -> Path:
    """A Qwen2-style folder: base vocab + special added tokens, config vocab_size as given."""
    tokens, types, merges = _gguf_tokens_and_merges(gguf)
    vocab = {t: i for i, t in enumerate(tokens) if types[i] == 1}
    added = [
        {"id": i, "content": t, "single_word": False, "lstrip": False, "rstrip": False, "normalized": False, "special": True}
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
            "type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": "",
            "end_of_word_suffix": "", "fuse_unk": False, "byte_fallback": False, "ignore_merges": False,
            "vocab": vocab, "merges": merges,
        },
    }
    out.mkdir(parents=True, exist_ok=True)
    (out / "tokenizer.json").write_text(json.dumps(tokenizer, ensure_ascii=False), encoding="utf-8")
    (out / "tokenizer_config.json").write_text(json.dumps({
        "add_prefix_space": False,
        "added_tokens_decoder": {str(a["id"]): {k: v for k, v in a.items() if k != "id"} for a in added},
        "bos_token": None,
        "eos_token": "<|endoftext|>",
        "pad_token": "<|endoftext|>",
        "errors": "replace",
        "model_max_length": 32768,
        "tokenizer_class": "Qwen2Tokenizer",
    }), encoding="utf-8")
    (out / "config.json").write_text(json.dumps({
        "architectures": ["Qwen2ForCausalLM"],
        "model_type": "qwen2",
        "bos_token_id": 151643,
        "eos_token_id": 151643,
        "vocab_size": vocab_size,
        "_name_or_path": name,
    }), encoding="utf-8")
    return out
