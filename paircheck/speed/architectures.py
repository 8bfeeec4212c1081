"""The published architectures of the models in the speed points, as llama.cpp lays them out:
each model's tensors (names and shapes of the pinned llama.cpp's loader for its
architecture), their types at a quantization as llama-quantize picks them, and so the bytes
one evaluation reads (``speed.roofline.Shape``) exactly as ``estimate`` reads them from a GGUF
of that model: ``weights.weight_bytes`` on the same tensor list, the KV cache from the same
hyperparameters. A published point is then predicted on the shapes a user's own file of
those models has, not on a parameter count times bits per weight, and
``tests/speed/test_points_cli.py`` writes each point's two models as header-only GGUFs from
these tables and gets the docs' figures from ``paircheck estimate``.

The hyperparameters are each model's published config.json (``source``). The quantization
mixes follow llama.cpp's ``llama_tensor_get_type`` for the types the points name: the output
head (a tied embedding table is one) at Q6_K (Q8_0 and float files keep their type), and for
the K-quant mixes ``attn_v`` and
``ffn_down`` one step up on the layers ``use_more_bits`` picks; a row length a K-quant block
does not divide falls back as llama.cpp does (Q4_K to Q5_0, Q5_K to Q5_1, Q6_K to Q8_0, the
others to IQ4_NL).
MLX's n-bit formats are groups of 64 with a float16 scale and bias: 4-bit stores 4.5 bits a
weight, as Q4_0 does, and 8-bit 8.5, as Q8_0; they are written as those types.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from paircheck.speed.roofline import Shape
from paircheck.weights import weight_bytes

F16_BYTES = 2


@dataclass(frozen=True)
class Arch:
    """One model's architecture (config.json), in llama.cpp's terms."""

    name: str
    arch: str  # llama.cpp's architecture: llama, qwen2, qwen3, qwen3moe
    n_embd: int
    n_layer: int
    n_head: int
    n_kv: int
    head_dim: int
    n_ff: int
    n_vocab: int
    tied: bool
    source: str
    bias: bool = False  # q, k, v biases (qwen2)
    qk_norm: bool = False  # per-head q and k norms (qwen3)
    experts: int = 0
    experts_used: int = 0
    n_ff_exp: int = 0

    def keys(self) -> dict[str, object]:
        """The GGUF keys (without the architecture prefix) llama.cpp reads the shape from."""
        keys: dict[str, object] = {
            "block_count": self.n_layer, "context_length": 32768, "embedding_length": self.n_embd,
            "feed_forward_length": self.n_ff, "attention.head_count": self.n_head,
            "attention.head_count_kv": self.n_kv, "attention.key_length": self.head_dim,
            "attention.value_length": self.head_dim, "rope.freq_base": 1000000.0,
            "attention.layer_norm_rms_epsilon": 1e-6,
        }
        if self.experts:
            keys.update({"expert_count": self.experts, "expert_used_count": self.experts_used,
                         "expert_feed_forward_length": self.n_ff_exp})
        return keys

    def tensors(self) -> list[tuple[str, tuple[int, ...], str]]:
        """Every tensor the loader creates: (name, shape in ggml order, role)."""
        e, q, kv = self.n_embd, self.n_head * self.head_dim, self.n_kv * self.head_dim
        out: list[tuple[str, tuple[int, ...], str]] = [("token_embd.weight", (e, self.n_vocab), "embd"),
                                                      ("output_norm.weight", (e,), "norm")]
        if not self.tied:
            out.append(("output.weight", (e, self.n_vocab), "output"))
        for i in range(self.n_layer):
            b = f"blk.{i}."
            out += [(b + "attn_norm.weight", (e,), "norm"), (b + "attn_q.weight", (e, q), "matrix"),
                    (b + "attn_k.weight", (e, kv), "matrix"), (b + "attn_v.weight", (e, kv), "attn_v"),
                    (b + "attn_output.weight", (q, e), "matrix"), (b + "ffn_norm.weight", (e,), "norm")]
            if self.bias:
                out += [(b + "attn_q.bias", (q,), "norm"), (b + "attn_k.bias", (kv,), "norm"),
                        (b + "attn_v.bias", (kv,), "norm")]
            if self.qk_norm:
                out += [(b + "attn_q_norm.weight", (self.head_dim,), "norm"),
                        (b + "attn_k_norm.weight", (self.head_dim,), "norm")]
            if self.experts:
                f, n = self.n_ff_exp, self.experts
                out += [(b + "ffn_gate_inp.weight", (e, n), "norm2d"),
                        (b + "ffn_gate_exps.weight", (e, f, n), "matrix"),
                        (b + "ffn_down_exps.weight", (f, e, n), "ffn_down"),
                        (b + "ffn_up_exps.weight", (e, f, n), "matrix")]
            else:
                out += [(b + "ffn_gate.weight", (e, self.n_ff), "matrix"),
                        (b + "ffn_down.weight", (self.n_ff, e), "ffn_down"),
                        (b + "ffn_up.weight", (e, self.n_ff), "matrix")]
        return out

    @property
    def kv_bytes_per_token(self) -> float:
        """f16 K and V of every layer for one token of context."""
        return float(self.n_layer * 2 * self.n_kv * self.head_dim * F16_BYTES)


# ggml type ids (gguf.GGMLQuantizationType), written here so the runtime needs no gguf enum.
F32, F16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0 = 0, 1, 2, 3, 6, 7, 8
Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, IQ4_NL, IQ4_XS = 10, 11, 12, 13, 14, 20, 23
_K_FALLBACK = {Q4_K: Q5_0, Q5_K: Q5_1, Q6_K: Q8_0, Q3_K: IQ4_NL, Q2_K: IQ4_NL, IQ4_XS: IQ4_NL}
_K_TYPES = frozenset(_K_FALLBACK)

# quantization as a point names it -> (base type, the type of the layers use_more_bits picks for
# attn_v and ffn_down, token_embd's type, output's type, llama.h's general.file_type)
MIXES: dict[str, tuple[int, int, int, int, int]] = {
    "F16": (F16, F16, F16, F16, 1), "BF16": (F16, F16, F16, F16, 1), "Q8_0": (Q8_0, Q8_0, Q8_0, Q8_0, 7),
    "Q4_0": (Q4_0, Q4_0, Q4_0, Q6_K, 2), "Q5_0": (Q5_0, Q5_0, Q5_0, Q6_K, 8),
    "Q4_K_M": (Q4_K, Q6_K, Q4_K, Q6_K, 15), "Q4_K_S": (Q4_K, Q5_K, Q4_K, Q6_K, 14),
    "Q4_K_L": (Q4_K, Q6_K, Q8_0, Q8_0, 15), "Q5_K_M": (Q5_K, Q6_K, Q5_K, Q6_K, 17),
    "Q6_K": (Q6_K, Q6_K, Q6_K, Q6_K, 18), "Q3_K_M": (Q3_K, Q5_K, Q3_K, Q6_K, 12),
    "Q2_K": (Q2_K, Q3_K, Q2_K, Q6_K, 10), "IQ4_XS": (IQ4_XS, IQ4_XS, IQ4_XS, Q6_K, 30),
    # MLX's groups of 64 with a float16 scale and bias: the bytes of Q4_0 and Q8_0, every matrix
    "MLX 4-BIT": (Q4_0, Q4_0, Q4_0, Q4_0, 2), "MLX 8-BIT": (Q8_0, Q8_0, Q8_0, Q8_0, 7),
}
_QK_K = 256


def mix_of(quant: str) -> tuple[int, int, int, int, int] | None:
    """The mix a point's quantization names ("UD-Q4_K_XL" is read as Q4_K_M; "MLX 4-bit")."""
    q = quant.strip().upper().replace("-", "_").replace(" ", "_")
    q = q[3:] if q.startswith("UD_") else q
    if q.startswith("MLX_") and "BIT" in q:
        bits = q[4:].split("_")[0].replace("BIT", "")
        return MIXES.get(f"MLX {bits}-BIT")
    for name in sorted(MIXES, key=len, reverse=True):
        key = name.replace(" ", "_").replace("-", "_")
        if q == key or q.startswith(key + "_") or q.startswith(key + " "):
            return MIXES[name]
    if q.startswith("Q4_K_XL"):
        return MIXES["Q4_K_M"]
    return None


