"""GGUF files with the tensor infos of real models and no real data.

Each shape lists every tensor llama.cpp's loader creates for that architecture (names and
dimensions from ``src/llama-model.cpp``/``src/models/*.cpp`` at the pinned version) with
the published hyperparameters of a real model. The header is written with
``gguf.GGUFWriter``; the tensor data is never written: the file is extended with
``truncate`` to its full size, so a 16 GB model is a sparse file of a few MB on disk that
llama.cpp opens and sizes without reading a weight.

The vocabulary is a synthetic SentencePiece one with as many tokens as the model's
embedding rows (llama.cpp checks that ``token_embd`` has ``n_vocab`` rows; the memory does
not depend on the token texts). Where the real model pads its embedding rows past its
tokenizer (Qwen2.5: 151,665 tokens in 151,936 or 152,064 rows), the rows past it are
``[PAD<id>]``, as convert_hf_to_gguf.py writes them, so a pair check of two shapes sees
what it sees on the real files.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import gguf
import numpy as np

Q = gguf.GGMLQuantizationType
T = gguf.MODEL_TENSOR


def _name(tensor: gguf.MODEL_TENSOR, bid: int | None = None, suffix: str = "weight") -> str:
    base = gguf.TENSOR_NAMES[tensor]
    return (base.format(bid=bid) if bid is not None else base) + "." + suffix


@dataclass
class Shape:
    """A model's architecture, keys and tensors (shapes in ggml order: ne0 first)."""

    label: str
    arch: str
    n_vocab: int
    keys: dict[str, Any]
    tensors: list[tuple[str, tuple[int, ...], str]] = field(default_factory=list)  # name, ne, role
    n_real_tokens: int | None = None  # the tokenizer's size when the rows are padded past it

    def add(self, name: str, ne: tuple[int, ...], role: str = "matrix") -> None:
        self.tensors.append((name, ne, role))


def _pick_type(ne: tuple[int, ...], role: str, scheme: str) -> Q:
    """A Q4_K_M-like mix: 1-D tensors f32; K-quants where rows allow, else Q8_0, else F16."""
    if len(ne) == 1 or role == "f32":
        return Q.F32
    if scheme == "f16":
        return Q.F16
    wanted = Q.Q6_K if role in ("heavy", "output") else Q.Q4_K
    for qtype in (wanted, Q.Q8_0, Q.F16):
        block, _ = gguf.GGML_QUANT_SIZES[qtype]
        if ne[0] % block == 0:
            return qtype
    return Q.F16


def _fill(writer: gguf.GGUFWriter, shape: Shape, scheme: str) -> None:
    """Keys, vocabulary and tensor infos (no data) of ``shape``."""
    for key, value in shape.keys.items():
        full = key if key.startswith(("general.", "tokenizer.")) else f"{shape.arch}.{key}"
        if isinstance(value, bool):
            writer.add_bool(full, value)
        elif isinstance(value, int):
            writer.add_uint32(full, value)
        elif isinstance(value, float):
            writer.add_float32(full, value)
        elif isinstance(value, str):
            writer.add_string(full, value)
        elif isinstance(value, list):
            writer.add_array(full, value)
        else:
            raise TypeError(f"{key}: {type(value).__name__}")
    writer.add_name(shape.label)
    writer.add_file_type(15 if scheme == "q4_k_m" else 1)
    _add_spm_vocab(writer, shape.n_vocab, shape.n_real_tokens)
    for name, ne, role in shape.tensors:
        qtype = _pick_type(ne, role, scheme)
        block, size = gguf.GGML_QUANT_SIZES[qtype]
        rows = int(np.prod(ne[1:])) if len(ne) > 1 else 1
        nbytes = ne[0] // block * size * rows
        writer.add_tensor_info(name, list(reversed(ne)), np.dtype(np.float32), nbytes, raw_dtype=qtype)


