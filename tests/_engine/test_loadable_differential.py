"""Differential test of ``LC001 loadable`` on the tensor section, against llama.cpp itself.

Tiny models are built from a real vocabulary (llama.cpp's ggml-vocab files, via
tests/corpus.py) plus a handful of tensors laid out as llama.cpp's writer lays them out
(``gguf_mutate.build_with_tensors``), then mutated: truncations at many offsets, tensor
counts, types, dimensions, names, offsets and alignment. For each file, paircheck's
verdict (LC001 pass/fail, as ``paircheck TARGET DRAFT`` computes it) must equal whether
llama.cpp's own loader (``llama_model_load_from_file`` with ``vocab_only``, through the
oracle worker) loads it. When paircheck names a tensor-section error, that text must be
among the errors llama.cpp logged: paircheck quotes llama.cpp, it does not paraphrase it.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from gguf import GGUFValueType as VT
from gguf_mutate import GGUFMeta, Layout, TensorSpec, build_with_tensors, make_kv, read_kvs
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from oracle import llama_values, require_oracle

from paircheck.findings import PASS

BASES = ["llama-spm", "gpt-2"]


@pytest.fixture(scope="module", autouse=True)
def _need_oracle() -> None:
    require_oracle()


def base_tensors() -> list[TensorSpec]:
    """Types with block sizes 1, 32 and 256, and sizes that need padding."""
    return [
        TensorSpec(b"token_embd.weight", [64, 32], 0),  # F32
        TensorSpec(b"output_norm.weight", [64], 0),
        TensorSpec(b"blk.0.attn_q.weight", [256, 4], 12),  # Q4_K
        TensorSpec(b"blk.0.ffn_up.weight", [64, 3], 8),  # Q8_0: 204 bytes, padded to 224
        TensorSpec(b"blk.0.attn_norm.weight", [7, 3, 2], 1),  # F16: 84 bytes
    ]


@dataclass
class Case:
    name: str
    data: bytes


def paircheck_loadable(path: Path) -> tuple[bool, str | None, Any]:
    """(loads, tensor-section error text or None, the description or InputError)."""
    from paircheck._engine.llamacpp import check_loadable
    from paircheck.errors import InputError
    from paircheck.pipeline import describe

    try:
        desc = describe(str(path))
    except InputError as exc:
        return False, None, exc
    finding = check_loadable("target", desc.vocab, desc)
    error = desc.metadata.tensor_error
    return finding.status == PASS, None if error is None else error.message, desc


def compare(case: Case, tmp: Path) -> str | None:
    """None when paircheck and llama.cpp agree on ``case``, else what differs."""
    path = tmp / f"{case.name.replace('/', '_')}.gguf"
    path.write_bytes(case.data)
    ora = llama_values(path)
    loads, error, desc = paircheck_loadable(path)
    if loads != bool(ora["loaded"]):
        said = f"({error or desc!s:.200}) llama.cpp loaded={ora['loaded']} ({ora.get('error')!r:.300})"
        return f"{case.name}: paircheck loads={loads} {said}"
    if error is not None and not ora.get("aborted") and error not in (ora.get("error") or ""):
        return f"{case.name}: paircheck says {error!r}, llama.cpp logged {ora.get('error')!r:.400}"
    return None


# --------------------------------------------------------------------------------------
# Mutations
# --------------------------------------------------------------------------------------

def _with_u64(data: bytes, at: int, value: int) -> bytes:
    return data[:at] + struct.pack("<Q", value & ((1 << 64) - 1)) + data[at + 8:]


def truncations(lay: Layout) -> list[tuple[str, int]]:
    """Cut points: inside the kv section's end, in and between tensor infos, the padding
    before the data, around every tensor's end, and spread over the data."""
    n = len(lay.data)
    cuts = {lay.infos_start - 1, lay.infos_start, lay.data_start - 1, lay.data_start, lay.data_start + 1, n - 1}
    for start in lay.info_offsets:
        cuts.update({start + 1, start + 8, start + 12, start + 20, start + 30, start + 40})
    for end in lay.tensor_ends:
        cuts.update({end - 1, end, end + 1})
    data_len = n - lay.data_start
    cuts.update(lay.data_start + data_len * k // 40 for k in range(40))
    return [(f"cut@{c}", c) for c in sorted(c for c in cuts if 0 < c < n)]


def spec_cases(meta: GGUFMeta) -> list[tuple[str, list[TensorSpec], dict[str, Any]]]:
    """Well-laid-out files whose tensor infos themselves are unusual or wrong."""
    out: list[tuple[str, list[TensorSpec], dict[str, Any]]] = [("base", base_tensors(), {})]

    def edit(label: str, fn: Callable[[list[TensorSpec]], None], **kw: Any) -> None:
        specs = base_tensors()
        fn(specs)
        out.append((label, specs, kw))

    for t in range(-1, 46):
        def set_type(s: list[TensorSpec], t: int = t) -> None:
            s[2].ggml_type = t
        edit(f"type={t}", set_type)
    edit("q4_K/row-not-multiple", lambda s: setattr(s[2], "dims", [128, 8]))
    edit("q8_0/row-not-multiple", lambda s: setattr(s[3], "dims", [48, 4]))
    for n_dims in range(6):
        edit(f"n_dims={n_dims}", lambda s, k=n_dims: setattr(s[0], "dims", [2] * k))
    edit("n_dims-field=5", lambda s: setattr(s[1], "n_dims", 5))
    edit("n_dims-field=3/2-written", lambda s: setattr(s[1], "n_dims", 3))
    edit("n_dims-field=2^32-1", lambda s: setattr(s[1], "n_dims", 2**32 - 1))
    edit("dim=-1", lambda s: setattr(s[0], "dims", [64, -1]))
    edit("dim=0", lambda s: setattr(s[0], "dims", [64, 0]))
    edit("dims-overflow", lambda s: setattr(s[0], "dims", [2**62, 4]))
    edit("dims-overflow-3d", lambda s: setattr(s[0], "dims", [2**21, 2**21, 2**21]))
    edit("dims-int64-max", lambda s: setattr(s[0], "dims", [2**63 - 1]))
    edit("dims-bytes>SIZE_MAX", lambda s: (setattr(s[0], "dims", [2**31, 2**31]), setattr(s[0], "ggml_type", 28)))
    edit("dims-huge-in-bounds-check", lambda s: setattr(s[4], "dims", [2**20, 2**10]))
    edit("name-empty", lambda s: setattr(s[1], "name", b""))
    edit("name-63", lambda s: setattr(s[1], "name", b"n" * 63))
    edit("name-64", lambda s: setattr(s[1], "name", b"n" * 64))
    edit("name-duplicate", lambda s: setattr(s[1], "name", s[0].name))
    edit("name-nul-duplicate", lambda s: (setattr(s[0], "name", b"x\0a"), setattr(s[1], "name", b"x\0b")))
    edit("name-nul-unique", lambda s: setattr(s[1], "name", b"y\0a"))
    edit("name-invalid-utf8", lambda s: setattr(s[1], "name", b"\xff\xfe.weight"))
    edit("offset+1", lambda s: setattr(s[1], "offset", 8192 + 1))
    edit("offset+32", lambda s: setattr(s[1], "offset", 8192 + 32))
    edit("offset-32", lambda s: setattr(s[1], "offset", 8192 - 32))
    edit("offset=0", lambda s: setattr(s[2], "offset", 0))
    edit("offset-first=32", lambda s: setattr(s[0], "offset", 32))
    edit("offset=2^64-1", lambda s: setattr(s[3], "offset", 2**64 - 1))
    edit("no-tensors", lambda s: s.clear())
    edit("one-zero-size", lambda s: (s.clear(), s.append(TensorSpec(b"z", [0, 4]))))
    for count in (0, 4, 6, 2**31, 2**62, 2**63, 2**64 - 1):
        out.append((f"n_tensors={count}", base_tensors(), {"n_tensors": count}))
    # Alignment: the key set and the layout following it, or not.
    for align_kv, layout in ((64, 64), (1, 1), (256, 256), (64, 32), (16, 32), (3, 32), (0, 32)):
        out.append((f"align-kv={align_kv}/layout={layout}", base_tensors(),
                    {"alignment": layout, "align_kv": (align_kv, VT.UINT32)}))
    out.append(("align-kv-u64", base_tensors(), {"align_kv": (32, VT.UINT64)}))
    return out


def build_case(meta: GGUFMeta, specs: list[TensorSpec], kw: dict[str, Any]) -> Layout:
    kw = dict(kw)
    align_kv = kw.pop("align_kv", None)
    if align_kv is not None:
        meta = GGUFMeta(meta.version, meta.n_tensors, list(meta.kvs))
        meta.set(make_kv("general.alignment", align_kv[0], align_kv[1]))
    return build_with_tensors(meta, specs, **kw)


def all_cases(base_path: Path) -> list[Case]:
    meta = read_kvs(base_path)
    cases: list[Case] = []
    for label, specs, kw in spec_cases(meta):
        # Offsets as written for the base layout (8192 = the first tensor's padded size).
        lay = build_case(meta, specs, kw)
        cases.append(Case(label, lay.data))
    base = build_with_tensors(meta, base_tensors())
    cases += [Case(label, base.data[:cut]) for label, cut in truncations(base)]
    # Fields patched in place in the base file (offsets and sizes then disagree).
    for i, start in enumerate(base.info_offsets):
        name_len = struct.unpack_from("<Q", base.data, start)[0]
        cases.append(Case(f"patch-name-len[{i}]+1", _with_u64(base.data, start, name_len + 1)))
        cases.append(Case(f"patch-name-len[{i}]=2^31", _with_u64(base.data, start, 2**31)))
        cases.append(Case(f"patch-name-len[{i}]=2^30+1", _with_u64(base.data, start, 2**30 + 1)))
    last = base.info_offsets[-1]
    cases.append(Case("trailing-garbage", base.data + b"\x01" * 100))
    cases.append(Case("infos-then-eof", base.data[: base.data_start] if base.data_start > last else base.data))
    return cases


@pytest.mark.slow  # over 1.5 s here (docs/testing.md)
@pytest.mark.parametrize("short", BASES)
def test_every_mutation_agrees_with_llamacpp(real_vocab: Callable[[str], Path], tmp_path: Path, short: str) -> None:
    cases = all_cases(real_vocab(short))
    disagreements = [d for d in (compare(case, tmp_path) for case in cases) if d is not None]
    loads = sum(1 for case in cases if llama_values(tmp_path / f"{case.name.replace('/', '_')}.gguf")["loaded"])
    assert disagreements == [], f"{len(disagreements)} of {len(cases)} disagree:\n" + "\n".join(disagreements)
    # Both outcomes are well represented: the mutations are not all trivially fatal.
    assert 30 <= loads <= len(cases) - 60, (loads, len(cases))


@pytest.mark.slow  # over 1.5 s here (docs/testing.md)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cut=st.integers(min_value=1, max_value=(1 << 30)))
def test_random_truncations_agree(real_vocab: Callable[[str], Path], tmp_path: Path, cut: int) -> None:
    """Cut anywhere in the tensor infos or data (weighted towards the end of the file)."""
    meta = read_kvs(real_vocab("llama-spm"))
    base = build_with_tensors(meta, base_tensors())
    span = len(base.data) - base.infos_start
    at = base.infos_start + cut % span
    assert compare(Case(f"random-cut@{at}", base.data[:at]), tmp_path) is None
