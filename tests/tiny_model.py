"""Write tiny random-weight llama GGUF models that a real llama-server loads and runs.

Why: ``paircheck bench`` is tested against a real llama-server, which needs a model
with weights. A real vocabulary (llama.cpp's own ``ggml-vocab-*.gguf`` from
``corpus.py``) is copied in, so prompts tokenize as they would for a real model, and
the weights are random with a fixed seed: the same seed gives the same model (a draft
that always agrees with its target), another seed an unrelated model with the same
vocabulary (a draft that rarely agrees). A few layers of width 64 decode hundreds of
tokens per second on one CPU core.

``write_tiny_llama(path, vocab_file, seed=0)`` writes one; ``ggml_type`` chooses F32,
F16 or Q8_0 for the 2-D weights, so tests can check sizes that depend on quantization.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import gguf
import numpy as np
from gguf import GGMLQuantizationType, GGUFReader, GGUFValueType, GGUFWriter

# general.file_type for each weight type (llama.cpp's llama_ftype).
_FILE_TYPE = {
    GGMLQuantizationType.F32: gguf.LlamaFileType.ALL_F32,
    GGMLQuantizationType.F16: gguf.LlamaFileType.MOSTLY_F16,
    GGMLQuantizationType.Q8_0: gguf.LlamaFileType.MOSTLY_Q8_0,
}


@dataclass(frozen=True)
class TinyShape:
    n_embd: int = 64
    n_layer: int = 2
    n_head: int = 4
    n_head_kv: int = 4
    n_ff: int = 128
    n_ctx: int = 512


def _copy_vocab(writer: GGUFWriter, vocab_file: Path) -> int:
    """Copy every ``tokenizer.*`` key of a real vocab GGUF; return its token count."""
    reader = GGUFReader(vocab_file)
    n_tokens = 0
    for key, fld in reader.fields.items():
        if not key.startswith("tokenizer."):
            continue
        value = fld.contents()
        vtype = fld.types[0]
        if vtype == GGUFValueType.ARRAY:
            writer.add_key_value(key, value, vtype, sub_type=fld.types[-1])
            if key == "tokenizer.ggml.tokens":
                n_tokens = len(value)
        else:
            writer.add_key_value(key, value, vtype)
    if not n_tokens:
        raise ValueError(f"{vocab_file} has no tokenizer.ggml.tokens")
    return n_tokens


def _store(writer: GGUFWriter, name: str, array: np.ndarray, ggml_type: GGMLQuantizationType) -> None:
    """Add one tensor; 1-D tensors (norms) stay F32 as llama.cpp's converters keep them."""
    if array.ndim == 1 or ggml_type == GGMLQuantizationType.F32:
        writer.add_tensor(name, array.astype(np.float32))
    elif ggml_type == GGMLQuantizationType.F16:
        writer.add_tensor(name, array.astype(np.float16))
    else:
        data = gguf.quants.quantize(array.astype(np.float32), ggml_type)
        writer.add_tensor(name, data, raw_shape=data.shape, raw_dtype=ggml_type)


def tiny_llama_tensors(
    n_vocab: int, shape: TinyShape, seed: int, residual: bool = True
) -> list[tuple[str, np.ndarray]]:
    """The tensors of a llama model as (GGUF name, numpy array); numpy shapes are (rows, cols).

    The embedding and output head come from their own random stream (``seed`` only), so
    two models of one seed and width share them whatever their depth. ``residual=False``
    zeroes every layer's output projections: the layers still cost their full compute
    and memory traffic but add nothing, so the logits depend on the embedding and head
    only, and a shallow model of the same seed and width predicts exactly the same tokens.
    """
    rng = np.random.default_rng(seed)
    head_rng = np.random.default_rng([seed, 1])
    e, f, hd = shape.n_embd, shape.n_ff, shape.n_embd // shape.n_head

    def w(rows: int, cols: int, gen: np.random.Generator = rng) -> np.ndarray:
        # Scaled so activations stay O(1) through the layers: outputs are not all one token.
        return (gen.standard_normal((rows, cols)) / np.sqrt(cols)).astype(np.float32)

    def proj(rows: int, cols: int) -> np.ndarray:
        return w(rows, cols) if residual else np.zeros((rows, cols), np.float32)

    embd, head = w(n_vocab, e, head_rng), w(n_vocab, e, head_rng) * 4.0
    out: list[tuple[str, np.ndarray]] = [("token_embd.weight", embd)]
    for i in range(shape.n_layer):
        out += [
            (f"blk.{i}.attn_norm.weight", np.ones(e, np.float32)),
            (f"blk.{i}.attn_q.weight", w(e, e)),
            (f"blk.{i}.attn_k.weight", w(shape.n_head_kv * hd, e)),
            (f"blk.{i}.attn_v.weight", w(shape.n_head_kv * hd, e)),
            (f"blk.{i}.attn_output.weight", proj(e, e)),
            (f"blk.{i}.ffn_norm.weight", np.ones(e, np.float32)),
            (f"blk.{i}.ffn_gate.weight", w(f, e)),
            (f"blk.{i}.ffn_up.weight", w(f, e)),
            (f"blk.{i}.ffn_down.weight", proj(e, f)),
        ]
    out += [("output_norm.weight", np.ones(e, np.float32)), ("output.weight", head)]
    return out


def write_tiny_llama(
    path: Path,
    vocab_file: Path,
    seed: int = 0,
    shape: TinyShape = TinyShape(),
    ggml_type: GGMLQuantizationType = GGMLQuantizationType.F32,
    name: str | None = None,
    residual: bool = True,
) -> Path:
    """Write a random-weight llama GGUF with ``vocab_file``'s tokenizer; return ``path``."""
    path = Path(path)
    writer = GGUFWriter(str(path), "llama")
    writer.add_name(name or f"tiny-llama-seed{seed}")
    writer.add_context_length(shape.n_ctx)
    writer.add_embedding_length(shape.n_embd)
    writer.add_block_count(shape.n_layer)
    writer.add_feed_forward_length(shape.n_ff)
    writer.add_head_count(shape.n_head)
    writer.add_head_count_kv(shape.n_head_kv)
    writer.add_layer_norm_rms_eps(1e-5)
    writer.add_rope_dimension_count(shape.n_embd // shape.n_head)
    writer.add_file_type(_FILE_TYPE[ggml_type])
    n_vocab = _copy_vocab(writer, vocab_file)
    writer.add_vocab_size(n_vocab)
    for tensor_name, array in tiny_llama_tensors(n_vocab, shape, seed, residual):
        _store(writer, tensor_name, array, ggml_type)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path