def _use_more_bits(i: int, n: int) -> bool:
    """llama.cpp's choice of the layers whose attn_v and ffn_down get more bits."""
    return i < n // 8 or i >= 7 * n // 8 or (i - n // 8) % 3 == 2


def _fits(ggml_type: int, ne0: int) -> int:
    """The type, or llama.cpp's fallback when a K-quant's 256-block does not divide the rows."""
    if ggml_type in _K_TYPES and ne0 % _QK_K:
        return _K_FALLBACK[ggml_type]
    return ggml_type


def typed_tensors(arch: Arch, quant: str) -> list[tuple[str, tuple[int, ...], int]] | None:
    """The tensors with the types llama-quantize gives them at ``quant`` (None: not a mix here)."""
    mix = mix_of(quant)
    if mix is None:
        return None
    base, more, embd, output, _ = mix
    out = []
    for name, ne, role in arch.tensors():
        if role == "norm" or len(ne) == 1:
            t = F32
        elif role == "norm2d":
            t = F32  # the router stays f32
        elif role == "embd":
            t = output if arch.tied else embd  # a tied table is the output head: llama.cpp gives it that type
        elif role == "output":
            t = output
        elif role in ("attn_v", "ffn_down"):
            layer = int(name.split(".")[1])
            t = more if _use_more_bits(layer, arch.n_layer) else base
        else:
            t = base
        out.append((name, ne, _fits(t, ne[0])))
    return out


