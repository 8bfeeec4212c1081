"""A Hugging Face folder's tensors, from its safetensors headers (never the weights).

Each tensor is named and typed as far as sizing needs, as the GGUF that llama.cpp's
converter would write at the folder's own dtypes: the layer it belongs to
(``model.layers.N.`` -> ``blk.N.``), the token embedding and the output head (whose
absence means tied embeddings), and the experts of a mixture (``ffn_*_exps``, of which
the speedup model counts only the experts used per token). Every other part of a name is
kept as the folder writes it. The headers are read and checked by ``safetensors_header``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

from paircheck._source.safetensors_header import (
    INDEX_NAME,
    check_local_file,
    folder_files,
    index_shards,
    read_index,
)
from paircheck.errors import InputError
from paircheck.model import TensorInfo

# safetensors dtype -> a ggml type of the same element size (F8 and booleans as I8: one byte)
DTYPES = {"F32": 0, "F16": 1, "BF16": 30, "F64": 28, "I64": 27, "I32": 26, "I16": 25, "I8": 24, "U8": 24,
          "F8_E4M3": 24, "F8_E5M2": 24, "BOOL": 24}  # fmt: skip
_LAYER = r"^(?:model\.)?layers\.(\d+)\."
_RENAMES = [
    # Experts, one tensor per expert (Qwen MoE, DeepSeek: mlp.experts.E.gate_proj; Mixtral:
    # block_sparse_moe.experts.E.w1/w3/w2), or fused (mlp.experts.gate_up_proj).
    (re.compile(_LAYER + r"(?:mlp|block_sparse_moe)\.experts\.(\d+)\.(gate|up|down)_proj\."),
     r"blk.\1.ffn_\3_exps.\2."),
    (re.compile(_LAYER + r"block_sparse_moe\.experts\.(\d+)\.w1\."), r"blk.\1.ffn_gate_exps.\2."),
    (re.compile(_LAYER + r"block_sparse_moe\.experts\.(\d+)\.w3\."), r"blk.\1.ffn_up_exps.\2."),
    (re.compile(_LAYER + r"block_sparse_moe\.experts\.(\d+)\.w2\."), r"blk.\1.ffn_down_exps.\2."),
    (re.compile(_LAYER + r"mlp\.experts\.(gate_up|gate|up|down)_proj(?:\.weight)?$"), r"blk.\1.ffn_\2_exps.weight"),
    (re.compile(_LAYER), r"blk.\1."),
    (re.compile(r"^(?:model\.)?embed_tokens\."), "token_embd."),
    (re.compile(r"^(?:model\.)?norm\."), "output_norm."),
    (re.compile(r"^lm_head\."), "output."),
]


def gguf_name(name: str) -> str:
    """The parts of a tensor's name that sizing reads, as the converter writes them."""
    for pattern, repl in _RENAMES:
        if pattern.match(name):
            return pattern.sub(repl, name, count=1)
    return name


def tensor_infos(entries: Iterable[tuple[str, str, tuple[int, ...]]], where: str) -> list[TensorInfo]:
    """``(name, dtype, shape)`` header entries as tensor infos (dimensions fastest-first)."""
    infos = []
    for name, dtype, shape in entries:
        ggml_type = DTYPES.get(dtype)
        if ggml_type is None:
            raise InputError(where, f"tensor {name!r}: dtype {dtype} has no GGUF type of the same size")
        infos.append(TensorInfo(gguf_name(name), tuple(reversed(shape)) or (1,), ggml_type, 0))
    return infos


def weight_files(folder: Path, location: str) -> list[Path]:
    """The shards the folder's index names (each must be there), else every
    ``*.safetensors`` file in it."""
    raw = read_index(folder, location)
    if raw is None:
        return folder_files(folder)
    files = [folder / name for name in index_shards(raw, location)]
    for path in files:
        if not path.is_file():
            raise InputError(str(path), f"shard named in {INDEX_NAME} is missing")
    return files


def folder_tensors(folder: Path, location: str) -> list[TensorInfo]:
    """Every tensor of a Hugging Face folder on this machine, from its headers."""
    files = weight_files(folder, location)
    if not files:
        raise InputError(location, "no *.safetensors files: cannot size the weights")
    infos: list[TensorInfo] = []
    for path in files:
        found = check_local_file(path)
        if found.error is not None:
            raise InputError(str(path), found.error.message)
        infos += tensor_infos(found.entries, str(path))
    return infos
