"""Reader side: a local Hugging Face folder as GGUF-style hyperparameters (what llama.cpp's
converter writes, for the keys the memory model reads) and tensor infos from the
safetensors headers (never the weights). Sized as llama.cpp would load a GGUF converted
at the folder's own dtypes."""

from __future__ import annotations

import json
import re
import struct
from pathlib import Path
from typing import Any

from paircheck._source.gguf_reader import GGUFMetadata, TensorInfo
from paircheck.errors import InputError

# config.json model_type -> llama.cpp architecture (convert_hf_to_gguf.py's choices)
ARCHS = {
    "llama": "llama", "mistral": "llama", "mixtral": "llama", "qwen2": "qwen2", "qwen3": "qwen3",
    "qwen2_moe": "qwen2moe", "qwen3_moe": "qwen3moe", "gemma": "gemma", "gemma2": "gemma2",
    "gemma3": "gemma3", "gemma3_text": "gemma3", "phi3": "phi3", "granite": "granite",
}  # fmt: skip
# safetensors dtype -> a ggml type of the same element size
DTYPES = {"F32": 0, "F16": 1, "BF16": 30, "F64": 28, "I64": 27, "I32": 26, "I16": 25, "I8": 24, "U8": 24,
          "F8_E4M3": 24, "F8_E5M2": 24, "BOOL": 24}  # fmt: skip
MAX_HEADER = 100 << 20
_RENAMES = [
    (re.compile(r"^(?:model\.)?layers\.(\d+)\."), r"blk.\1."),
    (re.compile(r"^(?:model\.)?embed_tokens\."), "token_embd."),
    (re.compile(r"^(?:model\.)?norm\."), "output_norm."),
    (re.compile(r"^lm_head\."), "output."),
]


def _gguf_name(name: str) -> str:
    """Only the part of the name that decides placement: layer N, input, output."""
    for pattern, repl in _RENAMES:
        if pattern.match(name):
            return pattern.sub(repl, name, count=1)
    return name


def _header(path: Path) -> dict[str, Any]:
    try:
        with open(path, "rb") as handle:
            raw = handle.read(8)
            if len(raw) < 8:
                raise InputError(str(path), "truncated safetensors file (no header length)")
            (size,) = struct.unpack("<Q", raw)
            if size > MAX_HEADER:
                raise InputError(str(path), f"safetensors header claims {size} bytes")
            header = json.loads(handle.read(size))
    except (OSError, ValueError) as exc:
        raise InputError(str(path), f"cannot read the safetensors header: {exc}") from None
    if not isinstance(header, dict):
        raise InputError(str(path), "safetensors header is not a JSON object")
    return header


def hf_tensors(folder: Path) -> list[TensorInfo]:
    files = sorted(folder.glob("*.safetensors"))
    if not files:
        raise InputError(str(folder), "no *.safetensors files: cannot size the weights")
    infos: list[TensorInfo] = []
    for path in files:
        for name, entry in _header(path).items():
            if name == "__metadata__" or not isinstance(entry, dict):
                continue
            dtype = DTYPES.get(str(entry.get("dtype")))
            shape = entry.get("shape")
            if dtype is None or not isinstance(shape, list) or not all(isinstance(d, int) and d >= 0 for d in shape):
                raise InputError(str(path), f"tensor {name!r}: unsupported dtype or shape")
            infos.append(TensorInfo(_gguf_name(name), tuple(reversed(shape)) or (1,), dtype, 0))
    return infos


def hf_metadata(folder: Path, base: GGUFMetadata) -> GGUFMetadata:
    """``base``'s keys plus the hyperparameters from config.json, with safetensors tensor infos."""
    try:
        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InputError(str(folder), f"cannot read config.json: {exc}") from None
    if isinstance(config.get("text_config"), dict):
        config = {**config, **config["text_config"]}
    arch = ARCHS.get(str(config.get("model_type")))
    if arch is None:
        raise InputError(
            str(folder), f"model_type {config.get('model_type')!r}: paircheck fit does not size it from config.json"
        )
    n_head = config.get("num_attention_heads")
    keys: dict[str, Any] = {
        "block_count": config.get("num_hidden_layers"),
        "embedding_length": config.get("hidden_size"),
        "feed_forward_length": config.get("intermediate_size"),
        "attention.head_count": n_head,
        "attention.head_count_kv": config.get("num_key_value_heads", n_head),
        "context_length": config.get("max_position_embeddings"),
        "vocab_size": config.get("vocab_size"),
        "expert_count": config.get("num_experts", config.get("num_local_experts")),
        "expert_used_count": config.get("num_experts_per_tok"),
        "expert_feed_forward_length": config.get("moe_intermediate_size"),
    }
    if config.get("head_dim"):
        keys["attention.key_length"] = keys["attention.value_length"] = config["head_dim"]
    if config.get("sliding_window") and config.get("use_sliding_window", True) is not False:
        keys["attention.sliding_window"] = config["sliding_window"]
        layer_types = config.get("layer_types")
        if isinstance(layer_types, list):
            keys["attention.sliding_window_pattern"] = [t == "sliding_attention" for t in layer_types]
    kv = dict(base.kv)
    kv["general.architecture"] = (8, arch)
    for key, value in keys.items():
        if value is not None:
            kv[f"{arch}.{key}"] = (4, value)
    meta = GGUFMetadata(version=base.version, byte_order="<", tensor_count=0, kv=kv, kv_end=0)
    meta.tensors = hf_tensors(folder)
    meta.tensor_count = len(meta.tensors)
    return meta
