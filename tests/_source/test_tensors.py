"""One function gives a model's complete tensor list, whichever source read it.

``paircheck._source.tensors.model_tensors`` against gguf-py's ``GGUFReader`` (the
reference reader) for GGUFs on this machine and over HTTP, whole and split, reached by
path, URL or Hub reference, and against the safetensors headers as written for Hugging
Face folders on this machine and on the Hub. Tensor data is never read: the files are
sparse (their data is a hole) and the HTTP server counts what it sends.
"""

from __future__ import annotations

import json
import os
import struct
from pathlib import Path

import fit_shapes
import gguf
import pytest
from hf_build import build_qwen2_folder
from httpserver import TestServer

from paircheck._source.remote import RANGE_CHUNK
from paircheck._source.tensors import model_tensors
from paircheck.errors import InputError
from paircheck.model import TensorInfo
from paircheck.pipeline import describe

Row = tuple[str, tuple[int, ...], int]


def _rows(infos: list[TensorInfo]) -> list[Row]:
    return [(t.name, tuple(t.shape), t.ggml_type) for t in infos]


def _reference(*paths: Path) -> list[Row]:
    """gguf-py's reading of the same files, shard after shard."""
    rows: list[Row] = []
    for path in paths:
        for t in gguf.GGUFReader(path).tensors:
            rows.append((t.name, tuple(int(d) for d in t.shape), int(t.tensor_type)))
    return rows


@pytest.fixture(scope="module")
def shapes(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("tensor-shapes")


@pytest.fixture(scope="module")
def split(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    shards = fit_shapes.write_split("qwen2.5-0.5b", tmp_path_factory.mktemp("tensor-split"), max_tensors=100)
    assert len(shards) >= 3
    return shards


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PAIRCHECK_HTTP_TIMEOUT", "5")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))  # no token file of this machine's
    monkeypatch.delenv("HF_TOKEN", raising=False)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)


# --- GGUF on this machine ----------------------------------------------------------------


@pytest.mark.slow  # over 1.5 s here (docs/testing.md)
def test_local_gguf_lists_every_tensor(shapes: Path) -> None:
    path = fit_shapes.write("qwen2.5-0.5b", shapes)
    assert _rows(model_tensors(describe(str(path)))) == _reference(path)


@pytest.mark.slow  # over 1.5 s here (docs/testing.md)
def test_split_gguf_lists_every_shard_whichever_is_named(shapes: Path, split: list[Path]) -> None:
    whole = set(_reference(fit_shapes.write("qwen2.5-0.5b", shapes)))
    for named in (split[0], split[1], split[-1]):  # llama.cpp starts from the first shard, as paircheck does
        rows = _rows(model_tensors(describe(str(named))))
        assert rows == _reference(*split)
        assert set(rows) == whole and len(rows) == len(whole)


def test_split_gguf_with_a_missing_shard_is_one_error(split: list[Path], tmp_path: Path) -> None:
    copies = []
    for shard in split:
        copies.append(tmp_path / shard.name)
        os.link(shard, copies[-1])
    desc = describe(str(copies[0]))
    copies[1].unlink()
    with pytest.raises(InputError) as caught:
        model_tensors(desc)
    assert copies[1].name in str(caught.value) and "missing" in str(caught.value)


def test_vocab_only_gguf_has_an_empty_list(real_vocab) -> None:
    assert model_tensors(describe(str(real_vocab("qwen2")))) == []


def test_a_cut_file_is_refused_rather_than_listed_in_part(shapes: Path, tmp_path: Path) -> None:
    src = fit_shapes.write("qwen2.5-0.5b", shapes)
    kv_end = describe(str(src)).metadata.kv_end
    cut = tmp_path / "cut.gguf"
    with open(src, "rb") as handle:
        cut.write_bytes(handle.read(kv_end + 5000))  # inside the tensor infos
    with pytest.raises(InputError, match="cannot be sized"):
        model_tensors(describe(str(cut)))


# --- GGUF over HTTP -------------------------------------------------------------------------


@pytest.mark.slow  # over 1.5 s here (docs/testing.md)
def test_remote_gguf_was_listed_with_its_metadata(shapes: Path, env: None) -> None:
    path = fit_shapes.write("qwen2.5-0.5b", shapes)
    with TestServer() as server:
        desc = describe(server.add_file("m/q.gguf", path))
        server.reset_counters()
        rows = _rows(model_tensors(desc))
        assert server.counters.requests == 0  # the tensor infos came with the metadata
    assert rows == _reference(path)


@pytest.mark.slow  # over 1.5 s here (docs/testing.md)
def test_remote_split_reads_only_the_other_shards_headers(split: list[Path], env: None) -> None:
    with TestServer() as server:
        urls = [server.add_file(f"m/{shard.name}", shard) for shard in split]
        desc = describe(urls[0])
        server.reset_counters()
        rows = _rows(model_tensors(desc))
        log, sent = server.counters.log, server.counters.body_bytes
    assert rows == _reference(*split)
    # Range requests of shards 2..N only, each about its header and tensor infos.
    assert {path for _, path, _, _ in log} == {f"/m/{shard.name}" for shard in split[1:]}
    assert all(byte_range is not None and status == 206 for _, _, byte_range, status in log), log
    assert sent <= (len(split) - 1) * 2 * RANGE_CHUNK and sent * 100 < sum(s.stat().st_size for s in split[1:])
    assert desc.fetch.requests >= len(log)  # counted with the metadata's requests


def test_remote_split_named_otherwise_is_refused(split: list[Path], env: None) -> None:
    with TestServer() as server:
        desc = describe(server.add_file("m/renamed.gguf", split[0]))
        with pytest.raises(InputError, match="invalid split file name"):
            model_tensors(desc)


# --- Hugging Face folders -------------------------------------------------------------------


def _safetensors(path: Path, tensors: dict[str, tuple[str, list[int]]]) -> None:
    """A safetensors file with these (dtype, shape) tensors whose data is a hole."""
    width = {"F32": 4, "BF16": 2, "F16": 2}
    header: dict[str, object] = {"__metadata__": {"format": "pt"}}
    offset = 0
    for name, (dtype, shape) in tensors.items():
        size = width[dtype]
        for dim in shape:
            size *= dim
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + size]}
        offset += size
    raw = json.dumps(header).encode()
    with open(path, "wb") as handle:
        handle.write(struct.pack("<Q", len(raw)) + raw)
        handle.truncate(8 + len(raw) + offset)


