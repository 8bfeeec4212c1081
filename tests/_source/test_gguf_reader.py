"""The streaming GGUF reader: equal to gguf-py on real files, safe on hostile ones."""

from __future__ import annotations

import io
import struct
import tracemalloc
from pathlib import Path

import gguf
import pytest

from paircheck import constants as K
from paircheck._source.gguf_reader import (
    FileSource,
    GGUFArray,
    GGUFFormatError,
    read_metadata,
    read_tensor_infos,
)


class BytesSource:
    """An in-memory ByteSource; ``size=None`` makes it behave like a stream."""

    def __init__(self, data: bytes, known_size: bool = True) -> None:
        self.name = "<bytes>"
        self._data = data
        self._known = known_size
        self.reads: list[tuple[int, int]] = []

    @property
    def size(self) -> int | None:
        return len(self._data) if self._known else None

    def read_at(self, offset: int, length: int) -> bytes:
        self.reads.append((offset, length))
        return self._data[offset : offset + length]


def read(path: Path, keep=frozenset({K.TOKENS})):
    with open(path, "rb") as handle:
        meta, _ = read_metadata(FileSource(path, handle), keep)
    return meta


def test_keys_table_matches_gguf_package() -> None:
    for vtype in K.ValueType:
        assert gguf.GGUFValueType[vtype.name].value == vtype.value
    tk, gk, lk = gguf.Keys.Tokenizer, gguf.Keys.General, gguf.Keys.LLM
    pairs = {
        K.ARCHITECTURE: gk.ARCHITECTURE, K.NAME: gk.NAME, K.BASENAME: gk.BASENAME,
        K.SIZE_LABEL: gk.SIZE_LABEL, K.FINETUNE: gk.FINETUNE, K.REPO_URL: gk.REPO_URL,
        K.ORGANIZATION: gk.ORGANIZATION, K.SOURCE_REPO_URL: gk.SOURCE_REPO_URL,
        K.BASE_MODEL_COUNT: gk.BASE_MODEL_COUNT, K.BASE_MODEL_NAME: gk.BASE_MODEL_NAME,
        K.BASE_MODEL_REPO_URL: gk.BASE_MODEL_REPO_URL, K.FILE_TYPE: gk.FILE_TYPE,
        K.TOKENIZER_MODEL: tk.MODEL, K.TOKENIZER_PRE: tk.PRE, K.TOKENS: tk.LIST,
        K.TOKEN_TYPE: tk.TOKEN_TYPE, K.SCORES: tk.SCORES, K.MERGES: tk.MERGES,
        K.BOS_ID: tk.BOS_ID, K.EOS_ID: tk.EOS_ID, K.EOT_ID: tk.EOT_ID, K.EOM_ID: tk.EOM_ID,
        K.UNK_ID: tk.UNK_ID, K.SEP_ID: tk.SEP_ID, K.PAD_ID: tk.PAD_ID, K.MASK_ID: tk.MASK_ID,
        K.FIM_PRE_ID: tk.FIM_PRE_ID, K.FIM_SUF_ID: tk.FIM_SUF_ID, K.FIM_MID_ID: tk.FIM_MID_ID,
        K.FIM_PAD_ID: tk.FIM_PAD_ID, K.FIM_REP_ID: tk.FIM_REP_ID, K.FIM_SEP_ID: tk.FIM_SEP_ID,
        K.PREFIX_ID: tk.PREFIX_ID, K.SUFFIX_ID: tk.SUFFIX_ID, K.MIDDLE_ID: tk.MIDDLE_ID,
        K.ADD_BOS: tk.ADD_BOS, K.ADD_EOS: tk.ADD_EOS, K.CHAT_TEMPLATE: tk.CHAT_TEMPLATE,
        K.VOCAB_SIZE: lk.VOCAB_SIZE, K.BLOCK_COUNT: lk.BLOCK_COUNT,
        K.EMBEDDING_LENGTH: lk.EMBEDDING_LENGTH, K.CONTEXT_LENGTH: lk.CONTEXT_LENGTH,
        K.NEXTN_PREDICT_LAYERS: lk.NEXTN_PREDICT_LAYERS,
        K.SPLIT_COUNT: gguf.Keys.Split.LLM_KV_SPLIT_COUNT, K.SPLIT_NO: gguf.Keys.Split.LLM_KV_SPLIT_NO,
    }
    for ours, theirs in pairs.items():
        assert ours == theirs