def write_shape(shape: Shape, path: Path, scheme: str = "q4_k_m", data: bool = True) -> Path:
    """Write ``shape`` as a GGUF whose tensor data is a hole; returns ``path``. Without
    ``data`` the file ends where the data would begin (a header-only GGUF: a few MB that git
    stores as they are, where a hole would be stored as gigabytes of zeros)."""
    writer = gguf.GGUFWriter(str(path), shape.arch)
    _fill(writer, shape, scheme)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_ti_data_to_file()
    assert writer.fout is not None
    handle = writer.fout[0]
    data_start = gguf.GGUFWriter.ggml_pad(handle.tell(), writer.data_alignment)
    total = data_start
    for ti in writer.tensors[0].values():
        total += gguf.GGUFWriter.ggml_pad(ti.nbytes, writer.data_alignment)
    writer.close()
    with open(path, "r+b") as out:
        out.truncate(total if data else data_start)  # a hole: nothing is stored
    return path


def write_split(label: str, folder: Path, max_tensors: int, scheme: str = "q4_k_m") -> list[Path]:
    """The named shape as a gguf-split set (``name-0000k-of-0000n.gguf``), data holes too."""
    shape = SHAPES[label]()
    base = folder / f"{label}-{scheme}-split.gguf"
    writer = gguf.GGUFWriter(str(base), shape.arch, split_max_tensors=max_tensors)
    _fill(writer, shape, scheme)
    writer.write_header_to_file(base)
    writer.write_kv_data_to_file()
    writer.write_ti_data_to_file()
    totals = []
    for handle, tensors in zip(writer.fout or [], writer.tensors, strict=False):
        total = gguf.GGUFWriter.ggml_pad(handle.tell(), writer.data_alignment)
        total += sum(gguf.GGUFWriter.ggml_pad(ti.nbytes, writer.data_alignment) for ti in tensors.values())
        totals.append((Path(handle.name), total))
    writer.close()
    for path, total in totals:
        with open(path, "r+b") as out:
            out.truncate(total)
    return [path for path, _ in totals]


def _add_spm_vocab(writer: gguf.GGUFWriter, n_vocab: int, n_real: int | None = None) -> None:
    real = n_vocab if n_real is None else n_real
    tokens = ["<unk>", "<s>", "</s>"] + [f"<0x{b:02X}>" for b in range(256)]
    tokens += [f"t{i}" for i in range(real - len(tokens))]
    tokens += [f"[PAD{i}]" for i in range(real, n_vocab)]  # convert_hf_to_gguf.py's padding rows
    types = [2, 3, 3] + [6] * 256 + [1] * (real - 259) + [5] * (n_vocab - real)
    writer.add_tokenizer_model("llama")
    writer.add_token_list(tokens)
    writer.add_token_scores([0.0] * n_vocab)
    writer.add_token_types(types)
    writer.add_bos_token_id(1)
    writer.add_eos_token_id(2)
    writer.add_unk_token_id(0)


# --- the shapes -------------------------------------------------------------------------


def _attn(s: Shape, i: int, n_embd: int, n_q: int, n_kv: int, bias: bool = False, qk_norm: int = 0) -> None:
    s.add(_name(T.ATTN_NORM, i), (n_embd,))
    s.add(_name(T.ATTN_Q, i), (n_embd, n_q))
    s.add(_name(T.ATTN_K, i), (n_embd, n_kv))
    s.add(_name(T.ATTN_V, i), (n_embd, n_kv), "heavy")
    if bias:
        s.add(_name(T.ATTN_Q, i, "bias"), (n_q,))
        s.add(_name(T.ATTN_K, i, "bias"), (n_kv,))
        s.add(_name(T.ATTN_V, i, "bias"), (n_kv,))
    if qk_norm:
        s.add(_name(T.ATTN_Q_NORM, i), (qk_norm,))
        s.add(_name(T.ATTN_K_NORM, i), (qk_norm,))
    s.add(_name(T.ATTN_OUT, i), (n_q, n_embd))


def _ffn(s: Shape, i: int, n_embd: int, n_ff: int, norm: bool = True) -> None:
    if norm:
        s.add(_name(T.FFN_NORM, i), (n_embd,))
    s.add(_name(T.FFN_GATE, i), (n_embd, n_ff))
    s.add(_name(T.FFN_DOWN, i), (n_ff, n_embd), "heavy")
    s.add(_name(T.FFN_UP, i), (n_embd, n_ff))


def _io(s: Shape, n_embd: int, tied: bool) -> None:
    s.add(_name(T.TOKEN_EMBD), (n_embd, s.n_vocab))
    s.add(_name(T.OUTPUT_NORM), (n_embd,))
    if not tied:
        s.add(_name(T.OUTPUT), (n_embd, s.n_vocab), "output")


