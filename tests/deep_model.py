"""Real models of known relative cost for the speed tests, made from SmolLM2-135M-Instruct.

With SmolLM2 alone no draft is faster on a CPU: the draft's full-vocabulary output layer keeps
its cost near the target's. The speed differential needs pairs that really are faster, and
ones that are not, with the model's own outputs:

* ``deep(src, extra)``: SmolLM2 followed by ``extra`` copies of its last block whose
  attention-output and FFN-down projections are zero. Each copy then adds exactly 0 to the
  residual stream (``x + 0 @ W = x``), so the logits, and the greedy output, are the
  original model's byte for byte, while its matmuls and KV cache still cost what a real block
  costs: a target several times dearer per token than its drafts.
* ``early_exit(src, keep)``: the first ``keep`` blocks only, then the output norm and head:
  a cheap draft that is often wrong.

The GGUF is written tensor by tensor from the source file's bytes (the key/value section
copied as it is, ``<arch>.block_count`` changed), so nothing is re-quantized.
"""

from __future__ import annotations

import os
import struct
from collections.abc import Callable
from pathlib import Path

import corpus as _corpus
from gguf import GGUFReader
from gguf_mutate import GGUF_MAGIC, VT, make_kv, read_kvs

_ALIGN = 32
_ZEROED = ("attn_output.weight", "ffn_down.weight")


def _pad(n: int) -> int:
    return (n + _ALIGN - 1) // _ALIGN * _ALIGN


def _arch_blocks(src: Path) -> tuple[str, int]:
    meta = read_kvs(src)
    kv = meta.get("general.architecture")
    assert kv is not None
    arch = kv.decode().decode()
    blocks = meta.get(f"{arch}.block_count")
    assert blocks is not None
    return arch, int(blocks.decode())


def write_variant(src: Path, dst: Path, keep: int | None = None, extra: int = 0) -> None:
    """``src`` with its first ``keep`` blocks (all when None) and ``extra`` identity copies of
    its last block after them."""
    arch, n_blocks = _arch_blocks(src)
    keep = n_blocks if keep is None else keep
    reader = GGUFReader(src)
    last = f"blk.{n_blocks - 1}."
    # (name, dims as GGUF stores them, type, source offset, bytes, zeroed)
    tensors: list[tuple[str, list[int], int, int, int, bool]] = []
    for t in reader.tensors:
        if t.name.startswith("blk.") and int(t.name.split(".")[1]) >= keep:
            continue
        tensors.append((t.name, [int(d) for d in t.shape], int(t.tensor_type), int(t.data_offset),
                        int(t.n_bytes), False))
    sources = [t for t in reader.tensors if t.name.startswith(last)]
    for j in range(extra):
        for t in sources:
            name = f"blk.{keep + j}." + t.name[len(last):]
            tensors.append((name, [int(d) for d in t.shape], int(t.tensor_type), int(t.data_offset),
                            int(t.n_bytes), t.name.endswith(_ZEROED)))
    meta = read_kvs(src)
    meta.set(make_kv(f"{arch}.block_count", keep + extra, VT.UINT32))
    head = bytearray(GGUF_MAGIC + struct.pack("<IQQ", 3, len(tensors), len(meta.kvs)))
    for kv in meta.kvs:
        kb = kv.key.encode()
        head += struct.pack("<Q", len(kb)) + kb + struct.pack("<I", kv.vtype) + kv.raw
    offset = 0
    for name, dims, ggml_type, _, nbytes, _ in tensors:
        nb = name.encode()
        head += struct.pack("<Q", len(nb)) + nb + struct.pack("<I", len(dims))
        head += b"".join(struct.pack("<Q", d) for d in dims) + struct.pack("<iQ", ggml_type, offset)
        offset += _pad(nbytes)
    head += b"\0" * (_pad(len(head)) - len(head))
    with open(src, "rb") as fin, open(dst, "wb") as out:
        out.write(head)
        for _, _, _, at, nbytes, zeroed in tensors:
            if zeroed:
                out.write(b"\0" * nbytes)
            else:
                fin.seek(at)
                out.write(fin.read(nbytes))
            out.write(b"\0" * (_pad(nbytes) - nbytes))


def _built(dest: Path, make: Callable[[Path], None]) -> Path:
    if dest.is_file():
        return dest
    with _corpus._locked(dest.parent / f".{dest.name}.lock"):
        if dest.is_file():
            return dest
        part = dest.with_suffix(".part")
        make(part)
        os.replace(part, dest)
    return dest


def deep(src: Path, extra: int) -> Path:
    """``src`` with ``extra`` identity blocks after its own (cached beside ``src``)."""
    return _built(src.with_name(f"{src.stem}.deep+{extra}.gguf"), lambda p: write_variant(src, p, extra=extra))


def early_exit(src: Path, keep: int) -> Path:
    """The first ``keep`` blocks of ``src`` (cached beside ``src``)."""
    return _built(src.with_name(f"{src.stem}.first{keep}.gguf"), lambda p: write_variant(src, p, keep=keep))