def _gguf_py_values(path: Path) -> dict:
    """Every scalar and string value, and the token list, as gguf-py reads them."""
    reader = gguf.GGUFReader(path)
    out = {}
    for field in reader.fields.values():
        if field.name.startswith("GGUF."):
            continue
        vtype = field.types[0]
        if vtype == gguf.GGUFValueType.ARRAY:
            out[field.name] = (len(field.data), None)
            if field.name == K.TOKENS:
                out[field.name] = (len(field.data), [bytes(field.parts[i]) for i in field.data])
        elif vtype == gguf.GGUFValueType.STRING:
            out[field.name] = bytes(field.parts[-1]).decode("utf-8", "surrogateescape")
        else:
            out[field.name] = field.parts[-1].tolist()[0]
    return out


@pytest.mark.slow  # over 1.5 s here (docs/testing.md)
@pytest.mark.parametrize("name", ["llama-spm", "phi-3", "bert-bge", "baichuan"])
def test_equals_gguf_py_on_real_files(real_vocab, name: str) -> None:
    path = real_vocab(name)
    meta = read(path)
    expected = _gguf_py_values(path)
    assert set(meta.kv) == set(expected)
    for key, want in expected.items():
        vtype, value = meta.kv[key]
        if isinstance(value, GGUFArray):
            assert value.count == want[0], key
            if want[1] is not None:
                assert value.values == want[1]
        elif isinstance(want, float):
            assert value == pytest.approx(want), key
        else:
            assert value == want, key
    assert meta.kv_end == path.stat().st_size  # vocab-only files end with the metadata