def llama3_8b() -> Shape:
    """Meta-Llama-3.1-8B: 32 layers, 4096 wide, 32 heads, 8 KV heads, 14336 FFN, 128256 tokens."""
    n_embd, n_layer, n_head, n_kv, n_ff = 4096, 32, 32, 8, 14336
    s = Shape("Llama-3.1-8B", "llama", 128256, {
        "block_count": n_layer, "context_length": 131072, "embedding_length": n_embd,
        "feed_forward_length": n_ff, "attention.head_count": n_head, "attention.head_count_kv": n_kv,
        "rope.freq_base": 500000.0, "attention.layer_norm_rms_epsilon": 1e-5, "rope.dimension_count": 128,
        "vocab_size": 128256,
    })  # fmt: skip
    _io(s, n_embd, tied=False)
    s.add(_name(T.ROPE_FREQS), (64,), "f32")
    for i in range(n_layer):
        _attn(s, i, n_embd, n_head * 128, n_kv * 128)
        _ffn(s, i, n_embd, n_ff)
    return s


# size: (n_embd, n_layer, n_head, n_kv, n_ff, embedding rows, tied embeddings, parameters): the
# published Qwen2.5 configurations (config.json of each Qwen/Qwen2.5-*-Instruct repo).
QWEN25: dict[str, tuple[int, int, int, int, int, int, bool, int]] = {
    "0.5B": (896, 24, 14, 2, 4864, 151936, True, 494_032_768),
    "1.5B": (1536, 28, 12, 2, 8960, 151936, True, 1_543_714_304),
    "3B": (2048, 36, 16, 2, 11008, 151936, True, 3_085_938_688),
    "7B": (3584, 28, 28, 4, 18944, 152064, False, 7_615_616_512),
    "14B": (5120, 48, 40, 8, 13824, 152064, False, 14_770_033_664),
}


def qwen25(size: str, arch: str = "qwen2", n_vocab: int | None = None) -> Shape:
    """Qwen2.5 at a published size (QWEN25), e.g. 7B (28 layers, 3584, 28/4 heads, 18944 FFN,
    152064 tokens) or 0.5B (24, 896, 14/2, 4864, 151936, tied embeddings); ``arch`` and
    ``n_vocab`` give the same tensors under another architecture or vocabulary."""
    n_embd, n_layer, n_head, n_kv, n_ff, rows, tied, _ = QWEN25[size]
    head = n_embd // n_head
    s = Shape(f"Qwen2.5-{size}", arch, n_vocab or rows, {
        "block_count": n_layer, "context_length": 32768, "embedding_length": n_embd,
        "feed_forward_length": n_ff, "attention.head_count": n_head, "attention.head_count_kv": n_kv,
        "rope.freq_base": 1000000.0, "attention.layer_norm_rms_epsilon": 1e-6,
    }, n_real_tokens=151665)  # fmt: skip
    _io(s, n_embd, tied=tied)
    for i in range(n_layer):
        _attn(s, i, n_embd, n_head * head, n_kv * head, bias=True)
        _ffn(s, i, n_embd, n_ff)
    return s


def gemma3_1b() -> Shape:
    """gemma-3-1b-it: 26 layers, 1152 wide, 4 heads of 256, 1 KV head, 6912 FFN, 262144
    tokens, tied; sliding window 512 on 5 of every 6 layers."""
    n_embd, n_layer, n_head, n_kv, head, n_ff = 1152, 26, 4, 1, 256, 6912
    s = Shape("gemma-3-1b", "gemma3", 262144, {
        "block_count": n_layer, "context_length": 32768, "embedding_length": n_embd,
        "feed_forward_length": n_ff, "attention.head_count": n_head, "attention.head_count_kv": n_kv,
        "attention.key_length": head, "attention.value_length": head, "attention.sliding_window": 512,
        "rope.freq_base": 1000000.0, "attention.layer_norm_rms_epsilon": 1e-6,
    })  # fmt: skip
    _io(s, n_embd, tied=True)
    for i in range(n_layer):
        _attn(s, i, n_embd, n_head * head, n_kv * head, qk_norm=head)
        s.add(_name(T.ATTN_POST_NORM, i), (n_embd,))
        _ffn(s, i, n_embd, n_ff)
        s.add(_name(T.FFN_POST_NORM, i), (n_embd,))
    return s


