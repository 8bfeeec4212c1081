"""A Hugging Face folder as GGUF-style hyperparameters: what llama.cpp's converter writes
from config.json, for the keys the memory model reads. With the tensor infos of its
safetensors headers (read by the source axis), the folder is sized as llama.cpp would
load a GGUF converted at the folder's own dtypes."""

from __future__ import annotations

from typing import Any

from paircheck.errors import InputError
from paircheck.model import GGUFMetadata
from paircheck.weights import config_expert_counts

# config.json model_type -> llama.cpp architecture (convert_hf_to_gguf.py's choices)
ARCHS = {
    "llama": "llama", "mistral": "llama", "mixtral": "llama", "qwen2": "qwen2", "qwen3": "qwen3",
    "qwen2_moe": "qwen2moe", "qwen3_moe": "qwen3moe", "gemma": "gemma", "gemma2": "gemma2",
    "gemma3": "gemma3", "gemma3_text": "gemma3", "phi3": "phi3", "granite": "granite",
}  # fmt: skip


def hf_hparams(config: dict[str, Any], base: GGUFMetadata, where: str) -> GGUFMetadata:
    """``base``'s keys plus the hyperparameters from ``config``; an InputError for a
    model type the memory model does not size."""
    if isinstance(config.get("text_config"), dict):
        config = {**config, **config["text_config"]}
    arch = ARCHS.get(str(config.get("model_type")))
    if arch is None:
        model_type = config.get("model_type")
        raise InputError(where, f"model_type {model_type!r}: paircheck fit does not size it from config.json")
    n_head = config.get("num_attention_heads")
    experts, experts_used = config_expert_counts(config)
    keys: dict[str, Any] = {
        "block_count": config.get("num_hidden_layers"),
        "embedding_length": config.get("hidden_size"),
        "feed_forward_length": config.get("intermediate_size"),
        "attention.head_count": n_head,
        "attention.head_count_kv": config.get("num_key_value_heads", n_head),
        "context_length": config.get("max_position_embeddings"),
        "vocab_size": config.get("vocab_size"),
        "expert_count": experts,
        "expert_used_count": experts_used,
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
    return GGUFMetadata(version=base.version, byte_order="<", tensor_count=0, kv=kv, kv_end=0)