def test_stops_at_end_of_metadata_and_never_reads_tensor_data(tmp_path: Path) -> None:
    """A file with a 4 MiB tensor: only header and kv bytes (plus one readahead chunk) are read."""
    import numpy as np

    path = tmp_path / "with-tensor.gguf"
    writer = gguf.GGUFWriter(path, "llama")
    writer.add_tokenizer_model("llama")
    writer.add_token_list([f"t{i}" for i in range(100)])
    writer.add_tensor("token_embd.weight", np.zeros((1024, 1024), dtype=np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    data = path.read_bytes()
    source = BytesSource(data)
    meta, cursor = read_metadata(source, frozenset({K.TOKENS}), chunk=4096)
    assert meta.get(K.TOKENS).count == 100
    fetched = sum(length for _, length in source.reads)
    assert fetched < meta.kv_end + 4096 + 64
    infos = read_tensor_infos(meta, cursor)
    assert [(i.name, i.shape) for i in infos] == [("token_embd.weight", (1024, 1024))]
    assert sum(length for _, length in source.reads) < len(data) // 100


def test_reads_are_sequential_so_streams_work(real_vocab) -> None:
    data = real_vocab("llama-spm").read_bytes()
    source = BytesSource(data, known_size=False)
    meta, _ = read_metadata(source, frozenset({K.TOKENS}), chunk=1000)
    ends = 0
    for offset, length in source.reads:
        assert offset == ends
        ends += length
    assert meta.get(K.TOKENS).count == 32000


@pytest.mark.slow  # over 1.5 s here (docs/testing.md)
def test_every_prefix_of_a_real_header_is_a_clean_error(real_vocab) -> None:
    """Before the counts are read: unreadable (GGUFFormatError). After: described, with the
    keys marked incomplete and llama.cpp's "failed to read key-value pairs"."""
    data = real_vocab("llama-spm").read_bytes()
    end = read_metadata(BytesSource(data))[0].kv_end
    # Every prefix through the first keys and into the token list, then every 4999th byte.
    cuts = list(range(0, 1200)) + list(range(1200, end, 4999))
    for cut in cuts:
        for known in (True, False):
            if cut < 24:
                with pytest.raises(GGUFFormatError):
                    read_metadata(BytesSource(data[:cut], known_size=known))
                continue
            meta, _ = read_metadata(BytesSource(data[:cut], known_size=known))
            assert not meta.kv_complete, cut
            assert meta.tensor_error is not None and meta.tensor_error.incomplete
            assert meta.tensor_error.file_size == cut and meta.kv_end <= cut


def _header(n_tensors: int, n_kv: int, version: int = 3, bo: str = "<") -> bytes:
    return b"GGUF" + struct.pack(f"{bo}IQQ", version, n_tensors, n_kv)


def _kv_string_key(key: bytes, bo: str = "<") -> bytes:
    return struct.pack(f"{bo}Q", len(key)) + key


@pytest.mark.parametrize(
    "blob,fragment",
    [
        (_header(0, 2**62), "key/value pairs"),
        (_header(0, 1) + struct.pack("<Q", 2**62) + bytes(16), "key #0"),
        (_header(0, 1) + _kv_string_key(b"k") + struct.pack("<I", 8) + struct.pack("<Q", 2**62), "value of k"),
        (_header(0, 1) + _kv_string_key(b"k") + struct.pack("<IIQ", 9, 8, 2**62), "strings"),
        (_header(0, 1) + _kv_string_key(b"k") + struct.pack("<IIQ", 9, 4, 2**61), "elements"),
        (_header(0, 1) + _kv_string_key(b"k") + struct.pack("<IIQ", 9, 9, 2**60), "arrays"),
        (_header(0, 1) + _kv_string_key(b"k") + struct.pack("<I", 99), "unknown value type"),
        (_header(0, 1) + _kv_string_key(b"\xff\xfe") + bytes(16), "not valid UTF-8"),
        (_header(0, 0, version=1), "version 1"),
        (_header(0, 0, version=7), "unknown GGUF version"),
        (b"", "empty"),
        (b"GG", "not a GGUF"),
        (b"version https://git-lfs.github.com/spec/v1\noid sha256:abc\n", "Git LFS"),
        (b'{"architectures": ["LlamaForCausalLM"]}', "JSON"),
        (b"<!DOCTYPE html><html>", "HTML"),
        (struct.pack("<Q", 100) + b'{"__metadata__":{}}', "safetensors"),
    ],
)
def test_hostile_or_wrong_input_fails_fast_with_bounded_memory(blob: bytes, fragment: str) -> None:
    tracemalloc.start()
    try:
        with pytest.raises(GGUFFormatError) as info:
            read_metadata(BytesSource(blob))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert fragment in str(info.value)
    assert peak < 2 * 1024 * 1024


def test_deeply_nested_arrays_are_refused() -> None:
    nested = b"".join(struct.pack("<IQ", 9, 1) for _ in range(50))
    blob = _header(0, 1) + _kv_string_key(b"k") + struct.pack("<I", 9) + nested + b"\x00" * 64
    with pytest.raises(GGUFFormatError, match="nested"):
        read_metadata(BytesSource(blob))


def test_a_stream_claiming_huge_arrays_uses_memory_of_what_arrives() -> None:
    """Without a known size, counts cannot be checked up front: memory must follow the bytes.
    (2**30 strings: the most llama.cpp reads, so the count alone is not corruption.)"""
    blob = _header(0, 1) + _kv_string_key(b"k") + struct.pack("<IIQ", 9, 8, 2**30)
    blob += b"".join(struct.pack("<Q", 3) + b"abc" for _ in range(1000))
    tracemalloc.start()
    try:
        meta, _ = read_metadata(BytesSource(blob, known_size=False), frozenset({"k"}))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 4 * 1024 * 1024
    # Past the counts, a cut is described: the keys are incomplete, loadable fails.
    assert not meta.kv_complete and meta.tensor_error is not None and meta.tensor_error.incomplete
    assert meta.tensor_error.message == "failed to read key-value pairs" and "k" not in meta.kv


def test_invalid_utf8_in_token_text_is_data(gguf_factory) -> None:
    path = gguf_factory(replace={9: b"\xff\xfeok"})
    meta = read(path)
    assert meta.get(K.TOKENS).values[9] == b"\xff\xfeok"


def test_duplicate_keys_are_recorded() -> None:
    kv = _kv_string_key(b"a") + struct.pack("<II", 4, 1)
    blob = _header(0, 2) + kv + kv
    meta, _ = read_metadata(BytesSource(blob))
    assert meta.duplicate_keys == ["a"] and meta.get("a") == 1


def test_every_value_type_round_trips(tmp_path: Path) -> None:
    path = tmp_path / "types.gguf"
    writer = gguf.GGUFWriter(path, "llama")
    values = {
        "t.u8": (7, gguf.GGUFValueType.UINT8), "t.i8": (-7, gguf.GGUFValueType.INT8),
        "t.u16": (700, gguf.GGUFValueType.UINT16), "t.i16": (-700, gguf.GGUFValueType.INT16),
        "t.u32": (70000, gguf.GGUFValueType.UINT32), "t.i32": (-70000, gguf.GGUFValueType.INT32),
        "t.f32": (0.5, gguf.GGUFValueType.FLOAT32), "t.bool": (True, gguf.GGUFValueType.BOOL),
        "t.str": ("héllo", gguf.GGUFValueType.STRING), "t.u64": (2**40, gguf.GGUFValueType.UINT64),
        "t.i64": (-(2**40), gguf.GGUFValueType.INT64), "t.f64": (0.25, gguf.GGUFValueType.FLOAT64),
    }
    for key, (value, vtype) in values.items():
        writer.add_key_value(key, value, vtype)
    writer.add_key_value("t.nested", [[1, 2], [3]], gguf.GGUFValueType.ARRAY)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.close()
    meta = read(path)
    for key, (value, vtype) in values.items():
        assert meta.kv[key] == (vtype.value, value)
    nested = meta.get("t.nested")
    assert [inner.values for inner in nested.values] == [[1, 2], [3]]


def test_file_source_reports_size(tmp_path: Path) -> None:
    path = tmp_path / "x.bin"
    path.write_bytes(b"abc")
    with open(path, "rb") as handle:
        assert FileSource(path, handle).size == 3
    assert isinstance(io.BytesIO(b"").read(0), bytes)


def test_tensor_infos_after_parsed_metadata_skip_the_kv_section(tmp_path: Path) -> None:
    import numpy as np

    from paircheck._source.gguf_reader import read_tensor_infos_after

    path = tmp_path / "t.gguf"
    writer = gguf.GGUFWriter(path, "llama")
    writer.add_token_list([f"t{i}" for i in range(5000)])
    writer.add_tensor("token_embd.weight", np.zeros((8, 4), dtype=np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    data = path.read_bytes()
    meta, _ = read_metadata(BytesSource(data), frozenset({K.TOKENS}))
    source = BytesSource(data)
    infos = read_tensor_infos_after(source, meta)
    assert [(i.name, i.shape) for i in infos] == [("token_embd.weight", (4, 8))]
    assert source.reads[0][0] == meta.kv_end and meta.tensors == infos


def test_an_impossible_tensor_count_is_a_load_failure_found_fast_with_bounded_memory() -> None:
    """2**31 tensors in a 24-byte file: no loop, no allocation; llama.cpp's own words."""
    tracemalloc.start()
    try:
        meta, cursor = read_metadata(BytesSource(_header(2**31, 0)))
        infos = read_tensor_infos(meta, cursor)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert infos == [] and peak < 2 * 1024 * 1024
    assert meta.tensor_error is not None and meta.tensor_error.message == "failed to read tensor info"
    assert meta.tensor_error.incomplete  # the file ends inside what the header promises
    # Counts llama.cpp's header check refuses (read as int64, at most SIZE_MAX / 344).
    for count, shown in ((2**63, -(2**63)), (2**62, 2**62)):
        meta, cursor = read_metadata(BytesSource(_header(count, 0)))
        read_tensor_infos(meta, cursor)
        assert meta.tensor_error is not None
        assert meta.tensor_error.message == f"number of tensors is {shown} but must be in [0, {(2**64 - 1) // 344}]"


def test_a_header_that_ends_after_its_counts_is_a_cut() -> None:
    # A header that claims one key/value pair and ends there.
    import struct

    from paircheck._source.gguf_reader import read_metadata

    class Bytes:
        name = "one.gguf"
        size = 24

        def read_at(self, offset: int, length: int) -> bytes:
            return (b"GGUF" + struct.pack("<IQQ", 3, 0, 1))[offset : offset + length]

    # Whole counts, then nothing: a cut inside the keys (llama.cpp fails on it), described.
    meta, _ = read_metadata(Bytes())
    assert not meta.kv_complete and meta.kv == {}
    assert meta.tensor_error is not None and meta.tensor_error.file_size == 24
    assert meta.tensor_error.reason == (
        "the file ends inside its metadata at 24 bytes: the download was probably interrupted"
    )