def file_type(quant: str) -> int | None:
    mix = mix_of(quant)
    return None if mix is None else mix[4]


@lru_cache(maxsize=256)  # pure: the fit reads every point's shapes thousands of times
def arch_shape(arch: Arch, quant: str) -> Shape | None:
    """What one evaluation of ``arch`` at ``quant`` reads, as ``speed.on_gpu.shape_of`` reads it
    from a GGUF of it (None when ``quant`` names no mix written here)."""
    from paircheck.speed.on_gpu import weights_kind_of_file_type

    tensors = typed_tensors(arch, quant)
    ftype = file_type(quant)
    if tensors is None or ftype is None:
        return None
    wb = weight_bytes(((n, list(ne), t) for n, ne, t in tensors), arch.experts or None,
                      arch.experts_used or None)
    experts = wb.expert_count or 0
    used = wb.expert_used_count or 0
    routed = wb.expert_bytes * used / experts if experts else 0.0
    return Shape(dense_bytes=wb.per_token - routed, expert_bytes=float(wb.expert_bytes), experts=experts,
                 experts_used=used, kv_bytes_per_token=arch.kv_bytes_per_token, stored_bytes=float(wb.total),
                 weights=weights_kind_of_file_type(ftype),
                 bits_per_weight=8.0 * wb.per_token / wb.per_token_elements if wb.per_token_elements else 0.0)


def _qwen25(size: str, e: int, layers: int, heads: int, kv: int, ff: int, vocab: int, tied: bool) -> Arch:
    return Arch(f"Qwen2.5-{size}", "qwen2", e, layers, heads, kv, e // heads, ff, vocab, tied,
                f"https://huggingface.co/Qwen/Qwen2.5-{size}-Instruct/blob/main/config.json", bias=True)


def _qwen3(size: str, e: int, layers: int, heads: int, kv: int, ff: int, tied: bool) -> Arch:
    return Arch(f"Qwen3-{size}", "qwen3", e, layers, heads, kv, 128, ff, 151936, tied,
                f"https://huggingface.co/Qwen/Qwen3-{size}/blob/main/config.json", qk_norm=True)


def _llama(name: str, repo: str, e: int, layers: int, heads: int, ff: int, tied: bool) -> Arch:
    return Arch(name, "llama", e, layers, heads, 8, e // heads, ff, 128256, tied,
                f"https://huggingface.co/{repo}/blob/main/config.json")


# name -> architecture: hidden_size, num_hidden_layers, num_attention_heads,
# num_key_value_heads, intermediate_size, vocab_size (the embedding rows) and
# tie_word_embeddings of each config.json. The Qwen2.5-Coder models and DeepSeek-R1's Qwen
# and Llama distills have their base models' shapes (their own config.json files).
ARCHS: dict[str, Arch] = {a.name: a for a in (
    _qwen25("0.5B", 896, 24, 14, 2, 4864, 151936, True),
    _qwen25("1.5B", 1536, 28, 12, 2, 8960, 151936, True),
    _qwen25("3B", 2048, 36, 16, 2, 11008, 151936, True),
    _qwen25("7B", 3584, 28, 28, 4, 18944, 152064, False),
    _qwen25("14B", 5120, 48, 40, 8, 13824, 152064, False),
    _qwen25("32B", 5120, 64, 40, 8, 27648, 152064, False),
    _qwen25("72B", 8192, 80, 64, 8, 29568, 152064, False),
    _qwen3("0.6B", 1024, 28, 16, 8, 3072, True),
    _qwen3("1.7B", 2048, 28, 16, 8, 6144, True),
    _qwen3("4B", 2560, 36, 32, 8, 9728, True),
    _qwen3("8B", 4096, 36, 32, 8, 12288, False),
    _qwen3("14B", 5120, 40, 40, 8, 17408, False),
    _qwen3("32B", 5120, 64, 64, 8, 25600, False),
    Arch("Qwen3-30B-A3B", "qwen3moe", 2048, 48, 32, 4, 128, 6144, 151936, False,
         "https://huggingface.co/Qwen/Qwen3-30B-A3B/blob/main/config.json", qk_norm=True, experts=128,
         experts_used=8, n_ff_exp=768),
    _llama("Llama-3.2-1B", "meta-llama/Llama-3.2-1B-Instruct", 2048, 16, 32, 8192, True),
    _llama("Llama-3.2-3B", "meta-llama/Llama-3.2-3B-Instruct", 3072, 28, 24, 8192, True),
    _llama("Llama-3.1-8B", "meta-llama/Llama-3.1-8B-Instruct", 4096, 32, 32, 14336, False),
    _llama("Llama-3.1-70B", "meta-llama/Llama-3.1-70B-Instruct", 8192, 80, 64, 28672, False),
)}
