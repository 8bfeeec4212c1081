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

The tokenizer keys are copied byte for byte (``gguf_mutate.read_kvs``), whatever they
hold: a mutated vocabulary (a retyped id, a duplicate or NUL-cut text, an add flag the
loader rejects) becomes a runnable model that the real llama-server loads, refuses or
aborts on exactly as it would on a real model with that vocabulary. ``favour=ID`` makes
the model predict token ID after every context, so a test can make a draft propose an id
deterministically (the pair-check differential's crash case).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import gguf
import numpy as np
from gguf import GGMLQuantizationType, GGUFValueType, GGUFWriter
from gguf_mutate import read_kvs

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
    """Copy every ``tokenizer.*`` key of a vocab GGUF unchanged; return its token count.

    Values keep their stored type and bytes (strings as ``bytes``, so texts with NUL or
    invalid UTF-8 survive). Without a token list (``no_vocab``/``none``) the count is the
    file's ``<arch>.vocab_size``, which is what llama.cpp's loader reads then.
    """
    meta = read_kvs(vocab_file)
    n_tokens = None
    vocab_size = None
    for kv in meta.kvs:
        if kv.key.endswith(".vocab_size") and not kv.key.startswith("tokenizer."):
            vocab_size = int(kv.decode())
        if not kv.key.startswith("tokenizer."):
            continue
        vtype = GGUFValueType(kv.vtype)
        value = kv.decode()
        if vtype == GGUFValueType.ARRAY:
            assert kv.sub_type is not None
            if not value:  # GGUFWriter refuses an empty array; llama.cpp reads it as absent data
                continue
            writer.add_key_value(kv.key, value, vtype, sub_type=GGUFValueType(kv.sub_type))
            if kv.key == "tokenizer.ggml.tokens":
                n_tokens = len(value)
        else:
            writer.add_key_value(kv.key, value, vtype)
    if n_tokens is None:
        n_tokens = vocab_size
    if not n_tokens:
        raise ValueError(f"{vocab_file} has neither tokenizer.ggml.tokens nor <arch>.vocab_size")
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
    n_vocab: int, shape: TinyShape, seed: int, residual: bool = True, favour: int | None = None
) -> list[tuple[str, np.ndarray]]:
    """The tensors of a llama model as (GGUF name, numpy array); numpy shapes are (rows, cols).

    The embedding and output head come from their own random stream (``seed`` only), so
    two models of one seed and width share them whatever their depth. ``residual=False``
    zeroes every layer's output projections: the layers still cost their full compute
    and memory traffic but add nothing, so the logits depend on the embedding and head
    only, and a shallow model of the same seed and width predicts exactly the same tokens.

    ``favour=ID`` makes ID the prediction after any context, by a wide margin (its
    probability is 1.0 to float precision): the layers add nothing (as ``residual=False``),
    every embedding gets a large constant first component that survives the RMS norm, and
    only ID's row of the output head reads that component.
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
    if favour is not None:
        if not 0 <= favour < n_vocab:
            raise ValueError(f"favour={favour} is not a token id of a {n_vocab}-token vocabulary")
        residual = False
        embd[:, 0] = 4.0  # about 15 times every other component: ~0.97 of the normed vector
        head[:, 0] = 0.0
        head[favour, 0] = 64.0  # a logit of ~500 for ID against a spread of ~1 for the rest
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
    favour: int | None = None,
) -> Path:
    """Write a random-weight llama GGUF with ``vocab_file``'s tokenizer; return ``path``.

    ``vocab_file`` is any GGUF holding ``tokenizer.*`` keys (a real vocab file, a mutated
    copy, a synthetic one); see :func:`tiny_llama_tensors` for ``residual`` and ``favour``.
    """
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
    for tensor_name, array in tiny_llama_tensors(n_vocab, shape, seed, residual, favour):
        _store(writer, tensor_name, array, ggml_type)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path