SHARDS = {
    "model-00001-of-00002.safetensors": {
        "model.embed_tokens.weight": ("BF16", [151936, 896]),
        "model.layers.0.self_attn.q_proj.weight": ("BF16", [896, 896]),
        "model.layers.0.mlp.experts.3.gate_proj.weight": ("BF16", [64, 896]),
    },
    "model-00002-of-00002.safetensors": {
        "model.layers.1.block_sparse_moe.experts.0.w2.weight": ("BF16", [896, 64]),
        "model.norm.weight": ("F32", [896]),
        "lm_head.weight": ("F16", [151936, 896]),
    },
}
# The same tensors as the converter names and types them (dimensions fastest-first).
CONVERTED = [
    ("token_embd.weight", (896, 151936), 30),
    ("blk.0.self_attn.q_proj.weight", (896, 896), 30),
    ("blk.0.ffn_gate_exps.3.weight", (896, 64), 30),
    ("blk.1.ffn_down_exps.0.weight", (64, 896), 30),
    ("output_norm.weight", (896,), 0),
    ("output.weight", (896, 151936), 1),
]


def _weights(folder: Path) -> Path:
    weight_map = {}
    for file, tensors in SHARDS.items():
        _safetensors(folder / file, tensors)
        weight_map |= dict.fromkeys(tensors, file)
    (folder / "model.safetensors.index.json").write_text(json.dumps({"weight_map": weight_map}))
    return folder


@pytest.mark.slow  # over 1.5 s here (docs/testing.md)
def test_hf_folder_lists_its_safetensors_headers_as_the_converter_names_them(real_vocab, tmp_path: Path) -> None:
    folder = _weights(build_qwen2_folder(real_vocab("qwen2"), tmp_path / "hf", 151936))
    assert _rows(model_tensors(describe(str(folder)))) == CONVERTED
    (folder / "model-00002-of-00002.safetensors").unlink()
    with pytest.raises(InputError, match="cannot be sized"):  # the loader's own refusal, found at describe
        model_tensors(describe(str(folder)))


@pytest.mark.slow  # over 1.5 s here (docs/testing.md)
def test_hf_folder_without_weights_says_so(real_vocab, tmp_path: Path) -> None:
    folder = build_qwen2_folder(real_vocab("qwen2"), tmp_path / "hf", 151936)
    with pytest.raises(InputError, match="no \\*.safetensors files"):
        model_tensors(describe(str(folder)))


# --- the Hub: a split GGUF, a folder, a gated repo ------------------------------------------


@pytest.fixture
def hub(real_vocab, split: list[Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, env: None):
    folder = _weights(build_qwen2_folder(real_vocab("qwen2"), tmp_path / "hf", 151936))
    with TestServer() as server:
        server.add_repo("org/Split-GGUF", {shard.name.replace("q4_k_m-split", "Q4_K_M"): shard for shard in split})
        server.add_repo("org/Folder", {p.name: p for p in folder.iterdir()})
        server.add_repo("gated/Split-GGUF", {shard.name.replace("q4_k_m-split", "Q4_K_M"): shard for shard in split},
                        gated_token="secret")
        monkeypatch.setenv("HF_ENDPOINT", server.url)
        monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "cache"))
        yield server


@pytest.mark.slow  # over 1.5 s here (docs/testing.md)
def test_hub_split_gguf_lists_every_shard(hub: TestServer, split: list[Path]) -> None:
    desc = describe("org/Split-GGUF:Q4_K_M")
    hub.reset_counters()
    assert _rows(model_tensors(desc)) == _reference(*split)
    assert all(byte_range is not None for _, _, byte_range, _ in hub.counters.log)


@pytest.mark.slow  # over 1.5 s here (docs/testing.md)
def test_hub_token_goes_with_the_other_shards(hub: TestServer, split: list[Path], monkeypatch) -> None:
    monkeypatch.setenv("HF_TOKEN", "secret")
    desc = describe("gated/Split-GGUF:Q4_K_M")
    hub.reset_counters()
    assert _rows(model_tensors(desc)) == _reference(*split)
    assert hub.counters.auth and set(hub.counters.auth) == {"Bearer secret"}


def test_hub_folder_lists_the_headers_on_the_hub(hub: TestServer) -> None:
    desc = describe("org/Folder")  # downloads the small files, checks the headers by range reads
    hub.reset_counters()
    assert _rows(model_tensors(desc)) == CONVERTED
    weights = [entry for entry in hub.counters.log if entry[1].endswith(".safetensors")]
    assert weights and all(byte_range is not None for _, _, byte_range, _ in weights)
    sent = sum(n for path, n in hub.counters.by_path.items() if path.endswith(".safetensors"))
    assert sent < 4096  # two headers; the ~1 GB of declared weights never


@pytest.mark.slow  # over 1.5 s here (docs/testing.md)
def test_hub_folder_offline_without_its_weights_says_so(hub: TestServer, monkeypatch) -> None:
    desc = describe("org/Folder")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(InputError, match="HF_HUB_OFFLINE"):
        model_tensors(desc)
