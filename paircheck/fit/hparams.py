"""The hyperparameters llama.cpp sizes memory from, read from GGUF keys as its loader does.

Source of truth: llama.cpp at the pinned version (llama-cpp-python 0.3.36 vendor tree),
``src/llama-model.cpp`` (``load_hparams``: head counts, key/value lengths and their
defaults), ``src/llama-hparams.cpp`` (``n_embd_k_gqa``, ``n_embd_r``, ``n_embd_s``,
``set_swa_pattern``, ``has_kv``) and the per-architecture ``src/models/*.cpp``
(``load_swa_pattern(ml, N)`` defaults, which layers are recurrent).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from paircheck.errors import InputError

# Default sliding-window pattern per architecture when the GGUF has no
# ``<arch>.attention.sliding_window_pattern``: (period, dense_first), from each
# src/models/<arch>.cpp ``load_swa_pattern(ml, N[, dense_first])``.
SWA_PATTERNS: dict[str, tuple[int, bool]] = {
    "gemma2": (2, False),
    "gemma3": (6, False),
    "gemma3n": (5, False),
    "gemma-embedding": (6, False),
    "cohere2": (4, False),
    "cohere2moe": (4, True),
    "exaone4": (4, False),
    "exaone-moe": (4, False),
    "afmoe": (4, False),
    "llama4": (4, False),
    "olmo2": (4, False),
    "gpt-oss": (2, False),
    "plamo3": (8, False),
    "smallthinker": (4, True),
    "mellum": (4, False),
    "laguna": (4, True),
    "phi3": (1, False),
}

# llm_arch_is_recurrent (src/llama-arch.cpp): the whole model is a recurrent state.
RECURRENT_ARCHS = frozenset({"mamba", "mamba2", "rwkv6", "rwkv6qwen2", "rwkv7", "arwkv7"})
# llm_arch_is_hybrid: some layers attend (KV cache), some carry a recurrent state.
HYBRID_ARCHS = frozenset(
    {
        "jamba", "falcon-h1", "plamo2", "granitehybrid", "lfm2", "lfm2moe", "nemotron_h", "nemotron_h_moe",
        "qwen3next", "kimi-linear", "qwen35", "qwen35moe",
    }
)  # fmt: skip


@dataclass(frozen=True)
class Hparams:
    """What the memory model needs, per layer where llama.cpp allows per-layer values."""

    arch: str
    n_layer_all: int  # block_count (trunk + NextN/MTP layers)
    n_layer: int  # trunk layers (block_count - nextn_predict_layers)
    n_embd: int
    n_vocab: int
    n_ctx_train: int
    n_head: tuple[int, ...]
    n_head_kv: tuple[int, ...]
    head_k: int
    head_v: int
    head_k_swa: int
    head_v_swa: int
    n_swa: int
    is_swa: tuple[bool, ...]
    is_recr: tuple[bool, ...]
    is_mla: bool
    n_layer_kv_from_start: int  # -1: every layer has its own KV (gemma3n shares the rest)
    n_embd_r: int  # recurrent conv/shift state per sequence per layer (f32 values)
    n_embd_s: int  # recurrent ssm/wkv state per sequence per layer (f32 values)
    n_ff: tuple[int, ...]
    n_expert: int
    n_expert_used: int
    n_ff_exp: int  # one expert's FFN width

    def n_embd_k_gqa(self, il: int) -> int:
        return (self.head_k_swa if self.is_swa[il] else self.head_k) * self.n_head_kv[il]

    def n_embd_v_gqa(self, il: int) -> int:
        return (self.head_v_swa if self.is_swa[il] else self.head_v) * self.n_head_kv[il]

    @property
    def swa_any(self) -> bool:
        return self.n_swa > 0 and any(self.is_swa[: self.n_layer])

    @property
    def recurrent(self) -> bool:
        return self.arch in RECURRENT_ARCHS

    @property
    def hybrid(self) -> bool:
        return self.arch in HYBRID_ARCHS


def _unwrap(value: Any) -> Any:
    """A GGUF array as its list of values (the reader keeps short arrays in full)."""
    if hasattr(value, "elem_type") and hasattr(value, "values"):
        if value.values is None:
            raise InputError("metadata", f"a per-layer array of {value.count} values is too long")
        return list(value.values)
    return value


def _per_layer(value: Any, n: int, default: int) -> tuple[int, ...]:
    """``get_key_or_arr``: a scalar broadcast to every layer, or one value per layer."""
    value = _unwrap(value)
    if value is None:
        return (default,) * n
    if isinstance(value, Sequence) and not isinstance(value, (str, bytes)):
        values = [int(v) for v in value]
        if len(values) < n:
            raise InputError("metadata", f"per-layer array has {len(values)} values for {n} layers")
        return tuple(values[:n])
    return (int(value),) * n


def _swa_flags(meta: Any, arch: str, n_layer: int, n_layer_all: int) -> tuple[bool, ...]:
    """``load_swa_pattern``: a per-layer bool array, or a period (the arch default if absent)."""
    raw = _unwrap(meta.get(f"{arch}.attention.sliding_window_pattern"))
    if isinstance(raw, Sequence) and not isinstance(raw, (str, bytes)):
        flags = [bool(v) for v in raw][:n_layer_all]
        return tuple(flags + [False] * (n_layer_all - len(flags)))
    period, dense_first = SWA_PATTERNS.get(arch, (0, False))
    if raw is not None:
        period = int(raw)
    if period == 0:
        # set_swa_pattern(0): every trunk layer is SWA; but without an arch default llama.cpp
        # uses no SWA at all, which the caller expresses with n_swa = 0.
        return tuple(il < n_layer for il in range(n_layer_all))
    if dense_first:
        flags = [il % period != 0 for il in range(n_layer)]
    else:
        flags = [il % period < period - 1 for il in range(n_layer)]
    return tuple(flags + [False] * (n_layer_all - n_layer))


def _vocab_rows(meta: Any, arch: str) -> int:
    for info in meta.tensors or ():
        if info.name == "token_embd.weight" and len(info.shape) >= 2:
            return int(info.shape[1])
    size = meta.get(f"{arch}.vocab_size")
    if size is not None:
        return int(size)
    tokens = meta.get("tokenizer.ggml.tokens")
    count = getattr(tokens, "count", None)
    if isinstance(count, int):
        return count
    return len(tokens) if isinstance(tokens, Sequence) else 0


def read_hparams(meta: Any) -> Hparams:
    """Hyperparameters from a GGUF's keys (``meta.get``), with llama.cpp's defaults."""
    arch = meta.get("general.architecture")
    if not isinstance(arch, str) or not arch:
        raise InputError("metadata", "no general.architecture: cannot size memory")

    def key(name: str, default: Any = None) -> Any:
        return meta.get(f"{arch}.{name}", default)

    n_layer_all = key("block_count")
    n_embd = key("embedding_length")
    if not isinstance(n_layer_all, int) or not isinstance(n_embd, int) or n_layer_all <= 0:
        raise InputError("metadata", f"{arch}: block_count and embedding_length are required to size memory")
    nextn = int(key("nextn_predict_layers", 0) or 0)
    n_layer = n_layer_all - nextn
    n_head = _per_layer(key("attention.head_count"), n_layer_all, 0)
    # n_head_kv defaults to n_head, layer by layer
    raw_kv = key("attention.head_count_kv")
    n_head_kv = n_head if raw_kv is None else _per_layer(raw_kv, n_layer_all, 0)
    head0 = n_head[0] if n_head else 0
    head_k = int(key("attention.key_length", n_embd // head0 if head0 else 0))
    head_v = int(key("attention.value_length", n_embd // head0 if head0 else 0))
    head_k_swa = int(key("attention.key_length_swa", head_k))
    head_v_swa = int(key("attention.value_length_swa", head_v))

    n_swa = int(key("attention.sliding_window", 0) or 0)
    if n_swa > 0 and (arch in SWA_PATTERNS or key("attention.sliding_window_pattern") is not None):
        is_swa = _swa_flags(meta, arch, n_layer, n_layer_all)
    else:
        n_swa = 0
        is_swa = (False,) * n_layer_all

    is_mla = bool(key("attention.key_length_mla")) and bool(key("attention.value_length_mla"))

    recr_layers = _unwrap(key("attention.recurrent_layers"))
    if isinstance(recr_layers, Sequence) and not isinstance(recr_layers, (str, bytes)):
        flags = [bool(v) for v in recr_layers][:n_layer_all]
        is_recr = tuple(flags + [False] * (n_layer_all - len(flags)))
    elif arch in ("qwen3next", "qwen35", "qwen35moe"):
        # src/models/qwen3next.cpp: every full_attention_interval-th layer attends (default 4)
        interval = int(key("full_attention_interval", 4) or 4)
        is_recr = tuple(il < n_layer and (il + 1) % interval != 0 for il in range(n_layer_all))
    elif arch in HYBRID_ARCHS and arch != "falcon-h1":
        # granitehybrid, jamba, nemotron_h, lfm2...: a layer is recurrent iff it has no KV heads
        is_recr = tuple(n_head_kv[il] == 0 for il in range(n_layer_all))
    elif arch in RECURRENT_ARCHS or arch == "falcon-h1":
        is_recr = (True,) * n_layer_all
    else:
        is_recr = (False,) * n_layer_all

    n_embd_r, n_embd_s = _recurrent_widths(meta, arch, n_embd, head0)
    n_ff = _per_layer(key("feed_forward_length"), n_layer_all, 0)
    return Hparams(
        arch=arch,
        n_layer_all=n_layer_all,
        n_layer=n_layer,
        n_embd=n_embd,
        n_vocab=_vocab_rows(meta, arch),
        n_ctx_train=int(key("context_length", 0) or 0),
        n_head=n_head,
        n_head_kv=n_head_kv,
        head_k=head_k,
        head_v=head_v,
        head_k_swa=head_k_swa,
        head_v_swa=head_v_swa,
        n_swa=n_swa,
        is_swa=is_swa,
        is_recr=is_recr,
        is_mla=is_mla,
        # src/models/gemma3n.cpp hard-codes it: layers from 20 on reuse earlier layers' KV
        n_layer_kv_from_start=20 if arch == "gemma3n" else -1,
        n_embd_r=n_embd_r,
        n_embd_s=n_embd_s,
        n_ff=n_ff,
        n_expert=int(key("expert_count", 0) or 0),
        n_expert_used=int(key("expert_used_count", 0) or 0),
        n_ff_exp=int(key("expert_feed_forward_length", 0) or 0),
    )


def _recurrent_widths(meta: Any, arch: str, n_embd: int, n_head: int) -> tuple[int, int]:
    """``llama_hparams::n_embd_r`` and ``n_embd_s`` (values per sequence per recurrent layer)."""

    def key(name: str) -> int:
        return int(meta.get(f"{arch}.{name}", 0) or 0)

    wkv = key("wkv.head_size")
    if wkv:  # RWKV
        return key("token_shift_count") * n_embd or 2 * n_embd, n_embd * wkv
    l_cache = key("shortconv.l_cache")
    if l_cache:  # LFM2
        return n_embd * (l_cache - 1), 0
    d_conv = key("ssm.conv_kernel")
    d_inner = key("ssm.inner_size")
    d_state = key("ssm.state_size")
    n_group = key("ssm.group_count")
    n_conv = (d_conv - 1 if d_conv > 0 else 0) * (d_inner + 2 * n_group * d_state)
    return n_conv, d_state * d_inner