def qwen3_30b_a3b() -> Shape:
    """Qwen3-30B-A3B: 48 layers, 2048 wide, 32 heads of 128, 4 KV heads, 128 experts (8
    used) of 768, 151936 tokens."""
    n_embd, n_layer, n_head, n_kv, head, n_exp, n_ff_exp = 2048, 48, 32, 4, 128, 128, 768
    s = Shape("Qwen3-30B-A3B", "qwen3moe", 151936, {
        "block_count": n_layer, "context_length": 40960, "embedding_length": n_embd,
        "feed_forward_length": 6144, "attention.head_count": n_head, "attention.head_count_kv": n_kv,
        "attention.key_length": head, "attention.value_length": head, "expert_count": n_exp,
        "expert_used_count": 8, "expert_feed_forward_length": n_ff_exp,
        "rope.freq_base": 1000000.0, "attention.layer_norm_rms_epsilon": 1e-6,
    })  # fmt: skip
    _io(s, n_embd, tied=False)
    for i in range(n_layer):
        _attn(s, i, n_embd, n_head * head, n_kv * head, qk_norm=head)
        s.add(_name(T.FFN_NORM, i), (n_embd,))
        s.add(_name(T.FFN_GATE_INP, i), (n_embd, n_exp), "f32")
        s.add(_name(T.FFN_GATE_EXP, i), (n_embd, n_ff_exp, n_exp))
        s.add(_name(T.FFN_DOWN_EXP, i), (n_ff_exp, n_embd, n_exp), "heavy")
        s.add(_name(T.FFN_UP_EXP, i), (n_embd, n_ff_exp, n_exp))
    return s


def deepseek_v2_lite() -> Shape:
    """DeepSeek-V2-Lite with MLA (as converted since llama.cpp split attn_kv_b): 27
    layers, 2048 wide, 16 heads, kv_lora_rank 512, rope 64, nope 128, v 128, 1 dense
    layer (10944) then 64 routed experts (6 used) of 1408 and 2 shared, 102400 tokens."""
    n_embd, n_layer, n_head, n_vocab = 2048, 27, 16, 102400
    rope, nope, v_head, lora = 64, 128, 128, 512
    n_exp, n_ff_exp, n_shared, n_ff = 64, 1408, 2, 10944
    s = Shape("DeepSeek-V2-Lite", "deepseek2", n_vocab, {
        "block_count": n_layer, "context_length": 163840, "embedding_length": n_embd,
        "feed_forward_length": n_ff, "attention.head_count": n_head, "attention.head_count_kv": 1,
        "attention.key_length": lora + rope, "attention.value_length": lora,
        "attention.key_length_mla": nope + rope, "attention.value_length_mla": v_head,
        "attention.kv_lora_rank": lora, "rope.dimension_count": rope,
        "leading_dense_block_count": 1, "expert_count": n_exp, "expert_used_count": 6,
        "expert_shared_count": n_shared, "expert_feed_forward_length": n_ff_exp,
        "expert_weights_scale": 1.0, "rope.freq_base": 10000.0, "attention.layer_norm_rms_epsilon": 1e-6,
    })  # fmt: skip
    _io(s, n_embd, tied=False)
    for i in range(n_layer):
        s.add(_name(T.ATTN_NORM, i), (n_embd,))
        s.add(_name(T.ATTN_KV_A_NORM, i), (lora,))
        s.add(_name(T.ATTN_Q, i), (n_embd, n_head * (nope + rope)))
        s.add(_name(T.ATTN_KV_A_MQA, i), (n_embd, lora + rope))
        s.add(_name(T.ATTN_K_B, i), (nope, lora, n_head))
        s.add(_name(T.ATTN_V_B, i), (lora, v_head, n_head))
        s.add(_name(T.ATTN_OUT, i), (n_head * v_head, n_embd))
        if i < 1:
            _ffn(s, i, n_embd, n_ff)
            continue
        s.add(_name(T.FFN_NORM, i), (n_embd,))
        s.add(_name(T.FFN_GATE_INP, i), (n_embd, n_exp), "f32")
        s.add(_name(T.FFN_GATE_EXP, i), (n_embd, n_ff_exp, n_exp))
        s.add(_name(T.FFN_DOWN_EXP, i), (n_ff_exp, n_embd, n_exp), "heavy")
        s.add(_name(T.FFN_UP_EXP, i), (n_embd, n_ff_exp, n_exp))
        s.add(_name(T.FFN_GATE_SHEXP, i), (n_embd, n_ff_exp * n_shared))
        s.add(_name(T.FFN_DOWN_SHEXP, i), (n_ff_exp * n_shared, n_embd), "heavy")
        s.add(_name(T.FFN_UP_SHEXP, i), (n_embd, n_ff_exp * n_shared))
    return s


def granite4_h_micro() -> Shape:
    """A Granite-4.0-H-Micro-sized hybrid (granitehybrid): 40 layers, 2048 wide, Mamba2
    mixers (d_inner 4096, d_state 128, 64 SSM heads, 1 group, conv 4) in 36 layers and
    attention (32 heads, 8 KV heads) in 4 (positions illustrative), dense FFN 8192, 100352
    tokens, tied embeddings. A layer is recurrent iff its head_count_kv is 0."""
    n_embd, n_layer, n_head, n_kv, n_ff = 2048, 40, 32, 8, 8192
    d_conv, d_inner, d_state, n_ssm_head, n_group = 4, 4096, 128, 64, 1
    attn_layers = {9, 19, 29, 39}
    head_kv = [n_kv if i in attn_layers else 0 for i in range(n_layer)]
    s = Shape("granite-4.0-h-micro", "granitehybrid", 100352, {
        "block_count": n_layer, "context_length": 131072, "embedding_length": n_embd,
        "feed_forward_length": n_ff, "attention.head_count": n_head, "attention.head_count_kv": head_kv,
        "ssm.conv_kernel": d_conv, "ssm.inner_size": d_inner, "ssm.state_size": d_state,
        "ssm.time_step_rank": n_ssm_head, "ssm.group_count": n_group,
        "rope.freq_base": 10000.0, "attention.layer_norm_rms_epsilon": 1e-5,
    })  # fmt: skip
    _io(s, n_embd, tied=True)
    d_in_proj = 2 * d_inner + 2 * n_group * d_state + n_ssm_head
    for i in range(n_layer):
        if i in attn_layers:
            _attn(s, i, n_embd, n_head * 64, n_kv * 64)
        else:
            s.add(_name(T.ATTN_NORM, i), (n_embd,))
            s.add(_name(T.SSM_IN, i), (n_embd, d_in_proj))
            s.add(_name(T.SSM_CONV1D, i), (d_conv, d_inner + 2 * n_group * d_state), "f32")
            s.add(_name(T.SSM_CONV1D, i, "bias"), (d_inner + 2 * n_group * d_state,))
            s.add(_name(T.SSM_DT, i, "bias"), (n_ssm_head,))
            s.add(gguf.TENSOR_NAMES[T.SSM_A].format(bid=i), (1, n_ssm_head), "f32")
            s.add(gguf.TENSOR_NAMES[T.SSM_D].format(bid=i), (1, n_ssm_head), "f32")
            s.add(_name(T.SSM_NORM, i), (d_inner // n_group, n_group), "f32")
            s.add(_name(T.SSM_OUT, i), (d_inner, n_embd))
        _ffn(s, i, n_embd, n_ff)
    return s


SHAPES: dict[str, Callable[[], Shape]] = {
    "llama3-8b": llama3_8b,
    "qwen2.5-7b": lambda: qwen25("7B"),
    "qwen2.5-0.5b": lambda: qwen25("0.5B"),
    "gemma3-1b": gemma3_1b,
    "qwen3-30b-a3b": qwen3_30b_a3b,
    "deepseek-v2-lite": deepseek_v2_lite,
    "granite4-h-micro": granite4_h_micro,
}


def write(label: str, folder: Path, scheme: str = "q4_k_m") -> Path:
    """Write the named shape into ``folder`` (cached by name) and return the path."""
    path = folder / f"{label}-{scheme}.gguf"
    if not path.exists():
        tmp = path.with_suffix(".part")
        write_shape(SHAPES[label](), tmp, scheme)
        tmp.rename(path)
    return path
